//! Prometheus scrapes: the `metrics` table, and what it says about the run — token and
//! request rates from counter deltas, finished requests by reason (hence a cap-hit rate),
//! gauges over time and histogram quantiles.
//!
//! Names differ between engines and versions (docs/formats.md §3); each quantity has a list of wire
//! names, first match wins (`vllm:kv_cache_usage_perc` before the older
//! `vllm:gpu_cache_usage_perc`). Label sets are aggregated: counters and request gauges add
//! up over engines and data-parallel ranks, while tensor / pipeline / expert ranks of one
//! engine report the same scheduler state and count once. `_created` samples are
//! timestamps, not values, and are kept out of every figure.

use crate::analysis::quantile::Summary;
use crate::ingest::scrapes::{MetricSample, Scrape, Scrapes};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tokstat_parsers::prometheus;
use tokstat_parsers::stamp::Ts;

/// Labels that tell ranks of one engine apart: their gauges are the same numbers.
const SAME_ENGINE: [&str; 4] = ["tp_rank", "pp_rank", "moe_ep_rank", "attn_cp_rank"];

/// Labels that tell engines (data-parallel ranks) apart, each with its own scheduler: vLLM
/// V1 labels every series with `engine` (the engine index, 0.9+), SGLang adds `dp_rank`
/// when data parallelism is on (docs/formats.md §3.2–3.3). Their figures add up, and are
/// also shown side by side ([`Metrics::ranks`]).
pub const RANK_LABELS: [&str; 2] = ["engine", "dp_rank"];

const GEN: [&str; 2] = [
    "vllm:generation_tokens_total",
    "sglang:generation_tokens_total",
];
const PROMPT: [&str; 2] = ["vllm:prompt_tokens_total", "sglang:prompt_tokens_total"];
const REQUESTS: [&str; 2] = ["vllm:request_success_total", "sglang:num_requests_total"];
const PREEMPT: [&str; 1] = ["vllm:num_preemptions_total"];
const ABORTED: [&str; 1] = ["sglang:num_aborted_requests_total"];
const RUNNING: [&str; 2] = ["vllm:num_requests_running", "sglang:num_running_reqs"];
const WAITING: [&str; 2] = ["vllm:num_requests_waiting", "sglang:num_queue_reqs"];
const KV: [&str; 3] = [
    "vllm:kv_cache_usage_perc",
    "vllm:gpu_cache_usage_perc",
    "sglang:token_usage",
];
const HISTOGRAMS: [(&str, &[&str]); 4] = [
    (
        "ttft_s",
        &[
            "vllm:time_to_first_token_seconds",
            "sglang:time_to_first_token_seconds",
        ],
    ),
    (
        "itl_s",
        &[
            "vllm:inter_token_latency_seconds",
            "vllm:time_per_output_token_seconds",
            "sglang:inter_token_latency_seconds",
            "sglang:time_per_output_token_seconds",
        ],
    ),
    (
        "e2e_s",
        &[
            "vllm:e2e_request_latency_seconds",
            "sglang:e2e_request_latency_seconds",
        ],
    ),
    (
        "queue_s",
        &[
            "vllm:request_queue_time_seconds",
            "sglang:queue_time_seconds",
        ],
    ),
];

/// Values of the first wire name present, per label set, in one scrape.
fn pick<'a>(s: &'a Scrape, names: &[&str]) -> Option<(&'a str, Vec<&'a MetricSample>)> {
    names.iter().find_map(|n| {
        let v: Vec<&MetricSample> = s.samples.iter().filter(|x| x.name == *n).collect();
        (!v.is_empty()).then(|| (v[0].name.as_str(), v))
    })
}

