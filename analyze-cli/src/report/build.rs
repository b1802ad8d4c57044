//! [`build`]: from inputs and options to a [`Report`], the one place figures are assembled.

use super::*;
use crate::analysis::bench::{self, Slo};
use crate::analysis::completions;
use crate::analysis::hints;
use crate::analysis::incidents;
use crate::analysis::metrics;
use crate::analysis::server::{self, sections, Server};
use crate::ingest::inputs::{expand, Dates, Skipped};
use crate::ingest::instance::StepsSink;
use crate::ingest::read::EnvelopeRead;
use crate::ingest::scan::Tally;
use crate::ingest::{self, saved, Ingested};
use anyhow::Result;
use tokstat_parsers::completion::Paths;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::Input;

/// What to read and how to analyse it: the report's options, independent of any command
/// line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Files, folders (recursed), globs, or `-` for stdin.
    pub inputs: Vec<String>,
    /// Year for stamps without one (vLLM); default: each file's modification year.
    pub year: Option<i32>,
    /// Date for time-only stamps (`YYYY-MM-DD`); default: each file's modification date.
    pub date: Option<String>,
    /// The output token cap; default: stated by the records, or inferred.
    pub cap: Option<u64>,
    /// JSON pointers to the token count and finish reason in records of another shape.
    pub tokens_path: Option<String>,
    pub finish_path: Option<String>,
    /// Objectives for benchmark goodput.
    pub slo: Option<Slo>,
    /// Timeline bucket, ms; default: a round length giving at most 120 buckets.
    pub bucket_ms: Option<i64>,
    /// Seconds between Prometheus scrapes that carry no time.
    pub interval_s: Option<f64>,
    /// Counts what is read, for a progress display.
    pub progress: Option<std::sync::Arc<crate::ingest::progress::Progress>>,
    /// Plain files read only up to these offsets.
    pub limits: crate::ingest::Limits,
    /// Of an exported dataset holding several runs, the one to report (`--run`).
    pub run: Option<String>,
    /// The node the raw inputs were read on (`--node`): an instance name a saved read of
    /// another node also has is qualified by it (see [`saved::merge`]).
    pub node: Option<String>,
    /// Of the benchmark runs of the result files, the one to report: its place from 1, or
    /// its name (`compare`'s `path#N`).
    pub benchmark: Option<String>,
    /// A window of a Prometheus server, read beside the files (`--prometheus`).
    pub prometheus: Option<crate::ingest::prometheus_server::Query>,
}

/// Reads the inputs and runs every analysis. Fails only on options that cannot be used or
/// inputs that match nothing; an unreadable input is listed in [`Report::skipped`].
pub fn build(opts: &Options) -> Result<Report> {
    build_with_samples(opts).map(|(report, _)| report)
}

/// [`build`], with the per-request values behind the report's distributions (for tests
/// between runs).
pub fn build_with_samples(opts: &Options) -> Result<(Report, Samples)> {
    build_full(opts).map(|b| (b.report, b.samples))
}

/// Everything a build makes: the report, its samples, and what was read (series in time
/// order), for the tables `export` writes.
pub struct Built {
    pub report: Report,
    pub samples: Samples,
    pub read: Ingested,
}

/// [`build`], keeping what was read.
pub fn build_full(opts: &Options) -> Result<Built> {
    build_with(opts, None)
}

/// [`build_full`], handing every chunk's stats lines to `steps` as they are read.
pub fn build_with(opts: &Options, steps: Option<&mut StepsSink<'_>>) -> Result<Built> {
    analyze(read(opts, steps)?, opts)
}

/// Reads the inputs into one read: files as they are, and the reads an export saved (see
/// [`saved`]) for folders that hold an exported dataset, merged after them in the order of
/// what they read ([`saved::merge`]). Every chunk's stats lines of the files go to `steps`
/// as they are read.
pub fn read(opts: &Options, steps: Option<&mut StepsSink<'_>>) -> Result<Ingested> {
    let (exports, files) = saved::split(&opts.inputs, opts.run.is_some())?;
    let mut r = if files.is_empty() {
        let mut r = Ingested::default();
        r.logs.bucket = opts.bucket_ms;
        r
    } else {
        read_files(&files, opts, steps)?
    };
    let mut reads = Vec::new();
    for (dir, found) in exports {
        reads.extend(saved::reads(
            &dir,
            found,
            opts.run.as_deref(),
            opts.bucket_ms,
        )?);
    }
    if !reads.is_empty() {
        r = saved::merge(r, opts.node.as_deref(), reads);
    }
    if let Some(q) = &opts.prometheus {
        let (input, _) = crate::ingest::prometheus_server::fetch(q, opts.progress.is_some())?;
        r.extend(ingest::read_with(&[input], &read_options(opts)?, None));
    }
    r.finish(opts.interval_s);
    Ok(r)
}

