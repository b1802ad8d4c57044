//! A benchmark run's client and server on one clock (issue 55): what the load generator saw
//! of each request beside what the server did at the same time.
//!
//! The client's requests carry Unix times; the server's log is stamped by its own clock
//! (a timezone's hours, seconds of skew), its scrapes by the scraper's. The offset between
//! the two is estimated from the data ([`align`]), never assumed; where it is refused, the
//! two sides stay apart and the reason is reported. Once aligned, the run is cut into the
//! server's buckets (its timeline's, or for scrapes a round length over the client's span)
//! and each bucket holds the client's starts, completions, errors, mean requests in flight
//! and latency quantiles of the requests it sent, beside the server's running, waiting, KV
//! usage, preemptions and generated tok/s. Over the run, the two sides are checked against
//! each other: Little's law (the client's requests in flight against the server's running +
//! waiting), tokens, and the client's TTFT against the server's histogram (the client's
//! path per quantile); and the hints say what the server did when the client's latency
//! moved (`hints::client_latency`).

use super::align::{self, Alignment, InFlight, Reading};
use super::metrics::Metrics;
use super::quantile::quantile;
use super::server::Server;
use crate::ingest::instance::Instance;
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::loadgen::Run;
use tokstat_parsers::record::EventKind;

/// How far the two sides' mean requests in flight may differ for Little's law to hold
/// across them (the client's include its own path's time; the server's do not).
pub const LITTLE_TOLERANCE: f64 = 0.05;

/// The server's side as a series of readings, by its own clock.
#[derive(Debug, Clone)]
pub struct Track {
    /// `server log` or `scrapes`.
    pub source: &'static str,
    /// The server's requests in flight, for the alignment.
    pub readings: Vec<Reading>,
    /// Seconds between readings (the log's time cells, the scrapes' interval).
    pub step_s: f64,
    /// The stamps' resolution, seconds.
    pub stamp_s: f64,
    /// What the server did, by its clock, for the buckets.
    pub points: Vec<Point>,
    /// The points' length, seconds (0: instants, the scrapes).
    pub point_s: f64,
    /// Requests the source says were preempted or retracted over the run: they wait again,
    /// and the waiting count holds them.
    pub preempted: f64,
}

/// The server over one length of time (a timeline bucket) or at one instant (a scrape).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// Its start by the server's clock, seconds.
    pub t: f64,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub gen_tps: Option<f64>,
    pub preemptions: Option<f64>,
}

/// One bucket of the run on the client's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClockRow {
    /// Its start on the client's clock, s (Unix time, or a monotonic clock's: see
    /// [`OneClock::client_clock`]); the server's is `t + offset`.
    pub t: f64,
    /// Requests sent, answered and failed inside it.
    pub starts: u64,
    pub completions: u64,
    pub errors: u64,
    /// The client's mean requests in flight over it.
    pub in_flight: f64,
    /// The mean and quantiles of the requests sent inside it, ms (none sent: null).
    pub ttft_mean_ms: Option<f64>,
    pub ttft_p50_ms: Option<f64>,
    pub ttft_p99_ms: Option<f64>,
    pub itl_p50_ms: Option<f64>,
    pub itl_p99_ms: Option<f64>,
    pub e2e_p50_ms: Option<f64>,
    pub e2e_p99_ms: Option<f64>,
    /// The server's means over it (null where it stated none).
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    /// Requests preempted (null: the source does not count them).
    pub preemptions: Option<f64>,
    pub gen_tps: Option<f64>,
}

