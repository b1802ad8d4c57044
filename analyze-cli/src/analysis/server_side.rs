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
    /// client − server, for TTFT's and end-to-end latency's mean and median (where the
    /// client's clock includes the server's): the client's path.
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
pub fn analyze(run: &Run, client: &dyn Fn(&str) -> Option<f64>) -> Option<ServerSide> {
    let view: &ServerView = run.server.as_ref()?;
    let has_client = !run.stated.is_empty() || !run.requests.is_empty() || !run.scalars.is_empty();
    let mut figures = Vec::new();
    for (name, unit) in SERVER_FIGURES {
        let Some(f) = view.figures.iter().find(|f| f.name == *name) else {
            continue;
        };
        let client = has_client.then(|| client(name)).flatten();
        let path = matches!(
            *name,
            "mean_ttft_ms" | "median_ttft_ms" | "mean_e2el_ms" | "median_e2el_ms"
        );
        figures.push(SideBySide {
            figure: name.to_string(),
            unit,
            key: f.key.clone(),
            server: f.value,
            server_zero_unsure: f.zero_unsure,
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
    let disagreement = figures
        .iter()
        .find(|f| f.figure == "completed")
        .and_then(|f| match (f.client, f.server) {
            (Some(c), Some(s)) if c > 0.0 && ((s - c) / c).abs() > COUNT_TOLERANCE => Some(format!(
                "the server finished {} requests over its window, the client {}: the server's figures are not this run's alone (other clients' traffic, a window wider than the run, or another run's file), so client − server is not shown",
                trim(s),
                trim(c)
            )),
            _ => None,
        });
    if disagreement.is_some() {
        for f in &mut figures {
            f.client_path = None;
        }
    }
    let mut notes = Vec::new();
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
