//! An instance's lines settled: what only the whole log tells, applied to its digest.
//!
//! The digest ([`crate::ingest::digest`]) sums every interval as it is read, starting where
//! the line before ended. Once the whole log is read, its typical interval is known, and
//! so are its cuts (restarts, long silences: [`segments`]); the intervals that are gaps or
//! cross a restart are then cut to the typical length, and the first one is given it, by
//! taking their sums out and putting the changed ones in (integer sums: exact). The
//! timeline, the curve and the segments read the result.

use crate::analysis::intervals::GAP_FACTOR;
use crate::analysis::segments::{self, Reason};
use crate::ingest::digest::grid::{self, Totals};
use crate::ingest::digest::stretch::{Closing, Probe, Stretch};
use crate::ingest::digest::Digest;
use crate::ingest::series::restart_candidates;

/// An instance's lines, settled.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub run: Stretch,
    /// Where its first interval starts.
    pub first_start: Option<i64>,
    /// Where its log is cut, and why.
    pub cuts: Vec<(i64, Reason)>,
    /// Lines out of time order, and intervals, that could not be placed exactly.
    pub inexact: u64,
}

/// Settles an instance's lines (see the module docs), from its digest (left as it is).
pub fn settle(d: &Digest) -> Settled {
    let mut all = d.joined();
    // the cuts, from the stats stamps as logged
    let starts = restart_candidates(d.settings(), d.events());
    let prefill_tail: Vec<i64> = all.tail.iter().filter(|t| t.1).map(|t| t.0).collect();
    let cuts = segments::cuts(&segments::CutInputs {
        starts: &starts,
        stats: all.stats,
        typical: all.raw_gaps.typical(),
        long: &all.long,
        prefill_first: all.prefill_first,
        prefill_tail: &prefill_tail,
    });
    // the intervals whose start the whole log settles
    let typical = all.gaps.typical().unwrap_or(1000).max(1);
    let longest = (typical as f64 * GAP_FACTOR) as i64;
    let mut inexact = all.disorder;
    if all.keep_over > longest {
        inexact += 1;
    }
    let restarts: Vec<i64> = cuts.iter().map(|c| c.0).collect();
    let mut first_start = None;
    let kept = std::mem::take(&mut all.kept);
    for k in &kept {
        let cut = restarts[..restarts.partition_point(|&c| c <= k.end)]
            .last()
            .copied();
        let start = match k.start {
            Some(s) if cut.is_none_or(|c| c <= s) && k.end - s <= longest => s,
            _ => (k.end - typical).max(cut.unwrap_or(i64::MIN)),
        };
        if k.start.is_none() {
            first_start = Some(start);
            all.grid.starts_at(start);
        }
        if k.start == Some(start) {
            continue;
        }
        let mut delta = Totals::default();
        if let Some(old) = k.start {
            all.sum(old, k.end, k.line, -1);
            delta.sub(totals_of(old, k.end, k.line));
        }
        all.sum(start, k.end, k.line, 1);
        delta.add(totals_of(start, k.end, k.line));
        for p in &mut all.probes {
            if k.end < p.at {
                if let Some(b) = &mut p.before {
                    b.add(delta);
                }
            }
        }
    }
    // probes no interval reached: every interval ends before them
    for p in &mut all.probes {
        if p.before.is_none() {
            p.before = Some(all.totals);
        }
    }
    all.probes.sort_by_key(|p| p.at);
    Settled {
        run: all,
        first_start,
        cuts,
        inexact,
    }
}

fn totals_of(start: i64, end: i64, l: Closing) -> Totals {
    let ms = end - start;
    Totals {
        tokens: grid::rate_steps(l.gen) * i128::from(ms),
        ms,
        count: 1,
    }
}

/// An answer, and whether it is exact.
pub type Placed<T> = (T, bool);

impl Settled {
    /// The first and last stamp of its stats lines.
    pub fn span(&self) -> Option<(i64, i64)> {
        self.run.span
    }

