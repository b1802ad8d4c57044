//! The sections of the report that the server analysis fills: each instance's row, the
//! timeline's rows, the run-wide throughput and the segments — their types and every figure
//! in them (the report only places them).

use crate::analysis::finite;
use crate::analysis::iso;
use crate::analysis::iso_opt;
use crate::analysis::segments::SettingChange;
use crate::analysis::server::{Segment, Server};
use crate::analysis::steady::PEAK_WINDOW_MS;
use crate::analysis::timeline::Bucket;
use crate::analysis::trend::{Trend, Verdict};
use crate::ingest::instance::Instance;
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::stamp::Ts;

/// One server instance: its aggregates over stats lines and its throughput.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceReport {
    pub instance: String,
    pub engine: Option<&'static str>,
    #[serde(serialize_with = "iso_opt")]
    pub first_ts: Option<Ts>,
    #[serde(serialize_with = "iso_opt")]
    pub last_ts: Option<Ts>,
    pub span_s: Option<f64>,
    /// Decode (SGLang) or periodic stats (vLLM) lines.
    pub stat_lines: u64,
    pub prefill_lines: u64,
    /// Mean rate over the run's steady buckets (weighted by the time served in each).
    pub gen_tps: Option<f64>,
    /// Relative difference from the median instance's steady rate.
    pub vs_median: Option<f64>,
    /// Beyond ±15% of the median.
    pub imbalanced: Option<bool>,
    /// Tokens generated, estimated from the logged rates.
    pub gen_tokens: Option<f64>,
    /// Means and maxima over stats lines.
    pub gen_tps_mean: Option<f64>,
    pub gen_tps_max: Option<f64>,
    pub prompt_tps_mean: Option<f64>,
    pub running_mean: Option<f64>,
    pub running_max: Option<f64>,
    pub waiting_mean: Option<f64>,
    pub kv_usage_mean: Option<f64>,
    pub kv_usage_max: Option<f64>,
    pub accept_len_mean: Option<f64>,
    pub prefill_tokens: u64,
    /// Retraction events, and the requests they retracted.
    pub retractions: u64,
    pub retracted_requests: u64,
    pub preemptions: u64,
    pub errors: u64,
}

/// One timeline bucket of one instance, or of the run (`instance` null).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// Bucket start.
    #[serde(serialize_with = "iso")]
    pub ts: Ts,
    pub instance: Option<String>,
    pub gen_tps: Option<f64>,
    /// Generated tokens over the time the stats lines' intervals cover in the bucket (the
    /// most any instance covers, for the total): `gen_tps` where they cover all of it,
    /// higher where the run starts, stops or falls silent inside the bucket; null where
    /// they cover none. The steady and peak rates are means of it.
    pub serving_gen_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub accept_len: Option<f64>,
    pub events: Option<f64>,
    /// HTTP access lines in the bucket that were answered (status below 400), refused
    /// (4xx) and failed (5xx); null when the logs have no access line.
    pub http_ok: Option<u64>,
    pub http_4xx: Option<u64>,
    pub http_5xx: Option<u64>,
    /// Whether the bucket lies in a steady window.
    pub steady: bool,
    /// The time the stats lines cover in the bucket, seconds (the most any instance
    /// covers, for the total): the weight of `serving_gen_tps` in the steady rates. In
    /// export's `timeline`; not in the report's JSON.
    #[serde(skip)]
    pub covered_s: f64,
}

/// A time range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Window {
    #[serde(serialize_with = "iso")]
    pub from: Ts,
    #[serde(serialize_with = "iso")]
    pub to: Ts,
}

/// Run-wide throughput.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SteadyReport {
    /// Over the segments' steady windows that the trend test finds steady (weighted by the
    /// time they were served), tok/s: null where every window drifts (see `trend`).
    pub gen_tps: Option<f64>,
    /// Over all the segments' steady windows, whatever their trends, tok/s.
    pub window_gen_tps: Option<f64>,
    /// The trend test's verdict over the run: `steady`, `drifting`, `ramping` (still
    /// rising when the log ends) or `too_little_data`; null with no window.
    pub verdict: Option<&'static str>,
    /// The test of the window the verdict comes from (a drifting one first, else the
    /// longest).
    pub trend: Option<Trend>,
    /// The best window of `peak_window_s`.
    pub peak_gen_tps: Option<f64>,
    pub peak_window_s: f64,
    /// Tokens over the time the instances were serving (their stats lines' intervals, per
    /// instance; the silences between segments left out).
    pub mean_gen_tps: Option<f64>,
    /// Tokens over the whole span, from the first segment's start to the last one's end,
    /// silences included: below `mean_gen_tps` where the run fell silent.
    pub span_gen_tps: Option<f64>,
    pub gen_tokens: f64,
    /// From the first segment's start to its steady window, and from the last one's steady
    /// window to its end, seconds.
    pub ramp_up_s: Option<f64>,
    pub drain_s: Option<f64>,
    pub windows: Vec<Window>,
}

