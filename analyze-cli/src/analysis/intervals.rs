//! Tokens generated: each stats line's interval, and the tokens it stands for.
//!
//! Engines do not log a token count, only a rate: SGLang's `gen throughput (token/s)` is the
//! tokens decoded since the previous `Decode batch` line divided by the wall time since it;
//! vLLM's `Avg generation throughput` is the same over its logging interval (5 s or 10 s).
//! So each stats line stands for an *interval* ending at its stamp, and the tokens of the
//! interval are `rate × length`. How long the interval was is the whole difficulty:
//!
//! - **Shared stamps.** Stamps are often whole seconds and SGLang logs several lines a
//!   second, so many lines share one stamp and naive differences are 0 s, then 1 s. Lines
//!   sharing a stamp are spread evenly over the second they were logged in (or up to the
//!   next stamp, if that is sooner) before differences are taken.
//! - **Gaps.** vLLM hides its stats lines while idle, and a server may stall or restart; a
//!   line after a gap still only averages over its own interval. An interval longer than
//!   [`GAP_FACTOR`] × the instance's typical (median) interval is cut to that typical length.
//! - **The first line** of an instance, and the first after a restart, has no predecessor: it
//!   is given the typical length (and never reaches back before the restart).
//!
//! Summed over a run, errors in single intervals cancel (the intervals tile the span). On the
//! simulated runs the estimate is within 1% of the simulator's true token count.
//!
//! The report never lists the intervals: each is summed as its line is read
//! ([`crate::ingest::digest`]) and settled at the end ([`crate::analysis::settle`]). The
//! plain listing here (`Intervals`, and the spreading and typical-interval helpers it is
//! built from: test builds only) is the definition those are tested against.

pub use crate::ingest::digest::gaps::Gaps;
#[cfg(test)]
use crate::ingest::series::{Point, Series};

/// An interval longer than this many typical intervals is a gap, not work.
pub const GAP_FACTOR: f64 = 4.0;

/// One stats line's interval: `[start, end)` in milliseconds, with its rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub start: i64,
    pub end: i64,
    pub gen_tps: f64,
    /// vLLM's prompt throughput over the same interval (0 for SGLang, whose prompt tokens
    /// come from `Prefill batch` lines).
    pub prompt_tps: f64,
    /// `running` on the line that closed the interval (NaN when absent).
    pub running: f64,
}

impl Interval {
    pub fn secs(&self) -> f64 {
        (self.end - self.start) as f64 / 1000.0
    }
    pub fn tokens(&self) -> f64 {
        self.gen_tps * self.secs()
    }
}

#[cfg(test)]
/// Stamps of lines sharing one stamp spread evenly over the second they were logged in
/// (or up to the next stamp, if sooner).
pub fn spread(ts: &[i64]) -> Vec<i64> {
    let mut out = ts.to_vec();
    spread_in_place(&mut out);
    out
}

#[cfg(test)]
/// [`spread`] in place: a fresh page costs more than the pass over it.
pub fn spread_in_place(out: &mut [i64]) {
    let mut i = 0;
    let ts = out;
    while i < ts.len() {
        let mut j = i + 1;
        while j < ts.len() && ts[j] == ts[i] {
            j += 1;
        }
        let k = (j - i) as i64;
        if k > 1 {
            let first = ts[i];
            let width = ts
                .get(j)
                .map_or(1000, |&next| (next - first).clamp(0, 1000));
            for (n, t) in ts[i..j].iter_mut().enumerate() {
                *t = first + n as i64 * width / k;
            }
        }
        i = j;
    }
}

#[cfg(test)]
/// Median of the positive differences of sorted stamps (the typical logging interval).
///
/// Counted rather than sorted: differences under a minute (nearly all of them) go into a
/// table of counts by millisecond, the rest into a short list; the median is read off the
/// counts. Exactly the middle order statistic, without a copy of millions of differences.
pub fn typical_gap(ts: &[i64]) -> Option<i64> {
    typical_gap_of(ts.iter().copied())
}

#[cfg(test)]
/// [`typical_gap`] of stamps read as they come (no copy of them is made).
pub fn typical_gap_of(ts: impl Iterator<Item = i64>) -> Option<i64> {
    typical_gap_and_longer(ts, i64::MAX).0
}

#[cfg(test)]
/// [`typical_gap_of`], and in the same pass the consecutive stamps further apart than
/// `longer` (in order): the candidates for a gap, which can then be judged against the
/// typical interval without a second pass over millions of stamps.
pub fn typical_gap_and_longer(
    ts: impl Iterator<Item = i64>,
    longer: i64,
) -> (Option<i64>, Vec<(i64, i64)>) {
    let mut gaps = Gaps::default();
    let mut long = Vec::new();
    for (a, b) in pairs(ts) {
        gaps.add(b - a);
        if b - a > longer {
            long.push((a, b));
        }
    }
    (gaps.typical(), long)
}

#[cfg(test)]
/// Consecutive pairs of `ts`.
pub fn pairs(ts: impl Iterator<Item = i64>) -> impl Iterator<Item = (i64, i64)> {
    ts.scan(None, |prev, t| Some(prev.replace(t).map(|p| (p, t))))
        .flatten()
}