    fn probe(&self, at: i64) -> Option<&Probe> {
        let i = self.run.probes.binary_search_by_key(&at, |p| p.at).ok()?;
        self.run.probes.get(i)
    }

    /// The intervals ending before `t`.
    pub fn before(&self, t: i64) -> Placed<Totals> {
        if t == i64::MIN {
            return (Totals::default(), true);
        }
        if t == i64::MAX {
            return (self.run.totals, true);
        }
        if let Some(b) = self.probe(t).and_then(|p| p.before) {
            return (b, true);
        }
        // from the cells: exact unless the cell of `t` has ends on both sides of it
        let mut sum = Totals::default();
        let mut exact = true;
        let len = self.run.grid.len;
        for (start, c) in self.run.grid.iter() {
            if start + len <= t {
                sum.add(c.ended);
            } else if start <= t {
                if c.ends.1 < t {
                    sum.add(c.ended);
                } else if c.ends.0 < t {
                    exact = false;
                }
            }
        }
        (sum, exact)
    }

    /// The first and last stamp of its stats lines in `[from, to)`.
    pub fn span_in(&self, from: i64, to: i64) -> Placed<Option<(i64, i64)>> {
        let Some((lo, hi)) = self.run.span else {
            return (None, true);
        };
        let (first, e1) = self.first_at(from, lo);
        let (last, e2) = self.last_below(to, hi);
        let span = match (first, last) {
            (Some(a), Some(b)) if a <= b && a < to && b >= from => Some((a, b)),
            _ => None,
        };
        (span, e1 && e2)
    }

    /// The first stamp at or after `t`.
    fn first_at(&self, t: i64, lo: i64) -> Placed<Option<i64>> {
        if t <= lo {
            return (Some(lo), true);
        }
        // the first stats line after prefill batches, or a prefill batch after a silence
        if self.run.stats.is_some_and(|s| s.0 == t) || self.run.tail.iter().any(|p| p.0 == t) {
            return (Some(t), true);
        }
        if let Some(p) = self.probe(t) {
            return (p.first_at, true);
        }
        let len = self.run.grid.len;
        for (start, c) in self.run.grid.iter() {
            if start + len <= t || c.stamps.1 < t {
                continue;
            }
            return (Some(c.stamps.0.max(t)), c.stamps.0 >= t);
        }
        (None, true)
    }

