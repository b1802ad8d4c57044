//! sgl-project genai-bench's run files (docs/formats.md §4.9), written by
//! `genai_bench/metrics/aggregated_metrics_collector.py`: one JSON per scenario and
//! concurrency, `{aggregated_metrics, individual_request_metrics}`. `aggregated_metrics`
//! holds `scenario`, `num_concurrency`, `run_duration` (s), `requests_per_second` (older
//! files: `requests_per_minute`), `mean_output_throughput_tokens_per_s`, `num_requests`,
//! `num_completed_requests`, `num_error_requests` and `stats.{ttft, tpot, e2e_latency, …}`
//! as `{mean, p50, p90, p99, …}` in seconds; each request has `ttft`, `tpot`, `e2e_latency`
//! (s), `num_input_tokens`, `num_output_tokens` and `error_code`. The experiment's settings
//! are in `experiment_metadata.json` beside it (recognised, not read).

use super::tree::{count, num, num_at, present, text_at};
use super::{LoadgenError, Request, Run, Tool};
use serde_json::Value;

/// Reads a run; `stem` names it when the file does not.
pub fn run(v: &Value, stem: &str) -> Result<Run, LoadgenError> {
    let agg = v
        .get("aggregated_metrics")
        .filter(|a| a.is_object())
        .ok_or(LoadgenError::Missing {
            tool: Tool::GenaiBench.name(),
            missing: "`aggregated_metrics`".into(),
        })?;
    let scenario = text_at(agg, &["scenario"]);
    let conc = num(agg.get("num_concurrency"));
    let name = match (&scenario, conc) {
        (Some(s), Some(c)) => format!("{s} c{c}"),
        (Some(s), None) => s.clone(),
        _ => stem.to_string(),
    };
    let mut run = Run::new(Tool::GenaiBench, name);
    run.setup.strategy = text_at(agg, &["iteration_type"]);
    let get = |k: &str| num(agg.get(k));
    run.state(
        "aggregated_metrics.num_concurrency",
        "requests",
        conc,
        Some("max_concurrency"),
    );
    run.state(
        "aggregated_metrics.run_duration",
        "s",
        get("run_duration").filter(|d| *d > 0.0),
        Some("duration"),
    );
    run.state(
        "aggregated_metrics.num_requests",
        "requests",
        get("num_requests"),
        Some("num_prompts"),
    );
    run.state(
        "aggregated_metrics.num_completed_requests",
        "requests",
        get("num_completed_requests"),
        Some("completed"),
    );
    run.state(
        "aggregated_metrics.num_error_requests",
        "requests",
        get("num_error_requests"),
        Some("failed"),
    );
    run.state(
        "aggregated_metrics.requests_per_second",
        "requests/sec",
        get("requests_per_second"),
        Some("request_throughput"),
    );
    run.state(
        "aggregated_metrics.requests_per_minute",
        "requests/min",
        get("requests_per_minute"),
        Some("request_throughput"),
    );
    run.state(
        "aggregated_metrics.mean_output_throughput_tokens_per_s",
        "tokens/sec",
        get("mean_output_throughput_tokens_per_s"),
        Some("output_throughput"),
    );
    run.state(
        "aggregated_metrics.mean_total_tokens_throughput_tokens_per_s",
        "tokens/sec",
        get("mean_total_tokens_throughput_tokens_per_s"),
        Some("total_token_throughput"),
    );
    run.state(
        "aggregated_metrics.error_rate",
        "share",
        get("error_rate"),
        None,
    );
    for (metric, figures) in [
        (
            "ttft",
            [
                "mean_ttft_ms",
                "median_ttft_ms",
                "p90_ttft_ms",
                "p99_ttft_ms",
            ],
        ),
        (
            "tpot",
            [
                "mean_tpot_ms",
                "median_tpot_ms",
                "p90_tpot_ms",
                "p99_tpot_ms",
            ],
        ),
        (
            "e2e_latency",
            [
                "mean_e2el_ms",
                "median_e2el_ms",
                "p90_e2el_ms",
                "p99_e2el_ms",
            ],
        ),
    ] {
        for (stat, figure) in ["mean", "p50", "p90", "p99"].into_iter().zip(figures) {
            let value = num_at(agg, &["stats", metric, stat]);
            run.state(
                &format!("aggregated_metrics.stats.{metric}.{stat}"),
                "s",
                value,
                Some(figure),
            );
        }
    }
    run.state(
        "aggregated_metrics.stats.num_input_tokens.mean",
        "tokens",
        num_at(agg, &["stats", "num_input_tokens", "mean"]),
        Some("mean_input_tokens"),
    );
    run.state(
        "aggregated_metrics.stats.num_output_tokens.mean",
        "tokens",
        num_at(agg, &["stats", "num_output_tokens", "mean"]),
        Some("mean_output_tokens"),
    );
    if let Some(list) = v
        .get("individual_request_metrics")
        .and_then(Value::as_array)
    {
        for (i, r) in list.iter().enumerate() {
            let error = present(r.get("error_code"))
                || r.get("error_message")
                    .and_then(Value::as_str)
                    .is_some_and(|m| !m.is_empty());
            let ok = |k: &str| num(r.get(k)).filter(|_| !error);
            run.requests.push(Request {
                index: i as u64,
                input_len: count(r.get("num_input_tokens")),
                output_len: count(r.get("num_output_tokens")).filter(|_| !error),
                ttft_s: ok("ttft"),
                tpot_s: ok("tpot"),
                itl_mean_s: None,
                e2e_s: ok("e2e_latency"),
                error,
                ..Request::default()
            });
        }
    }
    Ok(run)
}