/// Little's law across the two sides: over the client's span less its edges (where a
/// reading's place in time is as uncertain as the offset), the server's mean running +
/// waiting against the client's mean requests in flight, scaled by the time a request
/// spends at the server out of the time the client waits for it (L = λW on each side:
/// the client's count holds its own path's time as well).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Little {
    /// The window compared, Unix seconds on the client's clock.
    pub from: f64,
    pub to: f64,
    /// The client's mean requests in flight over it (its λW), from its send and end times.
    pub client_in_flight: f64,
    /// Requests sent per second over the client's span, and their mean end-to-end latency.
    pub arrival_rate: f64,
    pub client_e2e_s: f64,
    /// The server's mean end-to-end latency (arrival to last token), where its histogram
    /// or its load generator's summary has one.
    pub server_e2e_s: Option<f64>,
    /// The server's count Little's law expects: the client's × server W ÷ client W (the
    /// client's own count where the server's W is not known).
    pub expected: f64,
    /// The server's mean running + waiting over its readings inside the window.
    pub server_in_flight: f64,
    /// server_in_flight ÷ expected.
    pub ratio: f64,
    /// The ratio is within [`LITTLE_TOLERANCE`] of 1; null where the server's W is not
    /// known (the gap is then the client's path, or a misreading: it cannot be told).
    pub holds: Option<bool>,
    /// Without the server's W: the client's path per request the gap implies
    /// ((1 − ratio) × the client's W), ms.
    pub implied_client_path_ms: Option<f64>,
}

/// The client's TTFT against the server's, at one quantile.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PathAt {
    /// `mean`, `p50`, `p90`, `p99`.
    pub at: &'static str,
    pub client_ms: f64,
    pub server_ms: f64,
    /// client − server: the client's path (network, HTTP server, the client's own loop).
    pub path_ms: f64,
    /// The server's figure is a histogram estimate (linear within a bucket): the path is
    /// as uncertain as the bucket is wide. False for the mean (sum ÷ count: exact).
    pub estimated: bool,
    /// For an estimate, the path under the bucket's edges: client − its upper edge (null
    /// for `+Inf`) to client − its lower edge. A difference of quantiles, not a quantile
    /// of each request's difference.
    pub path_low_ms: Option<f64>,
    pub path_high_ms: Option<f64>,
}

/// How much of the client's TTFT requests spent queued at the server.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct QueueShare {
    /// `queue-time histogram` (sum ÷ count, exact) or `waiting ÷ arrival rate` (Little's
    /// law on the server's queue, from its waiting count).
    pub from: &'static str,
    pub queue_ms: f64,
    pub client_ttft_ms: f64,
    pub share: f64,
    /// From the waiting count of a run that preempted requests: it holds their waits after
    /// their first token too, so the share is at most this.
    pub upper_bound: bool,
}

/// One run's two sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OneClock {
    /// The client run's name and tool.
    pub run: String,
    pub tool: &'static str,
    /// The server's side: `server log` or `scrapes`.
    pub server: &'static str,
    /// The client's clock: `unix` (AIPerf, GuideLLM), or `monotonic` (inference-perf's
    /// `perf_counter`: the offset maps it onto the server's, and times are shown on the
    /// server's clock, [`OneClock::shown`]).
    pub client_clock: &'static str,
    pub alignment: Alignment,
    /// The buckets' length, seconds.
    pub bucket_s: f64,
    /// Empty when the alignment is refused.
    pub rows: Vec<ClockRow>,
    pub little: Option<Little>,
    /// Output tokens the client received, and those the server generated over the rows.
    pub client_tokens: Option<f64>,
    pub server_tokens: Option<f64>,
    pub ttft_path: Vec<PathAt>,
    pub queue_share: Option<QueueShare>,
    /// What else to keep in mind reading them.
    pub notes: Vec<String>,
}

impl OneClock {
    /// A time of the client's clock on the clock its times are shown on: the client's own
    /// where it is Unix time, else the server's.
    pub fn shown(&self, t: f64) -> f64 {
        match (self.client_clock, self.alignment.offset()) {
            ("monotonic", Some(o)) => t + o.offset_s,
            _ => t,
        }
    }

    /// Which clock [`OneClock::shown`] gives: `client` or `server`.
    pub fn shown_on(&self) -> &'static str {
        if self.client_clock == "monotonic" {
            "server"
        } else {
            "client"
        }
    }
}

/// A client run's requests with send and end times, on its clock: `(sent, ended)`.
fn client_times(run: &Run) -> Vec<(f64, f64)> {
    run.requests
        .iter()
        .filter_map(|q| {
            let s = q.start_s?;
            let e = q.end_s.or(q.e2e_s.map(|d| s + d))?;
            Some((s, e))
        })
        .collect()
}

