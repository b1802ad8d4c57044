//! What a read holds: every input's accounting, and each kind's part (see
//! [`crate::ingest::kinds`]), as the analyses take it and as `export` saves it. Reading
//! and merging reads are in [`crate::ingest`].

use crate::ingest::completions::CompletionRow;
use crate::ingest::inputs::{Dates, Skipped};
use crate::ingest::instance::Logs;
use crate::ingest::progress;
use crate::ingest::scan::{FileCtx, Tally};
use crate::ingest::scrapes::Scrapes;
use tokstat_parsers::completion::Paths;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::loadgen::Run;

/// How to read the inputs.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Completes stamps without a year or a date.
    pub dates: Dates,
    /// Where token counts and finish reasons are in records of another shape.
    pub paths: Paths,
    /// Counts what is read, for a display.
    pub progress: Option<std::sync::Arc<progress::Progress>>,
    /// Plain files read only up to these offsets (where they stood when a pulse began).
    pub limits: Limits,
    /// The timeline bucket asked for, ms (see [`crate::ingest::digest::grid`]).
    pub bucket: Option<i64>,
}

/// Byte offsets to read files up to, by path.
pub type Limits = Option<std::sync::Arc<std::collections::HashMap<std::path::PathBuf, u64>>>;

/// One input read, and its line accounting.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileRead {
    pub file: FileCtx,
    pub tally: Tally,
    pub kind: Kind,
    /// What a log collector's records said of the log (none for a plain input). Not saved
    /// with an export's read (its layout stays format 1's): a report of the export has the
    /// same figures, without this provenance.
    #[serde(skip)]
    pub envelope: Option<EnvelopeRead>,
}

/// A log read from a log collector's records: the collector, the identity its records
/// name, and what unwrapping them did.
#[derive(Debug, Clone, Default)]
pub struct EnvelopeRead {
    pub collector: &'static str,
    /// `pod/container`, `host/unit`, a log stream (none where the records name no one).
    pub identity: Option<String>,
    /// The file's rows this log was read from.
    pub rows: u64,
    /// Rows that were pieces of a longer line, joined to the piece before them.
    pub joined: u64,
    /// Lines with no stamp of their own, dated by the collector (on the server's clock).
    pub stamped: u64,
    /// The server's clock against the collector's, where lines carry both stamps.
    pub clock: Option<tokstat_parsers::wrappers::envelope::unwrap::Clock>,
    /// The file listed the newest record first (put in time order).
    pub newest_first: bool,
}

/// Everything read from the inputs, for the analyses.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Ingested {
    pub files: Vec<FileRead>,
    pub skipped: Vec<Skipped>,
    /// Server logs, per instance.
    pub logs: Logs,
    /// Completion records, one row per choice, in input order.
    pub completions: Vec<CompletionRow>,
    /// The file each run of completion rows came from: `(index in files, rows)`, in order.
    pub completion_files: Vec<(usize, usize)>,
    pub dropped_choices: u64,
    /// JSON records of no known shape.
    pub unknown_records: u64,
    /// Benchmark result files.
    pub runs: Vec<Run>,
    pub scrapes: Scrapes,
    /// What a merge of saved reads could not tell apart, said in the report (see
    /// [`crate::ingest::saved::merge`]); not saved, so that the layout stays format 1's.
    #[serde(skip)]
    pub warnings: Vec<String>,
}
