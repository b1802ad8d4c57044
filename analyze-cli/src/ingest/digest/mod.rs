//! What the analyses keep of an instance's stats lines, in memory bounded by the time they
//! cover rather than by how many there are.
//!
//! Chunks of a log are read on all cores into chunk-sized [`Series`]; each is then summed
//! into its instance's digest, in file order, and dropped: the digest keeps time cells
//! ([`grid`]), the concurrency curve's counts ([`load`]), the counts of interval lengths
//! ([`gaps`]), the few intervals whose start is settled only at the end, and the stamps
//! around the times the log may be cut at ([`run`]). What only the whole log tells (the
//! typical interval, the cuts, which intervals are gaps) is settled by the analysis
//! (`analysis::lines`). A 1.1 GB log of 1.8 million decode lines leaves
//! a few megabytes of them, where keeping a point per line took 90 MB.
//!
//! Lines read in time order form one run; lines that go back in time (a rotated log given
//! after the current one) start another, and runs are joined in time order at the end
//! ([`Digest::joined`]), so that files of one instance may be given in any order.

pub mod gaps;
pub mod grid;
pub mod load;
pub mod run;

use crate::ingest::series::{restart_candidates, EventPoint, Series, Setting};
use run::{Closing, Run};

/// Runs this close in time are joined as they come (see `Digest::collapse`): the parts
/// of a rotated log follow each other within a logging interval or two.
pub const CONTIGUOUS_MS: i64 = 60_000;

/// An instance's lines summed (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Digest {
    /// Cell length asked for (`--bucket`), ms.
    pub bucket: Option<i64>,
    runs: Vec<Run>,
    events: Vec<EventPoint>,
    settings: Vec<Setting>,
    /// Whether the next lines start a new file (and so a new run: a file is one stretch of
    /// time, but the next file given may follow any other).
    new_file: bool,
}

impl Digest {
    pub fn new(bucket: Option<i64>) -> Digest {
        Digest {
            bucket,
            ..Digest::default()
        }
    }

    /// Notes that the next chunk starts another file.
    pub fn new_file(&mut self) {
        self.new_file = true;
    }

    /// Sums a chunk's lines (in file order, each chunk after the one before it).
    pub fn push(&mut self, s: &mut Series) {
        if std::mem::take(&mut self.new_file)
            && self.runs.last().is_some_and(|r| r.start() != i64::MAX)
        {
            self.start_run();
        }
        s.sort();
        // start-up lines and ready lines are times the log may be cut at: probed as the
        // lines reach them
        let mut probes = restart_candidates(&s.settings, &s.events);
        probes.dedup();
        let mut probes = probes.into_iter().peekable();
        // the points and prefill stamps in series order (prefill stamps placed `at` a point
        // come before it), read by place: the per-line path of the whole report
        let (points, prefill) = (&s.points, &s.prefill);
        let mut spec = s.spec.iter().copied().peekable();
        let mut pre = 0;
        for i in 0..=points.len() {
            while let Some(p) = prefill.get(pre).filter(|p| p.at as usize <= i) {
                self.run_at(p.ts, &mut probes).prefill(p.ts, p.new_tokens);
                pre += 1;
            }
            let Some(p) = points.get(i) else {
                break;
            };
            let stats = spec.next_if_eq(&(i as u32)).is_none();
            let run = self.run_at(p.ts, &mut probes);
            run.gauges(p.ts, stats, p.running, p.waiting, p.kv_usage, p.accept_len);
            if stats {
                run.stats_stamp(p.ts);
                if p.gen_tps.is_finite() {
                    let prompt = s.prompt_tps.get(i).copied().unwrap_or(f64::NAN);
                    run.closing(Closing {
                        ts: p.ts,
                        gen: p.gen_tps.max(0.0),
                        prompt: if prompt.is_finite() {
                            prompt.max(0.0)
                        } else {
                            0.0
                        },
                        running: p.running,
                    });
                }
            }
        }
        // the rest come after the chunk's lines: in the run they follow, or in one of their
        // own if that run has gone past them
        for at in probes {
            if self.behind(at) {
                self.start_run();
            }
            if let Some(run) = self.runs.last_mut() {
                run.probe(at);
            }
        }
        self.events.append(&mut s.events);
        self.settings.append(&mut s.settings);
    }