/// The server logs' time cells as a track: each cell's mean running + waiting over its
/// stats lines (instances' cells summed), its buckets from the timeline.
pub fn log_track(instances: &BTreeMap<String, Instance>, server: &Server) -> Option<Track> {
    let t = &server.timeline;
    if t.total.is_empty() {
        return None;
    }
    // each instance's cells, at the longest cell length of them all
    let mut grids: Vec<_> = instances
        .values()
        .map(|i| super::settle::settle(&i.digest).run.grid)
        .collect();
    let len = grids.iter().map(|g| g.len).max()?;
    for g in &mut grids {
        g.coarsen(len);
    }
    let mut cells: BTreeMap<i64, (f64, i64, i64, u32)> = BTreeMap::new();
    for g in grids.iter().filter(|g| g.len == len) {
        for (start, c) in g.iter() {
            if c.running.n == 0 || c.waiting.n == 0 || c.stamps.0 > c.stamps.1 {
                continue;
            }
            let v = c.running.sum as f64 / c.running.n as f64
                + c.waiting.sum as f64 / c.waiting.n as f64;
            let e = cells.entry(start).or_insert((0.0, i64::MAX, i64::MIN, 0));
            e.0 += v;
            e.1 = e.1.min(c.stamps.0);
            e.2 = e.2.max(c.stamps.1);
            e.3 = e.3.max(c.running.n as u32);
        }
    }
    let readings = cells
        .values()
        .map(|&(v, a, b, n)| Reading {
            t: a as f64 / 1000.0,
            to: b as f64 / 1000.0,
            lines: n,
            in_flight: v,
        })
        .collect();
    // preemptions as the log states them (vLLM V0's and SGLang's lines; V1 logs none)
    let b = t.bucket_ms.max(1);
    let mut preempted: Option<Vec<f64>> = None;
    for i in instances.values() {
        for e in i.digest.events() {
            if matches!(e.kind, EventKind::Preemption | EventKind::Retraction) {
                let v = preempted.get_or_insert_with(|| vec![0.0; t.total.len()]);
                let k = (e.ts - t.origin).div_euclid(b);
                if let Some(x) = usize::try_from(k).ok().and_then(|k| v.get_mut(k)) {
                    *x += e.count as f64;
                }
            }
        }
    }
    let requeued: f64 = instances
        .values()
        .map(|i| {
            let events = i.digest.events();
            let count = |k: EventKind| -> u64 {
                events
                    .iter()
                    .filter(|e| e.kind == k)
                    .map(|e| e.count.max(1))
                    .sum()
            };
            (count(EventKind::Retraction) + i.preemptions.max(count(EventKind::Preemption))) as f64
        })
        .sum();
    let f = super::finite;
    let points = t
        .total
        .iter()
        .enumerate()
        .map(|(k, p)| Point {
            t: p.ts as f64 / 1000.0,
            running: f(p.running),
            waiting: f(p.waiting),
            kv_usage: f(p.kv_usage),
            gen_tps: f(p.gen_tps),
            preemptions: preempted.as_ref().map(|v| v[k]),
        })
        .collect();
    Some(Track {
        source: "server log",
        readings,
        step_s: len as f64 / 1000.0,
        stamp_s: 1.0,
        points,
        point_s: t.bucket_s(),
        preempted: requeued,
    })
}