fn without(labels: &str, drop: &[&str]) -> String {
    labels
        .split(',')
        .filter(|kv| !drop.iter().any(|d| kv.split('=').next() == Some(*d)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A gauge of one scrape, over engines: ranks of one engine count once (max), engines add
/// up (or are averaged, for fractions).
fn gauge(s: &Scrape, names: &[&str], average: bool) -> Option<f64> {
    gauge_where(s, names, average, |_| true)
}

/// [`gauge`] over the label sets accepted by `keep`.
fn gauge_where(
    s: &Scrape,
    names: &[&str],
    average: bool,
    keep: impl Fn(&str) -> bool,
) -> Option<f64> {
    let (_, v) = pick(s, names)?;
    let mut per: BTreeMap<String, f64> = BTreeMap::new();
    for x in v.iter().filter(|x| x.value.is_finite() && keep(&x.labels)) {
        let e = per
            .entry(without(&x.labels, &SAME_ENGINE))
            .or_insert(f64::MIN);
        *e = e.max(x.value);
    }
    if per.is_empty() {
        return None;
    }
    let sum: f64 = per.values().sum();
    Some(if average { sum / per.len() as f64 } else { sum })
}

/// A counter's increase from `a` to `b`, per label set (a reset counts from zero), summed
/// over label sets accepted by `keep`.
fn increase(a: &Scrape, b: &Scrape, names: &[&str], keep: impl Fn(&str) -> bool) -> Option<f64> {
    let (name, after) = pick(b, names)?;
    let before: HashMap<&str, f64> = a
        .samples
        .iter()
        .filter(|x| x.name == name)
        .map(|x| (x.labels.as_str(), x.value))
        .collect();
    let mut sum = 0.0;
    for x in after.iter().filter(|x| keep(&x.labels)) {
        let old = before.get(x.labels.as_str()).copied().unwrap_or(0.0);
        sum += if x.value >= old {
            x.value - old
        } else {
            x.value
        };
    }
    Some(sum)
}

/// A counter's value summed over label sets accepted by `keep`.
fn total(s: &Scrape, names: &[&str], keep: impl Fn(&str) -> bool) -> Option<f64> {
    let (_, v) = pick(s, names)?;
    Some(v.iter().filter(|x| keep(&x.labels)).map(|x| x.value).sum())
}

fn label_value<'a>(labels: &'a str, key: &str) -> Option<&'a str> {
    labels
        .split(',')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// Quantiles of a histogram, the way Prometheus' `histogram_quantile` reads buckets: linear
/// within the bucket holding the rank; in the `+Inf` bucket, the highest finite bound.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Quantiles {
    pub count: f64,
    pub mean: Option<f64>,
    pub p50: Option<f64>,
    pub p90: Option<f64>,
    pub p99: Option<f64>,
    /// The bucket each quantile lies in, `[above, up to]` (`up to` null for `+Inf`): the
    /// true quantile is somewhere inside, the estimate a straight line through it.
    pub p50_within: Option<(f64, Option<f64>)>,
    pub p90_within: Option<(f64, Option<f64>)>,
    pub p99_within: Option<(f64, Option<f64>)>,
}

/// The bucket `(above, up to)` holding the rank of quantile `q` (`up to` None for `+Inf`).
pub fn bucket_within(buckets: &[(f64, f64)], q: f64) -> Option<(f64, Option<f64>)> {
    let count = buckets.last()?.1;
    if count <= 0.0 {
        return None;
    }
    let rank = q * count;
    let mut prev = 0.0;
    for &(le, cum) in buckets {
        if cum >= rank {
            return Some((prev, le.is_finite().then_some(le)));
        }
        prev = le;
    }
    Some((prev, None))
}

pub fn bucket_quantile(buckets: &[(f64, f64)], q: f64) -> Option<f64> {
    let count = buckets.last()?.1;
    if count <= 0.0 {
        return None;
    }
    let rank = q * count;
    let mut prev = (0.0, 0.0);
    for &(le, cum) in buckets {
        if cum >= rank {
            if le.is_infinite() {
                return Some(prev.0);
            }
            let inside = cum - prev.1;
            let frac = if inside > 0.0 {
                (rank - prev.1) / inside
            } else {
                1.0
            };
            return Some(prev.0 + (le - prev.0) * frac);
        }
        prev = (le, cum);
    }
    Some(prev.0)
}

/// Cumulative buckets `(le, count)` of a histogram family summed over label sets, and its
/// `_sum`. A series (the family's label set but `le`) with a bucket whose `le` does not
/// parse, or whose count is negative or not a number, is malformed: left out of both, and
/// named in `bad` with why.
fn buckets(s: &Scrape, family: &str, bad: &mut BTreeSet<String>) -> (Vec<(f64, f64)>, f64) {
    let name = format!("{family}_bucket");
    let series = |labels: &str| -> String {
        labels
            .split(',')
            .filter(|kv| !kv.starts_with("le="))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut broken: BTreeMap<String, String> = BTreeMap::new();
    for x in s.samples.iter().filter(|x| x.name == name) {
        let why = match label_value(&x.labels, "le") {
            None => Some("a bucket without `le`".to_string()),
            Some(le) if prometheus::value(le).is_none_or(f64::is_nan) => {
                Some(format!("le=\"{le}\" is not a number"))
            }
            Some(_) if x.value.is_nan() || x.value < 0.0 => {
                Some(format!("a bucket count of {}", x.value))
            }
            Some(_) => None,
        };
        if let Some(why) = why {
            broken.entry(series(&x.labels)).or_insert(why);
        }
    }
    let mut by: BTreeMap<u64, (f64, f64)> = BTreeMap::new();
    for x in s.samples.iter().filter(|x| x.name == name) {
        if broken.contains_key(&series(&x.labels)) {
            continue;
        }
        if let Some(le) = label_value(&x.labels, "le").and_then(prometheus::value) {
            let e = by.entry(le.to_bits() ^ (1 << 63)).or_insert((le, 0.0));
            e.1 += x.value;
        }
    }
    let mut v: Vec<(f64, f64)> = by.into_values().collect();
    v.sort_by(|a, b| a.0.total_cmp(&b.0));
    let sum_name = format!("{family}_sum");
    let sum = s
        .samples
        .iter()
        .filter(|x| x.name == sum_name && !broken.contains_key(&x.labels))
        .map(|x| x.value)
        .sum();
    bad.extend(
        broken
            .into_iter()
            .map(|(labels, why)| format!("{name}{{{labels}}}: {why}")),
    );
    (v, sum)
}

fn histogram(
    first: Option<&Scrape>,
    last: &Scrape,
    names: &[&str],
    bad: &mut BTreeSet<String>,
) -> Option<Quantiles> {
    let family = names.iter().find(|n| {
        let b = format!("{n}_bucket");
        last.samples.iter().any(|x| x.name == b)
    })?;
    let (mut b, mut sum) = buckets(last, family, bad);
    if let Some(f) = first {
        let (a, asum) = buckets(f, family, bad);
        let old: HashMap<u64, f64> = a.iter().map(|(le, c)| (le.to_bits(), *c)).collect();
        if b.iter()
            .all(|(le, c)| old.get(&le.to_bits()).is_none_or(|o| c >= o))
        {
            for (le, c) in &mut b {
                *c -= old.get(&le.to_bits()).copied().unwrap_or(0.0);
            }
            sum -= asum;
        }
    }
    let count = b.last()?.1;
    Some(Quantiles {
        count,
        mean: (count > 0.0).then(|| sum / count),
        p50: bucket_quantile(&b, 0.5),
        p90: bucket_quantile(&b, 0.9),
        p99: bucket_quantile(&b, 0.99),
        p50_within: bucket_within(&b, 0.5),
        p90_within: bucket_within(&b, 0.9),
        p99_within: bucket_within(&b, 0.99),
    })
}

/// One row of the metrics timeline: rates since the previous scrape, gauges at the scrape.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ScrapePoint {
    #[serde(serialize_with = "crate::analysis::iso_opt")]
    pub ts: Option<Ts>,
    pub gen_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    pub requests_per_s: Option<f64>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    /// Requests preempted since the previous scrape (vLLM's counter).
    pub preemptions: Option<f64>,
}

/// One engine (data-parallel rank) of the scrapes, beside the others: the same figures as
/// the whole, over its own series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rank {
    /// The label and its value, `engine="1"` or `dp_rank="3"`, led by its server's where the
    /// series are of several (`pod="vllm-1" engine="0"`, [`INSTANCE_LABELS`]).
    pub rank: String,
    /// Generated tokens per second over the window (two or more timed scrapes).
    pub gen_tps: Option<f64>,
    /// Generated tokens: over the window, else since start.
    pub generation_tokens: Option<f64>,
    /// This rank's part of all ranks' generated tokens.
    pub share: Option<f64>,
    /// This rank's generated tokens against the median rank's, as a fraction (-0.5: half).
    pub vs_median: Option<f64>,
    /// Finished requests: over the window, else since start.
    pub finished: Option<f64>,
    pub cap_hit_rate: Option<f64>,
    /// Means over the scrapes.
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
}

