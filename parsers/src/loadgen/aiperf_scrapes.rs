//! AIPerf's `server_metrics_export.jsonl`: the scrapes AIPerf took of the server's
//! `/metrics` during its run (0.10+, written when `--server-metrics-formats` names `jsonl`),
//! one `SlimRecord` a line (`aiperf/common/models/server_metrics_models.py`, 0.13.0):
//!
//! ```text
//! {"endpoint_url":"http://127.0.0.1:8011/metrics","timestamp_ns":1796560811491313862,
//!  "endpoint_latency_ns":938602,"metrics":{
//!    "vllm:num_requests_running":[{"labels":{"engine":"0","model_name":"m"},"value":4.0}],
//!    "vllm:generation_tokens":[{"labels":{…},"value":120.0}],
//!    "vllm:time_to_first_token_seconds":[{"labels":{…},"buckets":{"0.05":3.0,"+Inf":4.0},
//!                                         "sum":0.16,"count":4.0}]},
//!  "request_sent_ns":…,"first_byte_ns":…,"benchmark_phase":"profiling","phase_name":"profiling",…}
//! ```
//!
//! The families are named as `prometheus_client`'s parser names them: a counter's family
//! without its `_total` (`vllm:generation_tokens`), types dropped. `_created` and summary
//! families, non-finite values and scrapes identical to the one before (`jsonl_writer.py`:
//! `if record.is_duplicate`) are not written. Samples are given back under their wire names:
//! a value family is a counter's `F_total` when `F_total` is one of the engines' counters
//! ([`ENGINE_COUNTERS`]), a histogram's entries are `F_bucket{le=…}`, `F_sum`, `F_count`.
//! `timestamp_ns` is the scrape's first response byte (`data_collector.py`).

use crate::json::{JsonError, Scanner};
use std::borrow::Cow;

/// The engines' counter families without `_total` (docs/formats.md §3): how a family of
/// AIPerf's JSONL, which holds no types, is known to be a counter.
pub const ENGINE_COUNTERS: [&str; 22] = [
    "vllm:prompt_tokens",
    "vllm:generation_tokens",
    "vllm:request_success",
    "vllm:num_preemptions",
    "vllm:prefix_cache_queries",
    "vllm:prefix_cache_hits",
    "vllm:gpu_prefix_cache_queries",
    "vllm:gpu_prefix_cache_hits",
    "vllm:spec_decode_num_drafts",
    "vllm:spec_decode_num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens",
    "vllm:spec_decode_num_accepted_tokens_per_pos",
    "sglang:prompt_tokens",
    "sglang:generation_tokens",
    "sglang:cached_tokens",
    "sglang:num_requests",
    "sglang:num_aborted_requests",
    "sglang:num_so_requests",
    "sglang:num_retracted_input_tokens",
    "sglang:num_bootstrap_failed_reqs",
    "sglang:num_transfer_failed_reqs",
    "sglang:realtime_tokens",
];

/// One sample of a record, under its wire name.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample<'a> {
    pub name: Cow<'a, str>,
    /// As given, with `le` added for a bucket.
    pub labels: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    pub value: f64,
    /// Whether the family is a counter ([`ENGINE_COUNTERS`]) or a histogram.
    pub kind: Kind,
}

/// What a sample's family is, as far as the record tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Histogram,
    /// A value family not among the engines' counters: a gauge, or a counter of another
    /// exporter (which no figure reads).
    Value,
}

/// One scrape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record<'a> {
    pub endpoint_url: Option<Cow<'a, str>>,
    /// `timestamp_ns` in milliseconds.
    pub ts_ms: Option<i64>,
    /// `benchmark_phase` (`warmup`, `profiling`); `None` for the baseline scrape AIPerf
    /// takes before its first phase and for scrapes after its last.
    pub phase: Option<Cow<'a, str>>,
    pub samples: Vec<Sample<'a>>,
}

/// Whether a head is AIPerf's server-metrics JSONL (its first record's keys).
pub fn sniff(head: &[u8]) -> bool {
    let first = head.split(|&c| c == b'\n').next().unwrap_or(head);
    let has = |k: &[u8]| memchr::memmem::find(first, k).is_some();
    first.trim_ascii_start().starts_with(b"{")
        && has(b"\"endpoint_url\"")
        && has(b"\"timestamp_ns\"")
        && has(b"\"metrics\"")
}

fn labels<'a>(
    sc: &mut Scanner<'a>,
    into: &mut Vec<(Cow<'a, str>, Cow<'a, str>)>,
) -> Result<(), JsonError> {
    if sc.peek() != Some(b'{') {
        return sc.skip(); // `null`: no labels
    }
    sc.object(|sc, k| {
        let v = sc.opt_string()?.map(|s| s.decode()).unwrap_or_default();
        into.push((k.decode(), v));
        Ok(())
    })
}

