//! Bottleneck hints: what holds a run back, each with the numbers that show it and what to
//! do about it. Every threshold is a constant here, in one place.
//!
//! Server hints look at each segment's steady window (ramp-up and drain tell nothing about
//! the bottleneck); completion hints look at the whole job in record order.

use crate::analysis::completions::Completions;
use crate::analysis::curve::Knee;
use crate::analysis::metrics::Metrics;
use crate::analysis::server::{Segment, Server, IMBALANCE};
use crate::analysis::steady::mean;
use crate::analysis::timeline::Bucket;
use crate::analysis::{finite, iso_opt};
use crate::ingest::completions::CompletionRow;
use crate::ingest::instance::Instance;
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::completion::Finish;
use tokstat_parsers::stamp::Ts;

/// Retracted requests or preemptions from which their hint is critical.
pub const PRESSURE_CRITICAL: u64 = 10;
/// KV usage at or above this is "full".
pub const KV_FULL: f64 = 0.90;
/// Share of steady buckets that must be full (or pinned) for a hint.
pub const MOST: f64 = 0.5;
/// `running` at or above this share of the configured maximum is "at the cap".
pub const AT_CAP: f64 = 0.95;
/// `running` below this share of the cap, with no queue, is "client bound".
pub const BELOW_CAP: f64 = 0.8;
/// A mean queue below this is "empty".
pub const QUEUE_EMPTY: f64 = 0.5;
/// Mean accepted tokens per step below this: speculation barely pays.
pub const ACCEPT_LOW: f64 = 1.5;
/// A fitted decline of this share over the steady window.
pub const DECAY: f64 = 0.15;
/// Steady buckets needed to judge a trend.
pub const DECAY_MIN_BUCKETS: usize = 10;
/// Decode throughput this much lower in the heaviest-prefill quarter of buckets.
pub const PREFILL_DIP: f64 = 0.15;
/// Share of completions hitting the cap.
pub const CAP_HIT_HIGH: f64 = 0.10;
/// A window of records whose failure rate is at least this…
pub const FAILURE_SPIKE_MIN: f64 = 0.05;
/// …and this many times the job's median window rate.
pub const FAILURE_SPIKE_FACTOR: f64 = 3.0;
/// Windows a job is cut into to find a failure spike.
pub const FAILURE_WINDOWS: usize = 20;
/// Client-side tokens/s below this share of the server's over the same window.
pub const CLIENT_SHARE: f64 = 0.7;
/// Completions with times needed to compare client and server.
pub const CLIENT_MIN_ROWS: usize = 50;

const CAP_ACTION: &str = "Many outputs are cut off: raise max_tokens (the true lengths are longer than shown), or curb the prompt's verbosity; capped outputs usually have to be regenerated.";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// One hint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hint {
    pub id: &'static str,
    pub severity: Severity,
    pub evidence: Evidence,
    pub action: String,
}

/// The numbers behind a hint: a sentence that states them, the time range and instance they
/// come from when they have one, and each figure by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "iso_opt")]
    pub from: Option<Ts>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "iso_opt")]
    pub to: Option<Ts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    #[serde(flatten)]
    pub figures: BTreeMap<&'static str, Figure>,
}

/// One figure of a hint's evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Figure {
    Count(u64),
    Value(f64),
    /// Not known (a cap no start-up line stated).
    Missing,
    /// Instances away from the median.
    Instances(Vec<Off>),
}

/// An instance whose steady throughput is away from the median instance's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Off {
    pub instance: String,
    pub gen_tps: f64,
    pub vs_median: f64,
}

impl From<u64> for Figure {
    fn from(v: u64) -> Figure {
        Figure::Count(v)
    }
}

impl From<usize> for Figure {
    fn from(v: usize) -> Figure {
        Figure::Count(v as u64)
    }
}

impl From<f64> for Figure {
    fn from(v: f64) -> Figure {
        Figure::Value(v)
    }
}

impl<T: Into<Figure>> From<Option<T>> for Figure {
    fn from(v: Option<T>) -> Figure {
        v.map_or(Figure::Missing, Into::into)
    }
}

impl Figure {
    /// The figure as a number, if it is one.
    pub fn number(&self) -> Option<f64> {
        match *self {
            Figure::Count(n) => Some(n as f64),
            Figure::Value(v) => Some(v),
            _ => None,
        }
    }
}