impl SteadyReport {
    /// The mean over the whole span, where it says more than the mean while serving: when
    /// the run fell silent between segments (1% or more below it).
    pub fn span_mean(&self) -> Option<f64> {
        match (self.span_gen_tps, self.mean_gen_tps) {
            (Some(span), Some(serving)) if span < 0.99 * serving => Some(span),
            _ => None,
        }
    }
}

/// A segment of the run: cut at restarts and long silences.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentReport {
    pub index: usize,
    /// `begin`, `restart` or `gap`.
    pub reason: &'static str,
    #[serde(serialize_with = "iso")]
    pub start: Ts,
    #[serde(serialize_with = "iso")]
    pub end: Ts,
    pub duration_s: f64,
    /// Instances with lines in it.
    pub instances: usize,
    pub gen_tokens: f64,
    /// Steady rate.
    pub gen_tps: Option<f64>,
    /// Tokens over the time instances were working.
    pub gen_tps_mean: Option<f64>,
    pub peak_gen_tps: Option<f64>,
    pub steady: Option<Window>,
    /// The mean over the steady window, whatever its trend.
    pub window_gen_tps: Option<f64>,
    /// The trend test of the steady window.
    pub trend: Option<Trend>,
    pub ramp_up_s: Option<f64>,
    pub drain_s: Option<f64>,
    /// Steady rate against the previous segment's, as a ratio minus one.
    pub vs_previous: Option<f64>,
    pub changes: Vec<SettingChange>,
    pub settings: BTreeMap<String, Vec<String>>,
}

/// An instance's section: its aggregates over stats lines and its steady throughput.
pub fn instance(name: &str, i: &Instance, s: &Server) -> InstanceReport {
    let row = s.instances.iter().find(|r| r.name == name);
    InstanceReport {
        instance: name.to_string(),
        engine: i.engine.map(tokstat_parsers::record::Engine::as_str),
        first_ts: i.first,
        last_ts: i.last,
        span_s: i.span_s().and_then(finite),
        stat_lines: i.stat_lines,
        prefill_lines: i.prefill_lines,
        gen_tps: row.and_then(|r| finite(r.gen_tps)),
        vs_median: row.and_then(|r| finite(r.vs_median)),
        imbalanced: row.map(|r| r.imbalanced),
        gen_tokens: row.and_then(|r| finite(r.gen_tokens.round())),
        gen_tps_mean: i.gen_tps.mean().and_then(finite),
        gen_tps_max: i.gen_tps.max().and_then(finite),
        prompt_tps_mean: i.prompt_tps.mean().and_then(finite),
        running_mean: i.running.mean().and_then(finite),
        running_max: i.running.max().and_then(finite),
        waiting_mean: i.waiting.mean().and_then(finite),
        kv_usage_mean: i.kv_usage.mean().and_then(finite),
        kv_usage_max: i.kv_usage.max().and_then(finite),
        accept_len_mean: i.accept_len.mean().and_then(finite),
        prefill_tokens: i.prefill_tokens,
        retractions: i.retraction_events,
        retracted_requests: i.retracted,
        preemptions: i.preemptions,
        errors: i.errors,
    }
}

fn timeline_row(
    instance: Option<&str>,
    b: &Bucket,
    bucket_ms: i64,
    steady: bool,
    http: bool,
) -> TimelineRow {
    let count = |c: usize| http.then_some(b.http[c]);
    TimelineRow {
        ts: Ts(b.ts),
        instance: instance.map(str::to_string),
        gen_tps: finite(b.gen_tps),
        serving_gen_tps: b.serving_gen_tps(bucket_ms).and_then(finite),
        prompt_tps: finite(b.prompt_tps),
        running: finite(b.running),
        waiting: finite(b.waiting),
        kv_usage: finite(b.kv_usage),
        accept_len: finite(b.accept_len),
        events: finite(b.events),
        http_ok: count(0),
        http_4xx: count(1),
        http_5xx: count(2),
        steady,
        covered_s: b.covered_s(bucket_ms),
    }
}

/// The timeline section: the run's total and, with several instances, each one's rows.
pub fn timeline(s: &Server) -> Vec<TimelineRow> {
    let tl = &s.timeline;
    let steady: Vec<bool> = (0..tl.total.len()).map(|k| s.in_steady(k)).collect();
    let http = tl.total.iter().any(|b| b.http != [0; 3]);
    let mut rows: Vec<TimelineRow> = tl
        .total
        .iter()
        .zip(&steady)
        .map(|(b, &st)| timeline_row(None, b, tl.bucket_ms, st, http))
        .collect();
    if tl.instances.len() > 1 {
        for (name, v) in &tl.instances {
            rows.extend(
                v.iter()
                    .zip(&steady)
                    .map(|(b, &st)| timeline_row(Some(name), b, tl.bucket_ms, st, http)),
            );
        }
    }
    rows
}

