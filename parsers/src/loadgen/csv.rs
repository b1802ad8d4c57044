//! Load generators' CSV summaries (docs/formats.md §4.5, §4.6).
//!
//! - AIPerf's `profile_export_aiperf.csv` (`aiperf/exporters/csv_exporter.py`): a table
//!   `Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std` of rows `Time to First Token
//!   (ms),47.86,…`, a blank line, a table `Metric,Value` of single figures (`Request Count,36.00`),
//!   and GPU telemetry after. Figures are rounded to two decimals: the JSON beside it holds
//!   them whole, and a folder holding both reads the JSON only ([`super::join`]).
//! - GenAI-Perf's `profile_export_genai_perf.csv`: the same with `Statistic,avg,min,max,p99,…`.
//! - GuideLLM's `benchmarks.csv`: recognised, not read (three header rows of nested column
//!   groups; GuideLLM writes the same figures to its JSON or YAML).
//!
//! A metric's name and unit come from its label (`Time to First Token (ms)` →
//! `time_to_first_token`, `ms`), and the rows become the tree of the JSON summary, read by
//! [`super::aiperf::summary_of`].

use super::{Layout, LoadgenError, Run, Tool};
use serde_json::{Map, Value};

/// The layout of a CSV result file from its first line.
pub fn sniff(head: &[u8]) -> Option<Layout> {
    let text = crate::text::without_bom(head);
    let text = &text[..text.len().min(4096)];
    let first = text.split(|&c| c == b'\n').next()?.trim_ascii();
    // `aiperf/server_metrics/csv_exporter.py`'s banner
    if first.starts_with(b"# AIPerf Server Metrics Export") {
        return Some(Layout::AiPerfServerMetricsCsv);
    }
    if first.starts_with(b"Metric,avg,min,max,") {
        return Some(Layout::AiPerfCsv);
    }
    if first.starts_with(b"Statistic,avg,min,max,") {
        return Some(Layout::GenAiPerfCsv);
    }
    if first.starts_with(b"Run Info,Run Info,") {
        return Some(Layout::GuideLlmCsv);
    }
    first
        .starts_with(b"Type,Run Id,Id,Name,Start Time")
        .then_some(Layout::GuideLlmCsvOld)
}

/// A CSV result file's runs.
pub fn read(layout: Layout, text: &[u8]) -> Result<Vec<Run>, LoadgenError> {
    match layout {
        Layout::GuideLlmCsv => guidellm(text),
        _ => summary(layout, text).map(|r| vec![r]),
    }
}

/// GuideLLM 0.5+'s CSV columns read, by their group and name (the `Successful` status; the
/// others are GuideLLM's own), under the names of its JSON's `metrics`.
const GUIDELLM_METRICS: [(&str, &str, &str); 10] = [
    (
        "Time to First Token",
        "Successful ms",
        "time_to_first_token_ms",
    ),
    (
        "Inter Token Latency",
        "Successful ms",
        "inter_token_latency_ms",
    ),
    (
        "Time per Output Token",
        "Successful ms",
        "time_per_output_token_ms",
    ),
    ("Request Latency", "Successful Sec", "request_latency"),
    (
        "Server Throughput",
        "Successful Requests/Sec",
        "requests_per_second",
    ),
    (
        "Server Throughput",
        "Successful Concurrency",
        "request_concurrency",
    ),
    (
        "Token Throughput",
        "Successful Output Tokens/Sec",
        "output_tokens_per_second",
    ),
    (
        "Token Throughput",
        "Successful Total Tokens/Sec",
        "tokens_per_second",
    ),
    (
        "Token Metrics",
        "Successful Input Tokens",
        "prompt_token_count",
    ),
    (
        "Token Metrics",
        "Successful Output Tokens",
        "output_token_count",
    ),
];

/// The `Percentiles` cell's places (`benchmark/outputs/csv.py`, 0.8.1:
/// `f"[{dist.min}, {dist.percentiles.p001}, {dist.percentiles.p01}, … {dist.percentiles.p25},
/// {dist.percentiles.p75}, … {dist.percentiles.p99}, {dist.max}]"`: no p50, the median is
/// its own column).
const GUIDELLM_PLACES: [&str; 11] = [
    "min", "p001", "p01", "p05", "p10", "p25", "p75", "p90", "p95", "p99", "max",
];

