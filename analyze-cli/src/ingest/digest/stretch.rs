//! A stretch: an instance's stats lines read in time order, turned into intervals and summed as
//! they come (see `analysis::intervals` for what an interval is).
//!
//! Each line's interval ends at its spread stamp and starts where the line before ended, so
//! a stretch keeps only the lines of its last stamp (their spread waits for the next stamp) and
//! sums every interval into its [`Grid`], its [`Load`] and its totals at once. What is known
//! only at the end is applied then: an interval longer than a few typical intervals (a gap)
//! or crossing a restart is cut to the typical length, and the first one is given it. Such
//! intervals are [`Kept`] as they are summed, and changed at the end by taking their sums
//! out again and putting the changed ones in: the sums are integers, so that is exact.
//!
//! A stretch that does not start the instance's log (a later file, or lines out of time order)
//! starts *cold*: the lines of its first stamp, and the interval of the first line after
//! them, depend on the lines before it, so they are kept aside until the stretch is joined to
//! the one before it ([`Stretch::join`]).

use super::gaps::Gaps;
use super::grid::{rate_steps, Grid, Totals};
use super::load::Load;

/// A silence must be at least this long to cut a log into segments
/// (`analysis::segments`): consecutive stats stamps further apart are listed as read.
pub const GAP_MIN_MS: i64 = 300_000;

/// A stats line with a rate: what its interval is made of.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Closing {
    /// Its stamp (not yet spread).
    pub ts: i64,
    /// Generation rate, tokens/s (at least 0).
    pub gen: f64,
    /// vLLM's prompt rate, tokens/s (0 when absent).
    pub prompt: f64,
    /// `running` on the line (NaN when absent).
    pub running: f32,
}

/// An interval summed whose start may change at the end (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Kept {
    /// Where it starts as summed; `None`: not summed yet (the first of the instance).
    pub start: Option<i64>,
    pub end: i64,
    pub line: Closing,
}

impl Kept {
    fn len(&self) -> i64 {
        self.start.map_or(i64::MAX, |s| self.end - s)
    }
}

/// What is known at a time `at` the log may be cut at (a start-up line, the end of a long
/// silence): the intervals ending before it, and the stamps around it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Probe {
    pub at: i64,
    /// The intervals ending before `at` (`None` until an interval ends at or after it).
    pub before: Option<Totals>,
    /// The last stamp of a stats line before `at`, and the first at or after it.
    pub last_below: Option<i64>,
    pub first_at: Option<i64>,
}

/// Intervals kept beyond this many are thinned to the longer half.
const KEEP: usize = 1 << 16;

/// Cold-start state (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
struct Head {
    /// The lines of the first stamp, and the stamp after it (`None` while it lasts).
    lines: Vec<Closing>,
    next: Option<i64>,
    /// The first line after them, with its spread end: its interval's start is the end of
    /// the head's last line, known once joined.
    dangling: Option<(Closing, i64)>,
    /// Whether the lines of the second stamp are still to be resolved.
    second: bool,
}

/// One stretch (see the module docs).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stretch {
    pub grid: Grid,
    pub load: Load,
    pub totals: Totals,
    /// Lengths of the intervals (differences of spread stamps).
    pub gaps: Gaps,
    /// Differences of consecutive stats stamps (as logged), for the segments.
    pub raw_gaps: Gaps,
    /// Consecutive stats stamps further apart than [`GAP_MIN_MS`].
    pub long: Vec<(i64, i64)>,
    /// Intervals longer than `keep_over`, the first, and those crossing a probe.
    pub kept: Vec<Kept>,
    /// Every interval longer than this is in `kept`.
    pub keep_over: i64,
    pub probes: Vec<Probe>,
    /// First and last stamp of its stats lines (points and prefill batches).
    pub span: Option<(i64, i64)>,
    /// First and last stamp of its stats lines proper (decode / periodic stats).
    pub stats: Option<(i64, i64)>,
    /// The first prefill stamp.
    pub prefill_first: Option<i64>,
    /// The stamps before any stats line (of prefill batches, speculative metrics), distinct
    /// and in order.
    pub lead: Vec<i64>,
    /// Stamps after the last stats line (or all, before one), distinct and in order, and
    /// whether each is a prefill batch's.
    pub tail: Vec<(i64, bool)>,
    /// Lines read out of time order that could not be placed exactly.
    pub disorder: u64,
    /// Lines of the stamp being read (their spread waits for the next stamp).
    group: Vec<Closing>,
    /// Where the last interval summed ends.
    last_end: Option<i64>,
    /// The stamp before the last distinct one (for probes).
    prev_stamp: Option<i64>,
    /// Probes still waiting for a stamp at or after them.
    waiting: Vec<usize>,
    /// Probes no interval has reached yet.
    open: usize,
    head: Option<Head>,
}