    /// The last stamp before `t`.
    fn last_below(&self, t: i64, hi: i64) -> Placed<Option<i64>> {
        if t > hi {
            return (Some(hi), true);
        }
        if let Some(p) = self.probe(t) {
            return (p.last_below, true);
        }
        // a silence after the last stats line, ended by a prefill batch
        let run = &self.run;
        if let Some((_, last)) = run.stats.filter(|s| s.1 < t) {
            let i = run.tail.partition_point(|p| p.0 < t);
            let below = run.tail.get(i.wrapping_sub(1)).map_or(last, |p| p.0);
            return (Some(below.max(last)), true);
        }
        if run.stats.is_some_and(|s| s.0 == t) {
            return (run.lead_below(t), true);
        }
        let len = run.grid.len;
        for (start, c) in run.grid.iter().collect::<Vec<_>>().into_iter().rev() {
            if start >= t || c.stamps.0 >= t {
                continue;
            }
            return (
                Some(c.stamps.1.min(t - 1)),
                c.stamps.1 < t || start + len <= t,
            );
        }
        (None, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::{self, typical_gap_and_longer};
    use crate::analysis::segments::GAP_MIN_MS;
    use crate::ingest::digest::grid::{Cell, Grid};
    use crate::ingest::digest::load::Load;
    use crate::ingest::series::Series;
    use crate::ingest::series::{EventPoint, PointKind, Setting, Stamped};
    use crate::testing::Lcg;
    use tokstat_parsers::record::EventKind;
    use tokstat_parsers::record::{Gauges, StepKind};
    use tokstat_parsers::stamp::Ts;

    /// One line of a generated log.
    #[derive(Debug, Clone)]
    enum Row {
        Step(i64, StepKind, Gauges),
        Setting(i64),
        Ready(i64),
    }

    impl Row {
        fn ts(&self) -> i64 {
            match self {
                Row::Step(t, ..) | Row::Setting(t) | Row::Ready(t) => *t,
            }
        }
    }

    fn series_of(rows: &[Row]) -> Series {
        let mut s = Series::default();
        for r in rows {
            match r {
                Row::Step(t, k, g) => s.step(Ts(*t), *k, g),
                Row::Setting(t) => s.settings.push(Setting {
                    ts: *t,
                    key: "max_running_requests".into(),
                    value: "16".into(),
                }),
                Row::Ready(t) => s.events.push(EventPoint {
                    ts: *t,
                    kind: EventKind::ServerReady,
                    count: 1,
                }),
            }
        }
        s
    }

    /// A log of one instance: same stamps, seconds, odd gaps, silences, restarts, lines
    /// without a rate, speculative metrics, prefill batches, vLLM prompt rates.
    fn log(rng: &mut Lcg) -> Vec<Row> {
        let mut t = 1_700_000_000_000 + rng.below(5000) as i64;
        let mut rows = vec![Row::Setting(t - 3000)];
        let n = 1 + rng.below(600);
        for _ in 0..n {
            t += match rng.below(100) {
                0..=39 => 0,
                40..=69 => 1000,
                70..=96 => rng.below(3000) as i64,
                97 => 400_000 + rng.below(1_500_000) as i64,
                _ => 60_000 + rng.below(100_000) as i64,
            };
            match rng.below(100) {
                0 => rows.push(Row::Setting(t)),
                1 => rows.push(Row::Ready(t)),
                2..=26 => {
                    let g = Gauges {
                        new_tokens: Some(rng.below(5000)),
                        ..Gauges::default()
                    };
                    rows.push(Row::Step(t, StepKind::Prefill, g));
                }
                27..=34 => {
                    let g = Gauges {
                        accept_len: Some(1.0 + rng.below(300) as f64 / 100.0),
                        ..Gauges::default()
                    };
                    rows.push(Row::Step(t, StepKind::Spec, g));
                }
                k => {
                    let g = Gauges {
                        running: (k % 9 != 0).then(|| rng.below(70)),
                        waiting: Some(rng.below(9)),
                        gen_tps: (k % 13 != 0).then(|| rng.below(300_000) as f64 / 100.0),
                        prompt_tps: (k % 5 == 0).then(|| rng.below(90_000) as f64 / 10.0),
                        kv_usage: Some(rng.below(100) as f64 / 100.0),
                        accept_len: None,
                        ..Gauges::default()
                    };
                    rows.push(Row::Step(t, StepKind::Decode, g));
                }
            }
        }
        rows
    }

    /// What the digest should hold, computed the plain way from the whole series: every
    /// interval listed (`analysis::intervals`), then summed.
    struct Reference {
        cuts: Vec<(i64, Reason)>,
        intervals: Vec<intervals::Interval>,
        grid: Grid,
        load: Load,
        totals: Totals,
    }

    fn reference(s: &Series) -> Reference {
        let stats: Vec<i64> = s
            .points
            .iter()
            .zip(s.stats_flags())
            .filter(|(_, f)| *f)
            .map(|(p, _)| p.ts)
            .collect();
        let (typical, long) = typical_gap_and_longer(stats.iter().copied(), GAP_MIN_MS);
        let mut starts: Vec<i64> = s.settings.iter().map(|c| c.ts).collect();
        starts.extend(
            s.events
                .iter()
                .filter(|e| e.kind == EventKind::ServerReady)
                .map(|e| e.ts),
        );
        starts.sort_unstable();
        // prefill stamps after the last stats line
        let mut tail: Vec<i64> = Vec::new();
        for step in s.steps() {
            match step {
                Stamped::Point(_, i) if s.kind(i) == PointKind::Stats => tail.clear(),
                Stamped::Prefill(p) if tail.last() != Some(&p.ts) => tail.push(p.ts),
                _ => {}
            }
        }
        let cuts = segments::cuts(&segments::CutInputs {
            starts: &starts,
            stats: stats.first().map(|&f| (f, *stats.last().unwrap_or(&f))),
            typical,
            long: &long,
            prefill_first: s.prefill.iter().map(|p| p.ts).min(),
            prefill_tail: &tail,
        });
        let restarts: Vec<i64> = cuts.iter().map(|c| c.0).collect();
        let iv: Vec<intervals::Interval> = intervals::intervals(s, &restarts).iter().collect();
        let mut grid = Grid::new(None);
        let mut load = Load::default();
        let mut totals = Totals::default();
        if let Some(first) = iv.first() {
            grid.starts_at(first.start);
        }
        for step in s.steps() {
            match step {
                Stamped::Point(p, i) => grid.line(
                    p.ts,
                    s.kind(i) == PointKind::Stats,
                    p.running,
                    p.waiting,
                    p.kv_usage,
                    p.accept_len,
                ),
                Stamped::Prefill(p) => grid.prefill(p.ts, p.new_tokens),
            }
        }
        for i in &iv {
            let g = grid::rate_steps(i.gen_tps);
            let t = Totals {
                tokens: g * i128::from(i.end - i.start),
                ms: i.end - i.start,
                count: 1,
            };
            grid.spread(i.start, i.end, g, grid::rate_steps(i.prompt_tps), 1);
            grid.ended(i.end, t, 1);
            totals.add(t);
            load.add(i.running as f32, i.gen_tps, i.end - i.start, 1);
        }
        Reference {
            cuts,
            intervals: iv,
            grid,
            load,
            totals,
        }
    }

    /// The cells as compared: those holding something, without the span of interval ends
    /// (an interval taken out again leaves it wider, which only makes a query cautious).
    fn cells(g: &Grid) -> Vec<(i64, Cell)> {
        g.iter()
            .map(|(t, c)| (t, Cell { ends: (0, 0), ..*c }))
            .filter(|(_, c)| {
                *c != Cell {
                    ends: (0, 0),
                    ..Cell::default()
                }
            })
            .collect()
    }

    type Counts = (Vec<(u32, i64, i64, i128)>, Vec<((u32, u64), i64)>);

    fn load_counts(l: &Load) -> Counts {
        let mut levels: Vec<_> = l
            .levels()
            .map(|(r, v)| (r, v.lines, v.ms, v.running_ms))
            .collect();
        levels.sort_unstable();
        let mut rates: Vec<_> = l
            .rates()
            .filter(|(_, n)| *n != 0)
            .map(|((r, g), n)| ((r.to_bits(), g.to_bits()), n))
            .collect();
        rates.sort_unstable();
        (levels, rates)
    }

    /// The digest of a log read in chunks of any size, its files given in any order, holds
    /// exactly what the plain reading of the whole log in time order gives: the same cuts,
    /// the same first interval, every cell's sums, the curve's counts, the totals, and the
    /// intervals and stamps on either side of every cut.
    #[test]
    fn chunks_and_files_in_any_order_sum_like_the_whole_log() {
        let mut rng = Lcg(42);
        let mut with_cuts = 0;
        for case in 0..600 {
            let rows = log(&mut rng);
            let whole = series_of(&rows);
            let want = reference(&whole);

            // files: contiguous pieces; chunks: pieces of files
            let mut files: Vec<&[Row]> = Vec::new();
            let mut rest = &rows[..];
            while !rest.is_empty() {
                let k = (1 + rng.below(rest.len() as u64 * 2)).min(rest.len() as u64) as usize;
                let (a, b) = rest.split_at(k);
                files.push(a);
                rest = b;
            }
            let order = rng.below(3);
            // (two files starting at the same stamp, given out of order, cannot be told
            // apart: lines sharing a stamp are spread in the order given)
            let spans: Vec<(i64, i64)> = files
                .iter()
                .map(|f| (f[0].ts(), f[f.len() - 1].ts()))
                .collect();
            if order != 0
                && spans
                    .iter()
                    .any(|s| spans.iter().filter(|t| t.0 == s.0).count() > 1)
            {
                continue;
            }
            if order == 1 {
                files.reverse();
            } else if order == 2 && files.len() > 2 {
                files.swap(0, 2);
            }
            let mut d = Digest::new(None);
            for f in &files {
                d.new_file();
                let mut rest = *f;
                while !rest.is_empty() {
                    let k = (1 + rng.below(40)).min(rest.len() as u64) as usize;
                    let (a, b) = rest.split_at(k);
                    d.push(&mut series_of(a));
                    rest = b;
                }
            }
            let got = settle(&d);
            // (files out of time order whose stamps overlap cannot be exact: not made here)
            assert_eq!(
                got.inexact,
                0,
                "case {case} disorder {} files {} order {order} first {:?}",
                got.run.disorder,
                files.len(),
                files.iter().map(|f| f[0].ts()).collect::<Vec<_>>()
            );
            assert_eq!(got.cuts, want.cuts, "case {case}");
            assert_eq!(
                got.first_start,
                want.intervals.first().map(|i| i.start),
                "case {case}"
            );
            assert_eq!(
                got.run.totals,
                want.totals,
                "case {case} order {order} files {:?}",
                files
                    .iter()
                    .map(|f| (f[0].ts(), f.len(), f.last().map(Row::ts)))
                    .collect::<Vec<_>>()
            );
            assert_eq!(
                load_counts(&got.run.load),
                load_counts(&want.load),
                "case {case}"
            );
            let mut g = want.grid.clone();
            g.coarsen(got.run.grid.len);
            assert_eq!(got.run.grid.len, g.len, "case {case}");
            assert_eq!(cells(&got.run.grid), cells(&g), "case {case}");
            // at every cut: the intervals before it, and the stamps around it
            let stamps: Vec<i64> = whole.steps().map(|s| s.ts()).collect();
            for &(c, _) in &want.cuts {
                with_cuts += 1;
                let mut before = Totals::default();
                for i in want.intervals.iter().filter(|i| i.end < c) {
                    before.add(Totals {
                        tokens: grid::rate_steps(i.gen_tps) * i128::from(i.end - i.start),
                        ms: i.end - i.start,
                        count: 1,
                    });
                }
                assert_eq!(
                    got.before(c),
                    (before, true),
                    "case {case} cut {c} order {order} files {:?}",
                    files
                        .iter()
                        .map(|f| (f[0].ts(), f.len(), f.last().map(Row::ts)))
                        .collect::<Vec<_>>()
                );
                let lo = stamps.iter().copied().filter(|&t| t >= c).min();
                let hi = stamps.iter().copied().filter(|&t| t < c).max();
                let (span, exact) = got.span_in(c, i64::MAX);
                assert!(exact, "case {case} cut {c} {:?}", got.cuts);
                assert_eq!(
                    span.map(|s| s.0),
                    lo,
                    "case {case} cut {c} {:?} {:?} {:?} files {:?}",
                    got.cuts,
                    got.run.probes.iter().find(|p| p.at == c),
                    got.run.stats,
                    files
                        .iter()
                        .map(|f| (f[0].ts(), f.len(), f.last().map(Row::ts)))
                        .collect::<Vec<_>>()
                );
                let (span, exact) = got.span_in(i64::MIN, c);
                assert!(exact, "case {case} cut {c} {:?}", got.cuts);
                assert_eq!(
                    span.map(|s| s.1),
                    hi,
                    "case {case} cut {c} {:?} {:?} files {:?}",
                    got.run.probes,
                    got.run.stats,
                    files
                        .iter()
                        .map(|f| (f[0].ts(), f.len(), f.last().map(Row::ts)))
                        .collect::<Vec<_>>()
                );
            }
        }
        assert!(with_cuts > 100, "{with_cuts}");
    }
}
