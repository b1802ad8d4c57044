//! The time series of one instance, as the timeline, curve, segment and hint analyses need
//! them: one compact [`Point`] per stamped stats line, one [`Prefill`] per stamp of prefill
//! batches, plus its events and start-up settings.
//!
//! Collected per chunk on all cores (like [`crate::ingest::instance`]) and appended in file order.
//! A point is 32 bytes and a prefill 16, so a 1 GB SGLang log's 1.8 million decode lines
//! and 2 million prefill stamps cost about 90 MB; the values an analysis never reads
//! (`extra`, cached tokens, …) are not kept here — they stay in the parsed records that
//! `parse` and `export` write. Prefill batches are kept apart because they are most of the
//! lines of a busy SGLang log and carry one number: in 48-byte points they were half the
//! memory, and fresh memory (a page fault per 4 KB) cost more than the reading of them.
//! For the same reason what few points carry lives beside them: vLLM's prompt rate, and
//! which points are speculative-decoding metrics (32-byte points instead of 48 took 3.6% off
//! the whole report's time).

use tokstat_parsers::record::{Body, EventKind, Gauges, StepKind};
use tokstat_parsers::stamp::Ts;

/// What kind of stats line a point came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// SGLang `Decode batch`, vLLM periodic stats: carries the generation throughput.
    Stats,
    /// Speculative-decoding metrics.
    Spec,
}

/// One stats line; absent values are NaN. Its kind and prompt rate are the series' (see
/// [`Series::kind`], [`Series::prompt_tps`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Milliseconds since 1970 (naive local time).
    pub ts: i64,
    pub gen_tps: f64,
    pub running: f32,
    pub waiting: f32,
    pub kv_usage: f32,
    pub accept_len: f32,
}

/// The `Prefill batch` lines of one stamp: their new prompt tokens, and where they stand
/// among the points (`at` points of the series come before them). Their gauges are not kept:
/// no analysis reads them (the decode lines give the load), and 16 bytes instead of 32 for
/// two million stamps made the whole report 5% faster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefill {
    /// Milliseconds since 1970 (naive local time).
    pub ts: i64,
    pub new_tokens: u32,
    pub at: u32,
}

/// One row of a series in file (or time) order: a point (and its place among the points)
/// or a stamp's prefill batches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stamped<'a> {
    Point(&'a Point, usize),
    Prefill(&'a Prefill),
}

impl Stamped<'_> {
    /// Its stamp, ms.
    pub fn ts(&self) -> i64 {
        match self {
            Stamped::Point(p, _) => p.ts,
            Stamped::Prefill(p) => p.ts,
        }
    }
}

fn f<T: Into<f64>>(v: Option<T>) -> f64 {
    v.map_or(f64::NAN, Into::into)
}

fn f32_of(v: Option<u64>) -> f32 {
    v.map_or(f32::NAN, |v| v as f32)
}

impl Point {
    /// The point of a stats line with its kind and prompt rate, or `None` for kinds no point
    /// holds (prefill batches are [`Prefill`]s; cache and iteration-details lines no analysis
    /// reads: vLLM prints its periodic stats lines beside them).
    #[inline]
    pub fn of(ts: Ts, kind: StepKind, s: &Gauges) -> Option<(Point, PointKind, f64)> {
        let kind = match kind {
            StepKind::Decode | StepKind::Stats => PointKind::Stats,
            StepKind::Spec => PointKind::Spec,
            StepKind::Prefill | StepKind::Cache | StepKind::Iteration => return None,
        };
        let p = Point {
            ts: ts.0,
            gen_tps: f(s.gen_tps),
            running: f32_of(s.running),
            waiting: f32_of(s.waiting),
            kv_usage: f(s.kv_usage) as f32,
            accept_len: f(s.accept_len) as f32,
        };
        Some((p, kind, f(s.prompt_tps)))
    }
}

/// A stamped event: retraction, preemption, error, out-of-memory, server start.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct EventPoint {
    pub ts: i64,
    pub kind: EventKind,
    /// Requests concerned (retracted requests), 1 when the line does not say.
    pub count: u64,
}

/// A configuration value read from a start-up line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Setting {
    pub ts: i64,
    pub key: String,
    pub value: String,
}