/// The scrapes as a track: each timed scrape a reading and a point.
pub fn scrape_track(m: &Metrics) -> Option<Track> {
    let timed: Vec<_> = m.timeline.iter().filter(|p| p.ts.is_some()).collect();
    let points: Vec<Point> = timed
        .iter()
        .map(|p| Point {
            t: p.ts.expect("timed").0 as f64 / 1000.0,
            running: p.running,
            waiting: p.waiting,
            kv_usage: p.kv_usage,
            gen_tps: p.gen_tps,
            preemptions: p.preemptions,
        })
        .collect();
    let readings: Vec<Reading> = points
        .iter()
        .filter_map(|p| Some(Reading::at(p.t, p.running? + p.waiting?)))
        .collect();
    if readings.is_empty() {
        return None;
    }
    let mut gaps: Vec<f64> = points.windows(2).map(|w| w[1].t - w[0].t).collect();
    gaps.sort_by(f64::total_cmp);
    let step_s = gaps.get(gaps.len() / 2).copied().unwrap_or(1.0).max(0.05);
    Some(Track {
        source: "scrapes",
        readings,
        step_s,
        stamp_s: 0.001,
        points,
        point_s: 0.0,
        preempted: m.preemptions.unwrap_or(0.0),
    })
}

/// The run's two sides on one clock, or why they could not be put on one.
pub fn analyze(
    run: &Run,
    tool: &'static str,
    track: &Track,
    m: Option<&Metrics>,
) -> Option<OneClock> {
    let times = client_times(run);
    if times.is_empty() {
        return None;
    }
    let mut alignment = align::offset(&times, &track.readings, track.step_s, track.stamp_s);
    if let (false, Alignment::Aligned(o)) = (run.epoch, &mut alignment) {
        // a monotonic clock has no zone
        o.zone_hours = None;
        o.skew_s = None;
    }
    let mut out = OneClock {
        run: run.name.clone(),
        tool,
        server: track.source,
        client_clock: if run.epoch { "unix" } else { "monotonic" },
        alignment,
        bucket_s: 0.0,
        rows: Vec::new(),
        little: None,
        client_tokens: None,
        server_tokens: None,
        ttft_path: Vec::new(),
        queue_share: None,
        notes: Vec::new(),
    };
    let Some(o) = out.alignment.offset().copied() else {
        return Some(out);
    };
    let flight = InFlight::new(&times);
    let (first, last) = flight.span()?;
    let d = o.offset_s;
    // the buckets, on the client's clock
    let (bucket, starts): (f64, Vec<f64>) = if track.point_s > 0.0 {
        let b = track.point_s;
        let s = track
            .points
            .iter()
            .map(|p| p.t - d)
            .filter(|&t| t + b > first && t <= last)
            .collect();
        (b, s)
    } else {
        let b = crate::analysis::timeline::auto_bucket(((last - first) * 1000.0) as i64) as f64
            / 1000.0;
        let k0 = (first / b).floor() as i64;
        let k1 = (last / b).floor() as i64;
        (b, (k0..=k1).map(|k| k as f64 * b).collect())
    };
    out.bucket_s = bucket;
    let index = Index::new(run, track);
    out.rows = starts
        .iter()
        .map(|&t0| row(&index, &flight, track, d, t0, bucket))
        .collect();
    out.little = little(run, &flight, track, &o, m);
    let served: f64 = out
        .rows
        .iter()
        .filter_map(|r| r.gen_tps)
        .map(|v| v * bucket)
        .sum();
    let received: f64 = run
        .requests
        .iter()
        .filter(|q| !q.error)
        .filter_map(|q| q.output_len)
        .map(|n| n as f64)
        .sum();
    if out.rows.iter().any(|r| r.gen_tps.is_some()) && track.point_s > 0.0 {
        out.server_tokens = Some(served);
        out.client_tokens = Some(received);
    }
    let ttft: Vec<f64> = run
        .requests
        .iter()
        .filter(|q| !q.error)
        .filter_map(|q| q.ttft_s)
        .collect();
    if let Some(m) = m.filter(|_| track.source == "scrapes") {
        out.ttft_path = ttft_path(&ttft, m);
    }
    out.queue_share = queue_share(&ttft, &flight, track, d, m);
    if let Some(l) = out.little.filter(|l| l.holds == Some(false)) {
        out.notes.push(format!(
            "Little's law across the sides is off by {:+.1}% ({} readings inside the run): the server's readings may catch one moment of its loop (stats lines are written between steps, when finished requests have left and the client's next have not come), or the client's requests were not all this server's",
            (l.ratio - 1.0) * 100.0,
            server_count(track, d, &flight)
        ));
    }
    if track.source == "scrapes" {
        out.notes.push(
            "scrapes are timed by the scraper's clock (for a load generator's own scrapes, the client's): the offset is the scraper's, not the server's".into(),
        );
    }
    if track.points.iter().all(|p| p.preemptions.is_none()) {
        out.notes.push(format!(
            "the {} places no preemptions in time (vLLM V1 logs no line per preemption, and its stats lines' `Preemptions: N` are counted over the run); the scrapes' counter places them",
            track.source
        ));
    }
    Some(out)
}

