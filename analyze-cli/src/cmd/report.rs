//! `tokstat report`: the post-mortem of the given inputs — server logs, completions,
//! benchmark result files and Prometheus scrapes — in the format asked for.

use crate::cli::{CompletionArgs, DateArgs, ServerArgs};
use crate::render::{self, Format, Style};
use crate::report::{self, Options, Report};
use anyhow::Result;
use std::io::Write;

/// The report's options from the command line's flags.
pub fn options(
    inputs: &[String],
    dates: &DateArgs,
    c: &CompletionArgs,
    srv: &ServerArgs,
) -> Options {
    Options {
        inputs: inputs.to_vec(),
        year: dates.year,
        date: dates.date.clone(),
        cap: c.cap,
        tokens_path: c.tokens_path.clone(),
        finish_path: c.finish_path.clone(),
        slo: c.slo,
        bucket_ms: srv.bucket,
        interval_s: srv.interval,
        progress: None,
    }
}

pub fn run(
    opts: &Options,
    format: Format,
    quiet: bool,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let report = super::progress::with_bar(quiet, |progress| {
        report::build(&Options {
            progress,
            ..opts.clone()
        })
    })?;
    format.render(&report, style, out)?;
    // the table shows the accounting itself; beside the other formats it goes to stderr
    if !quiet && format != Format::Table {
        render::accounting::write(err, &report.files, &report.skipped)?;
        if let Some(note) = render::unknown_note(report.unknown_records) {
            writeln!(err, "{note}")?;
        }
    }
    Ok(exit_code(&report))
}

/// 1 when an input failed to read or nothing at all was parsed, else 0.
pub fn exit_code(report: &Report) -> i32 {
    if report.failed() || report.lines.parsed == 0 {
        crate::EXIT_FAILURE
    } else {
        0
    }
}
