//! Hints from each segment's steady window: what bounds the batch (`kv_bound`,
//! `running_cap`, `client_bound`, `saturated`), speculation that barely pays
//! (`spec_low_accept`), a falling rate (`throughput_decay`) and prefill stalling decode
//! (`prefill_interference`).

use super::pressure::{events_in, unplaced_preemptions};
use super::vocabulary::{evidence, fig, pct, Figure, Hint, Inputs, Level, Severity, Strength};
use crate::analysis::curve::Knee;
use crate::analysis::finite;
use crate::analysis::server::{Segment, Server};
use crate::analysis::statistics::ConfidenceInterval;
use crate::analysis::steady::mean;
use crate::analysis::timeline::Bucket;
use crate::analysis::trend::{Trend, Verdict};
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
/// Stats lines a steady window must hold for its rules to judge it (a pasted excerpt of a
/// few lines says "too little data" instead).
pub const MIN_LINES: u64 = 20;
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
        let range = Some((t0, t1));
        let span_s = (t1 - t0) as f64 / 1000.0;
        // below the evidence a window must hold, no rule fires: it says so instead
        if seg.window_lines < MIN_LINES {
            out.push(Hint {
                id: "too_little_data",
                severity: Severity::Info,
                evidence: evidence(
                    format!("{}the steady window holds {} stats line(s) over {span_s:.0} s: too little to judge what bounds the run ({} need {MIN_LINES} lines or more)", label(seg), seg.window_lines, WINDOW_RULES.join(", ")),
                    range,
                    &[("lines", fig(seg.window_lines)), ("min_lines", fig(MIN_LINES))],
                ),
                action: "Give the whole log (or a longer excerpt of it): a few stats lines cannot tell a bottleneck from noise.".into(),
            });
            continue;
        }
        let from = out.len();
        let rows = steady_rows(s, steady.clone());
        let all: Vec<&Bucket> = rows.iter().flat_map(|(_, v)| v.iter().copied()).collect();
        let (kv_full, kv_ci) = share_interval(&all, |b| b.kv_usage >= KV_FULL);
        let queue = field(&all, |b| b.waiting);
        let kv_max = all
            .iter()
            .map(|b| b.kv_usage)
            .filter(|v| v.is_finite())
            .fold(f64::NAN, f64::max);
        let pressure = events_in(i.instances, t0, t1);
        // vLLM V1 states preemptions on its stats lines, counted over the run, not placed in
        // time: the window's count is then not known, and the run's is said instead
        let unplaced = unplaced_preemptions(i.instances);
        let (said, preempt_fig) = if unplaced > 0 {
            (
                format!("{} preemptions over the run (vLLM V1 states them on stats lines: not placed in the window)", pressure.1 + unplaced),
                Figure::Missing,
            )
        } else {
            (format!("{} preemptions", pressure.1), fig(pressure.1))
        };
        let pressed = pressure.0 + pressure.1 + unplaced > 0;
        // kv_bound
        // firm where the share's interval clears one half; borderline where it holds it
        if kv_ci.high >= MOST && (queue >= QUEUE_EMPTY || pressed) {
            let mut h = Hint {
                id: "kv_bound",
                severity: if pressed { Severity::Critical } else { Severity::Warning },
                evidence: evidence(
                    format!("{}KV cache ≥ {} full in {} of steady time, {:.1} requests queued on average, {} retractions, {said}", label(seg), pct(KV_FULL), pct(kv_full), queue, pressure.0),
                    range,
                    &[("kv_full_share", fig(kv_full)), ("waiting_mean", fig(queue)), ("retractions", fig(pressure.0)), ("preemptions", preempt_fig), ("preemptions_in_run", fig(pressure.1 + unplaced))],
                ),
                action: "The KV cache limits the batch: raise --mem-fraction-static / --gpu-memory-utilization, shorten max_tokens or context, add tensor parallelism, or use FP8 KV cache.".into(),
            };
            if kv_ci.low < MOST {
                borderline(&mut h, kv_ci);
            }
            out.push(h);
        }
        // running_cap / client_bound, per instance against the configured or observed maximum
        let cap = configured_cap(seg);
        let mut pinned = Vec::new();
        let mut below = Vec::new();
        // instances whose mean running straddles the client-bound threshold: its 95%
        // interval (the buckets' effective sample size) holds BELOW_CAP × cap
        let mut straddling = Vec::new();
        for (name, v) in &rows {
            let max_seen = v.iter().map(|b| b.running).fold(0.0, f64::max);
            let c = cap.unwrap_or(max_seen);
            if c <= 0.0 {
                continue;
            }
            let (_, at) = share_interval(v, |b| b.running >= AT_CAP * c);
            let q = field(v, |b| b.waiting);
            // KV full in most buckets makes it kv_bound instead: over the share's interval,
            // so that a share straddling one half leaves the cap borderline, not firm in
            // one seed and absent in the next
            let (kv, kv_i) = share_interval(v, |b| b.kv_usage >= KV_FULL);
            let run = field(v, |b| b.running);
            let half = running_half_width(v);
            if at.high >= MOST && q >= QUEUE_EMPTY && kv_i.low < MOST {
                pinned.push((*name, run, q, c, at, kv_i));
            } else if cap.is_some() && q < QUEUE_EMPTY && kv < MOST {
                let t = BELOW_CAP * c;
                if run + half < t {
                    below.push((*name, run));
                } else if run - half < t {
                    straddling.push((*name, run));
                }
            }
        }
        // only on a window tested steady: a drifting window's rate moves with time, not
        // with concurrency, and its knee may be the drift's (as may an untested one's)
        let saturated = s
            .knee
            .filter(|k| mean_running(&rows) >= k.running)
            .filter(|_| seg.trend.is_some_and(|t| t.verdict == Verdict::Steady));
        if !pinned.is_empty() {
            let run = mean(&pinned.iter().map(|p| p.1).collect::<Vec<_>>());
            let q = mean(&pinned.iter().map(|p| p.2).collect::<Vec<_>>());
            // with no configured cap, the one observed: the instances' own maxima
            let observed = cap
                .is_none()
                .then(|| mean(&pinned.iter().map(|p| p.3).collect::<Vec<_>>()));
            let key = if seg.settings.contains_key("max_num_seqs") {
                "max_num_seqs"
            } else {
                "max_running_requests"
            };
            // firm where an instance's share of buckets at the cap clears one half over
            // its interval; borderline where every one's holds it
            let firm = pinned.iter().any(|p| p.4.low >= MOST && p.5.high < MOST);
            let mut h = Hint {
                id: "running_cap",
                severity: Severity::Warning,
                evidence: evidence(
                    format!("{}{} of {} instance(s) hold running at the maximum ({}, mean {:.1}) with {:.1} requests queued and KV cache below {}", label(seg), pinned.len(), rows.len(), cap.map_or("observed".to_string(), |c| format!("{key}={c}")), run, q, pct(KV_FULL)),
                    range,
                    &[("running_mean", fig(run)), ("waiting_mean", fig(q)), ("cap", fig(cap)), ("cap_observed", fig(observed)), ("kv_usage_max", fig(finite(kv_max)))],
                ),
                action: format!("The batch is capped while KV cache is free and requests wait: raise {key} (the curve shows how much throughput more concurrency still adds)."),
            };
            if !firm && pinned.iter().any(|p| p.4.low >= MOST) {
                // at the cap firmly, but the KV cache full for a share whose interval holds
                // one half: the cap or the cache
                let kv_i = hull(pinned.iter().map(|p| p.5));
                h.evidence.level = Level::Borderline;
                h.evidence.text.push_str(&format!(
                    "; borderline: KV cache ≥ {} full in a share of steady time whose 95% interval ({}–{}) holds {}: the cache may bound the batch as much as the cap",
                    pct(KV_FULL),
                    pct(kv_i.low),
                    pct(kv_i.high),
                    pct(MOST)
                ));
            } else if !firm {
                let widest = hull(pinned.iter().map(|p| p.4));
                borderline(&mut h, widest);
            }
            out.push(h);
        } else if saturated.is_none()
            && (!below.is_empty() || !straddling.is_empty())
            && (below.len() + straddling.len()) * 2 >= rows.len()
        {
            // firm where the instances firmly below are half or more; borderline where only
            // those whose interval holds the threshold make up the half
            let firm = below.len() * 2 >= rows.len();
            let all_below: Vec<(&str, f64)> = below.iter().chain(&straddling).copied().collect();
            let run = mean(&all_below.iter().map(|p| p.1).collect::<Vec<_>>());
            let mut h = Hint {
                id: "client_bound",
                severity: Severity::Warning,
                evidence: evidence(
                    format!("{}running averages {:.1} of a possible {} with an empty queue ({:.2} waiting)", label(seg), run, cap.unwrap_or(0.0), queue),
                    range,
                    &[("running_mean", fig(run)), ("cap", fig(cap)), ("waiting_mean", fig(queue)), ("instances_straddling", fig(straddling.len()))],
                ),
                action: "The server waits for work: send more concurrent requests (raise the client's concurrency / worker count).".into(),
            };
            if !firm {
                h.evidence.level = Level::Borderline;
                h.evidence.text.push_str(&format!(
                    "; borderline: {} of {} instance(s) hold {} of the cap within their running's 95% interval",
                    straddling.len(),
                    rows.len(),
                    pct(BELOW_CAP)
                ));
            }
            out.push(h);
        }
        if let Some(k) = saturated {
            out.push(saturated_hint(&label(seg), k, mean_running(&rows), range));
        }
        // spec_low_accept: firm where the mean's 95% interval lies below the threshold,
        // borderline where it holds it
        if let Some(h) = spec_hint(&all, range, &label(seg)) {
            out.push(h);
        }
        // throughput_decay: the trend test finds the window falling beyond its bound
        if let Some(t) = seg.trend.filter(falls) {
            let (start, end) = (
                t.start_rate.unwrap_or(f64::NAN),
                t.end_rate.unwrap_or(f64::NAN),
            );
            out.push(Hint {
                id: "throughput_decay",
                severity: Severity::Warning,
                evidence: evidence(
                    format!("{}steady throughput falls from {start:.0} to {end:.0} tok/s ({:+.0}%) along the run: {}", label(seg), t.change.unwrap_or(0.0) * 100.0, t.slope().unwrap_or_default()),
                    range,
                    &[("gen_tps_start", fig(start)), ("gen_tps_end", fig(end)), ("slope_per_h", fig(t.slope_per_h)), ("slope_high_per_h", fig(t.slope_high_per_h)), ("change", fig(t.change)), ("bound", fig(t.bound))],
                ),
                action: "Throughput declines while the load holds: look for growing contexts (multi-turn, long outputs), KV-cache fragmentation, a thermal or memory leak; restart or shorten max_tokens.".into(),
            });
        }
        // prefill_interference: decode rate in the heaviest-prefill quarter vs the lightest
        if let Some(h) = prefill_hint(&s.timeline.total[steady], range, &label(seg)) {
            out.push(h);
        }
        for h in &mut out[from..] {
            h.evidence.strength = Some(strength(h, span_s, seg.window_lines));
        }
    }
    out
}

