//! The report model: everything a post-mortem finds in a run's artifacts, as one typed value.
//!
//! [`build`] reads the inputs and runs every analysis; the renderers in `render/` show the
//! result (terminal tables, markdown, JSON) without recomputing anything. `--format json` is
//! this value serialised, with its keys in sorted order (see the README for each key).

mod build;

pub use build::{
    analyze, build, build_full, build_with, build_with_samples, figures, read, Built, Options,
};

use crate::analysis::bench::RunReport;
use crate::analysis::completions::Completions;
use crate::analysis::curve::{Bin, Knee};
use crate::analysis::hints::Hint;
use crate::analysis::incidents::Incident;
use crate::analysis::lifecycle::Lifecycle;
use crate::analysis::metrics::Metrics;
use crate::analysis::segments::Change;
use crate::analysis::{iso, iso_opt};
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::stamp::Ts;

/// The version of the JSON shape: raised when a key is renamed or removed, or its meaning
/// changes (new keys do not raise it).
pub const SCHEMA_VERSION: u32 = 1;

/// A run's post-mortem.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub schema_version: u32,
    /// Lines of all inputs: `total = parsed + other + malformed`.
    pub lines: LineCounts,
    /// Each input read, with its line accounting.
    pub files: Vec<FileReport>,
    /// Inputs that could not be read, or were cut short.
    pub skipped: Vec<SkippedInput>,
    /// Server instances (one per log file, or per data-parallel rank).
    pub instances: Vec<InstanceReport>,
    pub bench_runs: Vec<RunReport>,
    /// JSON records of no shape tokstat reads (counted as `other` lines).
    pub unknown_records: u64,
    /// Places in the server logs that could not be placed exactly in time (lines of one
    /// instance interleaving across files, a segment edge inside a cell): the figures
    /// around them are approximate. 0 for logs read in time order (see the README).
    pub inexact: u64,
    pub completions: Option<CompletionsReport>,
    /// The timeline's bucket length, seconds (0 without server logs).
    pub timeline_bucket_s: f64,
    /// The run's total (`instance` null) and, with several instances, each one.
    pub timeline: Vec<TimelineRow>,
    pub curve: Vec<Bin>,
    pub knee: Option<Knee>,
    pub steady: SteadyReport,
    pub segments: Vec<SegmentReport>,
    /// Most severe first.
    pub hints: Vec<Hint>,
    pub metrics: Option<Metrics>,
    /// The server logs' incident census: every kind, those with no line too (empty
    /// without server logs).
    pub incidents: Vec<Incident>,
    /// How each server instance spent its time: starting, serving, idle.
    pub lifecycle: Lifecycle,
}

/// Line counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LineCounts {
    pub total: u64,
    pub parsed: u64,
    pub other: u64,
    pub malformed: u64,
    /// Of the parsed lines, those cut short (their fields before the cut were read).
    pub partial: u64,
}

/// One input file and its line accounting.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    /// The path as given (or `-`).
    pub source: String,
    /// `log`, `json`, `prometheus` or `empty`.
    pub kind: &'static str,
    #[serde(flatten)]
    pub lines: LineCounts,
    /// The first malformed lines.
    pub malformed_samples: Vec<MalformedLine>,
}

/// A malformed line: its number and what was wrong with it.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct MalformedLine {
    pub line: u64,
    pub reason: &'static str,
}

/// An input not read, or not read to its end.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedInput {
    pub source: String,
    pub reason: String,
    /// An I/O failure (exit code 1), rather than a kind of input the command does not read.
    pub failed: bool,
    /// Part of it is in the report: a read cut short, or a file that changed while read.
    pub partly_read: bool,
}

impl SkippedInput {
    /// How the renderings label it: `partly read` or `skipped`.
    pub fn label(&self) -> &'static str {
        if self.partly_read {
            "partly read"
        } else {
            "skipped"
        }
    }
}

/// One server instance: its aggregates over stats lines and its throughput.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceReport {
    pub instance: String,
    pub engine: Option<&'static str>,
    #[serde(serialize_with = "iso_opt")]
    pub first_ts: Option<Ts>,
    #[serde(serialize_with = "iso_opt")]
    pub last_ts: Option<Ts>,
    pub span_s: Option<f64>,
    /// Decode (SGLang) or periodic stats (vLLM) lines.
    pub stat_lines: u64,
    pub prefill_lines: u64,
    /// Mean rate over the run's steady buckets (weighted by the time served in each).
    pub gen_tps: Option<f64>,
    /// Relative difference from the median instance's steady rate.
    pub vs_median: Option<f64>,
    /// Beyond ±15% of the median.
    pub imbalanced: Option<bool>,
    /// Tokens generated, estimated from the logged rates.
    pub gen_tokens: Option<f64>,
    /// Means and maxima over stats lines.
    pub gen_tps_mean: Option<f64>,
    pub gen_tps_max: Option<f64>,
    pub prompt_tps_mean: Option<f64>,
    pub running_mean: Option<f64>,
    pub running_max: Option<f64>,
    pub waiting_mean: Option<f64>,
    pub kv_usage_mean: Option<f64>,
    pub kv_usage_max: Option<f64>,
    pub accept_len_mean: Option<f64>,
    pub prefill_tokens: u64,
    /// Retraction events, and the requests they retracted.
    pub retractions: u64,
    pub retracted_requests: u64,
    pub preemptions: u64,
    pub errors: u64,
}