/// Reads files and folders as they are.
fn read_files(
    inputs: &[String],
    opts: &Options,
    steps: Option<&mut StepsSink<'_>>,
) -> Result<Ingested> {
    let (inputs, unread) = expand(inputs)?;
    let mut r = ingest::read_with(&inputs, &read_options(opts)?, steps);
    // met while listing the inputs, before any was read
    r.skipped.splice(0..0, unread);
    Ok(r)
}

/// Reads inputs as they are given, bytes in memory among them (the Python package's
/// `read_bytes`), as [`read`] reads files (`opts.inputs` left aside), and finishes the read.
pub fn read_inputs(
    inputs: &[Input],
    opts: &Options,
    steps: Option<&mut StepsSink<'_>>,
) -> Result<Ingested> {
    let mut r = ingest::read_with(inputs, &read_options(opts)?, steps);
    r.finish(opts.interval_s);
    Ok(r)
}

fn read_options(opts: &Options) -> Result<ingest::ReadOptions> {
    Ok(ingest::ReadOptions {
        dates: Dates::new(opts.year, opts.date.as_deref())?,
        paths: Paths {
            tokens: opts.tokens_path.as_deref().map(Paths::pointer),
            finish: opts.finish_path.as_deref().map(Paths::pointer),
        },
        progress: opts.progress.clone(),
        limits: opts.limits.clone(),
        bucket: opts.bucket_ms,
    })
}

/// Runs every analysis on what was read (finished: see [`Ingested::finish`]), keeping it.
pub fn analyze(r: Ingested, opts: &Options) -> Result<Built> {
    let (report, samples) = figures(&r, opts)?;
    Ok(Built {
        report,
        samples,
        read: r,
    })
}

