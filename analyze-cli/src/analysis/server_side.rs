//! The server's side of a benchmark run beside the client's: each figure a load generator's
//! server summary holds (inference-perf's Prometheus report, AIPerf's server-metrics export)
//! next to the client's figure of the same name, and for latencies the client's path
//! (client − server: the network, the HTTP server and the client's own loop).
//!
//! The two sides count over windows the tools chose (inference-perf's stage, AIPerf's
//! profiling window) and the server's quantiles are estimates from histogram buckets: a
//! difference of quantiles is not a quantile of differences, and it is said so. Where the
//! two sides disagree on how many requests finished, the server's figures are not this
//! run's alone, and the report says so instead of subtracting.

use serde::Serialize;
use tokstat_parsers::loadgen::server::{ServerSource, ServerView, SERVER_FIGURES};
use tokstat_parsers::loadgen::Run;

/// How far the two sides' finished-request counts may differ before the server's figures
/// are taken for more than this run: a window's edges (a request finishing just after the
/// stage ends) move a count by a few requests, another client's traffic by more.
const COUNT_TOLERANCE: f64 = 0.05;

/// How far the two windows may differ before rates are said not to compare.
const WINDOW_TOLERANCE: f64 = 0.10;

/// One figure on both sides.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SideBySide {
    /// tokstat's name (one of the server figures).
    pub figure: String,
    pub unit: &'static str,
    /// The server tool's key it was read from.
    pub key: String,
    /// None: not measured (the tool's 0 or NaN that stands for no result).
    pub server: Option<f64>,
    /// The server's 0 is also what the tool writes for no result: "0, or not measured".
    pub server_zero_unsure: bool,
    pub client: Option<f64>,
    /// The server's value is a quantile estimated from histogram buckets (linear within a
    /// bucket: as far off as the bucket is wide).
    pub server_estimated: bool,
    /// client − server, for TTFT's and end-to-end latency's means (where the client's clock
    /// includes the server's, and a mean is exact on both sides): the client's path. Never
    /// for quantiles: the server's are bucket estimates, and a difference of quantiles is
    /// no quantile of the differences.
    pub client_path: Option<f64>,
}

/// The server's side of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSide {
    /// Who summarised it, in words.
    pub source: &'static str,
    pub file: String,
    /// Series summed into a figure (engines, endpoints).
    pub series: usize,
    pub figures: Vec<SideBySide>,
    /// Whether a client run was read beside it.
    pub has_client: bool,
    /// Why the sides cannot be compared figure by figure (None: they can).
    pub disagreement: Option<String>,
    /// What else to keep in mind reading them (windows of different lengths, a writer's
    /// query that reads one engine of several).
    pub notes: Vec<String>,
}

/// The server's side of `run`, beside the client's figures `client` gives by the server
/// figures' names (None: the run holds no server summary).
pub fn analyze(
    run: &Run,
    client: &dyn Fn(&str) -> Option<f64>,
    failed: Option<f64>,
) -> Option<ServerSide> {
    let view: &ServerView = run.server.as_ref()?;
    let has_client = !run.stated.is_empty() || !run.requests.is_empty() || !run.scalars.is_empty();
    let mut figures = Vec::new();
    for (name, unit) in SERVER_FIGURES {
        let Some(f) = view.figures.iter().find(|f| f.name == *name) else {
            continue;
        };
        let client = has_client.then(|| client(name)).flatten();
        let path = matches!(*name, "mean_ttft_ms" | "mean_e2el_ms");
        let estimated = name.ends_with("_ms")
            && ["median_", "p90_", "p99_"]
                .iter()
                .any(|q| name.starts_with(q));
        figures.push(SideBySide {
            figure: name.to_string(),
            unit,
            key: f.key.clone(),
            server: f.value,
            server_zero_unsure: f.zero_unsure,
            server_estimated: estimated,
            client,
            client_path: None,
        });
        if path {
            let last = figures.last_mut().expect("pushed");
            last.client_path = match (last.client, last.server) {
                (Some(c), Some(s)) => Some(c - s),
                _ => None,
            };
        }
    }
    let value = |name: &str| figures.iter().find(|f| f.figure == name);
    let windows = value("window").and_then(|w| match (w.server, w.client) {
        (Some(s), Some(c)) if s > 0.0 && c > 0.0 => Some((s, c)),
        _ => None,
    });
    let mut notes = Vec::new();
    let disagreement = value("completed").and_then(|f| {
        let (s, c) = (f.server?, f.client?);
        if c <= 0.0 {
            return None;
        }
        // what the windows allow: a wider one counts requests before and after the run's
        // (and the failed, which a server may count as finished), a narrower one fewer
        let (wider, narrower) = windows.map_or((1.0, 1.0), |(ws, wc)| {
            ((ws / wc).max(1.0), (ws / wc).min(1.0))
        });
        let failed = failed.unwrap_or(0.0);
        let high = (c + failed) * wider * (1.0 + COUNT_TOLERANCE);
        let low = c * narrower * (1.0 - COUNT_TOLERANCE);
        if s > high || s < low {
            Some(format!(
                "the server finished {} requests over its window, the client {}{}: more than the two windows allow, so the server's figures are not this run's alone (other clients' traffic, or another run's file) and client − server is not shown",
                trim(s),
                trim(c),
                windows.map_or(String::new(), |(ws, wc)| format!(
                    " ({ws:.1} s against {wc:.1} s)"
                )),
            ))
        } else {
            if s > (c + failed) * (1.0 + COUNT_TOLERANCE) {
                notes.push(format!(
                    "the server's window is wider than the client's: its {} finished requests include some outside the run's {}; totals and rates differ for that, per-request latencies compare",
                    trim(s),
                    trim(c)
                ));
            }
            None
        }
    });
    if let Some(w) = figures.iter().find(|f| f.figure == "window") {
        if let (Some(c), Some(s)) = (w.client, w.server) {
            if c > 0.0 && ((s - c) / c).abs() > WINDOW_TOLERANCE {
                notes.push(format!(
                    "the server's rates are over {s:.2} s ({}), the client's over {c:.2} s: totals compare, rates do not",
                    w.key
                ));
            }
        }
    }
    let gauges = [
        "mean_running",
        "mean_waiting",
        "mean_kv_usage",
        "p99_kv_usage",
    ];
    if view.source == ServerSource::InferencePerfPromql
        && figures
            .iter()
            .any(|f| gauges.contains(&f.figure.as_str()) && f.server.is_some())
    {
        notes.push("inference-perf's gauges (running, waiting, KV usage) are of the first series its query returned: one engine's where several are scraped".to_string());
    }
    Some(ServerSide {
        source: view.source.describe(),
        file: view.file.clone(),
        series: view.series,
        figures,
        has_client,
        disagreement,
        notes,
    })
}

fn trim(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.1}")
    }
}
