//! kubernetes-sigs inference-perf's lifecycle reports (docs/formats.md §4.7), written by
//! `inference_perf/reportgen/base.py`: `stage_N_lifecycle_metrics.json` for each stage of
//! the load (a sweep is a folder of them), `summary_lifecycle_metrics.json` over all, and
//! with `per_request: true` `per_request_lifecycle_metrics.json`.
//!
//! A summary holds `load_summary` (`count` sent, `send_duration`, `requested_rate`,
//! `achieved_rate`, `concurrency`), `successes` (`count`, `latency.{request_latency,
//! time_to_first_token, time_per_output_token, normalized_time_per_output_token,
//! inter_token_latency}` as `{mean, median, p90, p99, …}` in seconds, `throughput.*_per_sec`,
//! `prompt_len` / `output_len` — `prompt_tokens` in later versions) and `failures`
//! (`count`). A per-request entry is `{start_time, end_time, request, response, info,
//! error}`, times in seconds; `info` holds the token counts and `output_token_times`.

use super::tree::{at, count, num, num_at, present};
use super::{LoadgenError, Request, Run, Tool};
use serde_json::Value;

const LATENCIES: &[(&str, [&str; 4])] = &[
    (
        "time_to_first_token",
        [
            "mean_ttft_ms",
            "median_ttft_ms",
            "p90_ttft_ms",
            "p99_ttft_ms",
        ],
    ),
    (
        "time_per_output_token",
        [
            "mean_tpot_ms",
            "median_tpot_ms",
            "p90_tpot_ms",
            "p99_tpot_ms",
        ],
    ),
    (
        "inter_token_latency",
        ["mean_itl_ms", "median_itl_ms", "p90_itl_ms", "p99_itl_ms"],
    ),
    (
        "request_latency",
        [
            "mean_e2el_ms",
            "median_e2el_ms",
            "p90_e2el_ms",
            "p99_e2el_ms",
        ],
    ),
];

/// Reads a stage's (or the run's) summary; `stem` (the file's name) names it.
pub fn summary(v: &Value, stem: &str) -> Result<Run, LoadgenError> {
    let load = v
        .get("load_summary")
        .filter(|l| l.is_object())
        .ok_or(LoadgenError::Missing {
            tool: Tool::InferencePerf.name(),
            missing: "`load_summary`".into(),
        })?;
    let name = stem.strip_suffix("_lifecycle_metrics").unwrap_or(stem);
    let mut run = Run::new(Tool::InferencePerf, name);
    run.state(
        "load_summary.requested_rate",
        "requests/sec",
        num(load.get("requested_rate")),
        Some("request_rate"),
    );
    run.state(
        "load_summary.concurrency",
        "requests",
        num(load.get("concurrency")),
        Some("max_concurrency"),
    );
    run.state(
        "load_summary.count",
        "requests",
        num(load.get("count")),
        Some("num_prompts"),
    );
    run.state(
        "load_summary.achieved_rate",
        "requests/sec",
        num(load.get("achieved_rate")),
        None,
    );
    run.state(
        "load_summary.send_duration",
        "s",
        num(load.get("send_duration")),
        None,
    );
    let ok = v.get("successes").unwrap_or(&Value::Null);
    let successes = num(ok.get("count"));
    run.state("successes.count", "requests", successes, Some("completed"));
    run.state(
        "failures.count",
        "requests",
        num_at(v, &["failures", "count"]),
        Some("failed"),
    );
    for &(metric, figures) in LATENCIES {
        for (stat, figure) in ["mean", "median", "p90", "p99"].into_iter().zip(figures) {
            let value = num_at(ok, &["latency", metric, stat]);
            run.state(
                &format!("successes.latency.{metric}.{stat}"),
                "s",
                value,
                Some(figure),
            );
        }
    }
    for stat in ["mean", "median", "p90", "p99"] {
        let key = format!("successes.latency.normalized_time_per_output_token.{stat}");
        let value = num_at(ok, &["latency", "normalized_time_per_output_token", stat]);
        run.state(&key, "s", value, None);
    }
    let rps = num_at(ok, &["throughput", "requests_per_sec"]);
    run.state(
        "successes.throughput.requests_per_sec",
        "requests/sec",
        rps,
        Some("request_throughput"),
    );
    run.state(
        "successes.throughput.output_tokens_per_sec",
        "tokens/sec",
        num_at(ok, &["throughput", "output_tokens_per_sec"]),
        Some("output_throughput"),
    );
    run.state(
        "successes.throughput.total_tokens_per_sec",
        "tokens/sec",
        num_at(ok, &["throughput", "total_tokens_per_sec"]),
        Some("total_token_throughput"),
    );
    run.state(
        "successes.throughput.input_tokens_per_sec",
        "tokens/sec",
        num_at(ok, &["throughput", "input_tokens_per_sec"]),
        None,
    );
    for (metric, figure) in [
        ("prompt_len", "mean_input_tokens"),
        ("prompt_tokens", "mean_input_tokens"),
        ("output_len", "mean_output_tokens"),
    ] {
        let value = num_at(ok, &[metric, "mean"]);
        run.state(
            &format!("successes.{metric}.mean"),
            "tokens",
            value,
            Some(figure),
        );
    }
    // the span the rates are over (last end − first start), from the file's own figures
    let span = match (successes, rps) {
        (Some(n), Some(r)) if r > 0.0 => Some(n / r),
        _ => None,
    };
    run.state(
        "successes.count ÷ successes.throughput.requests_per_sec",
        "s",
        span,
        Some("duration"),
    );
    Ok(run)
}