/// The times a log may be cut at as a restart, the one place this rule is written: its
/// start-up lines and its ready lines, in time order. The digest probes its lines there as
/// it reads; the analysis cuts segments at those that follow a stats line.
pub fn restart_candidates(settings: &[Setting], events: &[EventPoint]) -> Vec<i64> {
    let mut at: Vec<i64> = settings
        .iter()
        .map(|c| c.ts)
        .chain(
            events
                .iter()
                .filter(|e| e.kind == EventKind::ServerReady)
                .map(|e| e.ts),
        )
        .collect();
    at.sort_unstable();
    at
}

/// Everything stamped of one instance, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub points: Vec<Point>,
    /// The prompt rate of each point (vLLM logs one, NaN where absent); empty while no point
    /// has one, as in SGLang logs, whose prompt tokens are the prefill batches'.
    pub prompt_tps: Vec<f64>,
    /// The places of the speculative-decoding points among the points, ascending (all others
    /// are [`PointKind::Stats`]).
    pub spec: Vec<u32>,
    pub prefill: Vec<Prefill>,
    pub events: Vec<EventPoint>,
    pub settings: Vec<Setting>,
    /// Whether the points and prefill stamps are in time order, as [`Series::step`] and
    /// [`Series::append`] saw them come. Code that changes the rows otherwise sets it to
    /// [`Order::Unknown`], so that [`Series::sort`] reads them.
    pub order: Order,
}

/// What is known of the time order of a series' rows (its points and prefill stamps in
/// series order). Followed line by line as they are read, so that [`Series::sort`] need not
/// read a hundred megabytes to find them in order, as they nearly always are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// Not followed (rows set field by field): [`Series::sort`] reads them to know.
    #[default]
    Unknown,
    /// In time order; the last row's stamp.
    Sorted(i64),
    /// Some row is stamped before the one before it.
    Unsorted,
}

impl Order {
    /// The order after one more row stamped `ts`; `empty`: the series had no row.
    #[inline]
    fn then(self, ts: i64, empty: bool) -> Order {
        match self {
            Order::Sorted(last) if ts < last => Order::Unsorted,
            Order::Sorted(_) => Order::Sorted(ts),
            Order::Unknown if empty => Order::Sorted(ts),
            o => o,
        }
    }
}

impl Series {
    /// Adds one line (lines without a complete stamp cannot be placed in time).
    pub fn visit(&mut self, ts: Option<Ts>, body: &Body<'_>) {
        let Some(ts) = ts else { return };
        match body {
            Body::Step(s) => {
                if let Some(kind) = s.kind {
                    self.step(ts, kind, &s.gauges());
                }
            }
            Body::Event(e) => self.events.push(EventPoint {
                ts: ts.0,
                kind: e.kind,
                count: match e.kind {
                    EventKind::Retraction => e.count.unwrap_or(1),
                    _ => 1,
                },
            }),
            Body::Config(c) => self.settings.extend(c.pairs().map(|(k, v)| Setting {
                ts: ts.0,
                key: k.to_string(),
                value: v.to_string(),
            })),
            _ => {}
        }
    }

    /// Adds one stats line.
    #[inline(always)]
    pub fn step(&mut self, ts: Ts, kind: StepKind, g: &Gauges) {
        if matches!(kind, StepKind::Cache | StepKind::Iteration) {
            return;
        }
        self.order = self.order.then(ts.0, self.is_empty());
        if kind == StepKind::Prefill {
            let mut tokens = g.new_tokens.unwrap_or(0);
            let at = self.points.len() as u32;
            // prefill batches logged in the same stamp add up (only their tokens are read):
            // a third fewer rows on busy SGLang logs
            if let Some(last) = self.prefill.last_mut() {
                if last.ts == ts.0 && last.at == at {
                    let add = tokens.min(u64::from(u32::MAX - last.new_tokens));
                    last.new_tokens += add as u32;
                    tokens -= add;
                    if tokens == 0 {
                        return;
                    }
                }
            }
            // what one row cannot hold (over 4.29 billion tokens at one stamp) takes more
            // rows of the same stamp: never a sum cut short
            loop {
                let part = tokens.min(u64::from(u32::MAX));
                self.prefill.push(Prefill {
                    ts: ts.0,
                    new_tokens: part as u32,
                    at,
                });
                tokens -= part;
                if tokens == 0 {
                    break;
                }
            }
        } else if let Some((p, kind, prompt)) = Point::of(ts, kind, g) {
            self.push(p, kind, prompt);
        }
    }