/// A segment's steady window in time.
fn window(g: &Segment, s: &Server) -> Option<Window> {
    let (t0, t1) = s.steady_span(g)?;
    Some(Window {
        from: Ts(t0),
        to: Ts(t1),
    })
}

/// Ramp-up (segment start to steady) and drain (steady to segment end), seconds.
fn ramp_drain(g: &Segment, s: &Server) -> (Option<f64>, Option<f64>) {
    match window(g, s) {
        Some(w) => (
            Some((w.from.0 - g.start).max(0) as f64 / 1000.0),
            Some((g.end - w.to.0).max(0) as f64 / 1000.0),
        ),
        None => (None, None),
    }
}

/// The run-wide throughput section.
pub fn steady(s: &Server) -> SteadyReport {
    let busy: f64 = s.segments.iter().map(|g| g.busy_s).sum();
    let (verdict, trend) = run_trend(s);
    SteadyReport {
        gen_tps: s.steady_tps.and_then(finite),
        window_gen_tps: s.window_tps.and_then(finite),
        verdict: verdict.map(Verdict::as_str),
        trend,
        peak_gen_tps: s.peak_tps.and_then(finite),
        // the window of the segment with the best peak (shorter than a minute only where a
        // steady window is)
        peak_window_s: s
            .segments
            .iter()
            .filter(|g| g.peak_tps.is_some())
            .max_by(|a, b| {
                a.peak_tps
                    .unwrap_or(0.0)
                    .total_cmp(&b.peak_tps.unwrap_or(0.0))
            })
            .map_or(PEAK_WINDOW_MS.max(s.timeline.bucket_ms), |g| {
                g.peak_window as i64 * s.timeline.bucket_ms
            }) as f64
            / 1000.0,
        mean_gen_tps: (busy > 0.0).then(|| s.gen_tokens / busy).and_then(finite),
        span_gen_tps: match (s.segments.first(), s.segments.last()) {
            (Some(a), Some(z)) if z.end > a.start => {
                finite(s.gen_tokens / ((z.end - a.start) as f64 / 1000.0))
            }
            _ => None,
        },
        gen_tokens: s.gen_tokens.round(),
        ramp_up_s: s.segments.first().and_then(|g| ramp_drain(g, s).0),
        drain_s: s.segments.last().and_then(|g| ramp_drain(g, s).1),
        windows: s.segments.iter().filter_map(|g| window(g, s)).collect(),
    }
}

/// The run's verdict on its steady windows: a drift (or ramp) in any is the run's, shown by
/// the longest drifting window; else steady where any window was tested; else too little
/// data.
fn run_trend(s: &Server) -> (Option<Verdict>, Option<Trend>) {
    let weight = |g: &&Segment| g.steady.map_or(0.0, |st| st.weight);
    let longest = |f: &dyn Fn(Verdict) -> bool| {
        s.segments
            .iter()
            .filter(|g| g.trend.is_some_and(|t| f(t.verdict)))
            .max_by(|a, b| weight(a).total_cmp(&weight(b)))
            .and_then(|g| g.trend)
    };
    let t = longest(&|v| !v.steady())
        .or_else(|| longest(&|v| v == Verdict::Steady))
        .or_else(|| longest(&|_| true));
    (t.map(|t| t.verdict), t)
}

/// The segments section, each with its change against the one before.
pub fn segments(s: &Server) -> Vec<SegmentReport> {
    let mut prev: Option<&Segment> = None;
    let mut out = Vec::new();
    for g in &s.segments {
        let (ramp_up_s, drain_s) = ramp_drain(g, s);
        out.push(SegmentReport {
            index: g.index,
            reason: g.reason.as_str(),
            start: Ts(g.start),
            end: Ts(g.end),
            duration_s: (g.end - g.start) as f64 / 1000.0,
            instances: g.instances,
            gen_tokens: g.gen_tokens.round(),
            gen_tps: g.steady_tps().and_then(finite),
            gen_tps_mean: finite(g.gen_tps_mean),
            peak_gen_tps: g.peak_tps.and_then(finite),
            steady: window(g, s),
            window_gen_tps: g.window_tps().and_then(finite),
            trend: g.trend,
            ramp_up_s,
            drain_s,
            vs_previous: match (prev.and_then(Segment::steady_tps), g.steady_tps()) {
                (Some(a), Some(b)) if a > 0.0 => finite(b / a - 1.0),
                _ => None,
            },
            changes: g.changes.clone(),
            settings: g.settings.clone(),
        });
        prev = Some(g);
    }
    out
}
