//! GuideLLM's benchmarks report, `benchmarks.json` (or `.yaml`, the same tree) (docs/formats.md
//! §4.6). One run per entry of `benchmarks[]`: a sweep is several runs.
//!
//! - 0.3 – 0.4 (`GenerativeBenchmarksReport` without metadata): `benchmarks[]` with
//!   `args.strategy` (`type_`, `streams` or `rate`), `worker` (`backend_target`,
//!   `backend_model`), `request_totals`, `request_samples`, `duration`, `metrics`, and
//!   `requests.{successful,errored,incomplete}[]` with `start_time` / `end_time` (s since
//!   the epoch), `prompt_tokens`, `output_tokens`, `request_latency` (s) and
//!   `time_to_first_token_ms`, `inter_token_latency_ms`, `time_per_output_token_ms`.
//! - 0.5 – 0.8 (`metadata.version` 2, `metadata.guidellm_version`): `config.spec.backend`
//!   (`target`, `model`, `request_format`, `stream`), `benchmarks[].config.strategy`,
//!   `metrics.request_totals`, and requests with `request_start_time` / `request_end_time`.
//!
//! Every metric is `{successful, errored, incomplete, total}` of a distribution (`mean`,
//! `median`, `count`, `total_sum`, `percentiles.{p001 … p999}`); the figures here are the
//! successful requests'.

use super::tree::{at, bool_at, count, num, num_at, text_at};
use super::{LoadgenError, Request, Run, Tool};
use serde_json::Value;

/// Distributions put under tokstat's figures: the metric, its unit, and the figure of each
/// statistic (mean, median, p90, p99).
const LATENCIES: &[(&str, &str, [&str; 4])] = &[
    (
        "time_to_first_token_ms",
        "ms",
        [
            "mean_ttft_ms",
            "median_ttft_ms",
            "p90_ttft_ms",
            "p99_ttft_ms",
        ],
    ),
    (
        "inter_token_latency_ms",
        "ms",
        [
            "mean_tpot_ms",
            "median_tpot_ms",
            "p90_tpot_ms",
            "p99_tpot_ms",
        ],
    ),
    (
        "request_latency",
        "s",
        [
            "mean_e2el_ms",
            "median_e2el_ms",
            "p90_e2el_ms",
            "p99_e2el_ms",
        ],
    ),
];

/// Distributions kept under GuideLLM's names only (their definitions differ from tokstat's).
const OWN: &[(&str, &str)] = &[
    ("requests_per_second", "requests/sec"),
    ("output_tokens_per_second", "tokens/sec"),
    ("tokens_per_second", "tokens/sec"),
    ("time_per_output_token_ms", "ms"),
    ("request_concurrency", "requests"),
];

/// Reads a report: its benchmarks, in order.
pub fn report(v: &Value) -> Result<Vec<Run>, LoadgenError> {
    let benches = v
        .get("benchmarks")
        .and_then(Value::as_array)
        .ok_or(LoadgenError::Missing {
            tool: Tool::GuideLlm.name(),
            missing: "`benchmarks`".into(),
        })?;
    let version = text_at(v, &["metadata", "guidellm_version"]);
    // the backend: 0.8's `config.spec.backend`, else 0.4's report-level `args`
    let backend = at(v, &["config", "spec", "backend"]).or_else(|| v.get("args"));
    benches
        .iter()
        .enumerate()
        .map(|(i, b)| benchmark(b, i, version.clone(), backend))
        .collect()
}

