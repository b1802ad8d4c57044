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
        return Some(Layout::AiPerfServerMetricsSummary);
    }
    if first.starts_with(b"Metric,avg,min,max,") {
        return Some(Layout::AiPerfCsv);
    }
    if first.starts_with(b"Statistic,avg,min,max,") {
        return Some(Layout::GenAiPerfCsv);
    }
    let guidellm = first.starts_with(b"Type,Run Id,Id,Name,Start Time")
        || first.starts_with(b"Run Info,Run Info,");
    guidellm.then_some(Layout::GuideLlmCsv)
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