/// GuideLLM 0.5+'s CSV (`benchmark/outputs/csv.py`): three header rows (group, name, stat:
/// `Time to First Token`, `Successful ms`, `Mean` / `Median` / `Std Dev` / `Percentiles`),
/// then a row per benchmark. Each row is put back into the tree of GuideLLM's JSON report
/// (`config.spec.backend`, `metadata`, `benchmarks[].config.strategy`, `duration`,
/// `metrics.request_totals`, `metrics.<metric>.successful.{mean, median, percentiles}`) and
/// read as the JSON is: the same figures, by the same keys. The JSON's token totals are not
/// in the CSV: the output rate over the duration is left out, not made up.
pub fn guidellm(text: &[u8]) -> Result<Vec<Run>, LoadgenError> {
    let bad = |what: String| LoadgenError::Missing {
        tool: Tool::GuideLlm.name(),
        missing: what,
    };
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(crate::text::without_bom(text));
    let mut rows: Vec<Vec<String>> = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| bad(format!("well-formed CSV ({e})")))?;
        rows.push(rec.iter().map(|c| c.trim().to_string()).collect());
    }
    if rows.len() < 3 {
        return Err(bad("its three header rows".into()));
    }
    let (groups, names, stats) = (&rows[0], &rows[1], &rows[2]);
    let col = |g: &str, n: &str, st: &str| {
        (0..groups.len()).find(|&i| {
            groups[i] == g
                && names.get(i).map(String::as_str) == Some(n)
                && stats.get(i).map(String::as_str) == Some(st)
        })
    };
    let json = |row: &[String], i: Option<usize>| -> Value {
        i.and_then(|i| row.get(i))
            .and_then(|c| serde_json::from_str(c).ok())
            .unwrap_or(Value::Null)
    };
    let number = |row: &[String], i: Option<usize>| -> Value {
        i.and_then(|i| row.get(i))
            .and_then(|c| crate::num::float(c))
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number)
    };
    let mut benchmarks = Vec::new();
    let mut backend = Value::Null;
    let mut metadata = Value::Null;
    for row in rows
        .iter()
        .skip(3)
        .filter(|r| r.iter().any(|c| !c.is_empty()))
    {
        if backend.is_null() {
            backend = json(row, col("Run Info", "Backend", ""));
        }
        if metadata.is_null() {
            metadata = json(row, col("Runtime Info", "Metadata", ""));
        }
        let strategy = col("Benchmark", "Strategy", "")
            .and_then(|i| row.get(i))
            .cloned()
            .unwrap_or_default();
        let mut st = Map::new();
        let (kind, param) = strategy
            .split_once('@')
            .map_or((strategy.as_str(), None), |(k, p)| {
                (k, crate::num::float(p))
            });
        st.insert("type_".into(), Value::String(kind.to_string()));
        if let Some(n) = param.and_then(serde_json::Number::from_f64) {
            let key = if kind == "concurrent" {
                "streams"
            } else {
                "rate"
            };
            st.insert(key.into(), Value::Number(n));
        }
        let mut metrics = Map::new();
        let mut totals = Map::new();
        for (name, key) in [
            ("Successful", "successful"),
            ("Incomplete", "incomplete"),
            ("Errored", "errored"),
            ("Total", "total"),
        ] {
            totals.insert(key.into(), number(row, col("Request Counts", name, "")));
        }
        metrics.insert("request_totals".into(), Value::Object(totals));
        for (group, name, metric) in GUIDELLM_METRICS {
            let mut d = Map::new();
            d.insert("mean".into(), number(row, col(group, name, "Mean")));
            d.insert("median".into(), number(row, col(group, name, "Median")));
            // (each number read as written: serde_json's own float parsing is not exact)
            let cell = col(group, name, "Percentiles").and_then(|i| row.get(i));
            if let Some(list) = cell.and_then(|c| c.strip_prefix('[')?.strip_suffix(']')) {
                let p: Map<String, Value> = GUIDELLM_PLACES
                    .iter()
                    .zip(list.split(','))
                    .filter_map(|(k, v)| {
                        let n =
                            crate::num::float(v.trim()).and_then(serde_json::Number::from_f64)?;
                        Some((k.to_string(), Value::Number(n)))
                    })
                    .collect();
                d.insert("percentiles".into(), Value::Object(p));
            }
            let mut statuses = Map::new();
            statuses.insert("successful".into(), Value::Object(d));
            metrics.insert(metric.into(), Value::Object(statuses));
        }
        let mut b = Map::new();
        let mut config = Map::new();
        config.insert("strategy".into(), Value::Object(st));
        b.insert("config".into(), Value::Object(config));
        b.insert(
            "duration".into(),
            number(row, col("Timings", "Duration", "Sec")),
        );
        b.insert("metrics".into(), Value::Object(metrics));
        benchmarks.push(Value::Object(b));
    }
    if benchmarks.is_empty() {
        return Err(bad("a benchmark row".into()));
    }
    let report = serde_json::json!({
        "metadata": metadata,
        "config": {"spec": {"backend": backend}},
        "benchmarks": benchmarks,
    });
    super::guidellm::report(&report)
}