/// What the scrapes say.
#[derive(Debug, Clone, Serialize)]
pub struct Metrics {
    pub scrapes: usize,
    pub samples: usize,
    pub engine: Option<&'static str>,
    #[serde(serialize_with = "crate::analysis::iso_opt")]
    pub from: Option<Ts>,
    #[serde(serialize_with = "crate::analysis::iso_opt")]
    pub to: Option<Ts>,
    pub span_s: Option<f64>,
    /// Rates over the window between the first and last timed scrape.
    pub gen_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    pub requests_per_s: Option<f64>,
    /// Counter values at the last scrape (since the servers started).
    pub generation_tokens: Option<f64>,
    pub prompt_tokens: Option<f64>,
    /// Finished requests by reason: over the window with two or more scrapes, else since start.
    pub finished: BTreeMap<String, f64>,
    pub cap_hit_rate: Option<f64>,
    pub preemptions: Option<f64>,
    pub aborted: Option<f64>,
    pub running: Option<Summary>,
    pub waiting: Option<Summary>,
    pub kv_usage: Option<Summary>,
    pub latency: BTreeMap<&'static str, Quantiles>,
    /// Histogram series left out of `latency`, each with why (`name{labels}: why`).
    pub malformed_series: Vec<String>,
    /// The engines (data-parallel ranks) side by side, when the labels name two or more;
    /// the figures above are their sums, each series counted once.
    pub ranks: Vec<Rank>,
    pub timeline: Vec<ScrapePoint>,
}