/// The quantile `q` of `v` in ms, None for no values.
fn q_ms(v: &mut [f64], q: f64) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(quantile(v, q) * 1000.0)
}

/// A run's requests and a track's points sorted by time, so that each bucket finds its
/// own by binary search (a long log's thousands of buckets against a run's many requests).
struct Index<'a> {
    /// Requests with a send time, by it, and those times.
    sent: Vec<&'a tokstat_parsers::loadgen::Request>,
    sent_at: Vec<f64>,
    /// End times of the answered requests and of the failed ones.
    answered: Vec<f64>,
    failed: Vec<f64>,
    /// The track's points by their time, and those times.
    points: Vec<&'a Point>,
    point_at: Vec<f64>,
}

impl<'a> Index<'a> {
    fn new(run: &'a Run, track: &'a Track) -> Index<'a> {
        let mut sent: Vec<&tokstat_parsers::loadgen::Request> = run
            .requests
            .iter()
            .filter(|q| q.start_s.is_some())
            .collect();
        sent.sort_by(|a, b| {
            a.start_s
                .unwrap_or(0.0)
                .total_cmp(&b.start_s.unwrap_or(0.0))
        });
        let sent_at = sent.iter().map(|q| q.start_s.unwrap_or(0.0)).collect();
        let ends = |error: bool| {
            let mut v: Vec<f64> = run
                .requests
                .iter()
                .filter(|q| q.error == error)
                .filter_map(|q| q.end_s.or(q.start_s.zip(q.e2e_s).map(|(s, e)| s + e)))
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let mut points: Vec<&Point> = track.points.iter().collect();
        points.sort_by(|a, b| a.t.total_cmp(&b.t));
        let point_at = points.iter().map(|p| p.t).collect();
        Index {
            sent,
            sent_at,
            answered: ends(false),
            failed: ends(true),
            points,
            point_at,
        }
    }
}

/// How many of the sorted `v` lie in `[a, b)`, and where they start.
fn within(v: &[f64], a: f64, b: f64) -> std::ops::Range<usize> {
    let from = v.partition_point(|x| *x < a);
    from..v.partition_point(|x| *x < b).max(from)
}