/// The entries of one family into `out`.
fn family<'a>(
    sc: &mut Scanner<'a>,
    name: Cow<'a, str>,
    out: &mut Vec<Sample<'a>>,
) -> Result<(), JsonError> {
    let counter = ENGINE_COUNTERS.contains(&name.as_ref());
    sc.array(|sc, _| {
        let mut ls = Vec::new();
        let mut value = None;
        let mut buckets: Vec<(Cow<'a, str>, f64)> = Vec::new();
        let mut sum = None;
        let mut count = None;
        sc.object(|sc, k| match k.raw {
            b"labels" => labels(sc, &mut ls),
            b"value" => {
                value = sc.opt_number()?;
                Ok(())
            }
            b"sum" => {
                sum = sc.opt_number()?;
                Ok(())
            }
            b"count" => {
                count = sc.opt_number()?;
                Ok(())
            }
            b"buckets" if sc.peek() == Some(b'{') => sc.object(|sc, le| {
                if let Some(n) = sc.opt_number()? {
                    buckets.push((le.decode(), n));
                }
                Ok(())
            }),
            _ => sc.skip(),
        })?;
        let sample = |suffix: &str, extra: Option<Cow<'a, str>>, v: f64, kind| {
            let mut l = ls.clone();
            if let Some(le) = extra {
                l.push((Cow::Borrowed("le"), le));
            }
            Sample {
                name: if suffix.is_empty() {
                    name.clone()
                } else {
                    Cow::Owned(format!("{name}{suffix}"))
                },
                labels: l,
                value: v,
                kind,
            }
        };
        if let Some(v) = value {
            if counter {
                out.push(sample("_total", None, v, Kind::Counter));
            } else {
                out.push(sample("", None, v, Kind::Value));
            }
        } else if !buckets.is_empty() || count.is_some() {
            for (le, n) in buckets {
                out.push(sample("_bucket", Some(le), n, Kind::Histogram));
            }
            if let Some(s) = sum {
                out.push(sample("_sum", None, s, Kind::Histogram));
            }
            if let Some(c) = count {
                out.push(sample("_count", None, c, Kind::Histogram));
            }
        }
        Ok(())
    })
}

/// Reads one line (one record).
pub fn record(line: &[u8]) -> Result<Record<'_>, JsonError> {
    let mut r = Record::default();
    let mut sc = Scanner::line(line);
    sc.object(|sc, k| match k.raw {
        b"endpoint_url" => {
            r.endpoint_url = sc.opt_string()?.map(|s| s.decode());
            Ok(())
        }
        b"benchmark_phase" => {
            r.phase = sc.opt_string()?.map(|s| s.decode());
            Ok(())
        }
        b"timestamp_ns" => {
            let n = sc.number()?;
            r.ts_ms = std::str::from_utf8(n)
                .ok()
                .and_then(|s| s.parse::<i64>().ok())
                .map(|ns| ns.div_euclid(1_000_000));
            Ok(())
        }
        b"metrics" if sc.peek() == Some(b'{') => sc.object(|sc, name| {
            if sc.peek() == Some(b'[') {
                family(sc, name.decode(), &mut r.samples)
            } else {
                sc.skip()
            }
        }),
        _ => sc.skip(),
    })?;
    sc.end()?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &[u8] = br#"{"endpoint_url":"http://127.0.0.1:8011/metrics","timestamp_ns":1796560811491313862,"endpoint_latency_ns":938602,"metrics":{"vllm:num_requests_running":[{"labels":{"engine":"0","model_name":"mock-model"},"value":4.0}],"vllm:generation_tokens":[{"labels":{"engine":"0","model_name":"mock-model"},"value":120.0}],"process_open_fds":[{"labels":null,"value":7.0}],"vllm:time_to_first_token_seconds":[{"labels":{"engine":"0","model_name":"mock-model"},"buckets":{"0.05":4.0,"+Inf":4.0},"sum":0.16,"count":4.0}]},"request_sent_ns":1796560811490375260,"first_byte_ns":1796560811491313862,"benchmark_phase":"profiling","phase_index":0,"profiling_index":0,"phase_name":"profiling","phase_kind":"profiling"}"#;

    #[test]
    fn a_record_under_wire_names() {
        assert!(sniff(LINE));
        let r = record(LINE).unwrap();
        assert_eq!(r.ts_ms, Some(1_796_560_811_491));
        assert_eq!(r.phase.as_deref(), Some("profiling"));
        assert_eq!(
            r.endpoint_url.as_deref(),
            Some("http://127.0.0.1:8011/metrics")
        );
        let names: Vec<(&str, f64, Kind)> = r
            .samples
            .iter()
            .map(|s| (s.name.as_ref(), s.value, s.kind))
            .collect();
        assert_eq!(
            names,
            [
                ("vllm:num_requests_running", 4.0, Kind::Value),
                ("vllm:generation_tokens_total", 120.0, Kind::Counter),
                ("process_open_fds", 7.0, Kind::Value),
                (
                    "vllm:time_to_first_token_seconds_bucket",
                    4.0,
                    Kind::Histogram
                ),
                (
                    "vllm:time_to_first_token_seconds_bucket",
                    4.0,
                    Kind::Histogram
                ),
                (
                    "vllm:time_to_first_token_seconds_sum",
                    0.16,
                    Kind::Histogram
                ),
                (
                    "vllm:time_to_first_token_seconds_count",
                    4.0,
                    Kind::Histogram
                ),
            ]
        );
        assert!(r.samples[2].labels.is_empty());
        assert_eq!(
            r.samples[4]
                .labels
                .last()
                .map(|(k, v)| (k.as_ref(), v.as_ref())),
            Some(("le", "+Inf"))
        );
    }

    #[test]
    fn a_cut_record_is_an_error() {
        for n in [1, 40, LINE.len() / 2, LINE.len() - 1] {
            assert!(record(&LINE[..n]).is_err(), "{n}");
        }
        assert!(!sniff(b"{\"metrics\":{}}"));
    }
}