/// Labels that tell servers apart in what Prometheus stored: Kubernetes discovery's `pod`,
/// else the scrape target's `instance` (docs/prometheus.md). Two pods each with its
/// `engine="0"` are two engines, never one.
pub const INSTANCE_LABELS: [&str; 2] = ["pod", "instance"];

/// `engine="1"` for a label set holding one of [`RANK_LABELS`], led by its server's label
/// (`pod="vllm-1" engine="0"`) when `server` names the label that tells servers apart.
fn rank_of(labels: &str, server: Option<&str>) -> Option<String> {
    let engine = RANK_LABELS
        .iter()
        .find_map(|k| Some(format!("{k}=\"{}\"", label_value(labels, k)?)));
    let Some(key) = server else {
        return engine;
    };
    let who = format!("{key}=\"{}\"", label_value(labels, key)?);
    Some(match engine {
        Some(e) => format!("{who} {e}"),
        None => who,
    })
}

/// The figures of each rank named in the last scrape, when there are two or more; `secs`
/// is the window between the first and last timed scrape. Ranks of several servers (pods,
/// targets) are each server's own.
fn ranks(
    timed: &[&Scrape],
    before: &[Cow<'_, Scrape>],
    last: &Scrape,
    secs: Option<f64>,
) -> Vec<Rank> {
    let engine_series = || {
        last.samples.iter().filter(|x| {
            [&GEN[..], &REQUESTS, &RUNNING, &WAITING, &KV]
                .iter()
                .any(|n| n.contains(&x.name.as_str()))
        })
    };
    let server = INSTANCE_LABELS.into_iter().find(|k| {
        let values: BTreeSet<&str> = engine_series()
            .filter_map(|x| label_value(&x.labels, k))
            .collect();
        values.len() >= 2
    });
    let names: BTreeSet<String> = engine_series()
        .filter_map(|x| rank_of(&x.labels, server))
        .collect();
    if names.len() < 2 {
        return Vec::new();
    }
    let window = timed.len() >= 2;
    let secs = secs.filter(|s| *s > 0.0);
    let mut out: Vec<Rank> = names
        .into_iter()
        .map(|rank| {
            let mine = |l: &str| rank_of(l, server).as_deref() == Some(rank.as_str());
            let counted = |names: &[&str], also: &dyn Fn(&str) -> bool| -> Option<f64> {
                let keep = |l: &str| mine(l) && also(l);
                if window {
                    increase_over(timed, before, names, keep)
                } else {
                    total(last, names, keep)
                }
            };
            let tokens = counted(&GEN, &|_| true);
            let finished =
                counted(&REQUESTS[..1], &|_| true).or(counted(&REQUESTS[1..], &|_| true));
            let length = counted(&REQUESTS[..1], &|l| {
                label_value(l, "finished_reason") == Some("length")
            });
            let mean = |names: &[&str], average: bool| -> Option<f64> {
                let v: Vec<f64> = timed
                    .iter()
                    .copied()
                    .chain((timed.is_empty()).then_some(last))
                    .filter_map(|sc| gauge_where(sc, names, average, mine))
                    .collect();
                (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
            };
            Rank {
                gen_tps: tokens.zip(secs).map(|(t, s)| t / s),
                generation_tokens: tokens,
                share: None,
                vs_median: None,
                cap_hit_rate: finished
                    .filter(|f| *f > 0.0)
                    .zip(length)
                    .map(|(f, l)| l / f),
                finished,
                running: mean(&RUNNING, false),
                waiting: mean(&WAITING, false),
                kv_usage: mean(&KV, true),
                rank,
            }
        })
        .collect();
    let all: f64 = out.iter().filter_map(|r| r.generation_tokens).sum();
    let mut v: Vec<f64> = out.iter().filter_map(|r| r.generation_tokens).collect();
    v.sort_by(f64::total_cmp);
    let median = (!v.is_empty()).then(|| crate::analysis::quantile::quantile(&v, 0.5));
    for r in &mut out {
        r.share = r.generation_tokens.filter(|_| all > 0.0).map(|t| t / all);
        r.vs_median = r
            .generation_tokens
            .zip(median.filter(|m| *m > 0.0))
            .map(|(t, m)| t / m - 1.0);
    }
    out
}

fn summary(v: Vec<f64>) -> Option<Summary> {
    let mut v = v;
    Summary::of(&mut v)
}

/// The server a scrape is of: the `pod` (else `instance`) label all its samples share.
fn server_of(x: &Scrape) -> Option<&str> {
    INSTANCE_LABELS.iter().find_map(|k| {
        let mut v = x.samples.iter().map(|m| label_value(&m.labels, k));
        let first = v.next()??;
        v.all(|o| o == Some(first)).then_some(first)
    })
}

/// Scrapes of several servers, each scrape one server's (llm-d-benchmark's files, one pod
/// each, labelled by its `# Pod:` header), as rounds of them: in time order, a round takes
/// each server once and the next begins when one comes again; a round's time is its newest
/// scrape's. Without two servers, the scrapes as they are (a Prometheus dump's scrapes
/// hold every server's series already).
fn rounds(scrapes: &[Scrape]) -> Cow<'_, [Scrape]> {
    let servers: Vec<Option<&str>> = scrapes.iter().map(server_of).collect();
    let named: BTreeSet<&str> = servers.iter().flatten().copied().collect();
    if named.len() < 2 {
        return Cow::Borrowed(scrapes);
    }
    let mut out: Vec<Scrape> = Vec::new();
    let mut met: BTreeSet<Option<&str>> = BTreeSet::new();
    for (x, who) in scrapes.iter().zip(servers) {
        match out.last_mut() {
            Some(round) if !met.contains(&who) => {
                round.samples.extend(x.samples.iter().cloned());
                round.placed = round.placed.max(x.placed);
                round.ts = round.ts.max(x.ts);
            }
            _ => {
                met.clear();
                out.push(x.clone());
            }
        }
        met.insert(who);
    }
    Cow::Owned(out)
}

/// Each scrape with, beside its series, the last value of every series an earlier one had
/// and it lacks: what the next scrape's counters increase from, so that a series missing
/// from one scrape (one pod's failed scrape) is neither a reset nor a new series.
fn known<'a>(scrapes: &[&'a Scrape]) -> Vec<Cow<'a, Scrape>> {
    let mut last: HashMap<(&str, &str), &MetricSample> = HashMap::new();
    scrapes
        .iter()
        .map(|&x| {
            for m in &x.samples {
                last.insert((m.name.as_str(), m.labels.as_str()), m);
            }
            if last.len() <= x.samples.len() {
                return Cow::Borrowed(x);
            }
            let here: std::collections::HashSet<(&str, &str)> = x
                .samples
                .iter()
                .map(|m| (m.name.as_str(), m.labels.as_str()))
                .collect();
            let mut all = x.clone();
            all.samples.extend(
                last.iter()
                    .filter(|(k, _)| !here.contains(*k))
                    .map(|(_, m)| (*m).clone()),
            );
            Cow::Owned(all)
        })
        .collect()
}