fn benchmark(
    b: &Value,
    index: usize,
    version: Option<String>,
    backend: Option<&Value>,
) -> Result<Run, LoadgenError> {
    let strategy = at(b, &["config", "strategy"])
        .or_else(|| at(b, &["args", "strategy"]))
        .unwrap_or(&Value::Null);
    let kind = text_at(strategy, &["type_"]).unwrap_or_else(|| "benchmark".into());
    let streams = num_at(strategy, &["streams"]);
    let rate = num_at(strategy, &["rate"]);
    let name = match (streams, rate) {
        (Some(s), _) => format!("{kind}@{s}"),
        (None, Some(r)) => format!("{kind}@{r:.2}"),
        _ => kind.clone(),
    };
    let mut run = Run::new(Tool::GuideLlm, name);
    run.epoch = true;
    run.setup.version = version;
    run.setup.strategy = Some(kind);
    let worker = b.get("worker").unwrap_or(&Value::Null);
    run.setup.model = backend
        .and_then(|be| text_at(be, &["model"]))
        .or_else(|| text_at(worker, &["backend_model"]));
    let target = backend
        .and_then(|be| text_at(be, &["target"]))
        .or_else(|| text_at(worker, &["backend_target"]));
    let format = backend.and_then(|be| text_at(be, &["request_format"]));
    run.setup.endpoint = match (target, format) {
        (Some(t), Some(f)) => Some(format!("{t}{f}")),
        (t, f) => t.or(f),
    };
    run.setup.streaming = backend.and_then(|be| bool_at(be, &["stream"]));
    run.state(
        "strategy.streams",
        "requests",
        streams,
        Some("max_concurrency"),
    );
    run.state("strategy.rate", "requests/sec", rate, Some("request_rate"));
    if kind_is(&run, "synchronous") {
        run.state(
            "strategy.type_ = synchronous",
            "requests",
            Some(1.0),
            Some("max_concurrency"),
        );
    }
    let totals = at(b, &["metrics", "request_totals"]).or_else(|| b.get("request_totals"));
    let total = |k: &str| totals.and_then(|t| num(t.get(k)));
    run.state(
        "request_totals.successful",
        "requests",
        total("successful"),
        Some("completed"),
    );
    // tokstat's failed: errored and incomplete (cut when the benchmark ended: cancelled)
    let failed = match (total("errored"), total("incomplete")) {
        (Some(e), Some(i)) => Some(e + i),
        (e, _) => e,
    };
    run.state(
        "request_totals.errored + request_totals.incomplete",
        "requests",
        failed,
        Some("failed"),
    );
    run.state("request_totals.errored", "requests", total("errored"), None);
    run.state(
        "request_totals.incomplete",
        "requests",
        total("incomplete"),
        None,
    );
    run.state("request_totals.total", "requests", total("total"), None);
    let duration = num(b.get("duration"));
    run.state("duration", "s", duration, Some("duration"));
    let metrics = b.get("metrics").ok_or(LoadgenError::Missing {
        tool: Tool::GuideLlm.name(),
        missing: format!("`metrics` in benchmark {}", index + 1),
    })?;
    for &(metric, unit, figures) in LATENCIES {
        let d = at(metrics, &[metric, "successful"]);
        let stats = [
            ("mean", d.and_then(|d| num(d.get("mean")))),
            ("median", d.and_then(|d| num(d.get("median")))),
            (
                "percentiles.p90",
                d.and_then(|d| num_at(d, &["percentiles", "p90"])),
            ),
            (
                "percentiles.p99",
                d.and_then(|d| num_at(d, &["percentiles", "p99"])),
            ),
        ];
        for ((stat, value), figure) in stats.into_iter().zip(figures) {
            run.state(
                &format!("{metric}.successful.{stat}"),
                unit,
                value,
                Some(figure),
            );
        }
    }
    for &(metric, unit) in OWN {
        for stat in ["mean", "median"] {
            let value = at(metrics, &[metric, "successful", stat]);
            run.state(
                &format!("{metric}.successful.{stat}"),
                unit,
                num(value),
                None,
            );
        }
    }
    let sum = |m: &str| num_at(metrics, &[m, "successful", "total_sum"]);
    let mean = |m: &str| num_at(metrics, &[m, "successful", "mean"]);
    run.state(
        "prompt_token_count.successful.mean",
        "tokens",
        mean("prompt_token_count"),
        Some("mean_input_tokens"),
    );
    run.state(
        "output_token_count.successful.mean",
        "tokens",
        mean("output_token_count"),
        Some("mean_output_tokens"),
    );
    run.state(
        "prompt_token_count.successful.total_sum",
        "tokens",
        sum("prompt_token_count"),
        Some("total_input_tokens"),
    );
    run.state(
        "output_token_count.successful.total_sum",
        "tokens",
        sum("output_token_count"),
        Some("total_output_tokens"),
    );
    // tokstat's rates (totals over the duration), from the file's own totals
    let per_s = |x: Option<f64>| Some(x? / duration.filter(|d| *d > 0.0)?);
    run.state(
        "request_totals.successful ÷ duration",
        "requests/sec",
        per_s(total("successful")),
        Some("request_throughput"),
    );
    run.state(
        "output_token_count.successful.total_sum ÷ duration",
        "tokens/sec",
        per_s(sum("output_token_count")),
        Some("output_throughput"),
    );
    // the requests, as kept
    let mut kept = 0usize;
    for (status, error, cancelled) in [
        ("successful", false, false),
        ("errored", true, false),
        ("incomplete", true, true),
    ] {
        let Some(list) = at(b, &["requests", status]).and_then(Value::as_array) else {
            continue;
        };
        for r in list {
            run.requests.push(request(r, kept as u64, error, cancelled));
            kept += 1;
        }
    }
    let all = total("total").map(|t| t as usize);
    run.requests_sampled = all.is_some_and(|t| kept > 0 && kept < t);
    run.requests.sort_by(|a, b| {
        a.start_s
            .partial_cmp(&b.start_s)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    for (i, r) in run.requests.iter_mut().enumerate() {
        r.index = i as u64;
    }
    Ok(run)
}

fn kind_is(run: &Run, kind: &str) -> bool {
    run.setup.strategy.as_deref() == Some(kind)
}

/// One request of any status.
fn request(r: &Value, index: u64, error: bool, cancelled: bool) -> Request {
    let ok = |x: Option<f64>| x.filter(|_| !error);
    let ms = |k: &str| ok(num(r.get(k)).map(|v| v / 1000.0));
    Request {
        index,
        input_len: count(r.get("prompt_tokens")),
        output_len: count(r.get("output_tokens")).filter(|_| !error),
        ttft_s: ms("time_to_first_token_ms"),
        tpot_s: ms("inter_token_latency_ms"),
        itl_mean_s: None,
        e2e_s: ok(num(r.get("request_latency"))),
        error,
        cancelled,
        start_s: num(r.get("request_start_time")).or_else(|| num(r.get("start_time"))),
        end_s: num(r.get("request_end_time")).or_else(|| num(r.get("end_time"))),
    }
}
