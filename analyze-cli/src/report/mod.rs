//! The report model: everything a post-mortem finds in a run's artifacts, as one typed value.
//!
//! [`build`] reads the inputs and runs every analysis; the renderers in `render/` show the
//! result (terminal tables, markdown, JSON) without recomputing anything. `--format json` is
//! this value serialised, with its keys in sorted order (see the README for each key).

mod build;

pub use build::{
    analyze, build, build_full, build_with, build_with_samples, figures, read, read_inputs, Built,
    Options,
};

use crate::analysis::bench::RunReport;
use crate::analysis::completions::Completions;
use crate::analysis::curve::{Bin, Knee};
use crate::analysis::hints::Hint;
use crate::analysis::incidents::Incident;
use crate::analysis::lifecycle::Lifecycle;
use crate::analysis::metrics::Metrics;
pub use crate::analysis::server::sections::{
    InstanceReport, SegmentReport, SteadyReport, TimelineRow, Window,
};
use serde::Serialize;

/// The version of the JSON shape: raised when a key is renamed or removed, or its meaning
/// changes (new keys do not raise it).
pub const SCHEMA_VERSION: u32 = 2;

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
    /// Benchmark runs with timed requests beside the server's log or scrapes, on one clock:
    /// the offset found between them (or why none was), the buckets both sides share, and
    /// their checks against each other (one per run and server source).
    pub one_clock: Vec<crate::analysis::one_clock::OneClock>,
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
    /// What the figures may be wrong by that no other key says: saved reads a merge could
    /// not tell apart (the same read twice, an instance held by two reads over one time).
    pub warnings: Vec<String>,
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
    /// For a log read from a log collector's records: what they said (absent for plain
    /// inputs). Line numbers of such a file are its rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub envelope: Option<EnvelopeReport>,
}

/// A log read from a log collector's records (see `ingest::kinds::envelopes`).
#[derive(Debug, Clone, Serialize)]
pub struct EnvelopeReport {
    /// `Docker json-file`, `CRI (kubelet, containerd, CRI-O)`, `journald JSON`, …
    pub collector: &'static str,
    /// Who the records name (`pod/container`, `host/unit`, a log stream): the instance.
    pub identity: Option<String>,
    /// The file's rows read for this log.
    pub rows: u64,
    /// Rows that were pieces of a longer line, joined to the piece before them.
    pub joined: u64,
    /// Lines with no stamp of their own, dated by the collector on the server's clock.
    pub dated_by_collector: u64,
    /// The file listed its newest record first; read in time order.
    pub newest_first: bool,
    /// The server's clock against the collector's, where lines carry both stamps.
    pub clock: Option<ClockReport>,
}

/// The engine's stamps (the server's clock, local time) less the collector's (UTC).
#[derive(Debug, Clone, Serialize)]
pub struct ClockReport {
    /// The time zone it amounts to: `UTC`, `UTC+08:00`.
    pub zone: String,
    /// The rest, seconds: clock skew, and the stamps' truncation (vLLM's to whole seconds).
    pub skew_s: f64,
    /// The median difference, seconds (zone and skew together).
    pub offset_s: f64,
    /// The differences' 10th and 90th percentiles, seconds: the collector's delays spread.
    pub low_s: f64,
    pub high_s: f64,
    /// Lines read for it.
    pub lines: u64,
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

/// The completions part: their figures, and choices beyond the per-record limit.
#[derive(Debug, Clone, Serialize)]
pub struct CompletionsReport {
    #[serde(flatten)]
    pub figures: Completions,
    pub dropped_choices: u64,
}

/// The per-request values behind a report's distributions: what a test between two runs
/// needs beyond the report's own figures. Not serialised.
#[derive(Debug, Clone, Default)]
pub struct Samples {
    /// Output tokens of every completion that states them, in input order.
    pub output_tokens: Vec<f64>,
    /// The requests of every benchmark result file.
    pub requests: Vec<tokstat_parsers::loadgen::Request>,
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