impl Stretch {
    /// A stretch that starts the instance (`cold` false) or continues it.
    pub fn new(bucket: Option<i64>, cold: bool) -> Stretch {
        Stretch {
            grid: Grid::new(bucket),
            load: Load::default(),
            totals: Totals::default(),
            gaps: Gaps::default(),
            raw_gaps: Gaps::default(),
            long: Vec::new(),
            kept: Vec::new(),
            keep_over: 0,
            probes: Vec::new(),
            span: None,
            stats: None,
            prefill_first: None,
            lead: Vec::new(),
            tail: Vec::new(),
            disorder: 0,
            group: Vec::new(),
            last_end: None,
            prev_stamp: None,
            waiting: Vec::new(),
            open: 0,
            head: cold.then(Head::default),
        }
    }

    /// Whether it has summed an interval (a cold stretch: past its first lines).
    pub fn summing(&self) -> bool {
        self.last_end.is_some()
    }

    /// Where it starts: its first stamp, or its first probe if it has no line.
    pub fn start(&self) -> i64 {
        self.span
            .map(|s| s.0)
            .or_else(|| self.probes.iter().map(|p| p.at).min())
            .unwrap_or(i64::MAX)
    }

    /// The last stamp read.
    pub fn last(&self) -> Option<i64> {
        self.span.map(|s| s.1)
    }

    /// Notes the stamp of any stats line.
    #[inline]
    fn stamp(&mut self, ts: i64) {
        match &mut self.span {
            None => self.span = Some((ts, ts)),
            Some((a, b)) => {
                if ts != *b {
                    self.prev_stamp = Some(*b);
                }
                *a = (*a).min(ts);
                *b = (*b).max(ts);
            }
        }
        if !self.waiting.is_empty() {
            let probes = &mut self.probes;
            self.waiting.retain(|&i| {
                let p = &mut probes[i];
                if ts >= p.at {
                    p.first_at = Some(ts);
                    false
                } else {
                    p.last_below = Some(p.last_below.map_or(ts, |l| l.max(ts)));
                    true
                }
            });
        }
    }

    /// The last of the stamps before its first stats line that comes before `t`.
    pub fn lead_below(&self, t: i64) -> Option<i64> {
        self.lead.iter().copied().take_while(|&l| l < t).last()
    }

    /// The last stamp read before `at` (read in time order, up to `at`).
    fn below(&self, at: i64) -> Option<i64> {
        match (self.last(), self.prev_stamp) {
            (Some(l), _) if l < at => Some(l),
            (_, Some(p)) if p < at => Some(p),
            _ => None,
        }
    }

    /// A probe at `at` (a start-up line's stamp, the end of a silence); read before the
    /// lines stamped at or after it (see [`Probe`]).
    pub fn probe(&mut self, at: i64) {
        if self.probes.iter().any(|p| p.at == at) {
            return;
        }
        let last = self.last();
        let below = self.below(at);
        // lines after it already summed: it cannot be placed exactly
        if self.last_end.is_some_and(|e| e >= at) {
            self.disorder += 1;
        }
        let first_at = last.filter(|&l| l >= at);
        self.probes.push(Probe {
            at,
            before: None,
            last_below: below,
            first_at,
        });
        self.open += 1;
        if first_at.is_none() {
            self.waiting.push(self.probes.len() - 1);
        }
    }

