//! AIPerf's and GenAI-Perf's files (docs/formats.md §4.5).
//!
//! - The summary, `profile_export_aiperf.json` (AIPerf) or `profile_export_genai_perf.json`
//!   (GenAI-Perf, whose layout AIPerf copies): one object per metric, `{"unit": "ms",
//!   "avg": …, "p50": …, "p99": …, "min": …, "max": …, "std": …}`, beside `input_config`
//!   (the settings). AIPerf ≥ 0.3 stamps `aiperf_version` and `schema_version` and keeps
//!   its settings as `models.items[]`, `endpoint` and `phases[]`; AIPerf 0.1–0.2 as
//!   `endpoint.model_names` and `loadgen`; GenAI-Perf as `model_names` (or `model`),
//!   `endpoint`, `perf_analyzer.stimulus` (or top-level `concurrency` / `request_rate`).
//! - AIPerf's per-request records, `profile_export.jsonl`: `metadata` (times in ns since
//!   the epoch, `was_cancelled`, `benchmark_phase`), `metrics` (`{name: {value, unit}}`;
//!   none but `error_isl` for a failed request) and `error` (`{code, type, message}` or
//!   null).

use super::tree::{at, bool_at, count, num, num_at, present, text_at};
use super::{LoadgenError, Request, Run, Tool};
use serde_json::Value;

/// The summary's metrics put under tokstat's figures, by the tool's name and statistic.
const SUMMARY: &[(&str, &str, &str)] = &[
    ("request_throughput", "avg", "request_throughput"),
    ("request_count", "avg", "completed"),
    ("error_request_count", "avg", "failed"),
    ("benchmark_duration", "avg", "duration"),
    ("output_token_throughput", "avg", "output_throughput"),
    ("total_token_throughput", "avg", "total_token_throughput"),
    ("total_output_tokens", "avg", "total_output_tokens"),
    ("total_isl", "avg", "total_input_tokens"),
    ("goodput", "avg", "request_goodput"),
    ("request_goodput", "avg", "request_goodput"),
    ("time_to_first_token", "avg", "mean_ttft_ms"),
    ("time_to_first_token", "p50", "median_ttft_ms"),
    ("time_to_first_token", "p90", "p90_ttft_ms"),
    ("time_to_first_token", "p99", "p99_ttft_ms"),
    ("inter_token_latency", "avg", "mean_tpot_ms"),
    ("inter_token_latency", "p50", "median_tpot_ms"),
    ("inter_token_latency", "p90", "p90_tpot_ms"),
    ("inter_token_latency", "p99", "p99_tpot_ms"),
    ("inter_chunk_latency", "avg", "mean_itl_ms"),
    ("inter_chunk_latency", "p50", "median_itl_ms"),
    ("inter_chunk_latency", "p90", "p90_itl_ms"),
    ("inter_chunk_latency", "p99", "p99_itl_ms"),
    ("request_latency", "avg", "mean_e2el_ms"),
    ("request_latency", "p50", "median_e2el_ms"),
    ("request_latency", "p90", "p90_e2el_ms"),
    ("request_latency", "p99", "p99_e2el_ms"),
    ("input_sequence_length", "avg", "mean_input_tokens"),
    ("output_sequence_length", "avg", "mean_output_tokens"),
];

/// AIPerf 0.1's tags of metrics named otherwise since: (then, now).
const OLD_TAGS: [(&str, &str); 1] = [("ttft", "time_to_first_token")];

/// The statistics a metric object may hold, in the order they are recorded (`ci_low` and
/// `ci_high`: an aggregate's confidence interval of the mean over its trials).
const STATS: [&str; 16] = [
    "avg", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "min", "max", "std",
    "value", "ci_low", "ci_high",
];