/// `Time to First Token (ms)` → (`time_to_first_token`, `ms`).
fn label(l: &str) -> (String, String) {
    let (name, unit) = match (l.rfind('('), l.ends_with(')')) {
        (Some(i), true) => (&l[..i], &l[i + 1..l.len() - 1]),
        _ => (l, ""),
    };
    let key = name
        .trim()
        .to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("_");
    (key, unit.trim().to_string())
}

/// Reads an AIPerf or GenAI-Perf CSV summary.
pub fn summary(layout: Layout, text: &[u8]) -> Result<Run, LoadgenError> {
    let tool = if layout == Layout::GenAiPerfCsv {
        Tool::GenAiPerf
    } else {
        Tool::AiPerf
    };
    let mut tree = Map::new();
    let mut header: Vec<String> = Vec::new();
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(crate::text::without_bom(text));
    for rec in rdr.records() {
        let rec = rec.map_err(|e| LoadgenError::Missing {
            tool: tool.name(),
            missing: format!("well-formed CSV ({e})"),
        })?;
        let cells: Vec<&str> = rec.iter().map(str::trim).collect();
        match cells.first() {
            None | Some(&"") => continue,
            Some(&("Metric" | "Statistic")) => {
                header = cells.iter().map(|c| c.to_string()).collect();
                continue;
            }
            // GPU telemetry (`Endpoint,GPU_Index,…`) and what follows: not a figure of the run
            Some(&"Endpoint") => break,
            _ => {}
        }
        let (key, unit) = label(cells[0]);
        let mut m = Map::new();
        m.insert("unit".into(), Value::String(unit));
        for (h, v) in header.iter().zip(&cells).skip(1) {
            let stat = if h == "Value" { "avg" } else { h.as_str() };
            if let Some(x) = crate::num::float(v).and_then(serde_json::Number::from_f64) {
                m.insert(stat.to_string(), Value::Number(x));
            }
        }
        tree.insert(key, Value::Object(m));
    }
    super::aiperf::summary_of(&Value::Object(tree), tool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_sections() {
        assert_eq!(
            label("Time to First Token (ms)"),
            ("time_to_first_token".into(), "ms".into())
        );
        assert_eq!(
            label("Output Token Throughput Per User (tokens/sec/user)"),
            (
                "output_token_throughput_per_user".into(),
                "tokens/sec/user".into()
            )
        );
        let csv = b"Metric,avg,min,max,p1,p5,p10,p25,p50,p75,p90,p95,p99,std\nTime to First Token (ms),47.86,41.23,86.60,41.34,41.72,41.93,42.12,42.98,44.40,65.94,84.84,86.18,13.14\n\nMetric,Value\nRequest Count,36.00\nError Request Count,4.00\nBenchmark Duration (sec),2.86\n\nEndpoint,GPU_Index,GPU_Name\nx,0,y\n";
        assert_eq!(sniff(csv), Some(Layout::AiPerfCsv));
        let run = summary(Layout::AiPerfCsv, csv).unwrap();
        assert_eq!(run.tool, Tool::AiPerf);
        assert_eq!(run.get(&["median_ttft_ms"]), Some(42.98));
        assert_eq!(run.get(&["completed"]), Some(36.0));
        assert_eq!(run.get(&["failed"]), Some(4.0));
        assert_eq!(run.get(&["duration"]), Some(2.86));
    }
}