/// The increase of `names` from each scrape to the next, summed (a counter reset in between
/// counted from zero); `before` is [`known`] of `timed`.
fn increase_over(
    timed: &[&Scrape],
    before: &[Cow<'_, Scrape>],
    names: &[&str],
    keep: impl Fn(&str) -> bool,
) -> Option<f64> {
    (1..timed.len())
        .map(|i| increase(&before[i - 1], timed[i], names, &keep))
        .sum()
}

/// Analyses the scrapes (placed by [`Scrapes::place`]).
pub fn analyze(s: &Scrapes) -> Option<Metrics> {
    let scrapes = rounds(&s.scrapes);
    let last = scrapes.last()?;
    let timed: Vec<&Scrape> = scrapes.iter().filter(|x| x.placed.is_some()).collect();
    let before = known(&timed);
    let window = (timed.len() >= 2).then(|| (timed[0], timed[timed.len() - 1]));
    let secs = window.and_then(|(a, b)| Some((b.placed?.0 - a.placed?.0) as f64 / 1000.0));
    let rate = |names: &[&str]| -> Option<f64> {
        let secs = secs.filter(|s| *s > 0.0)?;
        // the sum of per-interval increases, so that a counter reset in between is handled
        Some(increase_over(&timed, &before, names, |_| true)? / secs)
    };
    let finished: BTreeMap<String, f64> = {
        let mut m = BTreeMap::new();
        // each reason once: a reason met in several series (engines, DP ranks) sums them all
        // below, once
        let reasons = |sc: &Scrape| -> std::collections::BTreeSet<String> {
            sc.samples
                .iter()
                .filter(|x| x.name == REQUESTS[0])
                .filter_map(|x| label_value(&x.labels, "finished_reason").map(str::to_string))
                .collect()
        };
        for r in reasons(last) {
            let keep = |l: &str| label_value(l, "finished_reason") == Some(r.as_str());
            let v = match window {
                Some(_) => increase_over(&timed, &before, &REQUESTS[..1], keep),
                None => total(last, &REQUESTS[..1], keep),
            };
            if let Some(v) = v {
                *m.entry(r.clone()).or_insert(0.0) += v;
            }
        }
        m
    };
    let done: f64 = finished.values().sum();
    let cap_hit_rate = (done > 0.0).then(|| finished.get("length").copied().unwrap_or(0.0) / done);
    let mut timeline = Vec::new();
    let all: Vec<&Scrape> = scrapes.iter().collect();
    let all_before = known(&all);
    for (k, sc) in scrapes.iter().enumerate() {
        let prev = k.checked_sub(1).map(|p| &*all_before[p]);
        let dt = match (prev.and_then(|p| p.placed), sc.placed) {
            (Some(a), Some(b)) if b.0 > a.0 => Some((b.0 - a.0) as f64 / 1000.0),
            _ => None,
        };
        let r = |names: &[&str]| Some(increase(prev?, sc, names, |_| true)? / dt?);
        timeline.push(ScrapePoint {
            ts: sc.placed,
            gen_tps: r(&GEN),
            prompt_tps: r(&PROMPT),
            requests_per_s: r(&REQUESTS),
            running: gauge(sc, &RUNNING, false),
            waiting: gauge(sc, &WAITING, false),
            kv_usage: gauge(sc, &KV, true),
            preemptions: prev.and_then(|p| increase(p, sc, &PREEMPT, |_| true)),
        });
    }
    let engine = {
        let v = scrapes
            .iter()
            .flat_map(|x| &x.samples)
            .any(|x| x.name.starts_with("vllm:"));
        let g = scrapes
            .iter()
            .flat_map(|x| &x.samples)
            .any(|x| x.name.starts_with("sglang:"));
        match (v, g) {
            (true, false) => Some("vllm"),
            (false, true) => Some("sglang"),
            (true, true) => Some("mixed"),
            _ => None,
        }
    };
    let mut malformed = BTreeSet::new();
    let latency = HISTOGRAMS
        .iter()
        .filter_map(|(k, names)| {
            Some((
                *k,
                histogram(window.map(|w| w.0), last, names, &mut malformed)?,
            ))
        })
        .filter(|(_, q)| q.count > 0.0)
        .collect();
    Some(Metrics {
        scrapes: s.scrapes.len(),
        samples: s.scrapes.iter().map(|x| x.samples.len()).sum(),
        engine,
        from: timed.first().and_then(|x| x.placed),
        to: timed.last().and_then(|x| x.placed),
        span_s: secs,
        gen_tps: rate(&GEN),
        prompt_tps: rate(&PROMPT),
        requests_per_s: rate(&REQUESTS),
        generation_tokens: total(last, &GEN, |_| true),
        prompt_tokens: total(last, &PROMPT, |_| true),
        finished,
        cap_hit_rate,
        preemptions: match window {
            Some((a, b)) => increase(a, b, &PREEMPT, |_| true),
            None => total(last, &PREEMPT, |_| true),
        },
        aborted: match window {
            Some((a, b)) => increase(a, b, &ABORTED, |_| true),
            None => total(last, &ABORTED, |_| true),
        },
        running: summary(timeline.iter().filter_map(|r| r.running).collect()),
        waiting: summary(timeline.iter().filter_map(|r| r.waiting).collect()),
        kv_usage: summary(timeline.iter().filter_map(|r| r.kv_usage).collect()),
        latency,
        malformed_series: malformed.into_iter().collect(),
        ranks: ranks(&timed, &before, last, secs),
        timeline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantile_like_prometheus() {
        let b = [
            (0.1, 1.0),
            (0.2, 2.0),
            (0.4, 3.0),
            (1.0, 3.0),
            (2.0, 4.0),
            (f64::INFINITY, 4.0),
        ];
        assert_eq!(bucket_quantile(&b, 0.5), Some(0.2));
        assert_eq!(bucket_quantile(&b, 0.25), Some(0.1));
        // rank 3.6 falls in (1, 2]: 1 + 0.6
        assert!((bucket_quantile(&b, 0.9).unwrap() - 1.6).abs() < 1e-12);
        let inf = [(1.0, 1.0), (f64::INFINITY, 10.0)];
        assert_eq!(bucket_quantile(&inf, 0.9), Some(1.0));
    }
}