/// AIPerf's sweep aggregate (0.10+, `sweep_aggregate/profile_export_aiperf_sweep.json`,
/// `orchestrator/aggregation/sweep.py`): `{"aggregation_type": "sweep", "metadata":
/// {"sweep_parameters": [{"name": "concurrency", "values": [2, 4]}], "confidence_level":
/// 0.95, …}, "per_combination_metrics": [{"parameters": {"concurrency": 2}, "metrics":
/// {"request_throughput": {"mean": …, "avg": …, "std": …, "ci_low": …, "ci_high": …,
/// "unit": "requests/sec", "p50": …}, …}}], "best_configurations": …}`. Each combination is
/// a run, its metrics read as a summary's, its confidence intervals kept as stated.
pub fn sweep(v: &Value) -> Result<Vec<Run>, LoadgenError> {
    let missing = |what: &str| LoadgenError::Missing {
        tool: Tool::AiPerf.name(),
        missing: what.into(),
    };
    let combos = v
        .get("per_combination_metrics")
        .and_then(Value::as_array)
        .ok_or_else(|| missing("`per_combination_metrics`"))?;
    let mut runs = Vec::new();
    for c in combos {
        let metrics = c.get("metrics").unwrap_or(&Value::Null);
        let mut run = summary_of(metrics, Tool::AiPerf)?;
        let params: Vec<(String, &Value)> = c
            .get("parameters")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v)).collect())
            .unwrap_or_default();
        let shown = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
        run.name = params
            .iter()
            .map(|(k, v)| format!("{}={}", k.rsplit('.').next().unwrap_or(k), shown(v)))
            .collect::<Vec<_>>()
            .join(",");
        for (k, v) in &params {
            let (unit, figure) = match k.rsplit('.').next().unwrap_or(k) {
                "concurrency" => ("requests", "max_concurrency"),
                "request_rate" | "rate" => ("requests/sec", "request_rate"),
                _ => continue,
            };
            run.state(&format!("parameters.{k}"), unit, num(Some(v)), Some(figure));
        }
        run.setup.strategy = Some("sweep".to_string());
        runs.push(run);
    }
    if runs.is_empty() {
        return Err(missing("any combination in `per_combination_metrics`"));
    }
    Ok(runs)
}

/// Reads a summary (AIPerf or GenAI-Perf, told apart by their settings).
pub fn summary(v: &Value) -> Result<Run, LoadgenError> {
    let cfg = v.get("input_config").unwrap_or(&Value::Null);
    let aiperf = present(v.get("aiperf_version"))
        || present(cfg.get("loadgen"))
        || present(cfg.get("phases"))
        || present(cfg.get("models"))
        || text_at(cfg, &["cli_command"]).is_some_and(|c| c.starts_with("aiperf"));
    summary_of(
        v,
        if aiperf {
            Tool::AiPerf
        } else {
            Tool::GenAiPerf
        },
    )
}