    /// Adds a point with what lives beside it.
    #[inline(always)]
    pub fn push(&mut self, p: Point, kind: PointKind, prompt_tps: f64) {
        // (most points have nothing beside them: the rest is a call)
        if kind == PointKind::Spec || !prompt_tps.is_nan() || !self.prompt_tps.is_empty() {
            self.beside(kind, prompt_tps);
        }
        self.points.push(p);
    }

    /// Notes the kind and prompt rate of the point about to be pushed.
    #[inline(never)]
    fn beside(&mut self, kind: PointKind, prompt_tps: f64) {
        let at = self.points.len();
        if kind == PointKind::Spec {
            self.spec.push(at as u32);
        }
        if !prompt_tps.is_nan() || !self.prompt_tps.is_empty() {
            self.prompt_tps.resize(at, f64::NAN);
            self.prompt_tps.push(prompt_tps);
        }
    }

    /// The kind of the `i`-th point.
    pub fn kind(&self, i: usize) -> PointKind {
        match u32::try_from(i).map(|i| self.spec.binary_search(&i)) {
            Ok(Ok(_)) => PointKind::Spec,
            _ => PointKind::Stats,
        }
    }

    /// The prompt rate of the `i`-th point (NaN when absent).
    pub fn prompt_tps(&self, i: usize) -> f64 {
        self.prompt_tps.get(i).copied().unwrap_or(f64::NAN)
    }