    /// Adds the runs of another digest of the instance, read apart (a saved read), as the
    /// runs of a later file are added.
    pub fn extend(&mut self, mut other: Digest) {
        for run in other.runs {
            self.push_run(run);
        }
        self.events.append(&mut other.events);
        self.settings.append(&mut other.settings);
        self.new_file = true;
    }

    /// Its events (in time order once finished).
    pub fn events(&self) -> &[EventPoint] {
        &self.events
    }

    /// Its start-up settings (in time order once finished).
    pub fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// Whether a line stamped `t` needs a new run: there is none, or the last one has read
    /// past `t`.
    fn behind(&self, t: i64) -> bool {
        self.runs
            .last()
            .is_none_or(|r| r.last().is_some_and(|l| t < l))
    }

    /// The run a line stamped `ts` goes to (a new one if the last has read past it), with
    /// the probes up to `ts` taken first.
    #[inline]
    fn run_at(
        &mut self,
        ts: i64,
        probes: &mut std::iter::Peekable<std::vec::IntoIter<i64>>,
    ) -> &mut Run {
        if self.behind(ts) {
            self.start_run();
        }
        // (there is one: `behind` is true of no run)
        let last = self.runs.len().saturating_sub(1);
        let run = &mut self.runs[last];
        while let Some(at) = probes.next_if(|&at| at <= ts) {
            run.probe(at);
        }
        run
    }

    /// Starts a new run, the last one being complete: joined first to a run it follows or
    /// precedes closely in time (see [`CONTIGUOUS_MS`]).
    fn start_run(&mut self) {
        self.push_run(Run::new(self.bucket, true));
    }

    /// Adds a run after the last one, that one being complete (see [`Digest::start_run`]).
    fn push_run(&mut self, run: Run) {
        self.collapse();
        self.runs.push(run);
    }

    /// Joins the last run to a run that ends at most [`CONTIGUOUS_MS`] before it starts, or
    /// that starts at most that long after it ends, with no run between: the parts of a
    /// rotated log, in whatever order they are given, become one run as they come, so an
    /// instance read as hundreds of files keeps few runs. (A part read later that falls in
    /// between after all makes the joined runs overlap, which is counted as inexact.)
    fn collapse(&mut self) {
        let Some(p) = self.runs.pop() else {
            return;
        };
        let Some((ps, pl)) = p.span else {
            self.runs.push(p);
            return;
        };
        // another run with lines in the gap, its ends included
        let between = |runs: &[Run], skip: usize, a: i64, b: i64| {
            runs.iter()
                .enumerate()
                .any(|(k, r)| k != skip && r.span.is_some_and(|(s, l)| l >= a && s <= b))
        };
        // (a run takes another only once it has summed an interval: the lines of the one
        // joined then continue its own, and the first of them are summed here)
        let before = self.runs.iter().position(|x| {
            x.summing()
                && x.span
                    .is_some_and(|(_, xl)| xl <= ps && ps - xl <= CONTIGUOUS_MS)
        });
        if let Some(i) = before {
            let xl = self.runs[i].last().unwrap_or(ps);
            if !between(&self.runs, i, xl, ps) {
                self.runs[i].join(p);
                return;
            }
        }
        let after = self.runs.iter().position(|y| {
            y.span
                .is_some_and(|(ys, _)| pl <= ys && ys - pl <= CONTIGUOUS_MS)
        });
        if let Some(i) = after.filter(|_| p.summing()) {
            let ys = self.runs[i].start();
            if !between(&self.runs, i, pl, ys) {
                let y = self.runs.remove(i);
                let mut p = p;
                p.join(y);
                self.runs.push(p);
                return;
            }
        }
        self.runs.push(p);
    }