#[cfg(test)]
/// An instance's stats lines with a rate, as the intervals are built from them: their
/// places among the points, their stamps spread ([`spread`]), and the typical interval.
pub struct StatLines {
    /// Their places among the points; `None` when they are all the points, in order (every
    /// point a stats line with a rate, as in most logs): no list of millions of indices.
    at: Option<Vec<u32>>,
    times: Vec<i64>,
    typical: i64,
}

#[cfg(test)]
impl StatLines {
    pub fn of(s: &Series) -> StatLines {
        // one pass, and the stamps spread where they were gathered: in this analysis, each
        // fresh megabyte costs more in page faults than the work done in it
        let (mut at, mut times): (Option<Vec<u32>>, Vec<i64>) = (None, Vec::new());
        for (i, (p, stats)) in s.points.iter().zip(s.stats_flags()).enumerate() {
            if stats && p.gen_tps.is_finite() {
                if let Some(at) = &mut at {
                    at.push(i as u32);
                }
                times.push(p.ts);
            } else if at.is_none() {
                // the first point that is not one: the places are listed from here on
                at = Some((0..i as u32).collect());
            }
        }
        spread_in_place(&mut times);
        let typical = typical_gap(&times).unwrap_or(1000).max(1);
        StatLines { at, times, typical }
    }
}

#[cfg(test)]
/// The intervals of an instance's stats lines (see the module docs), read where they are
/// used: each is its line's point, its spread stamp, and a start found from the stamp
/// before it, so nothing but the stamps is stored (whole intervals were 40 bytes a line,
/// the analysis's largest allocation; their starts alone were 8, and a fresh megabyte costs
/// more than the arithmetic each reading repeats).
pub struct Intervals<'a> {
    points: &'a [Point],
    /// Their prompt rates (empty: none).
    prompt: &'a [f64],
    /// The places of the lines among the points (`None`: all of them, in order).
    at: Option<Vec<u32>>,
    /// Ends: the spread stamps, in time order.
    ends: Vec<i64>,
    /// Restart times, sorted: no interval reaches back across one.
    cuts: Vec<i64>,
    typical: i64,
    /// Longer intervals are gaps: cut to the typical length.
    longest: i64,
}

#[cfg(test)]
impl Intervals<'_> {
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The `i`-th interval.
    #[inline]
    pub fn get(&self, i: usize) -> Interval {
        let at = self.at.as_ref().map_or(i, |at| at[i] as usize);
        let p = &self.points[at];
        let end = self.ends[i];
        let prompt = self.prompt.get(at).copied().unwrap_or(f64::NAN);
        Interval {
            start: self.start(i, end),
            end,
            gen_tps: p.gen_tps.max(0.0),
            prompt_tps: if prompt.is_finite() {
                prompt.max(0.0)
            } else {
                0.0
            },
            running: f64::from(p.running),
        }
    }

    /// Where the `i`-th interval, ending at `end`, starts: where the line before ended,
    /// unless there is none, a restart came between, or the gap is too long.
    #[inline]
    fn start(&self, i: usize, end: i64) -> i64 {
        // the last cut at or before the line
        let cut = match self.cuts.first() {
            Some(&c) if c <= end => self.cuts[..self.cuts.partition_point(|&c| c <= end)]
                .last()
                .copied(),
            _ => None,
        };
        let prev = i.checked_sub(1).map(|j| self.ends[j]);
        match prev {
            Some(s) if cut.is_none_or(|c| c <= s) && end - s <= self.longest => s,
            // first line, first after a restart, or after a gap: the typical length, never
            // before the restart
            _ => (end - self.typical).max(cut.unwrap_or(i64::MIN)),
        }
    }

    /// The intervals in time order.
    pub fn iter(&self) -> impl Iterator<Item = Interval> + Clone + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Those ending in `[from, to)`.
    pub fn ending_in(&self, from: i64, to: i64) -> impl Iterator<Item = Interval> + '_ {
        let lo = self.ends.partition_point(|&e| e < from);
        let hi = lo + self.ends[lo..].partition_point(|&e| e < to);
        (lo..hi).map(|i| self.get(i))
    }
}

#[cfg(test)]
/// The intervals of an instance's stats lines (see the module docs). `cuts` are restart
/// times: no interval reaches back across one.
pub fn intervals<'a>(s: &'a Series, cuts: &[i64]) -> Intervals<'a> {
    intervals_of(s, StatLines::of(s), cuts)
}

#[cfg(test)]
/// [`intervals`] from the stats lines already found.
pub fn intervals_of<'a>(s: &'a Series, lines: StatLines, cuts: &[i64]) -> Intervals<'a> {
    let typical = lines.typical;
    let mut cuts = cuts.to_vec();
    cuts.sort_unstable();
    Intervals {
        points: &s.points,
        prompt: &s.prompt_tps,
        at: lines.at,
        ends: lines.times,
        cuts,
        typical,
        longest: (typical as f64 * GAP_FACTOR) as i64,
    }
}