    /// A prefill stamp's new tokens.
    #[inline]
    pub fn prefill(&mut self, ts: i64, tokens: u32) {
        self.stamp(ts);
        self.grid.prefill(ts, tokens);
        self.prefill_first = Some(self.prefill_first.map_or(ts, |f| f.min(ts)));
        self.other(ts, true);
    }

    /// Notes the stamp of a line other than a stats line proper.
    #[inline]
    fn other(&mut self, ts: i64, prefill: bool) {
        if self.stats.is_none() && self.lead.last() != Some(&ts) {
            self.lead.push(ts);
        }
        if self.tail.last() != Some(&(ts, prefill)) {
            self.tail.push((ts, prefill));
        }
    }

    /// A stats line proper (not speculative metrics): its stamp as logged.
    #[inline]
    pub fn stats_stamp(&mut self, ts: i64) {
        match &mut self.stats {
            None => self.stats = Some((ts, ts)),
            Some((first, last)) => {
                let prev = *last;
                *last = prev.max(ts);
                *first = (*first).min(ts);
                self.raw_gaps.add(ts - prev);
                if ts - prev > GAP_MIN_MS {
                    self.long.push((prev, ts));
                    self.probe(ts);
                }
            }
        }
        self.tail.clear();
    }

    /// A line's gauges, at its stamp.
    #[inline]
    pub fn gauges(&mut self, ts: i64, stats: bool, running: f32, waiting: f32, kv: f32, al: f32) {
        self.stamp(ts);
        if !stats {
            self.other(ts, false);
        }
        self.grid.line(ts, stats, running, waiting, kv, al);
    }

    /// A stats line with a rate.
    #[inline]
    pub fn closing(&mut self, l: Closing) {
        if let Some(g) = self.group.first() {
            if g.ts != l.ts {
                self.resolve(Some(l.ts));
            }
        }
        self.group.push(l);
    }

    /// Spreads the lines of the last stamp up to `next` (the next stamp, if any) and sums
    /// their intervals.
    fn resolve(&mut self, next: Option<i64>) {
        // (one line a stamp, past the head: the common case, without moving the group)
        if let [l] = self.group[..] {
            if self
                .head
                .as_ref()
                .is_none_or(|h| h.next.is_some() && !h.second)
            {
                self.group.clear();
                self.interval(self.last_end, l.ts, l);
                self.last_end = Some(l.ts);
                return;
            }
        }
        let group = std::mem::take(&mut self.group);
        let Some(first) = group.first().map(|l| l.ts) else {
            return;
        };
        if let Some(h) = &mut self.head {
            if h.next.is_none() {
                h.lines = group;
                h.next = next;
                h.second = true;
                return;
            }
        }
        let k = group.len() as i64;
        let width = next.map_or(1000, |n| (n - first).clamp(0, 1000));
        for (n, l) in group.iter().enumerate() {
            let end = if k > 1 {
                first + n as i64 * width / k
            } else {
                first
            };
            if n == 0 {
                if let Some(h) = &mut self.head {
                    if h.second {
                        h.second = false;
                        h.dangling = Some((*l, end));
                        self.last_end = Some(end);
                        continue;
                    }
                }
            }
            self.interval(self.last_end, end, *l);
            self.last_end = Some(end);
        }
        self.group = group;
        self.group.clear();
    }

    /// Sums the interval of line `l`, ending at `end`, which starts at `prev` (the end of
    /// the line before; `None` for the first of the instance).
    fn interval(&mut self, prev: Option<i64>, end: i64, l: Closing) {
        let Some(start) = prev else {
            self.grid.starts_at(end);
            self.kept.push(Kept {
                start: None,
                end,
                line: l,
            });
            return;
        };
        let d = end - start;
        self.gaps.add(d);
        // probes it reaches: the intervals before them are all summed
        let mut crossing = false;
        if self.open > 0 {
            for p in self.probes.iter_mut().filter(|p| p.before.is_none()) {
                if end >= p.at {
                    p.before = Some(self.totals);
                    crossing = true;
                    self.open -= 1;
                }
            }
        }
        self.add(start, end, l);
        if crossing || d > self.keep_over {
            self.kept.push(Kept {
                start: Some(start),
                end,
                line: l,
            });
            if self.kept.len() > KEEP {
                self.thin();
            }
        }
    }

