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
        limits: None,
        run: None,
        node: None,
        benchmark: None,
    }
}

pub fn run(
    opts: &Options,
    format: Format,
    quiet: bool,
    strict: bool,
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
    exit_code(&report, strict, err)
}

/// 1 when an input failed to read or nothing at all was parsed, else 0. With `strict`, also 1
/// when any line is malformed or any input was not read in full, saying why on `err`.
pub fn exit_code(report: &Report, strict: bool, err: &mut dyn Write) -> Result<i32> {
    if report.failed() {
        return Ok(crate::EXIT_FAILURE);
    }
    if report.lines.parsed == 0 {
        writeln!(
            err,
            "tokstat: nothing to report: no line of the inputs ({} in all) is a record tokstat \
             reads (engine stats lines, completions, benchmark results, Prometheus samples)",
            report.lines.total
        )?;
        return Ok(crate::EXIT_FAILURE);
    }
    if strict {
        if let Some(why) = strict_failure(report.lines.malformed, report.skipped.len()) {
            writeln!(err, "tokstat: --strict: {why}")?;
            return Ok(crate::EXIT_FAILURE);
        }
    }
    Ok(0)
}

/// What `--strict` refuses: malformed lines, inputs not read in full.
pub fn strict_failure(malformed: u64, not_read: usize) -> Option<String> {
    let mut why = Vec::new();
    if malformed > 0 {
        why.push(format!("{malformed} malformed line(s)"));
    }
    if not_read > 0 {
        why.push(format!("{not_read} input(s) not read in full"));
    }
    (!why.is_empty()).then(|| why.join(", "))
}