/// The completions part: their figures, and choices beyond the per-record limit.
#[derive(Debug, Clone, Serialize)]
pub struct CompletionsReport {
    #[serde(flatten)]
    pub figures: Completions,
    pub dropped_choices: u64,
}

/// One timeline bucket of one instance, or of the run (`instance` null).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TimelineRow {
    /// Bucket start.
    #[serde(serialize_with = "iso")]
    pub ts: Ts,
    pub instance: Option<String>,
    pub gen_tps: Option<f64>,
    /// Generated tokens over the time the stats lines' intervals cover in the bucket (the
    /// most any instance covers, for the total): `gen_tps` where they cover all of it,
    /// higher where the run starts, stops or falls silent inside the bucket; null where
    /// they cover none. The steady and peak rates are means of it.
    pub serving_gen_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    pub running: Option<f64>,
    pub waiting: Option<f64>,
    pub kv_usage: Option<f64>,
    pub accept_len: Option<f64>,
    pub events: Option<f64>,
    /// HTTP access lines in the bucket that were answered (status below 400), refused
    /// (4xx) and failed (5xx); null when the logs have no access line.
    pub http_ok: Option<u64>,
    pub http_4xx: Option<u64>,
    pub http_5xx: Option<u64>,
    /// Whether the bucket lies in a steady window.
    pub steady: bool,
}

/// A time range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Window {
    #[serde(serialize_with = "iso")]
    pub from: Ts,
    #[serde(serialize_with = "iso")]
    pub to: Ts,
}

/// Run-wide throughput.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SteadyReport {
    /// Over all segments' steady windows (weighted by the time they were served), tok/s.
    pub gen_tps: Option<f64>,
    /// The best window of `peak_window_s`.
    pub peak_gen_tps: Option<f64>,
    pub peak_window_s: f64,
    /// Tokens over the time the instances were serving (their stats lines' intervals, per
    /// instance; the silences between segments left out).
    pub mean_gen_tps: Option<f64>,
    /// Tokens over the whole span, from the first segment's start to the last one's end,
    /// silences included: below `mean_gen_tps` where the run fell silent.
    pub span_gen_tps: Option<f64>,
    pub gen_tokens: f64,
    /// From the first segment's start to its steady window, and from the last one's steady
    /// window to its end, seconds.
    pub ramp_up_s: Option<f64>,
    pub drain_s: Option<f64>,
    pub windows: Vec<Window>,
}

/// A segment of the run: cut at restarts and long silences.
#[derive(Debug, Clone, Serialize)]
pub struct SegmentReport {
    pub index: usize,
    /// `begin`, `restart` or `gap`.
    pub reason: &'static str,
    #[serde(serialize_with = "iso")]
    pub start: Ts,
    #[serde(serialize_with = "iso")]
    pub end: Ts,
    pub duration_s: f64,
    /// Instances with lines in it.
    pub instances: usize,
    pub gen_tokens: f64,
    /// Steady rate.
    pub gen_tps: Option<f64>,
    /// Tokens over the time instances were working.
    pub gen_tps_mean: Option<f64>,
    pub peak_gen_tps: Option<f64>,
    pub steady: Option<Window>,
    pub ramp_up_s: Option<f64>,
    pub drain_s: Option<f64>,
    /// Steady rate against the previous segment's, as a ratio minus one.
    pub vs_previous: Option<f64>,
    pub changes: Vec<Change>,
    pub settings: BTreeMap<String, Vec<String>>,
}

/// The per-request values behind a report's distributions: what a test between two runs
/// needs beyond the report's own figures. Not serialised.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Output tokens of every completion that states them, in input order.
    pub output_tokens: Vec<f64>,
    /// The requests of every benchmark result file.
    pub requests: Vec<tokstat_parsers::bench::Request>,
}

impl Report {
    /// Rows of the run's total timeline.
    pub fn total_timeline(&self) -> impl Iterator<Item = &TimelineRow> {
        self.timeline.iter().filter(|r| r.instance.is_none())
    }

    /// Whether any input failed to read (exit code 1).
    pub fn failed(&self) -> bool {
        self.skipped.iter().any(|s| s.failed)
    }
}