    /// Whether each point in turn is a [`PointKind::Stats`] one, read along the points.
    pub fn stats_flags(&self) -> impl Iterator<Item = bool> + '_ {
        let mut spec = self.spec.iter().copied().peekable();
        (0..self.points.len() as u32).map(move |i| spec.next_if_eq(&i).is_none())
    }

    /// Appends a later part of the same instance.
    pub fn append(&mut self, o: &Series) {
        self.order = match (self.order, o.order) {
            _ if o.is_empty() => self.order,
            _ if self.is_empty() => o.order,
            // a part in order follows in order when it starts no sooner than this one ends
            (Order::Sorted(last), Order::Sorted(end)) => match o.steps().next() {
                Some(first) if first.ts() >= last => Order::Sorted(end),
                _ => Order::Unsorted,
            },
            (Order::Unknown, _) | (_, Order::Unknown) => Order::Unknown,
            _ => Order::Unsorted,
        };
        let base = self.points.len() as u32;
        self.prefill.extend(o.prefill.iter().map(|p| Prefill {
            at: p.at + base,
            ..*p
        }));
        self.spec.extend(o.spec.iter().map(|i| i + base));
        if !o.prompt_tps.is_empty() || !self.prompt_tps.is_empty() {
            self.prompt_tps.resize(base as usize, f64::NAN);
            if o.prompt_tps.is_empty() {
                let end = base as usize + o.points.len();
                self.prompt_tps.resize(end, f64::NAN);
            } else {
                self.prompt_tps.extend_from_slice(&o.prompt_tps);
            }
        }
        self.points.extend_from_slice(&o.points);
        self.events.extend_from_slice(&o.events);
        self.settings.extend_from_slice(&o.settings);
    }

    /// The points and prefill stamps in series order.
    pub fn steps(&self) -> impl Iterator<Item = Stamped<'_>> + Clone + '_ {
        let mut pre = self.prefill.iter().peekable();
        let mut points = self.points.iter().enumerate().peekable();
        std::iter::from_fn(move || {
            let next_point = points.peek().map(|(i, _)| *i as u32);
            match pre.peek() {
                Some(p) if next_point.is_none_or(|i| p.at <= i) => pre.next().map(Stamped::Prefill),
                _ => points.next().map(|(i, p)| Stamped::Point(p, i)),
            }
        })
    }

    /// Whether the series has no stats line at all.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.prefill.is_empty()
    }

    /// The first and last stamp of its stats lines (the series in time order).
    pub fn span(&self) -> Option<(i64, i64)> {
        self.span_in(i64::MIN, i64::MAX)
    }

    /// The first and last stamp of its stats lines in `[from, to)` (the series in time order).
    pub fn span_in(&self, from: i64, to: i64) -> Option<(i64, i64)> {
        fn within<T>(v: &[T], ts: impl Fn(&T) -> i64, from: i64, to: i64) -> &[T] {
            let v = &v[v.partition_point(|p| ts(p) < from)..];
            &v[..v.partition_point(|p| ts(p) < to)]
        }
        let pts = within(&self.points, |p| p.ts, from, to);
        let pre = within(&self.prefill, |p| p.ts, from, to);
        let first = [pts.first().map(|p| p.ts), pre.first().map(|p| p.ts)];
        let last = [pts.last().map(|p| p.ts), pre.last().map(|p| p.ts)];
        Some((
            first.into_iter().flatten().min()?,
            last.into_iter().flatten().max()?,
        ))
    }

    /// Puts everything in time order (files of one instance may be given in any order);
    /// stable, so lines sharing a stamp keep their file order, prefill stamps among points
    /// too.
    pub fn sort(&mut self) {
        use rayon::prelude::*;
        // the check alone reads every point (10-20 ms for millions): on all cores
        let points = &self.points;
        // each prefill stamp must also lie between the points around it
        let placed = |p: &Prefill| {
            let at = p.at as usize;
            (at == 0 || points[at - 1].ts <= p.ts) && points.get(at).is_none_or(|q| p.ts <= q.ts)
        };
        let in_order = match self.order {
            Order::Sorted(_) => true,
            Order::Unsorted => false,
            Order::Unknown => {
                points.par_windows(2).all(|w| w[0].ts <= w[1].ts)
                    && self.prefill.par_windows(2).all(|w| w[0].ts <= w[1].ts)
                    && self.prefill.par_iter().all(placed)
            }
        };
        if !in_order {
            self.sort_steps();
        }
        if let Some((_, last)) = self.span() {
            self.order = Order::Sorted(last);
        }
        if !self.events.is_sorted_by_key(|p| p.ts) {
            self.events.sort_by_key(|p| p.ts);
        }
        if !self.settings.is_sorted_by_key(|p| p.ts) {
            self.settings.sort_by_key(|p| p.ts);
        }
    }

    /// Sorts points and prefill stamps together, as one list of rows in series order.
    fn sort_steps(&mut self) {
        let mut rows: Vec<(i64, bool, u32)> = self
            .steps()
            .scan((0u32, 0u32), |(np, nf), s| {
                Some(match s {
                    Stamped::Point(p, _) => {
                        *np += 1;
                        (p.ts, false, *np - 1)
                    }
                    Stamped::Prefill(p) => {
                        *nf += 1;
                        (p.ts, true, *nf - 1)
                    }
                })
            })
            .collect();
        rows.sort_by_key(|r| r.0);
        let mut sorted = Series {
            points: Vec::with_capacity(self.points.len()),
            prefill: Vec::with_capacity(self.prefill.len()),
            ..Series::default()
        };
        for (_, is_prefill, i) in rows {
            let i = i as usize;
            if is_prefill {
                sorted.prefill.push(Prefill {
                    at: sorted.points.len() as u32,
                    ..self.prefill[i]
                });
            } else {
                sorted.push(self.points[i], self.kind(i), self.prompt_tps(i));
            }
        }
        self.points = sorted.points;
        self.prefill = sorted.prefill;
        self.spec = sorted.spec;
        self.prompt_tps = sorted.prompt_tps;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(s: &mut Series, ts: i64, gen: f64) {
        let g = Gauges {
            gen_tps: Some(gen),
            running: Some(4),
            ..Gauges::default()
        };
        s.step(Ts(ts), StepKind::Decode, &g);
    }

    fn prefill(s: &mut Series, ts: i64, tokens: u64) {
        let g = Gauges {
            new_tokens: Some(tokens),
            new_seq: Some(1),
            ..Gauges::default()
        };
        s.step(Ts(ts), StepKind::Prefill, &g);
    }

    /// Rows as `(ts, what)`: the gen rate of a point, or minus the tokens of a prefill stamp.
    fn rows(s: &Series) -> Vec<(i64, f64)> {
        s.steps()
            .map(|r| match r {
                Stamped::Point(p, _) => (p.ts, p.gen_tps),
                Stamped::Prefill(p) => (p.ts, -f64::from(p.new_tokens)),
            })
            .collect()
    }

    /// Regression (issue 40, item 6): prefill tokens at one stamp were summed in a `u32`
    /// that saturated, so a stamp's tokens beyond 4,294,967,295 were lost without a word;
    /// now what one row cannot hold takes another row of the same stamp.
    #[test]
    fn prefill_sums_at_one_stamp_never_saturate() {
        let mut s = Series::default();
        prefill(&mut s, 1000, 3_000_000_000);
        prefill(&mut s, 1000, 3_000_000_000);
        prefill(&mut s, 1000, 12);
        prefill(&mut s, 2000, 10_000_000_000);
        let total = |ts: i64| -> u64 {
            s.prefill
                .iter()
                .filter(|p| p.ts == ts)
                .map(|p| u64::from(p.new_tokens))
                .sum()
        };
        assert_eq!(total(1000), 6_000_000_012);
        assert_eq!(total(2000), 10_000_000_000);
        // the common case keeps one row a stamp
        let mut t = Series::default();
        prefill(&mut t, 1000, 300);
        prefill(&mut t, 1000, 200);
        assert_eq!(rows(&t), vec![(1000, -500.0)]);
    }

    /// What lives beside the points (their kind, vLLM's prompt rate) follows them through
    /// appends in any order and the sort: each point keeps its own, and a series with no
    /// prompt rate keeps no list of them.
    #[test]
    fn kinds_and_prompt_rates_follow_their_points() {
        let part = |base: i64, prompt: bool| {
            let mut s = Series::default();
            for k in 0..4 {
                let p = Point {
                    ts: base + k * 100,
                    gen_tps: (base + k) as f64,
                    running: 1.0,
                    waiting: 0.0,
                    kv_usage: 0.0,
                    accept_len: f32::NAN,
                };
                let kind = if k == 2 {
                    PointKind::Spec
                } else {
                    PointKind::Stats
                };
                let rate = if prompt && k != 1 {
                    (base + k) as f64 * 2.0
                } else {
                    f64::NAN
                };
                s.push(p, kind, rate);
            }
            s
        };
        let with_prompt = [0, 3000];
        let mut s = Series::default();
        for b in [2000, 0, 1000, 3000] {
            s.append(&part(b, with_prompt.contains(&b)));
        }
        s.sort();
        assert_eq!(s.points.len(), 16);
        assert_eq!(s.prompt_tps.len(), 16);
        for (i, (p, stats)) in s.points.iter().zip(s.stats_flags()).enumerate() {
            let (base, k) = (p.ts / 1000 * 1000, p.ts % 1000 / 100);
            assert_eq!((base, k), (i as i64 / 4 * 1000, i as i64 % 4));
            assert_eq!(p.gen_tps, (base + k) as f64);
            let kind = if k == 2 {
                PointKind::Spec
            } else {
                PointKind::Stats
            };
            assert_eq!((s.kind(i), stats), (kind, kind == PointKind::Stats), "{i}");
            let rate = s.prompt_tps(i);
            if with_prompt.contains(&base) && k != 1 {
                assert_eq!(rate, (base + k) as f64 * 2.0, "{i}");
            } else {
                assert!(rate.is_nan(), "{i}");
            }
        }
        let mut none = part(0, false);
        none.append(&part(1000, false));
        assert!(none.prompt_tps.is_empty());
        assert_eq!(none.spec, vec![2, 6]);
    }

    /// Prefill batches of one stamp add up only when no point came between them; the rows
    /// come back in file order.
    #[test]
    fn prefill_stamps_keep_their_place_among_points() {
        let mut s = Series::default();
        prefill(&mut s, 1000, 10);
        prefill(&mut s, 1000, 5);
        decode(&mut s, 1000, 1.0);
        prefill(&mut s, 1000, 7);
        prefill(&mut s, 2000, 1);
        decode(&mut s, 2000, 2.0);
        decode(&mut s, 2000, 3.0);
        prefill(&mut s, 3000, 2);
        assert_eq!(
            rows(&s),
            vec![
                (1000, -15.0),
                (1000, 1.0),
                (1000, -7.0),
                (2000, -1.0),
                (2000, 2.0),
                (2000, 3.0),
                (3000, -2.0)
            ]
        );
        assert_eq!(s.span(), Some((1000, 3000)));
        assert_eq!(s.span_in(1500, 3000), Some((2000, 2000)));
        assert_eq!(s.span_in(2500, 2900), None);
    }

    /// The order followed as rows come says what reading them all says: in time order
    /// exactly when every row is stamped no sooner than the one before, whether built line
    /// by line or from parts appended in any order, prefill stamps among points too.
    #[test]
    fn the_order_followed_is_the_order_read() {
        let in_order = |s: &Series| {
            let ts: Vec<i64> = s.steps().map(|r| r.ts()).collect();
            ts.windows(2).all(|w| w[0] <= w[1])
        };
        let mut rng = crate::testing::Lcg(7);
        let mut next = |n: u64| rng.below(n);
        let mut seen = [0; 2];
        for _ in 0..2000 {
            let parts = 1 + next(4);
            let mut whole = Series::default();
            let mut t = next(5000) as i64;
            for _ in 0..parts {
                let mut part = Series::default();
                for _ in 0..next(6) {
                    // mostly forward, sometimes back
                    t += next(1500) as i64 - if next(8) == 0 { 1600 } else { 0 };
                    if next(2) == 0 {
                        decode(&mut part, t, 1.0);
                    } else {
                        prefill(&mut part, t, 3);
                    }
                }
                // (an empty part is unknown, and appends as nothing)
                assert_eq!(part.order == Order::Unknown, part.is_empty());
                assert_eq!(part.order != Order::Unsorted, in_order(&part));
                whole.append(&part);
            }
            let sorted = whole.order != Order::Unsorted;
            assert_eq!(sorted, in_order(&whole), "{whole:?}");
            seen[usize::from(sorted)] += 1;
            // rows set field by field are read to know, and sorted all the same
            let mut set = Series {
                points: whole.points.clone(),
                prefill: whole.prefill.clone(),
                ..Series::default()
            };
            assert_eq!(set.order, Order::Unknown);
            set.sort();
            whole.sort();
            assert!(in_order(&set) && in_order(&whole));
            assert_eq!(format!("{set:?}"), format!("{whole:?}"));
        }
        assert!(seen[0] > 100 && seen[1] > 100, "{seen:?}");
    }

    /// Parts appended in file order read as one series; parts given out of time order are
    /// sorted into the order one file in time order would give (stable at shared stamps).
    #[test]
    fn appended_and_sorted_parts_read_as_one() {
        let part = |base: i64| {
            let mut s = Series::default();
            prefill(&mut s, base, 3);
            decode(&mut s, base, base as f64);
            decode(&mut s, base + 500, 1.0);
            prefill(&mut s, base + 500, 4);
            prefill(&mut s, base + 900, 5);
            s
        };
        let mut whole = Series::default();
        for b in [0, 1000, 2000] {
            whole.append(&part(b));
        }
        let mut shuffled = Series::default();
        for b in [2000, 0, 1000] {
            shuffled.append(&part(b));
        }
        assert_ne!(rows(&shuffled), rows(&whole));
        // (absent values are NaN, which equals nothing: compared as printed)
        let before = format!("{whole:?}");
        whole.sort();
        assert_eq!(
            format!("{whole:?}"),
            before,
            "a series in time order is left as it is"
        );
        shuffled.sort();
        assert_eq!(format!("{shuffled:?}"), before);
        assert_eq!(rows(&whole).len(), 15);
        // a prefill stamp out of place among points in time order is sorted too
        let mut s = Series::default();
        decode(&mut s, 2000, 1.0);
        prefill(&mut s, 1000, 9);
        s.sort();
        assert_eq!(rows(&s), vec![(1000, -9.0), (2000, 1.0)]);
    }
}