    /// Keeps the longer half of the kept intervals (and every one that must be kept).
    #[cold]
    fn thin(&mut self) {
        let mut lens: Vec<i64> = self.kept.iter().map(Kept::len).collect();
        let mid = lens.len() / 2;
        let over = *lens.select_nth_unstable(mid).1;
        self.keep_over = self.keep_over.max(over);
        let probes: Vec<i64> = self.probes.iter().map(|p| p.at).collect();
        let keep_over = self.keep_over;
        self.kept.retain(|k| {
            k.len() > keep_over
                || probes
                    .iter()
                    .any(|&at| k.start.is_none_or(|s| s < at) && k.end >= at)
        });
    }

    /// Adds the sums of an interval: [`Stretch::sum`] with `sign` 1, in one cell lookup where
    /// the interval lies inside one cell (the per-line path; one call site, inlined).
    #[inline(always)]
    fn add(&mut self, start: i64, end: i64, l: Closing) {
        let g = rate_steps(l.gen);
        let p = if l.prompt == 0.0 {
            0
        } else {
            rate_steps(l.prompt)
        };
        let ms = end - start;
        let tokens = g * i128::from(ms);
        let t = Totals {
            tokens,
            ms,
            count: 1,
        };
        if !self.grid.within(start, end, tokens, p * i128::from(ms), t) {
            self.grid.spread(start, end, g, p, 1);
            self.grid.ended(end, t, 1);
        }
        self.totals.add(t);
        self.load.add(l.running, l.gen, ms, 1);
    }

    /// Adds (`sign` 1) or takes out (-1) the sums of an interval.
    pub fn sum(&mut self, start: i64, end: i64, l: Closing, sign: i64) {
        let (g, p) = (rate_steps(l.gen), rate_steps(l.prompt));
        let ms = end - start;
        self.grid.spread(start, end, g, p, i128::from(sign));
        let t = Totals {
            tokens: g * i128::from(ms),
            ms,
            count: 1,
        };
        if sign > 0 {
            self.totals.add(t);
        } else {
            self.totals.sub(t);
        }
        self.grid.ended(end, t, sign);
        self.load.add(l.running, l.gen, ms, sign);
    }

    /// Ends the stretch: its last lines are spread to `next`, the next stretch's first stamp.
    pub fn close(&mut self, next: Option<i64>) {
        self.resolve(next);
    }

    /// Takes a probe of a stretch joined (unless it has one at the same time).
    fn adopt(&mut self, mut p: Probe) {
        if p.last_below.is_none() {
            p.last_below = self.below(p.at);
        }
        // this stretch's last stamps may be at it (a start-up line at the end of one file and
        // the lines after it in the next)
        if let Some(l) = self.last().filter(|&l| l >= p.at) {
            if self.prev_stamp.is_none_or(|q| q < p.at) {
                p.first_at = Some(p.first_at.map_or(l, |f| f.min(l)));
            } else {
                self.disorder += 1;
            }
        }
        match self.probes.iter_mut().find(|q| q.at == p.at) {
            // the same time probed on both sides: each saw its own stamps
            Some(q) => {
                q.last_below = q.last_below.max(p.last_below);
                q.first_at = match (q.first_at, p.first_at) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                q.before = q.before.or(p.before);
            }
            None => self.probes.push(p),
        }
        self.open = self.probes.iter().filter(|p| p.before.is_none()).count();
    }

