//! The words every hint is made of: its severity, its evidence and the figures in it, and
//! the inputs every rule may look at.

use crate::analysis::completions::Completions;
use crate::analysis::incidents::Incident;
use crate::analysis::iso_opt;
use crate::analysis::metrics::Metrics;
use crate::analysis::server::Server;
use crate::ingest::completions::CompletionRow;
use crate::ingest::instance::Instance;
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::stamp::Ts;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

/// One hint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hint {
    pub id: &'static str,
    pub severity: Severity,
    pub evidence: Evidence,
    pub action: String,
}

/// The numbers behind a hint: a sentence that states them, the time range and instance they
/// come from when they have one, and each figure by name.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Evidence {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "iso_opt")]
    pub from: Option<Ts>,
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "iso_opt")]
    pub to: Option<Ts>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// How much the hint stands on (given by the rules that read a steady window).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strength: Option<Strength>,
    /// Whether the evidence clears its threshold with its uncertainty (`firm`) or only at
    /// its point value (`borderline`: shown apart, a finding to check, not to act on).
    pub level: Level,
    #[serde(flatten)]
    pub figures: BTreeMap<&'static str, Figure>,
}

/// How firmly a hint stands: its evidence's uncertainty against its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// The evidence clears the threshold (or the rule has no uncertainty to weigh).
    #[default]
    Firm,
    /// The evidence's interval holds the threshold (its point value on either side): the
    /// rule can neither fire firmly nor be ruled out.
    Borderline,
}

/// The strength of a hint's evidence: the time it spans (none for records in no time), the
/// lines or records behind it, and the effect it measured against the threshold that raised
/// it (in one unit; `fires` says on which side of the threshold it does).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Strength {
    pub span_s: Option<f64>,
    pub lines: u64,
    /// What `lines` counts: `stats lines`, `records`, `finished requests`.
    pub of: &'static str,
    pub effect: Option<f64>,
    pub threshold: Option<f64>,
    /// `above` or `below`.
    pub fires: &'static str,
}

/// One figure of a hint's evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Figure {
    Count(u64),
    Value(f64),
    /// Not known (a cap no start-up line stated).
    Missing,
    /// Instances away from the median.
    Instances(Vec<Off>),
}

/// An instance whose steady throughput is away from the median instance's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Off {
    pub instance: String,
    pub gen_tps: f64,
    pub vs_median: f64,
}

impl From<u64> for Figure {
    fn from(v: u64) -> Figure {
        Figure::Count(v)
    }
}

impl From<usize> for Figure {
    fn from(v: usize) -> Figure {
        Figure::Count(v as u64)
    }
}

impl From<f64> for Figure {
    fn from(v: f64) -> Figure {
        Figure::Value(v)
    }
}

impl<T: Into<Figure>> From<Option<T>> for Figure {
    fn from(v: Option<T>) -> Figure {
        v.map_or(Figure::Missing, Into::into)
    }
}

impl Figure {
    /// The figure as a number, if it is one.
    pub fn number(&self) -> Option<f64> {
        match *self {
            Figure::Count(n) => Some(n as f64),
            Figure::Value(v) => Some(v),
            _ => None,
        }
    }
}

pub fn fig(v: impl Into<Figure>) -> Figure {
    v.into()
}

pub fn evidence(
    text: String,
    range: Option<(i64, i64)>,
    figures: &[(&'static str, Figure)],
) -> Evidence {
    Evidence {
        text,
        from: range.map(|r| Ts(r.0)),
        to: range.map(|r| Ts(r.1)),
        instance: None,
        strength: None,
        level: Level::Firm,
        figures: figures.iter().cloned().collect(),
    }
}

impl Hint {
    /// The hint with the strength of its evidence.
    pub fn with(mut self, strength: Strength) -> Hint {
        self.evidence.strength = Some(strength);
        self
    }
}

/// A share as a whole percentage (`42%`).
pub fn pct(x: f64) -> String {
    format!("{:.0}%", x * 100.0)
}

/// Everything a hint may look at.
pub struct Inputs<'a> {
    pub server: &'a Server,
    pub instances: &'a BTreeMap<String, Instance>,
    pub completions: Option<&'a Completions>,
    pub rows: &'a [CompletionRow],
    pub metrics: Option<&'a Metrics>,
    /// The server logs' incident census.
    pub incidents: &'a [Incident],
    /// Benchmark runs beside the server's side on one clock.
    pub one_clock: &'a [crate::analysis::one_clock::OneClock],
}