/// The rules that read a steady window, which [`MIN_LINES`] holds back.
pub const WINDOW_RULES: [&str; 7] = [
    "kv_bound",
    "running_cap",
    "client_bound",
    "saturated",
    "spec_low_accept",
    "throughput_decay",
    "prefill_interference",
];

/// The strength of a steady window's hint: its span and lines, and the effect each rule
/// measures against the threshold that raised it.
fn strength(h: &Hint, span_s: f64, lines: u64) -> Strength {
    let f = |k: &str| h.evidence.figures.get(k).and_then(|v| v.number());
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let (effect, threshold, fires) = match h.id {
        "kv_bound" => (f("kv_full_share"), Some(MOST), "above"),
        // (against the configured cap, else the one observed)
        "running_cap" => (
            ratio(f("running_mean"), f("cap").or(f("cap_observed"))),
            Some(AT_CAP),
            "above",
        ),
        "client_bound" => (ratio(f("running_mean"), f("cap")), Some(BELOW_CAP), "below"),
        "saturated" => (
            ratio(f("running_mean"), f("knee_running")),
            Some(1.0),
            "above",
        ),
        "spec_low_accept" => (f("accept_len_mean"), Some(ACCEPT_LOW), "below"),
        "throughput_decay" => (f("change"), f("bound").map(|b| -b), "below"),
        "prefill_interference" => (
            ratio(f("gen_tps_heavy_prefill"), f("gen_tps_light_prefill")).map(|r| r - 1.0),
            Some(-PREFILL_DIP),
            "below",
        ),
        _ => (None, None, "above"),
    };
    Strength {
        span_s: Some(span_s),
        lines,
        of: "stats lines",
        effect,
        threshold,
        fires,
    }
}