/// Every analysis of a finished read, which it leaves as it is: a read may be saved before
/// or after.
pub fn figures(r: &Ingested, opts: &Options) -> Result<(Report, Samples)> {
    let completions =
        (!r.completions.is_empty()).then(|| completions::analyze(&r.completions, opts.cap));
    let server = server::analyze(&r.logs.instances, opts.bucket_ms)?;
    let metrics = metrics::analyze(&r.scrapes);
    let incidents = if r.logs.instances.is_empty() {
        Vec::new()
    } else {
        incidents::census(
            r.logs
                .instances
                .iter()
                .map(|(name, i)| (name.as_str(), &i.census)),
        )
    };
    let slo = opts.slo.unwrap_or_default();
    let runs = bench::select(&r.runs, opts.benchmark.as_deref()).map_err(anyhow::Error::msg)?;
    let tooled: Vec<(&tokstat_parsers::loadgen::Run, &'static str)> =
        runs.iter().map(|run| (*run, run.tool.name())).collect();
    let one_clock =
        crate::analysis::one_clock::all(&tooled, &r.logs.instances, &server, metrics.as_ref());
    let hints = hints::all(&hints::Inputs {
        server: &server,
        instances: &r.logs.instances,
        completions: completions.as_ref(),
        rows: &r.completions,
        metrics: metrics.as_ref(),
        incidents: &incidents,
        one_clock: &one_clock,
    });
    let bench_runs = runs.iter().map(|run| bench::analyze(run, &slo)).collect();
    let samples = Samples {
        output_tokens: r
            .completions
            .iter()
            .filter_map(|c| c.completion_tokens.get())
            .map(|t| t as f64)
            .collect(),
        requests: runs
            .iter()
            .flat_map(|run| run.requests.iter().copied())
            .collect(),
    };
    let report = assemble(
        r,
        &server,
        Parts {
            completions,
            hints,
            metrics,
            bench_runs,
            incidents,
            one_clock,
        },
    );
    Ok((report, samples))
}

impl LineCounts {
    fn of(t: &Tally) -> LineCounts {
        LineCounts {
            total: t.total,
            parsed: t.parsed,
            other: t.other,
            malformed: t.malformed,
            partial: t.partial,
        }
    }
}

impl FileReport {
    /// A file's report from its tally.
    pub fn new(source: &str, kind: Kind, t: &Tally) -> FileReport {
        FileReport {
            source: source.to_string(),
            kind: kind.as_str(),
            lines: LineCounts::of(t),
            malformed_samples: t
                .samples
                .iter()
                .map(|&(line, reason)| MalformedLine { line, reason })
                .collect(),
            envelope: None,
        }
    }

    /// With what a log collector's records said of the log.
    pub fn with_envelope(mut self, e: Option<&EnvelopeRead>) -> FileReport {
        self.envelope = e.map(|e| EnvelopeReport {
            collector: e.collector,
            identity: e.identity.clone(),
            rows: e.rows,
            joined: e.joined,
            dated_by_collector: e.stamped,
            newest_first: e.newest_first,
            clock: e.clock.map(|c| {
                let s = c.seconds();
                ClockReport {
                    zone: c.zone_name(),
                    skew_s: s.skew,
                    offset_s: s.offset,
                    low_s: s.low,
                    high_s: s.high,
                    lines: c.pairs,
                }
            }),
        });
        self
    }
}

impl From<&Skipped> for SkippedInput {
    fn from(s: &Skipped) -> SkippedInput {
        SkippedInput {
            source: s.source.clone(),
            reason: s.why.clone(),
            failed: s.failed,
            partly_read: s.partly_read,
        }
    }
}

/// The analyses' results a report is assembled from, beside the read and the server's.
struct Parts {
    completions: Option<Completions>,
    hints: Vec<Hint>,
    metrics: Option<Metrics>,
    bench_runs: Vec<RunReport>,
    incidents: Vec<incidents::Incident>,
    one_clock: Vec<crate::analysis::one_clock::OneClock>,
}

fn assemble(r: &Ingested, server: &Server, parts: Parts) -> Report {
    let Parts {
        completions,
        hints,
        metrics,
        bench_runs,
        incidents,
        one_clock,
    } = parts;
    let mut lines = Tally::default();
    for f in &r.files {
        lines.merge(&f.tally);
    }
    Report {
        schema_version: SCHEMA_VERSION,
        lines: LineCounts::of(&lines),
        files: r
            .files
            .iter()
            .map(|f| {
                FileReport::new(&f.file.source, f.kind, &f.tally).with_envelope(f.envelope.as_ref())
            })
            .collect(),
        skipped: r.skipped.iter().map(SkippedInput::from).collect(),
        instances: r
            .logs
            .instances
            .iter()
            .map(|(name, i)| sections::instance(name, i, server))
            .collect(),
        bench_runs,
        one_clock,
        unknown_records: r.unknown_records,
        inexact: server.inexact,
        completions: completions.map(|figures| CompletionsReport {
            figures,
            dropped_choices: r.dropped_choices,
        }),
        timeline_bucket_s: server.timeline.bucket_s(),
        timeline: sections::timeline(server),
        curve: server.curve.clone(),
        knee: server.knee,
        steady: sections::steady(server),
        segments: sections::segments(server),
        hints,
        metrics,
        lifecycle: crate::analysis::lifecycle::report(&server.lifecycle),
        incidents,
        warnings: r.warnings.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The analyses take the finished read by shared reference and change nothing in it: a
    /// read saved after them is the read saved before, byte for byte (logs with restarts,
    /// completions, a benchmark console and scrapes).
    #[test]
    fn analysis_leaves_the_read_as_it_is() {
        let runs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs");
        let opts = Options {
            inputs: ["sglang-mrr", "vllm-c128", "completions"]
                .iter()
                .map(|r| runs.join(r).display().to_string())
                .collect(),
            year: Some(2026),
            ..Options::default()
        };
        let read = super::read(&opts, None).unwrap();
        let before = postcard::to_stdvec(&read).unwrap();
        let built = analyze(read, &opts).unwrap();
        assert!(built.report.metrics.is_some() && built.report.segments.len() > 1);
        assert_eq!(postcard::to_stdvec(&built.read).unwrap(), before);
    }
}
