//! What the analyses keep of an instance's stats lines, in memory bounded by the time they
//! cover rather than by how many there are.
//!
//! Chunks of a log are read on all cores into chunk-sized [`Series`]; each is then summed
//! into its instance's digest, in file order, and dropped: the digest keeps time cells
//! ([`grid`]), the concurrency curve's counts ([`load`]), the counts of interval lengths
//! ([`gaps`]), the few intervals whose start is settled only at the end, and the stamps
//! around the times the log may be cut at ([`stretch`]). What only the whole log tells (the
//! typical interval, the cuts, which intervals are gaps) is settled by the analysis
//! (`analysis::settle`). A 1.1 GB log of 1.8 million decode lines leaves
//! a few megabytes of them, where keeping a point per line took 90 MB.
//!
//! Lines read in time order form one stretch; lines that go back in time (a rotated log given
//! after the current one) start another, and stretches are joined in time order at the end
//! ([`Digest::joined`]), so that files of one instance may be given in any order.

pub mod gaps;
pub mod grid;
pub mod load;
pub mod stretch;

use crate::ingest::series::{restart_candidates, EventPoint, Series, Setting};
use stretch::{Closing, Stretch};

/// Stretches this close in time are joined as they come (see `Digest::collapse`): the parts
/// of a rotated log follow each other within a logging interval or two.
pub const CONTIGUOUS_MS: i64 = 60_000;

/// An instance's lines summed (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Digest {
    /// Cell length asked for (`--bucket`), ms.
    pub bucket: Option<i64>,
    stretches: Vec<Stretch>,
    events: Vec<EventPoint>,
    settings: Vec<Setting>,
    /// Whether the next lines start a new file (and so a new stretch: a file is one stretch of
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
            && self.stretches.last().is_some_and(|r| r.start() != i64::MAX)
        {
            self.start_stretch();
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
            let stretch = self.run_at(p.ts, &mut probes);
            stretch.gauges(p.ts, stats, p.running, p.waiting, p.kv_usage, p.accept_len);
            if stats {
                stretch.stats_stamp(p.ts);
                if p.gen_tps.is_finite() {
                    let prompt = s.prompt_tps.get(i).copied().unwrap_or(f64::NAN);
                    stretch.closing(Closing {
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
        // the rest come after the chunk's lines: in the stretch they follow, or in one of their
        // own if that stretch has gone past them
        for at in probes {
            if self.behind(at) {
                self.start_stretch();
            }
            if let Some(stretch) = self.stretches.last_mut() {
                stretch.probe(at);
            }
        }
        self.events.append(&mut s.events);
        self.settings.append(&mut s.settings);
    }

    /// Adds the stretches of another digest of the instance, read apart (a saved read), as the
    /// stretches of a later file are added.
    pub fn extend(&mut self, mut other: Digest) {
        for stretch in other.stretches {
            self.push_stretch(stretch);
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

    /// Whether a line stamped `t` needs a new stretch: there is none, or the last one has read
    /// past `t`.
    fn behind(&self, t: i64) -> bool {
        self.stretches
            .last()
            .is_none_or(|r| r.last().is_some_and(|l| t < l))
    }

    /// The stretch a line stamped `ts` goes to (a new one if the last has read past it), with
    /// the probes up to `ts` taken first.
    #[inline]
    fn run_at(
        &mut self,
        ts: i64,
        probes: &mut std::iter::Peekable<std::vec::IntoIter<i64>>,
    ) -> &mut Stretch {
        if self.behind(ts) {
            self.start_stretch();
        }
        // (there is one: `behind` is true of no stretch)
        let last = self.stretches.len().saturating_sub(1);
        let stretch = &mut self.stretches[last];
        while let Some(at) = probes.next_if(|&at| at <= ts) {
            stretch.probe(at);
        }
        stretch
    }

    /// Starts a new stretch, the last one being complete: joined first to a stretch it follows or
    /// precedes closely in time (see [`CONTIGUOUS_MS`]).
    fn start_stretch(&mut self) {
        self.push_stretch(Stretch::new(self.bucket, true));
    }

    /// Adds a stretch after the last one, that one being complete (see [`Digest::start_stretch`]).
    fn push_stretch(&mut self, stretch: Stretch) {
        self.collapse();
        self.stretches.push(stretch);
    }

    /// Joins the last stretch to a stretch that ends at most [`CONTIGUOUS_MS`] before it starts, or
    /// that starts at most that long after it ends, with no stretch between: the parts of a
    /// rotated log, in whatever order they are given, become one stretch as they come, so an
    /// instance read as hundreds of files keeps few stretches. (A part read later that falls in
    /// between after all makes the joined stretches overlap, which is counted as inexact.)
    fn collapse(&mut self) {
        let Some(p) = self.stretches.pop() else {
            return;
        };
        let Some((ps, pl)) = p.span else {
            self.stretches.push(p);
            return;
        };
        // another stretch with lines in the gap, its ends included
        let between = |stretches: &[Stretch], skip: usize, a: i64, b: i64| {
            stretches
                .iter()
                .enumerate()
                .any(|(k, r)| k != skip && r.span.is_some_and(|(s, l)| l >= a && s <= b))
        };
        // (a stretch takes another only once it has summed an interval: the lines of the one
        // joined then continue its own, and the first of them are summed here)
        let before = self.stretches.iter().position(|x| {
            x.summing()
                && x.span
                    .is_some_and(|(_, xl)| xl <= ps && ps - xl <= CONTIGUOUS_MS)
        });
        if let Some(i) = before {
            let xl = self.stretches[i].last().unwrap_or(ps);
            if !between(&self.stretches, i, xl, ps) {
                self.stretches[i].join(p);
                return;
            }
        }
        let after = self.stretches.iter().position(|y| {
            y.span
                .is_some_and(|(ys, _)| pl <= ys && ys - pl <= CONTIGUOUS_MS)
        });
        if let Some(i) = after.filter(|_| p.summing()) {
            let ys = self.stretches[i].start();
            if !between(&self.stretches, i, pl, ys) {
                let y = self.stretches.remove(i);
                let mut p = p;
                p.join(y);
                self.stretches.push(p);
                return;
            }
        }
        self.stretches.push(p);
    }

    /// Puts its events and start-up settings in time order: the last step of reading (see
    /// `Ingested::finish`). A stable sort: finishing the digests of two reads and then the
    /// digest they are merged into gives what finishing the merged digest alone gives.
    pub fn finish(&mut self) {
        self.events.sort_by_key(|e| e.ts);
        self.settings.sort_by_key(|s| s.ts);
    }

    /// Its stretches joined in time order into one, as if read in one piece; the digest is left
    /// as it is (the analyses take the read by shared reference).
    pub fn joined(&self) -> Stretch {
        let mut stretches = self.stretches.clone();
        // (stretches of one stamp tie: a start-up line before it puts one first)
        stretches.sort_by_key(|r| (r.start(), r.last(), r.probes.iter().map(|p| p.at).min()));
        let mut all = Stretch::new(self.bucket, false);
        for r in stretches {
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

    /// Lines a year and a half apart in one stretch are summed in cells of a day, the length
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
    /// come: an instance read as 300 files holds two stretches, not 300.
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
            assert!(
                d.stretches.len() <= 2,
                "{reverse}: {} stretches",
                d.stretches.len()
            );
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
