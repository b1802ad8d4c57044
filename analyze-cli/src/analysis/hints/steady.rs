//! Hints from each segment's steady window: what bounds the batch (`kv_bound`,
//! `running_cap`, `client_bound`, `saturated`), speculation that barely pays
//! (`spec_low_accept`), a falling rate (`throughput_decay`) and prefill stalling decode
//! (`prefill_interference`).

use super::pressure::events_in;
use super::vocabulary::{evidence, fig, pct, Hint, Inputs, Severity};
use crate::analysis::curve::Knee;
use crate::analysis::finite;
use crate::analysis::server::{Segment, Server};
use crate::analysis::steady::mean;
use crate::analysis::timeline::Bucket;
use std::ops::Range;

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

/// The hints of every segment's steady window.
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
        let (Some(steady), Some((t0, t1))) = (seg.steady_buckets(), s.steady_span(seg)) else {
            continue;
        };
        let rows = steady_rows(s, steady.clone());
        let all: Vec<&Bucket> = rows.iter().flat_map(|(_, v)| v.iter().copied()).collect();
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
        let rates: Vec<f64> = steady
            .clone()
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
        if let Some(h) = prefill_hint(s, steady, range, &label(seg)) {
            out.push(h);
        }
    }
    out
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

/// The buckets of a steady window, per instance (those with lines).
fn steady_rows(s: &Server, steady: Range<usize>) -> Vec<(&str, Vec<&Bucket>)> {
    s.timeline
        .instances
        .iter()
        .map(|(n, rows)| {
            (
                n.as_str(),
                rows[steady.clone()]
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

/// Decode throughput in the heaviest-prefill quarter of a steady window's buckets against
/// the lightest.
fn prefill_hint(
    s: &Server,
    steady: Range<usize>,
    range: Option<(i64, i64)>,
    label: &str,
) -> Option<Hint> {
    let rows: Vec<&Bucket> = s.timeline.total[steady].iter().collect();
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