pub(crate) fn fig(v: impl Into<Figure>) -> Figure {
    v.into()
}

pub(crate) fn evidence(
    text: String,
    range: Option<(i64, i64)>,
    figures: &[(&'static str, Figure)],
) -> Evidence {
    Evidence {
        text,
        from: range.map(|r| Ts(r.0)),
        to: range.map(|r| Ts(r.1)),
        instance: None,
        figures: figures.iter().cloned().collect(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// The configured maximum of running requests of a segment, if its start-up lines said.
fn configured_cap(seg: &Segment) -> Option<f64> {
    ["max_running_requests", "max_num_seqs"]
        .iter()
        .find_map(|k| {
            seg.settings
                .get(*k)?
                .iter()
                .filter_map(|v| v.parse::<f64>().ok())
                .max_by(f64::total_cmp)
        })
}

/// Steady buckets of a segment, per instance.
fn steady_rows<'a>(s: &'a Server, seg: &Segment) -> Vec<(&'a str, Vec<&'a Bucket>)> {
    let Some(st) = seg.steady else {
        return Vec::new();
    };
    let (a, b) = (seg.buckets.0 + st.start, seg.buckets.0 + st.end);
    s.timeline
        .instances
        .iter()
        .map(|(n, rows)| {
            (
                n.as_str(),
                rows[a..b]
                    .iter()
                    .filter(|r| r.running.is_finite())
                    .collect(),
            )
        })
        .filter(|(_, v): &(&str, Vec<&Bucket>)| !v.is_empty())
        .collect()
}

fn share(v: &[&Bucket], f: impl Fn(&Bucket) -> bool) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().filter(|b| f(b)).count() as f64 / v.len() as f64
    }
}

fn field(v: &[&Bucket], f: impl Fn(&Bucket) -> f64) -> f64 {
    mean(&v.iter().map(|b| f(b)).collect::<Vec<_>>())
}

/// Everything a hint may look at.
pub struct Inputs<'a> {
    pub server: &'a Server,
    pub instances: &'a BTreeMap<String, Instance>,
    pub completions: Option<&'a Completions>,
    pub rows: &'a [CompletionRow],
    pub metrics: Option<&'a Metrics>,
}

/// All hints, most severe first.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out = Vec::new();
    let s = i.server;
    let label = |seg: &Segment| {
        if s.segments.len() > 1 {
            format!("segment {}: ", seg.index + 1)
        } else {
            String::new()
        }
    };
    for seg in &s.segments {
        let Some(st) = seg.steady else { continue };
        let rows = steady_rows(s, seg);
        let all: Vec<&Bucket> = rows.iter().flat_map(|(_, v)| v.iter().copied()).collect();
        let t0 = s.timeline.total[seg.buckets.0 + st.start].ts;
        let t1 = s.timeline.total[seg.buckets.0 + st.end - 1].ts + s.timeline.bucket_ms;
        let range = Some((t0, t1));
        let kv_full = share(&all, |b| b.kv_usage >= KV_FULL);
        let queue = field(&all, |b| b.waiting);
        let kv_max = all
            .iter()
            .map(|b| b.kv_usage)
            .filter(|v| v.is_finite())
            .fold(f64::NAN, f64::max);
        let pressure = events_in(i.instances, t0, t1);
        // kv_bound
        if kv_full >= MOST && (queue >= QUEUE_EMPTY || pressure.0 + pressure.1 > 0) {
            out.push(Hint {
                id: "kv_bound",
                severity: if pressure.0 + pressure.1 > 0 { Severity::Critical } else { Severity::Warning },
                evidence: evidence(
                    format!("{}KV cache ≥ {} full in {} of steady time, {:.1} requests queued on average, {} retractions, {} preemptions", label(seg), pct(KV_FULL), pct(kv_full), queue, pressure.0, pressure.1),
                    range,
                    &[("kv_full_share", fig(kv_full)), ("waiting_mean", fig(queue)), ("retractions", fig(pressure.0)), ("preemptions", fig(pressure.1))],
                ),
                action: "The KV cache limits the batch: raise --mem-fraction-static / --gpu-memory-utilization, shorten max_tokens or context, add tensor parallelism, or use FP8 KV cache.".into(),
            });
        }
        // running_cap / client_bound, per instance against the configured or observed maximum
        let cap = configured_cap(seg);
        let mut pinned = Vec::new();
        let mut below = Vec::new();
        for (name, v) in &rows {
            let max_seen = v.iter().map(|b| b.running).fold(0.0, f64::max);
            let c = cap.unwrap_or(max_seen);
            if c <= 0.0 {
                continue;
            }
            let at = share(v, |b| b.running >= AT_CAP * c);
            let q = field(v, |b| b.waiting);
            let kv = share(v, |b| b.kv_usage >= KV_FULL);
            let run = field(v, |b| b.running);
            if at >= MOST && q >= QUEUE_EMPTY && kv < MOST {
                pinned.push((*name, run, q));
            } else if cap.is_some() && run < BELOW_CAP * c && q < QUEUE_EMPTY && kv < MOST {
                below.push((*name, run));
            }
        }
        let saturated = s.knee.filter(|k| mean_running(&rows) >= k.running);
        if !pinned.is_empty() {
            let run = mean(&pinned.iter().map(|p| p.1).collect::<Vec<_>>());
            let q = mean(&pinned.iter().map(|p| p.2).collect::<Vec<_>>());
            let key = if seg.settings.contains_key("max_num_seqs") {
                "max_num_seqs"
            } else {
                "max_running_requests"
            };
            out.push(Hint {
                id: "running_cap",
                severity: Severity::Warning,
                evidence: evidence(
                    format!("{}{} of {} instance(s) hold running at the maximum ({}, mean {:.1}) with {:.1} requests queued and KV cache below {}", label(seg), pinned.len(), rows.len(), cap.map_or("observed".to_string(), |c| format!("{key}={c}")), run, q, pct(KV_FULL)),
                    range,
                    &[("running_mean", fig(run)), ("waiting_mean", fig(q)), ("cap", fig(cap)), ("kv_usage_max", fig(finite(kv_max)))],
                ),
                action: format!("The batch is capped while KV cache is free and requests wait: raise {key} (the curve shows how much throughput more concurrency still adds)."),
            });
        } else if !below.is_empty() && below.len() * 2 >= rows.len() && saturated.is_none() {
            let run = mean(&below.iter().map(|p| p.1).collect::<Vec<_>>());
            out.push(Hint {
                id: "client_bound",
                severity: Severity::Warning,
                evidence: evidence(
                    format!("{}running averages {:.1} of a possible {} with an empty queue ({:.2} waiting)", label(seg), run, cap.unwrap_or(0.0), queue),
                    range,
                    &[("running_mean", fig(run)), ("cap", fig(cap)), ("waiting_mean", fig(queue))],
                ),
                action: "The server waits for work: send more concurrent requests (raise the client's concurrency / worker count).".into(),
            });
        }
        if let Some(k) = saturated {
            out.push(saturated_hint(&label(seg), k, mean_running(&rows), range));
        }
        // spec_low_accept
        let acc = field(&all, |b| b.accept_len);
        if acc.is_finite() && acc > 0.0 && acc < ACCEPT_LOW {
            out.push(Hint {
                id: "spec_low_accept",
                severity: Severity::Warning,
                evidence: evidence(format!("{}speculative decoding accepts {acc:.2} tokens per step on average", label(seg)), range, &[("accept_len_mean", fig(acc))]),
                action: "Speculation costs more than it gains: use fewer draft tokens, a better-matched draft model, or turn it off.".into(),
            });
        }
        // throughput_decay
        let rates: Vec<f64> = (seg.buckets.0 + st.start..seg.buckets.0 + st.end)
            .map(|k| s.timeline.total[k].gen_tps)
            .collect();
        if rates.len() >= DECAY_MIN_BUCKETS {
            let (a, b) = fit(&rates);
            let start = a;
            let end = a + b * (rates.len() - 1) as f64;
            if start > 0.0 && end < start * (1.0 - DECAY) {
                out.push(Hint {
                    id: "throughput_decay",
                    severity: Severity::Warning,
                    evidence: evidence(format!("{}steady throughput falls from {start:.0} to {end:.0} tok/s ({:+.0}%) along the run", label(seg), (end / start - 1.0) * 100.0), range, &[("gen_tps_start", fig(start)), ("gen_tps_end", fig(end))]),
                    action: "Throughput declines while the load holds: look for growing contexts (multi-turn, long outputs), KV-cache fragmentation, a thermal or memory leak; restart or shorten max_tokens.".into(),
                });
            }
        }
        // prefill_interference: decode rate in the heaviest-prefill quarter vs the lightest
        if let Some(h) = prefill_hint(s, seg, st.start, st.end, range, &label(seg)) {
            out.push(h);
        }
    }
    // event counts over the whole run
    let (retr, preempt) = events_in(i.instances, i64::MIN, i64::MAX);
    if retr > 0 {
        out.push(Hint {
            id: "retractions",
            severity: if retr >= PRESSURE_CRITICAL { Severity::Critical } else { Severity::Warning },
            evidence: evidence(format!("{retr} requests retracted (KV cache full; their decoding is redone)"), None, &[("retracted_requests", fig(retr))]),
            action: "Retracted requests are decoded again: lower max_running_requests or --schedule-conservativeness, or give the KV cache more memory.".into(),
        });
    }
    if preempt > 0 {
        out.push(Hint {
            id: "preemptions",
            severity: if preempt >= PRESSURE_CRITICAL { Severity::Critical } else { Severity::Warning },
            evidence: evidence(format!("{preempt} preemptions (KV cache full; requests recomputed or swapped)"), None, &[("preemptions", fig(preempt))]),
            action: "Preempted requests are recomputed: lower max_num_seqs, raise --gpu-memory-utilization, or add tensor parallelism.".into(),
        });
    }
    // instance_imbalance
    let off: Vec<_> = s.instances.iter().filter(|r| r.imbalanced).collect();
    if !off.is_empty() {
        let names: Vec<String> = off
            .iter()
            .map(|r| format!("{} {:+.0}%", r.name, r.vs_median * 100.0))
            .collect();
        out.push(Hint {
            id: "instance_imbalance",
            severity: Severity::Warning,
            evidence: evidence(
                format!("steady throughput more than {} from the median instance: {}", pct(IMBALANCE), names.join(", ")),
                None,
                &[("instances", Figure::Instances(off.iter().map(|r| Off { instance: r.name.clone(), gen_tps: r.gen_tps, vs_median: r.vs_median }).collect()))],
            ),
            action: "One instance is slower than its peers: check its GPU (clocks, thermals, ECC errors, PCIe/NVLink), its placement, and whether the load balancer sends it the same work.".into(),
        });
    }
    if let Some(c) = i.completions {
        if c.cap.hit_rate >= CAP_HIT_HIGH {
            out.push(Hint {
                id: "cap_hit_high",
                severity: if c.cap.hit_rate >= 2.0 * CAP_HIT_HIGH {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                evidence: evidence(
                    format!(
                        "{} of {} completions ({}) stopped at the token cap{}",
                        c.cap.hits,
                        c.count,
                        pct(c.cap.hit_rate),
                        c.cap.value.map_or(String::new(), |v| format!(" ({v})"))
                    ),
                    None,
                    &[
                        ("hit_rate", fig(c.cap.hit_rate)),
                        ("hits", fig(c.cap.hits)),
                        ("cap", fig(c.cap.value)),
                        ("tokens_on_capped_share", fig(c.cap.tokens_on_capped_share)),
                    ],
                ),
                action: CAP_ACTION.into(),
            });
        }
        if let Some(h) = failure_spike(i.rows) {
            out.push(h);
        }
        if let Some(h) = client_overhead(s, i.rows) {
            out.push(h);
        }
    } else if let Some((m, rate)) = i
        .metrics
        .and_then(|m| Some((m, m.cap_hit_rate.filter(|r| *r >= CAP_HIT_HIGH)?)))
    {
        let length = m.finished.get("length").copied().unwrap_or(0.0);
        let done: f64 = m.finished.values().sum();
        out.push(Hint {
            id: "cap_hit_high",
            severity: if rate >= 2.0 * CAP_HIT_HIGH { Severity::Critical } else { Severity::Warning },
            evidence: evidence(
                format!("{length:.0} of {done:.0} finished requests ({}) stopped at max_tokens (vllm:request_success_total{{finished_reason=\"length\"}})", pct(rate)),
                m.from.zip(m.to).map(|(a, b)| (a.0, b.0)),
                &[("hit_rate", fig(rate)), ("hits", fig(length)), ("finished", fig(done))],
            ),
            action: CAP_ACTION.into(),
        });
    }
    out.extend(crate::analysis::lifecycle::hints(&s.lifecycle));
    out.sort_by_key(|h| std::cmp::Reverse(h.severity));
    out
}

fn mean_running(rows: &[(&str, Vec<&Bucket>)]) -> f64 {
    mean(
        &rows
            .iter()
            .map(|(_, v)| field(v, |b| b.running))
            .collect::<Vec<_>>(),
    )
}

fn saturated_hint(label: &str, k: Knee, running: f64, range: Option<(i64, i64)>) -> Hint {
    Hint {
        id: "saturated",
        severity: Severity::Info,
        evidence: evidence(
            format!("{label}throughput flattens at about {:.0} running requests ({:.0} tok/s); at {:.0} it is {:.0} tok/s, and the run held {:.0} on average", k.running, k.tps_median, k.running_max, k.tps_at_max, running),
            range,
            &[("knee_running", fig(k.running)), ("knee_tps", fig(k.tps_median)), ("max_running", fig(k.running_max)), ("tps_at_max", fig(k.tps_at_max)), ("running_mean", fig(running))],
        ),
        action: "The server is saturated: more concurrency will not raise throughput (only latency). Scale out, use a faster configuration (quantisation, speculative decoding), or shorten outputs.".into(),
    }
}

/// Retracted requests and preemptions of all instances between `t0` and `t1`.
fn events_in(instances: &BTreeMap<String, Instance>, t0: i64, t1: i64) -> (u64, u64) {
    use tokstat_parsers::record::EventKind;
    let mut r = (0, 0);
    for i in instances.values() {
        let events = i.digest.events();
        for e in events.iter().filter(|e| e.ts >= t0 && e.ts < t1) {
            match e.kind {
                EventKind::Retraction => r.0 += e.count,
                EventKind::Preemption => r.1 += 1,
                _ => {}
            }
        }
        // vLLM V1 counts preemptions on its stats lines
        if t0 == i64::MIN {
            r.1 += i.preemptions.saturating_sub(
                events
                    .iter()
                    .filter(|e| e.kind == EventKind::Preemption)
                    .count() as u64,
            );
        }
    }
    r
}

/// Least-squares line through `(k, v[k])`: `(intercept, slope)`.
fn fit(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = v.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (k, y) in v.iter().enumerate() {
        let dx = k as f64 - mx;
        sxy += dx * (y - my);
        sxx += dx * dx;
    }
    let b = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (my - b * mx, b)
}

fn prefill_hint(
    s: &Server,
    seg: &Segment,
    a: usize,
    b: usize,
    range: Option<(i64, i64)>,
    label: &str,
) -> Option<Hint> {
    let rows: Vec<&Bucket> = s.timeline.total[seg.buckets.0 + a..seg.buckets.0 + b]
        .iter()
        .collect();
    if rows.len() < 8 || rows.iter().all(|r| r.prompt_tps <= 0.0) {
        return None;
    }
    let mut by: Vec<&Bucket> = rows.clone();
    by.sort_by(|x, y| x.prompt_tps.total_cmp(&y.prompt_tps));
    let q = by.len() / 4;
    let light = mean(&by[..q].iter().map(|r| r.gen_tps).collect::<Vec<_>>());
    let heavy = mean(
        &by[by.len() - q..]
            .iter()
            .map(|r| r.gen_tps)
            .collect::<Vec<_>>(),
    );
    if light <= 0.0 || heavy >= light * (1.0 - PREFILL_DIP) {
        return None;
    }
    Some(Hint {
        id: "prefill_interference",
        severity: Severity::Warning,
        evidence: evidence(
            format!("{label}decode runs at {heavy:.0} tok/s in the quarter of steady time with the most prefill vs {light:.0} tok/s in the quarter with the least ({:+.0}%)", (heavy / light - 1.0) * 100.0),
            range,
            &[("gen_tps_heavy_prefill", fig(heavy)), ("gen_tps_light_prefill", fig(light))],
        ),
        action: "Prefill batches stall decoding: lower --chunked-prefill-size / max_num_batched_tokens, enable mixed chunked prefill, or disaggregate prefill and decode.".into(),
    })
}

/// A window of records (in job order) failing far more often than the job as a whole.
fn failure_spike(rows: &[CompletionRow]) -> Option<Hint> {
    if rows.len() < FAILURE_WINDOWS * 10 {
        return None;
    }
    let w = rows.len() / FAILURE_WINDOWS;
    let rates: Vec<f64> = rows
        .chunks(w)
        .filter(|c| c.len() == w)
        .map(|c| c.iter().filter(|r| r.finish == Finish::Error).count() as f64 / w as f64)
        .collect();
    let mut sorted = rates.clone();
    sorted.sort_unstable_by(f64::total_cmp);
    let median = crate::analysis::quantile::quantile(&sorted, 0.5);
    let bad: Vec<usize> = (0..rates.len())
        .filter(|&k| {
            rates[k] >= FAILURE_SPIKE_MIN
                && rates[k] >= FAILURE_SPIKE_FACTOR * median.max(1.0 / w as f64)
        })
        .collect();
    let (&first, &last) = (bad.first()?, bad.last()?);
    let worst = bad.iter().map(|&k| rates[k]).fold(0.0, f64::max);
    let failed: usize = rows[first * w..(last + 1) * w]
        .iter()
        .filter(|r| r.finish == Finish::Error)
        .count();
    Some(Hint {
        id: "failure_spike",
        severity: Severity::Critical,
        evidence: evidence(
            format!("records {}–{} (of {}) fail at up to {} ({failed} failures) against a typical {}", first * w + 1, (last + 1) * w, rows.len(), pct(worst), pct(median)),
            None,
            &[("first_record", fig(first * w + 1)), ("last_record", fig((last + 1) * w)), ("failures", fig(failed)), ("worst_rate", fig(worst)), ("median_rate", fig(median))],
        ),
        action: "Failures cluster in one stretch of the job: look at the server log around that time (restart, OOM, timeouts) and retry the failed records.".into(),
    })
}

/// Client-side tokens/s (completions finished in a window) against the server's (the
/// timeline) over the window both cover. Engines stamp local time and clients Unix time, so
/// the client window is shifted by the whole number of hours (±14) that overlaps best.
fn client_overhead(s: &Server, rows: &[CompletionRow]) -> Option<Hint> {
    let done: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            let end = r.created()? as f64 + r.latency().unwrap_or(0.0);
            Some((end, r.completion_tokens.get()? as f64))
        })
        .collect();
    let tl = &s.timeline;
    if done.len() < CLIENT_MIN_ROWS || tl.total.is_empty() {
        return None;
    }
    let c0 = done.iter().map(|d| d.0).fold(f64::INFINITY, f64::min);
    let c1 = done.iter().map(|d| d.0).fold(f64::NEG_INFINITY, f64::max);
    let b = tl.bucket_ms as f64 / 1000.0;
    let s0 = tl.origin as f64 / 1000.0;
    let s1 = s0 + b * tl.total.len() as f64;
    let overlap = |h: i64| {
        let shift = h as f64 * 3600.0;
        ((c1 + shift).min(s1) - (c0 + shift).max(s0), shift)
    };
    let (len, shift) = (-14..=14)
        .map(overlap)
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.abs().total_cmp(&a.1.abs())))?;
    if len < 10.0 * b {
        return None;
    }
    let (w0, w1) = ((c0 + shift).max(s0), (c1 + shift).min(s1));
    let client: f64 = done
        .iter()
        .filter(|d| d.0 + shift >= w0 && d.0 + shift <= w1)
        .map(|d| d.1)
        .sum::<f64>()
        / (w1 - w0);
    // buckets wholly inside the window
    let inside: Vec<f64> = tl
        .total
        .iter()
        .filter(|r| {
            let t = r.ts as f64 / 1000.0;
            t >= w0 && t + b <= w1
        })
        .map(|r| r.gen_tps)
        .collect();
    if inside.is_empty() {
        return None;
    }
    let server = mean(&inside);
    if server <= 0.0 || client >= CLIENT_SHARE * server {
        return None;
    }
    let ms = |t: f64| (t * 1000.0) as i64;
    Some(Hint {
        id: "client_overhead",
        severity: Severity::Warning,
        evidence: evidence(
            format!(
                "completions received {client:.0} tok/s while the servers generated {server:.0} tok/s over the same window ({:.0}%){}",
                client / server * 100.0,
                if shift != 0.0 { format!("; client times shifted {:+.0} h to the servers' clock", shift / 3600.0) } else { String::new() }
            ),
            Some((ms(w0), ms(w1))),
            &[("client_tps", fig(client)), ("server_tps", fig(server)), ("clock_shift_h", fig(shift / 3600.0))],
        ),
        action: "The servers generate more than the job keeps: other clients share them, or requests are retried, aborted or timed out after generating. Check the client's retries and timeouts, and whether every result is written.".into(),
    })
}