    /// Joins `b`, the stretch that follows this one in time, as if its lines had been read
    /// right after this one's.
    pub fn join(&mut self, mut b: Stretch) {
        if let (Some(a), Some(s)) = (self.last(), b.span.map(|s| s.0)) {
            if s < a {
                // overlapping stretches: their intervals are summed as each stretch had them
                self.disorder += 1;
            }
        }
        // the stats stamps on either side (a silence between them is probed before the
        // intervals that reach it are summed)
        if let (Some(a), Some(bs)) = (self.stats, b.stats) {
            let d = bs.0 - a.1;
            self.raw_gaps.add(d);
            if d > GAP_MIN_MS {
                self.long.push((a.1, bs.0));
                self.probe(bs.0);
                // (B's lines before its first stats line come before it too)
                self.adopt(Probe {
                    at: bs.0,
                    before: None,
                    last_below: b.lead_below(bs.0),
                    first_at: None,
                });
            }
        }
        // this stretch's probes still waiting for a stamp find B's first at or after them
        for i in std::mem::take(&mut self.waiting) {
            let p = &mut self.probes[i];
            let first = match (b.span, b.stats) {
                (Some((s, _)), _) if s >= p.at => Some(s),
                (_, Some((s, _))) if s >= p.at => {
                    let lead = b.lead.iter().copied().find(|&t| t >= p.at);
                    Some(lead.map_or(s, |l| l.min(s)))
                }
                (None, _) => None,
                _ => {
                    self.disorder += 1;
                    None
                }
            };
            p.first_at = first;
        }
        // B's probes that its first lines reach (or that nothing reached) are settled by
        // those lines, summed here: they wait among this stretch's probes first
        let reach = b.head.as_ref().and_then(|h| h.dangling.map(|d| d.1));
        let (early, late): (Vec<Probe>, Vec<Probe>) = std::mem::take(&mut b.probes)
            .into_iter()
            .partition(|p| p.before.is_none() || reach.is_some_and(|r| p.at <= r));
        for p in early {
            self.adopt(Probe { before: None, ..p });
        }
        // (head lines arrive as this stretch's next lines)
        if let Some(h) = b.head.take() {
            for l in h.lines {
                self.closing(l);
            }
            if let Some(next) = h.next {
                self.resolve(Some(next));
            }
            if let Some((l, end)) = h.dangling {
                self.interval(self.last_end, end, l);
                self.last_end = Some(end);
            }
        }
        // the others were reached by B's own intervals: those before them are B's and all
        // of this stretch's
        let offset = self.totals;
        for mut p in late {
            if let Some(t) = &mut p.before {
                t.add(offset);
            }
            self.adopt(p);
        }
        let prev_last = self.last();
        self.grid.merge(b.grid);
        self.load.merge(b.load);
        self.totals.add(b.totals);
        self.gaps.merge(b.gaps);
        self.raw_gaps.merge(b.raw_gaps);
        self.long.extend(b.long);
        // (the order of kept intervals does not matter: the shorter list is copied)
        let mut kept = b.kept;
        if kept.len() > self.kept.len() {
            std::mem::swap(&mut kept, &mut self.kept);
        }
        self.kept.extend(kept);
        self.keep_over = self.keep_over.max(b.keep_over);
        self.span = match (self.span, b.span) {
            (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
            (x, y) => x.or(y),
        };
        if self.stats.is_none() {
            self.lead.extend(b.lead.iter().copied());
            self.lead.dedup();
        }
        match b.stats {
            Some(_) => self.tail = b.tail,
            None => self.tail.extend(b.tail),
        }
        self.stats = match (self.stats, b.stats) {
            (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
            (x, y) => x.or(y),
        };
        self.prefill_first = match (self.prefill_first, b.prefill_first) {
            (Some(x), Some(y)) => Some(x.min(y)),
            (x, y) => x.or(y),
        };
        self.disorder += b.disorder;
        if b.last_end.is_some() {
            self.last_end = b.last_end;
        }
        // the stamp before the last distinct one, of both
        let last = self.span.map(|s| s.1);
        self.prev_stamp = [
            prev_last,
            self.prev_stamp,
            b.prev_stamp,
            b.span.map(|s| s.0),
        ]
        .into_iter()
        .flatten()
        .filter(|&t| last.is_some_and(|l| t < l))
        .max();
        for l in b.group {
            self.closing(l);
        }
        self.waiting = (0..self.probes.len())
            .filter(|&i| self.probes[i].first_at.is_none())
            .collect();
        self.open = self.probes.iter().filter(|p| p.before.is_none()).count();
    }
}