/// Reads a summary written by `tool`.
pub fn summary_of(v: &Value, tool: Tool) -> Result<Run, LoadgenError> {
    let cfg = v.get("input_config").unwrap_or(&Value::Null);
    let Some(top) = v.as_object() else {
        return Err(LoadgenError::Missing {
            tool: tool.name(),
            missing: "an object at the top".into(),
        });
    };
    // AIPerf 0.1 keeps its metrics under `records` (`{"records": {"ttft": {"tag": "ttft",
    // "unit": "ms", "header": "Time to First Token", "avg": …}}}`, `json_exporter.py`)
    let obj = top
        .get("records")
        .and_then(Value::as_object)
        .filter(|r| r.values().any(|m| m.get("unit").is_some()))
        .unwrap_or(top);
    let mut run = Run::new(tool, "");
    run.setup.version = text_at(v, &["aiperf_version"])
        .or_else(|| text_at(v, &["genai_perf_version"]))
        .or_else(|| text_at(cfg, &["genai_perf_version"]));
    // the settings: AIPerf ≥ 0.3, AIPerf 0.1–0.2, GenAI-Perf ≥ 0.0.11, GenAI-Perf before
    run.setup.model = first_text(cfg, &["models", "items"], "name")
        .or_else(|| first_text(cfg, &["endpoint", "model_names"], ""))
        .or_else(|| first_text(cfg, &["model_names"], ""))
        .or_else(|| first_text(cfg, &["model"], ""))
        .or_else(|| text_at(cfg, &["model"]));
    let url = first_text(cfg, &["endpoint", "urls"], "")
        .or_else(|| text_at(cfg, &["endpoint", "url"]))
        .or_else(|| text_at(cfg, &["url"]));
    let kind = text_at(cfg, &["endpoint", "type"]).or_else(|| text_at(cfg, &["endpoint_type"]));
    run.setup.endpoint = match (url, kind) {
        (Some(u), Some(k)) => Some(format!("{u} ({k})")),
        (u, k) => u.or(k),
    };
    run.setup.streaming =
        bool_at(cfg, &["endpoint", "streaming"]).or_else(|| bool_at(cfg, &["streaming"]));
    let phase = cfg.get("phases").and_then(Value::as_array).and_then(|ps| {
        ps.iter()
            .find(|p| text_at(p, &["kind"]).as_deref() == Some("profiling"))
            .or(ps.first())
    });
    let load = |k: &[&str]| -> Option<f64> {
        phase
            .and_then(|p| num_at(p, k))
            .or_else(|| num_at(cfg, &[&["loadgen"], k].concat()))
            .or_else(|| num_at(cfg, &[&["perf_analyzer", "stimulus"], k].concat()))
            .or_else(|| num_at(cfg, k))
    };
    run.state(
        "input_config.concurrency",
        "requests",
        load(&["concurrency"]),
        Some("max_concurrency"),
    );
    run.state(
        "input_config.request_rate",
        "requests/sec",
        load(&["request_rate"]).or_else(|| load(&["rate"])),
        Some("request_rate"),
    );
    run.state(
        "input_config.request_count",
        "requests",
        load(&["request_count"]).or_else(|| load(&["requests"])),
        Some("num_prompts"),
    );
    run.setup.strategy = phase
        .and_then(|p| text_at(p, &["type"]))
        .or_else(|| text_at(cfg, &["loadgen", "request_rate_mode"]));
    for &(metric, stat, figure) in SUMMARY {
        // (AIPerf 0.1's tags: `ttft` for time_to_first_token)
        let found = obj.get(metric).map(|m| (metric, m)).or_else(|| {
            OLD_TAGS
                .iter()
                .find(|(_, new)| *new == metric)
                .and_then(|(old, _)| Some((*old, obj.get(*old)?)))
        });
        if let Some((metric, m)) = found {
            let unit = text_at(m, &["unit"]).unwrap_or_default();
            run.state(
                &format!("{metric}.{stat}"),
                &unit,
                num(m.get(stat)),
                Some(figure),
            );
        }
    }
    // every other statistic of every metric, as the tool wrote it
    for (metric, m) in obj {
        let Some(mo) = m.as_object() else { continue };
        let Some(unit) = mo.get("unit").and_then(Value::as_str) else {
            continue;
        };
        for stat in STATS {
            let key = format!("{metric}.{stat}");
            if run.stated.iter().any(|s| s.key == key) {
                continue;
            }
            run.state(&key, unit, num(mo.get(stat)), None);
        }
    }
    if run
        .stated
        .iter()
        .all(|s| !s.key.contains('.') || s.key.starts_with("input_config"))
    {
        return Err(LoadgenError::Missing {
            tool: tool.name(),
            missing: "any metric (`request_count`, `request_latency`, … with a `unit`)".into(),
        });
    }
    if bool_at(v, &["was_cancelled"]) == Some(true) {
        run.name = "cancelled".into();
    }
    Ok(run)
}

/// The first element of a list at `path` (its field `field`, or itself when empty).
fn first_text(v: &Value, path: &[&str], field: &str) -> Option<String> {
    let first = at(v, path)?.as_array()?.first()?;
    if field.is_empty() {
        first.as_str().map(str::to_string)
    } else {
        text_at(first, &[field])
    }
}