/// One bucket `[t0, t0 + len)` of the client's clock.
fn row(ix: &Index<'_>, flight: &InFlight, track: &Track, d: f64, t0: f64, len: f64) -> ClockRow {
    let t1 = t0 + len;
    let (mut ttft, mut itl, mut e2e) = (Vec::new(), Vec::new(), Vec::new());
    let sent = &ix.sent[within(&ix.sent_at, t0, t1)];
    for q in sent.iter().filter(|q| !q.error) {
        ttft.extend(q.ttft_s);
        itl.extend(q.itl_mean_s.or(q.tpot_s));
        e2e.extend(q.e2e_s);
    }
    let starts = sent.len() as u64;
    let completions = within(&ix.answered, t0, t1).len() as u64;
    let errors = within(&ix.failed, t0, t1).len() as u64;
    // the server's points inside (by its clock): the bucket a log's point starts, or the
    // scrapes taken in it
    let (s0, s1) = (t0 + d, t1 + d);
    let range = if track.point_s > 0.0 {
        let from = ix
            .point_at
            .partition_point(|t| *t <= s0 - track.point_s / 2.0);
        from..ix
            .point_at
            .partition_point(|t| *t < s0 + track.point_s / 2.0)
            .max(from)
    } else {
        within(&ix.point_at, s0, s1)
    };
    let pts = &ix.points[range];
    let mean = |f: fn(&Point) -> Option<f64>| {
        let v: Vec<f64> = pts.iter().filter_map(|p| f(p)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let preemptions = {
        let v: Vec<f64> = pts.iter().filter_map(|p| p.preemptions).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    ClockRow {
        t: t0,
        starts,
        completions,
        errors,
        in_flight: flight.mean(t0, t1),
        ttft_mean_ms: (!ttft.is_empty())
            .then(|| ttft.iter().sum::<f64>() / ttft.len() as f64 * 1000.0),
        ttft_p50_ms: q_ms(&mut ttft, 0.5),
        ttft_p99_ms: q_ms(&mut ttft, 0.99),
        itl_p50_ms: q_ms(&mut itl, 0.5),
        itl_p99_ms: q_ms(&mut itl, 0.99),
        e2e_p50_ms: q_ms(&mut e2e, 0.5),
        e2e_p99_ms: q_ms(&mut e2e, 0.99),
        running: mean(|p| p.running),
        waiting: mean(|p| p.waiting),
        kv_usage: mean(|p| p.kv_usage),
        preemptions,
        gen_tps: mean(|p| p.gen_tps),
    }
}

/// The server's readings whose stamps fall inside the client's span `[a, b]`, shifted onto
/// the client's clock: their mean in flight, weighted by their lines.
fn server_mean(track: &Track, d: f64, a: f64, b: f64) -> Option<(f64, f64)> {
    let inside: Vec<&Reading> = track
        .readings
        .iter()
        .filter(|r| r.t - d >= a && r.to - d <= b)
        .collect();
    let lines: f64 = inside.iter().map(|r| f64::from(r.lines.max(1))).sum();
    if lines == 0.0 {
        return None;
    }
    let sum: f64 = inside
        .iter()
        .map(|r| r.in_flight * f64::from(r.lines.max(1)))
        .sum();
    Some((sum / lines, lines))
}

/// How many of the server's readings fall inside the client's span.
fn server_count(track: &Track, d: f64, flight: &InFlight) -> usize {
    flight.span().map_or(0, |(a, b)| {
        track
            .readings
            .iter()
            .filter(|r| r.t - d >= a && r.to - d <= b)
            .count()
    })
}

fn little(
    run: &Run,
    flight: &InFlight,
    track: &Track,
    o: &align::Offset,
    m: Option<&Metrics>,
) -> Option<Little> {
    let (a, b) = flight.span()?;
    let span = b - a;
    if span <= 0.0 {
        return None;
    }
    let e2e: Vec<f64> = client_times(run).iter().map(|(s, e)| e - s).collect();
    let client_e2e_s = e2e.iter().sum::<f64>() / e2e.len() as f64;
    let arrival_rate = e2e.len() as f64 / span;
    // the server's W: its scrapes' histogram, else its load generator's summary
    let server_e2e_s = m
        .and_then(|m| m.latency.get("e2e_s"))
        .and_then(|h| h.mean)
        .or_else(|| {
            let view = run.server.as_ref()?;
            let f = view.figures.iter().find(|f| f.name == "mean_e2el_ms")?;
            f.value.filter(|v| *v > 0.0).map(|ms| ms / 1000.0)
        })
        .filter(|w| *w > 0.0);
    // the span less its edges: a reading there may belong on either side of them
    let edge = track.step_s.max((o.high_s - o.low_s) / 2.0 + track.stamp_s);
    let (from, to) = if span > 4.0 * edge {
        (a + edge, b - edge)
    } else {
        (a, b)
    };
    let (server_in_flight, _) = server_mean(track, o.offset_s, from, to)?;
    let client_in_flight = flight.mean(from, to);
    let expected = client_in_flight * server_e2e_s.map_or(1.0, |w| w / client_e2e_s);
    if expected <= 0.0 {
        return None;
    }
    let ratio = server_in_flight / expected;
    Some(Little {
        from,
        to,
        client_in_flight,
        arrival_rate,
        client_e2e_s,
        server_e2e_s,
        expected,
        server_in_flight,
        ratio,
        holds: server_e2e_s.map(|_| (ratio - 1.0).abs() <= LITTLE_TOLERANCE),
        implied_client_path_ms: server_e2e_s
            .is_none()
            .then_some((1.0 - ratio) * client_e2e_s * 1000.0),
    })
}

fn ttft_path(ttft_s: &[f64], m: &Metrics) -> Vec<PathAt> {
    let Some(h) = m.latency.get("ttft_s") else {
        return Vec::new();
    };
    if ttft_s.is_empty() {
        return Vec::new();
    }
    let mut v = ttft_s.to_vec();
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let mut out = Vec::new();
    for (at, client, server, within) in [
        ("mean", mean, h.mean, None),
        ("p50", quantile(&v, 0.5), h.p50, h.p50_within),
        ("p90", quantile(&v, 0.9), h.p90, h.p90_within),
        ("p99", quantile(&v, 0.99), h.p99, h.p99_within),
    ] {
        if let Some(s) = server {
            out.push(PathAt {
                at,
                client_ms: client * 1000.0,
                server_ms: s * 1000.0,
                path_ms: (client - s) * 1000.0,
                estimated: within.is_some(),
                path_low_ms: within.and_then(|w| w.1).map(|hi| (client - hi) * 1000.0),
                path_high_ms: within.map(|w| (client - w.0) * 1000.0),
            });
        }
    }
    out
}

/// The queue's share of the client's mean TTFT: from the server's queue-time histogram
/// where the scrapes have one, else Little's law on its queue (the waiting count's
/// integral over the run ÷ the requests sent: mean waiting ÷ arrival rate).
fn queue_share(
    ttft_s: &[f64],
    flight: &InFlight,
    track: &Track,
    d: f64,
    m: Option<&Metrics>,
) -> Option<QueueShare> {
    if ttft_s.is_empty() {
        return None;
    }
    let client = ttft_s.iter().sum::<f64>() / ttft_s.len() as f64;
    let histogram = m
        .filter(|_| track.source == "scrapes")
        .and_then(|m| m.latency.get("queue_s"))
        .and_then(|h| h.mean);
    let (from, queue) = match histogram {
        Some(q) => ("queue-time histogram", q),
        None => {
            // Little's law on the queue: the time requests spent waiting is the waiting
            // count's integral over the run (each reading standing for its bucket, or for
            // the interval between scrapes), shared out over the requests sent
            let (a, b) = flight.span()?;
            let each = if track.point_s > 0.0 {
                track.point_s
            } else {
                track.step_s
            };
            let waiting: Vec<f64> = track
                .points
                .iter()
                .filter(|p| p.t - d + each >= a && p.t - d <= b + each)
                .filter_map(|p| p.waiting)
                .collect();
            if waiting.is_empty() {
                return None;
            }
            let waited: f64 = waiting.iter().sum::<f64>() * each;
            ("waiting ÷ arrival rate", waited / flight.len() as f64)
        }
    };
    Some(QueueShare {
        from,
        queue_ms: queue * 1000.0,
        client_ttft_ms: client * 1000.0,
        share: queue / client,
        upper_bound: histogram.is_none() && track.preempted > 0.0,
    })
}

/// Every client run with timed requests against the read's server side: its logs, and its
/// scrapes (each its own alignment).
pub fn all(
    runs: &[(&Run, &'static str)],
    instances: &BTreeMap<String, Instance>,
    server: &Server,
    m: Option<&Metrics>,
) -> Vec<OneClock> {
    let mut tracks = Vec::new();
    if runs.iter().any(|(r, _)| !client_times(r).is_empty()) {
        tracks.extend(log_track(instances, server));
        tracks.extend(m.and_then(scrape_track));
    }
    // each pair on its own core: a folder of many runs beside one log is many searches
    use rayon::prelude::*;
    let pairs: Vec<(&(&Run, &'static str), &Track)> = runs
        .iter()
        .flat_map(|r| tracks.iter().map(move |t| (r, t)))
        .collect();
    pairs
        .par_iter()
        .filter_map(|((run, tool), t)| analyze(run, tool, t, m))
        .collect()
}