    /// Puts its events and start-up settings in time order: the last step of reading (see
    /// `Ingested::finish`). A stable sort: finishing the digests of two reads and then the
    /// digest they are merged into gives what finishing the merged digest alone gives.
    pub fn finish(&mut self) {
        self.events.sort_by_key(|e| e.ts);
        self.settings.sort_by_key(|s| s.ts);
    }

    /// Its runs joined in time order into one, as if read in one piece; the digest is left
    /// as it is (the analyses take the read by shared reference).
    pub fn joined(&self) -> Run {
        let mut runs = self.runs.clone();
        // (runs of one stamp tie: a start-up line before it puts one first)
        runs.sort_by_key(|r| (r.start(), r.last(), r.probes.iter().map(|p| p.at).min()));
        let mut all = Run::new(self.bucket, false);
        for r in runs {
            all.join(r);
        }
        all.close(None);
        all.long.sort_unstable();
        all
    }
}

#[cfg(test)]
impl Digest {
    /// The digest of a whole series, as one chunk.
    pub fn of(s: &Series) -> Digest {
        let mut d = Digest::default();
        d.push(&mut s.clone());
        d.finish();
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokstat_parsers::record::{Gauges, StepKind};
    use tokstat_parsers::stamp::Ts;

    /// A file of decode lines, one a second from `from`.
    fn file(from: i64, lines: i64) -> Series {
        let mut s = Series::default();
        for k in 0..lines {
            let g = Gauges {
                running: Some(8),
                gen_tps: Some(100.0),
                ..Gauges::default()
            };
            s.step(Ts(from + k * 1000), StepKind::Decode, &g);
        }
        s
    }

    /// Lines a year and a half apart in one run are summed in cells of a day, the length
    /// their span asks for: not in 50 million cells of a second (a 4-line log of 2025 and
    /// 2026 took 12 GB and 48 s), and no token is lost.
    #[test]
    fn a_silence_of_months_keeps_few_cells() {
        let t0 = 1_741_657_467_000; // 2025-03-11
        let mut s = Series::default();
        for t in [t0, t0 + 600 * 86_400_000, t0 + 600 * 86_400_000 + 2000] {
            let g = Gauges {
                running: Some(8),
                gen_tps: Some(100.0),
                ..Gauges::default()
            };
            s.step(Ts(t), StepKind::Decode, &g);
        }
        let mut d = Digest::new(None);
        d.push(&mut s);
        let all = d.joined();
        assert!(
            all.grid.cells.len() <= 1000,
            "{} cells",
            all.grid.cells.len()
        );
        assert_eq!(all.grid.len, 86_400_000);
        let tokens: i128 = all.grid.cells.iter().map(|c| c.gen).sum();
        assert_eq!(tokens, all.totals.tokens);
        assert_eq!(all.totals.count, 2);
    }

    /// The parts of a rotated log, given newest first or in time order, are joined as they
    /// come: an instance read as 300 files holds two runs, not 300.
    #[test]
    fn contiguous_files_join_as_they_come() {
        for reverse in [false, true] {
            let mut d = Digest::new(None);
            let mut parts: Vec<i64> = (0..300).map(|k| k * 50_000).collect();
            if reverse {
                parts.reverse();
            }
            for from in parts {
                d.new_file();
                d.push(&mut file(from, 50));
            }
            assert!(d.runs.len() <= 2, "{reverse}: {} runs", d.runs.len());
            let all = d.joined();
            assert_eq!(all.totals.count, 300 * 50 - 1, "{reverse}");
            assert_eq!(all.disorder, 0);
        }
        // a part that falls between two already joined would overlap: not joined across a
        // missing part
        let mut d = Digest::new(None);
        for from in [0, 200_000] {
            d.new_file();
            d.push(&mut file(from, 50));
        }
        d.new_file();
        d.push(&mut file(50_000, 150));
        assert_eq!(d.joined().disorder, 0);
    }
}