/// What one line of `profile_export.jsonl` is.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// A request of the profiling phase.
    Request(Request),
    /// A request of another phase (warm-up): recognised, not counted.
    OtherPhase,
}

/// A metric's value in seconds.
fn secs(metrics: &Value, name: &str) -> Option<f64> {
    let m = metrics.get(name)?;
    let unit = text_at(m, &["unit"])?;
    let u = super::Unit::parse(&unit).ok()?;
    match m.get("value")? {
        Value::Array(gaps) => {
            let v: Vec<f64> = gaps.iter().filter_map(|g| num(Some(g))).collect();
            let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)?;
            u.convert(mean, "s").ok()
        }
        x => u.convert(num(Some(x))?, "s").ok(),
    }
}

/// Reads one per-request record (`index`: its place among the file's records).
pub fn record(v: &Value, index: u64) -> Result<Record, LoadgenError> {
    let meta = v
        .get("metadata")
        .filter(|m| m.is_object())
        .ok_or(LoadgenError::Missing {
            tool: Tool::AiPerf.name(),
            missing: "`metadata`".into(),
        })?;
    let phase = text_at(meta, &["benchmark_phase"]).or_else(|| text_at(meta, &["phase_kind"]));
    if phase.as_deref().is_some_and(|p| p != "profiling") {
        return Ok(Record::OtherPhase);
    }
    let metrics = v.get("metrics").unwrap_or(&Value::Null);
    let cancelled = bool_at(meta, &["was_cancelled"]) == Some(true);
    let error = present(v.get("error")) || cancelled;
    let ns = |k: &str| num_at(meta, &[k]).map(|t| t / 1e9);
    let value = |k: &str| count(metrics.get(k).and_then(|m| m.get("value")));
    let ok = |x: Option<f64>| x.filter(|_| !error);
    Ok(Record::Request(Request {
        index,
        input_len: value("input_sequence_length").or_else(|| value("error_isl")),
        output_len: value("output_sequence_length").or_else(|| value("output_token_count")),
        ttft_s: ok(secs(metrics, "time_to_first_token")),
        tpot_s: ok(secs(metrics, "inter_token_latency")),
        itl_mean_s: ok(secs(metrics, "inter_chunk_latency")),
        e2e_s: ok(secs(metrics, "request_latency")),
        error,
        cancelled,
        start_s: ns("request_start_ns"),
        end_s: ns("request_end_ns"),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::value::parse;

    #[test]
    fn a_cancelled_record_is_an_error_with_its_input_length() {
        let line = br#"{"metadata": {"session_num": 4, "request_start_ns": 1796319122174411634, "request_end_ns": 1796319122285193258, "benchmark_phase": "profiling", "was_cancelled": true, "cancellation_time_ns": 1796319122285193258}, "metrics": {"error_isl": {"value": 98, "unit": "tokens"}}, "error": {"code": 499, "type": "RequestCancellationError", "message": "Request cancelled 0.100s after being sent"}}"#;
        let Record::Request(r) = record(&parse(line).unwrap(), 3).unwrap() else {
            panic!("a request")
        };
        assert!(r.error && r.cancelled);
        assert_eq!(
            (r.index, r.input_len, r.output_len, r.ttft_s),
            (3, Some(98), None, None)
        );
        assert!((r.end_s.unwrap() - r.start_s.unwrap() - 0.110781624).abs() < 1e-6);
        let warm = br#"{"metadata": {"benchmark_phase": "warmup", "request_start_ns": 1}, "metrics": {}, "error": null}"#;
        assert_eq!(
            record(&parse(warm).unwrap(), 0).unwrap(),
            Record::OtherPhase
        );
    }

    #[test]
    fn a_summary_without_metrics_is_refused() {
        let doc =
            br#"{"input_config": {"endpoint": {"model_names": ["m"]}}, "was_cancelled": false}"#;
        assert!(summary(&parse(doc).unwrap()).is_err());
    }
}
