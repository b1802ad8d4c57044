//! `tokstat parse`: every recognised record as a JSON line; line accounting on stderr.

use crate::cli::ParseArgs;
use crate::ingest::inputs::{expand, open, Dates};
use crate::ingest::scan::{
    scan_logs, visit_chunk, Access, ChunkOut, FileCtx, Tally, Visit, Visitor,
};
use crate::ingest::scrapes::Scrapes;
use crate::render::{accounting, records};
use crate::report::{FileReport, SkippedInput};
use anyhow::Result;
use std::io::Write;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::Input;

pub fn run(args: &ParseArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let (all, unread) = expand(&args.input.inputs)?;
    let dates = Dates::new(args.input.dates.year, args.input.dates.date.as_deref())?;
    // Prometheus scrapes become `metrics` rows; every other input goes to the log scan
    // (stdin is left to it: it cannot be opened twice)
    let mut scrapes = Scrapes::default();
    let mut prom_files = Vec::new();
    let mut inputs = Vec::new();
    for input in all {
        if input == Input::Stdin {
            inputs.push(input);
            continue;
        }
        let opened = open(&input);
        match opened.source {
            Ok(src) if opened.kind == Kind::Prometheus => {
                let tally = scrapes.read_input(&input, src)?;
                let file = FileCtx {
                    source: input.display(),
                    stem: input.stem(),
                };
                prom_files.push(FileReport::new(&file.source, Kind::Prometheus, &tally));
            }
            _ => inputs.push(input),
        }
    }
    scrapes.place(None);
    let mut rows = Vec::new();
    records::write_metrics(&scrapes, &mut rows);
    out.write_all(&rows)?;
    let mut write_err = None;
    let (files, mut skipped) = scan_logs(
        &inputs,
        dates,
        |file, chunk| {
            let cap = chunk.bytes.len() + chunk.bytes.len() / 2;
            let (out, cal) = visit_chunk(file, chunk, Writer(Vec::with_capacity(cap)));
            (
                ChunkOut {
                    tally: out.tally,
                    out: out.out.0,
                },
                cal,
            )
        },
        |_, buf: Vec<u8>| {
            if write_err.is_none() {
                if let Err(e) = out.write_all(&buf) {
                    write_err = Some(e);
                }
            }
        },
    );
    if let Some(e) = write_err {
        return Err(e.into());
    }
    skipped.extend(unread);
    out.flush()?;
    let mut reports: Vec<FileReport> = files
        .iter()
        .map(|(f, t): &(FileCtx, Tally)| FileReport::new(&f.source, Kind::Log, t))
        .collect();
    reports.extend(prom_files);
    if !args.input.quiet {
        let skipped: Vec<SkippedInput> = skipped.iter().map(SkippedInput::from).collect();
        accounting::write(err, &reports, &skipped)?;
    }
    let failed = skipped.iter().any(|s| s.failed);
    let parsed: u64 = reports.iter().map(|f| f.lines.parsed).sum();
    if args.input.strict && !failed {
        let malformed = reports.iter().map(|f| f.lines.malformed).sum();
        if let Some(why) = super::report::strict_failure(malformed, skipped.len()) {
            writeln!(err, "tokstat: --strict: {why}")?;
            return Ok(crate::EXIT_FAILURE);
        }
    }
    Ok(
        if failed || (parsed == 0 && reports.iter().any(|f| f.lines.total > 0)) {
            crate::EXIT_FAILURE
        } else {
            0
        },
    )
}

/// Writes each record line of a chunk as JSON.
struct Writer(Vec<u8>);

impl Visitor for Writer {
    fn line(&mut self, v: Visit<'_, '_>) {
        records::write(&mut self.0, &v)
    }
    fn access(&mut self, a: Access<'_>) {
        records::access(&mut self.0, &a)
    }
}