/// Reads the per-request list into one run named after the file (`stem`).
pub fn requests(v: &Value, stem: &str) -> Result<Run, LoadgenError> {
    let list = v.as_array().ok_or(LoadgenError::Missing {
        tool: Tool::InferencePerf.name(),
        missing: "a list of requests".into(),
    })?;
    let name = stem.strip_suffix("_lifecycle_metrics").unwrap_or(stem);
    let mut run = Run::new(Tool::InferencePerf, name);
    for (i, r) in list.iter().enumerate() {
        run.requests.push(request(r, i as u64));
    }
    Ok(run)
}

fn request(r: &Value, index: u64) -> Request {
    let info = r.get("info").unwrap_or(&Value::Null);
    let error = present(r.get("error"));
    let start = num(r.get("start_time"));
    let end = num(r.get("end_time"));
    // token counts: `info.input_tokens` / `info.output_tokens` (≤ 0.2), else
    // `info.request_metrics.text.input_tokens` / `info.response_metrics.output_tokens`
    let input = count(info.get("input_tokens"))
        .or_else(|| count(at(info, &["request_metrics", "text", "input_tokens"])));
    let output = count(info.get("output_tokens"))
        .or_else(|| count(at(info, &["response_metrics", "output_tokens"])));
    let times: Vec<f64> = info
        .get("output_token_times")
        .or_else(|| at(info, &["response_metrics", "output_token_times"]))
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(|x| num(Some(x))).collect())
        .unwrap_or_default();
    let ok = |x: Option<f64>| x.filter(|_| !error);
    let (first, last) = (times.first().copied(), times.last().copied());
    let ttft = match (first, start) {
        (Some(f), Some(s)) if times.len() > 1 => Some(f - s),
        _ => None,
    };
    let tpot = match (first, last, output) {
        (Some(f), Some(l), Some(o)) if o > 1 && times.len() > 1 => Some((l - f) / (o - 1) as f64),
        _ => None,
    };
    let itl = match (first, last) {
        (Some(f), Some(l)) if times.len() > 1 => Some((l - f) / (times.len() - 1) as f64),
        _ => None,
    };
    Request {
        index,
        input_len: input,
        output_len: ok(output.map(|o| o as f64)).map(|o| o as u64),
        ttft_s: ok(ttft),
        tpot_s: ok(tpot),
        itl_mean_s: ok(itl),
        e2e_s: ok(match (start, end) {
            (Some(s), Some(e)) => Some(e - s),
            _ => None,
        }),
        error,
        cancelled: false,
        start_s: start,
        end_s: end,
    }
}
