//! The comparison model: two or more runs (or the segments of one), what differs between them
//! besides the outcome, each key figure with its change, interval and verdict, and a summary
//! in words.
//!
//! [`build`] analyses each run exactly as `report` does ([`crate::report::build`]), side by
//! side, then compares every later run with the first; the statistics are in
//! [`crate::analysis::statistics`]. Renderers show a [`Comparison`] as they show a report.

mod build;
mod figures;
mod provenance;
mod summary;
mod unit;

pub use build::{build, of_reports, Options, RunSpec};
pub mod sweep;

use serde::Serialize;

/// The version of the comparison's JSON shape.
pub const SCHEMA_VERSION: u32 = 1;

/// A comparison of runs.
#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub schema_version: u32,
    pub runs: Vec<RunInfo>,
    pub provenance: Provenance,
    /// One row per figure and compared run (each later run against the first).
    pub figures: Vec<FigureRow>,
    /// The verdict in words, one sentence per compared run.
    pub summary: Vec<String>,
    pub overlays: Overlays,
    /// Three runs or more as one curve across their loads, and its knee.
    pub sweep: Option<sweep::Sweep>,
}

impl Comparison {
    /// The figures' names in their order, once each (a figure has a row per compared run).
    pub fn figure_names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for r in &self.figures {
            if !names.contains(&r.name.as_str()) {
                names.push(&r.name);
            }
        }
        names
    }
}

/// One run as compared.
#[derive(Debug, Clone, Serialize)]
pub struct RunInfo {
    pub label: String,
    /// What it was read from (for segments, the run's inputs).
    pub inputs: Vec<String>,
    pub instances: usize,
    /// Steady buckets the throughput figures come from.
    pub steady_buckets: usize,
    /// The hints of its report, by id.
    pub hints: Vec<&'static str>,
}

/// What differs between the runs besides the outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Provenance {
    /// Per run: engines, models and engine versions seen.
    pub engines: Vec<Vec<String>>,
    pub models: Vec<Vec<String>>,
    pub versions: Vec<Vec<String>>,
    /// Settings whose values differ between runs, with each run's values.
    pub changed: Vec<Setting>,
    /// The one setting that changed, in words (`max_running_requests 16 → 40`), if only one
    /// did.
    pub single_change: Option<String>,
    /// Runs of different engines or models compared with `--force`.
    pub forced: bool,
}

impl Provenance {
    /// Per run, what it says of one property (engines, models, versions): its values joined,
    /// `?` where the logs do not say.
    pub fn shown(values: &[Vec<String>]) -> Vec<String> {
        values
            .iter()
            .map(|x| {
                if x.is_empty() {
                    "?".to_string()
                } else {
                    x.join(", ")
                }
            })
            .collect()
    }
}

impl Setting {
    /// Per run, the setting's values joined with `/`, `–` where the logs do not say.
    pub fn shown(&self) -> Vec<String> {
        self.values
            .iter()
            .map(|x| {
                if x.is_empty() {
                    "–".to_string()
                } else {
                    x.join("/")
                }
            })
            .collect()
    }
}

/// A setting's values in each run (empty where a run's logs do not say).
#[derive(Debug, Clone, Serialize)]
pub struct Setting {
    pub key: String,
    pub values: Vec<Vec<String>>,
}

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BetterWhen {
    Higher,
    Lower,
    /// Neither way is better in itself (load, lengths).
    Neither,
}

/// The verdict on one figure's change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Better,
    Worse,
    /// Up or down, for a figure that is neither better nor worse that way.
    Higher,
    Lower,
    /// No significant change, or one below the practical threshold.
    #[serde(rename = "~")]
    Same,
    /// A run lacks the figure.
    #[serde(rename = "n/a")]
    Missing,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::Higher => "higher",
            Verdict::Lower => "lower",
            Verdict::Same => "~",
            Verdict::Missing => "n/a",
        }
    }
}

/// How a figure's interval was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Steady buckets, effective sample sizes (autocorrelation).
    EffectiveSampleSize,
    /// Per-request values: order-statistic intervals, Mann-Whitney.
    OrderStatistics,
    /// Two proportions: Newcombe's interval.
    Newcombe,
    /// Two figures each with its own bootstrap interval (the knee): the difference's from
    /// both.
    Bootstrap,
    /// A point figure (no per-request or per-bucket data): no interval.
    Point,
}

/// One figure of one compared run against the first.
#[derive(Debug, Clone, Serialize)]
pub struct FigureRow {
    pub name: String,
    pub unit: &'static str,
    pub better_when: BetterWhen,
    /// The first run's label, and the compared run's.
    pub base: String,
    pub run: String,
    /// The figure in the first run and in the compared run.
    pub values: [Option<f64>; 2],
    /// Compared minus first, in the figure's unit, and compared over first.
    pub delta: Option<f64>,
    pub ratio: Option<f64>,
    /// The 95% interval of `delta`.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// A rank test's p value, for distributions.
    pub p_value: Option<f64>,
    /// Whether the interval excludes no change (none for point figures).
    pub significant: Option<bool>,
    pub verdict: Verdict,
    pub method: Method,
}

/// The curves and timelines of the runs, for charts that overlay them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Overlays {
    /// Per run: `(running, median tok/s)` of each curve bin.
    pub curves: Vec<Vec<(f64, f64)>>,
    /// Per run: `(seconds from the run's first bucket, total gen tok/s)`.
    pub timelines: Vec<Vec<(f64, f64)>>,
}
