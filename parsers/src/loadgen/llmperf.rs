//! ray-project LLMPerf's files (docs/formats.md §4.8), written by `token_benchmark_ray.py`:
//! `{model}_{in}_{out}_summary.json`, a flat object (`flatten_dict` joins keys with `_`:
//! `results_ttft_s_quantiles_p50`, `results_ttft_s_mean`, `results_num_completed_requests`,
//! `results_number_errors`, `results_mean_output_throughput_token_per_s`, …, beside
//! `version` `"2023-08-31"`, `name`, `model`, `num_concurrent_requests`, `timestamp`), and
//! `…_individual_responses.json`, a list of `{error_code, error_msg, ttft_s,
//! end_to_end_latency_s, inter_token_latency_s, number_input_tokens, number_output_tokens,
//! …}`. A request failed when its `error_code` is set.

use super::tree::{count, num, present, text_at};
use super::{LoadgenError, Request, Run, Tool};
use serde_json::Value;

/// Reads a summary.
pub fn summary(v: &Value) -> Result<Run, LoadgenError> {
    let get = |k: &str| num(v.get(k));
    if v.get("results_num_requests_started").is_none() && v.get("results_ttft_s_mean").is_none() {
        return Err(LoadgenError::Missing {
            tool: Tool::LlmPerf.name(),
            missing: "`results_*` keys".into(),
        });
    }
    let name = text_at(v, &["name"]).unwrap_or_default();
    let mut run = Run::new(
        Tool::LlmPerf,
        name.strip_suffix("_summary").unwrap_or(&name),
    );
    run.setup.version = text_at(v, &["version"]).map(|v| format!("results {v}"));
    run.setup.model = text_at(v, &["model"]);
    let mut state = |key: &str, unit: &str, figure: Option<&str>| {
        run.state(key, unit, get(key), figure);
    };
    state(
        "num_concurrent_requests",
        "requests",
        Some("max_concurrency"),
    );
    state(
        "results_num_requests_started",
        "requests",
        Some("num_prompts"),
    );
    state(
        "results_num_completed_requests",
        "requests",
        Some("completed"),
    );
    state("results_number_errors", "requests", Some("failed"));
    state(
        "results_mean_output_throughput_token_per_s",
        "tokens/sec",
        Some("output_throughput"),
    );
    state(
        "results_num_completed_requests_per_min",
        "requests/min",
        Some("request_throughput"),
    );
    for (metric, figures) in [
        (
            "ttft_s",
            [
                "mean_ttft_ms",
                "median_ttft_ms",
                "p90_ttft_ms",
                "p99_ttft_ms",
            ],
        ),
        (
            "end_to_end_latency_s",
            [
                "mean_e2el_ms",
                "median_e2el_ms",
                "p90_e2el_ms",
                "p99_e2el_ms",
            ],
        ),
    ] {
        for (stat, figure) in ["mean", "quantiles_p50", "quantiles_p90", "quantiles_p99"]
            .into_iter()
            .zip(figures)
        {
            state(&format!("results_{metric}_{stat}"), "s", Some(figure));
        }
    }
    for stat in ["mean", "quantiles_p50", "quantiles_p90", "quantiles_p99"] {
        state(&format!("results_inter_token_latency_s_{stat}"), "s", None);
        state(
            &format!("results_request_output_throughput_token_per_s_{stat}"),
            "tokens/sec",
            None,
        );
    }
    state(
        "results_number_input_tokens_mean",
        "tokens",
        Some("mean_input_tokens"),
    );
    state(
        "results_number_output_tokens_mean",
        "tokens",
        Some("mean_output_tokens"),
    );
    state("results_error_rate", "share", None);
    // the test's wall time, from the completed count and its rate per minute
    let wall = match (
        get("results_num_completed_requests"),
        get("results_num_completed_requests_per_min"),
    ) {
        (Some(n), Some(r)) if r > 0.0 => Some(n / r * 60.0),
        _ => None,
    };
    run.state(
        "results_num_completed_requests ÷ results_num_completed_requests_per_min",
        "min",
        wall.map(|s| s / 60.0),
        Some("duration"),
    );
    Ok(run)
}

/// Reads the individual responses into one run named after the file (`stem`).
pub fn responses(v: &Value, stem: &str) -> Result<Run, LoadgenError> {
    let list = v.as_array().ok_or(LoadgenError::Missing {
        tool: Tool::LlmPerf.name(),
        missing: "a list of responses".into(),
    })?;
    let name = stem.strip_suffix("_individual_responses").unwrap_or(stem);
    let mut run = Run::new(Tool::LlmPerf, name);
    for (i, r) in list.iter().enumerate() {
        let error = present(r.get("error_code"))
            || r.get("error_msg")
                .and_then(Value::as_str)
                .is_some_and(|m| !m.is_empty());
        let ok = |x: Option<f64>| x.filter(|_| !error);
        let ttft = ok(num(r.get("ttft_s")));
        let e2e = ok(num(r.get("end_to_end_latency_s")));
        let out = count(r.get("number_output_tokens"));
        let tpot = Request::tpot_of(e2e, ttft, out);
        run.requests.push(Request {
            index: i as u64,
            input_len: count(r.get("number_input_tokens")),
            output_len: out.filter(|_| !error),
            ttft_s: ttft,
            tpot_s: tpot,
            itl_mean_s: None,
            e2e_s: e2e,
            error,
            ..Request::default()
        });
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::value::parse;

    /// The issue's case: responses with an `error_code` are failed requests (read as
    /// completions before, "Failures: 0.0%").
    #[test]
    fn a_response_with_an_error_code_failed() {
        let doc = br#"[{"error_code": 429, "error_msg": "Too Many Requests", "inter_token_latency_s": 0, "ttft_s": 0, "end_to_end_latency_s": 0, "request_output_throughput_token_per_s": 0, "number_total_tokens": 101, "number_output_tokens": 1, "number_input_tokens": 100},
            {"error_code": null, "error_msg": "", "inter_token_latency_s": 0.0095, "ttft_s": 0.3, "end_to_end_latency_s": 0.6, "request_output_throughput_token_per_s": 50.0, "number_total_tokens": 131, "number_output_tokens": 31, "number_input_tokens": 100}]"#;
        let run = responses(&parse(doc).unwrap(), "m_100_32_individual_responses").unwrap();
        assert_eq!(run.name, "m_100_32");
        let failed: Vec<bool> = run.requests.iter().map(|r| r.error).collect();
        assert_eq!(failed, [true, false]);
        assert_eq!(run.requests[0].ttft_s, None);
        assert!((run.requests[1].tpot_s.unwrap() - 0.01).abs() < 1e-12);
    }
}