/// Whether a window's trend is a significant fall beyond its bound.
fn falls(t: &Trend) -> bool {
    t.verdict == Verdict::Drifting && t.slope_per_h.is_some_and(|s| s < 0.0)
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

/// The share of buckets for which `f` holds, and its 95% interval: Wilson's, on the
/// buckets' effective sample size (the persistence of the 0/1 series: neighbouring buckets
/// are alike, and count for fewer than their number).
fn share_interval(v: &[&Bucket], f: impl Fn(&Bucket) -> bool) -> (f64, ConfidenceInterval) {
    let ind: Vec<f64> = v.iter().map(|b| if f(b) { 1.0 } else { 0.0 }).collect();
    let p = share(v, f);
    let rho = crate::analysis::statistics::persistence(&ind);
    let n_eff = (ind.len() as f64 * (1.0 - rho) / (1.0 + rho))
        .round()
        .max(1.0) as u64;
    let x = (p * n_eff as f64).round() as u64;
    let ci = crate::analysis::statistics::wilson(x, n_eff)
        .unwrap_or(ConfidenceInterval { low: p, high: p });
    (p, ci)
}

/// The smallest interval holding every one of `v` (of shares: empty is `[1, 0]`).
fn hull(v: impl Iterator<Item = ConfidenceInterval>) -> ConfidenceInterval {
    v.fold(
        ConfidenceInterval {
            low: 1.0,
            high: 0.0,
        },
        |a, b| ConfidenceInterval {
            low: a.low.min(b.low),
            high: a.high.max(b.high),
        },
    )
}

/// Marks a hint borderline: its share's interval holds [`MOST`].
fn borderline(h: &mut Hint, ci: ConfidenceInterval) {
    h.evidence.level = Level::Borderline;
    h.evidence.text.push_str(&format!(
        "; borderline: the share's 95% interval ({}–{}, the buckets' effective number) holds {}",
        pct(ci.low),
        pct(ci.high),
        pct(MOST)
    ));
}

/// Half the 95% interval of an instance's mean running over its steady buckets (their
/// persistence sets the effective sample size; 0 below 3 buckets).
fn running_half_width(v: &[&Bucket]) -> f64 {
    let r: Vec<f64> = v
        .iter()
        .map(|b| b.running)
        .filter(|x| x.is_finite())
        .collect();
    crate::analysis::statistics::mean_half_width(&r).unwrap_or(0.0)
}

fn mean_running(rows: &[(&str, Vec<&Bucket>)]) -> f64 {
    mean(
        &rows
            .iter()
            .map(|(_, v)| field(v, |b| b.running))
            .collect::<Vec<_>>(),
    )
}

/// Resamples of the curve that must find the knee for `saturated` to be firm.
pub const KNEE_FOUND: f64 = 0.95;

fn saturated_hint(label: &str, k: Knee, running: f64, range: Option<(i64, i64)>) -> Hint {
    // a knee not found in most resamples, or with no upper bound, is no firm finding
    let firm = k.found_share >= KNEE_FOUND && k.running_high.is_some();
    let found = if firm {
        String::new()
    } else {
        format!(
            "; borderline: the knee is found in {:.1}% of the curve's resamples{}",
            k.found_share * 100.0,
            if k.running_high.is_none() {
                ", with no upper bound"
            } else {
                ""
            }
        )
    };
    let mut ev = evidence(
        format!("{label}throughput flattens at about {:.0} running requests ({:.0} tok/s); at {:.0} it is {:.0} tok/s, and the run held {:.0} on average{found}", k.running, k.tps_median, k.running_max, k.tps_at_max, running),
        range,
        &[("knee_running", fig(k.running)), ("knee_tps", fig(k.tps_median)), ("max_running", fig(k.running_max)), ("tps_at_max", fig(k.tps_at_max)), ("running_mean", fig(running)), ("knee_found_share", fig(k.found_share))],
    );
    if !firm {
        ev.level = Level::Borderline;
    }
    Hint {
        id: "saturated",
        severity: Severity::Info,
        evidence: ev,
        action: "The server is saturated: more concurrency will not raise throughput (only latency). Scale out, use a faster configuration (quantisation, speculative decoding), or shorten outputs.".into(),
    }
}

/// `spec_low_accept`: the mean accepted tokens per step of a steady window's buckets,
/// against [`ACCEPT_LOW`] over its 95% interval (the buckets' effective number): below it
/// fires, holding it is borderline, above it nothing.
fn spec_hint(all: &[&Bucket], range: Option<(i64, i64)>, label: &str) -> Option<Hint> {
    let v: Vec<f64> = all
        .iter()
        .map(|b| b.accept_len)
        .filter(|a| a.is_finite() && *a > 0.0)
        .collect();
    if v.is_empty() {
        return None;
    }
    let acc = mean(&v);
    // below 3 buckets there is no interval: unsure, so borderline if below at all
    let half = crate::analysis::statistics::mean_half_width(&v);
    let (low, high) = half.map_or((acc, f64::INFINITY), |h| (acc - h, acc + h));
    if low >= ACCEPT_LOW {
        return None;
    }
    let mut h = Hint {
        id: "spec_low_accept",
        severity: Severity::Warning,
        evidence: evidence(
            format!("{label}speculative decoding accepts {acc:.2} tokens per step on average"),
            range,
            &[("accept_len_mean", fig(acc)), ("accept_len_low", fig(low)), ("accept_len_high", fig(finite(high)))],
        ),
        action: "Speculation costs more than it gains: use fewer draft tokens, a better-matched draft model, or turn it off.".into(),
    };
    if high >= ACCEPT_LOW {
        h.evidence.level = Level::Borderline;
        h.evidence.text.push_str(&match half {
            Some(_) => format!("; borderline: its 95% interval ({low:.2}–{high:.2}, the buckets' effective number) holds {ACCEPT_LOW}"),
            None => format!("; borderline: {} bucket(s) give no interval", v.len()),
        });
    }
    Some(h)
}

/// `prefill_interference`: decode throughput in the heaviest-prefill quarter of a steady
/// window's buckets against the lightest, their ratio's 95% interval (each quarter's mean
/// over its buckets in time order, their effective numbers) against a dip of
/// [`PREFILL_DIP`]: wholly below fires, holding it is borderline, above it nothing.
fn prefill_hint(rows: &[Bucket], range: Option<(i64, i64)>, label: &str) -> Option<Hint> {
    use crate::analysis::statistics::{ratio_interval, Buckets};
    if rows.len() < 8 || rows.iter().all(|r| r.prompt_tps <= 0.0) {
        return None;
    }
    let mut by: Vec<usize> = (0..rows.len()).collect();
    by.sort_by(|&x, &y| rows[x].prompt_tps.total_cmp(&rows[y].prompt_tps));
    let q = by.len() / 4;
    // each quarter in time order, for its persistence
    let quarter = |idx: &[usize]| -> Vec<f64> {
        let mut idx = idx.to_vec();
        idx.sort_unstable();
        idx.iter().map(|&k| rows[k].gen_tps).collect()
    };
    let (light_v, heavy_v) = (quarter(&by[..q]), quarter(&by[by.len() - q..]));
    let (light, heavy) = (mean(&light_v), mean(&heavy_v));
    if light.is_nan() || light <= 0.0 {
        return None;
    }
    let ratio = heavy / light;
    let ci = ratio_interval(
        &Buckets {
            columns: vec![&light_v],
        },
        &Buckets {
            columns: vec![&heavy_v],
        },
        |m| m[0],
    )
    .map(|(_, ci)| ci);
    let at = 1.0 - PREFILL_DIP;
    // no interval (too few buckets, no decoding in a quarter): unsure, so the point decides
    // whether to say anything, and it is borderline
    let (low, high) = ci.map_or((ratio, f64::INFINITY), |c| (c.low, c.high));
    if low >= at {
        return None;
    }
    let mut h = Hint {
        id: "prefill_interference",
        severity: Severity::Warning,
        evidence: evidence(
            format!("{label}decode runs at {heavy:.0} tok/s in the quarter of steady time with the most prefill vs {light:.0} tok/s in the quarter with the least ({:+.0}%)", (ratio - 1.0) * 100.0),
            range,
            &[("gen_tps_heavy_prefill", fig(heavy)), ("gen_tps_light_prefill", fig(light)), ("heavy_to_light", fig(ratio)), ("heavy_to_light_low", fig(ci.map(|c| c.low))), ("heavy_to_light_high", fig(ci.map(|c| c.high)))],
        ),
        action: "Prefill batches stall decoding: lower --chunked-prefill-size / max_num_batched_tokens, enable mixed chunked prefill, or disaggregate prefill and decode.".into(),
    };
    if high >= at {
        h.evidence.level = Level::Borderline;
        h.evidence.text.push_str(&match ci {
            Some(c) => format!(
                "; borderline: the ratio's 95% interval ({:+.0}% to {:+.0}%, the buckets' effective number) holds -{}",
                (c.low - 1.0) * 100.0,
                (c.high - 1.0) * 100.0,
                pct(PREFILL_DIP)
            ),
            None => format!("; borderline: {q} bucket(s) a quarter give no interval"),
        });
    }
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(running: f64) -> Bucket {
        Bucket {
            running,
            ..Bucket::default()
        }
    }

    /// A share of buckets decides on its interval: 11 of 20 buckets at the cap (alternating,
    /// no persistence) is 55% with an interval that holds one half (borderline); 20 of 20
    /// clears it; neighbours alike count for fewer (a wider interval).
    #[test]
    fn a_share_of_buckets_has_its_interval() {
        let v: Vec<Bucket> = (0..20)
            .map(|k| at(if k % 2 == 0 || k == 19 { 64.0 } else { 10.0 }))
            .collect();
        let refs: Vec<&Bucket> = v.iter().collect();
        let (p, ci) = share_interval(&refs, |b| b.running >= 60.0);
        assert!((p - 0.55).abs() < 1e-12);
        assert!(ci.low < MOST && MOST < ci.high, "{ci:?}");
        let all: Vec<Bucket> = (0..20).map(|_| at(64.0)).collect();
        let refs: Vec<&Bucket> = all.iter().collect();
        let (p, ci) = share_interval(&refs, |b| b.running >= 60.0);
        assert_eq!(p, 1.0);
        assert!(ci.low > MOST, "{ci:?}");
        // the same 55% in two runs of alike buckets: fewer effective buckets, a wider interval
        let runs: Vec<Bucket> = (0..20)
            .map(|k| at(if k < 11 { 64.0 } else { 10.0 }))
            .collect();
        let refs: Vec<&Bucket> = runs.iter().collect();
        let (_, wide) = share_interval(&refs, |b| b.running >= 60.0);
        assert!(wide.high - wide.low > ci.high - ci.low);
        let (_, alternating) = share_interval(&v.iter().collect::<Vec<_>>(), |b| b.running >= 60.0);
        assert!(wide.high - wide.low > alternating.high - alternating.low);
    }

    /// An instance's mean running has an interval: a constant one none, a varying one some.
    #[test]
    fn running_has_its_interval() {
        let flat: Vec<Bucket> = (0..30).map(|_| at(51.0)).collect();
        assert_eq!(running_half_width(&flat.iter().collect::<Vec<_>>()), 0.0);
        let varying: Vec<Bucket> = (0..30)
            .map(|k| at(if k % 3 == 0 { 60.0 } else { 45.0 }))
            .collect();
        let h = running_half_width(&varying.iter().collect::<Vec<_>>());
        assert!(h > 1.0 && h < 10.0, "{h}");
    }

    fn knee(found_share: f64, running_high: Option<f64>) -> Knee {
        Knee {
            running: 117.0,
            tps_median: 2400.0,
            tps_at_max: 2450.0,
            running_max: 128.0,
            running_low: 96.0,
            running_high,
            found_share,
        }
    }

    /// Issue 56's example: a knee found in 78.8% of the resamples, no upper bound, is a
    /// borderline `saturated`, said so; one found in every resample with both bounds is firm.
    #[test]
    fn a_knee_not_found_in_most_resamples_is_borderline() {
        let h = saturated_hint("", knee(0.788, None), 120.0, None);
        assert_eq!(h.evidence.level, Level::Borderline);
        assert!(
            h.evidence
                .text
                .contains("found in 78.8% of the curve's resamples, with no upper bound"),
            "{}",
            h.evidence.text
        );
        assert_eq!(
            saturated_hint("", knee(0.96, Some(124.0)), 120.0, None)
                .evidence
                .level,
            Level::Firm
        );
        assert_eq!(
            saturated_hint("", knee(1.0, None), 120.0, None)
                .evidence
                .level,
            Level::Borderline
        );
    }

    fn spec(acc: &[f64]) -> Option<Hint> {
        let v: Vec<Bucket> = acc
            .iter()
            .map(|&a| Bucket {
                accept_len: a,
                ..Bucket::default()
            })
            .collect();
        spec_hint(&v.iter().collect::<Vec<_>>(), None, "")
    }

    /// `spec_low_accept` decides on its mean's interval: wholly below 1.5 fires, holding it
    /// is borderline (said so), wholly above is nothing, as is a window with no speculation.
    #[test]
    fn low_acceptance_decides_on_its_interval() {
        let firm = spec(&[1.21; 40]).unwrap();
        assert_eq!(firm.evidence.level, Level::Firm);
        let near: Vec<f64> = (0..40)
            .map(|k| if k % 2 == 0 { 1.2 } else { 1.75 })
            .collect();
        let h = spec(&near).unwrap();
        assert_eq!(h.evidence.level, Level::Borderline);
        assert!(
            h.evidence.text.contains("borderline: its 95% interval"),
            "{}",
            h.evidence.text
        );
        let lo = h.evidence.figures["accept_len_low"].number().unwrap();
        let hi = h.evidence.figures["accept_len_high"].number().unwrap();
        assert!(lo < ACCEPT_LOW && ACCEPT_LOW < hi, "{lo} {hi}");
        assert!(spec(&[1.8; 40]).is_none());
        let above: Vec<f64> = (0..40)
            .map(|k| if k % 2 == 0 { 1.45 } else { 2.2 })
            .collect();
        assert!(spec(&above).is_none());
        assert!(spec(&[f64::NAN; 40]).is_none());
        // two buckets give no interval: unsure, borderline
        assert_eq!(spec(&[1.2, 1.3]).unwrap().evidence.level, Level::Borderline);
    }

    fn prefill(pairs: &[(f64, f64)]) -> Option<Hint> {
        let v: Vec<Bucket> = pairs
            .iter()
            .map(|&(prompt_tps, gen_tps)| Bucket {
                prompt_tps,
                gen_tps,
                ..Bucket::default()
            })
            .collect();
        prefill_hint(&v, None, "")
    }

    /// 40 buckets, heavy prefill and light by turns, decoding at `heavy` and `light` tok/s.
    fn alternating(heavy: f64, light: f64) -> Vec<(f64, f64)> {
        (0..40)
            .map(|k| {
                if k % 2 == 1 {
                    (8000.0, heavy)
                } else {
                    (100.0, light)
                }
            })
            .collect()
    }

    /// `prefill_interference` decides on the ratio's interval: a steady dip of a third is
    /// firm; a dip of 15% on average in noisy quarters holds the threshold (borderline);
    /// no dip at all says nothing.
    #[test]
    fn prefill_interference_decides_on_its_interval() {
        let clear: Vec<(f64, f64)> = alternating(1200.0, 1800.0);
        let h = prefill(&clear).unwrap();
        assert_eq!(h.evidence.level, Level::Firm);
        assert_eq!(
            h.evidence.figures["heavy_to_light"].number(),
            Some(1200.0 / 1800.0)
        );
        // heavy buckets' decode rate 1530 on average (-15%) but spread ±400
        let noisy: Vec<(f64, f64)> = (0..40)
            .map(|k| match k % 4 {
                1 => (8000.0 + k as f64, 1130.0),
                3 => (8000.0 + k as f64, 1930.0),
                _ => (100.0 + k as f64, 1800.0),
            })
            .collect();
        let h = prefill(&noisy).unwrap();
        assert_eq!(h.evidence.level, Level::Borderline, "{}", h.evidence.text);
        assert!(
            h.evidence
                .text
                .contains("borderline: the ratio's 95% interval"),
            "{}",
            h.evidence.text
        );
        let flat: Vec<(f64, f64)> = alternating(1790.0, 1800.0);
        assert!(prefill(&flat).is_none());
    }
}
