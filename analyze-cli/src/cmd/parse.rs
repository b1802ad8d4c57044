//! `tokstat parse`: every recognised record as a JSON line; line accounting on stderr.

use crate::cli::ParseArgs;
use crate::ingest::inputs::{expand, open, Dates, Skipped, BINARY};
use crate::ingest::scan::{
    scan_log, visit_chunk, Access, ChunkOut, FileCtx, LineNumbers, Tally, Visit, Visitor,
};
use crate::ingest::scrapes::Scrapes;
use crate::render::{accounting, records};
use crate::report::{FileReport, SkippedInput};
use anyhow::Result;
use std::io::Write;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::scan::Chunk;
use tokstat_parsers::source;
use tokstat_parsers::source::Input;
use tokstat_parsers::stamp::Calendar;

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

/// Scans every log among `inputs`; other kinds of input are skipped with a reason.
fn scan_logs<R, W, S>(
    inputs: &[Input],
    dates: Dates,
    work: W,
    mut sink: S,
) -> (Vec<(FileCtx, Tally)>, Vec<Skipped>)
where
    R: Send,
    W: Fn(&FileCtx, Chunk<'_>) -> (ChunkOut<R>, Calendar) + Sync,
    S: FnMut(&FileCtx, R),
{
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let names = source::instance_names(inputs);
    for (input, name) in inputs.iter().zip(names) {
        let opened = open(input);
        let src = match opened.source {
            Ok(s) => s,
            Err(sk) => {
                skipped.push(sk);
                continue;
            }
        };
        // a collector's records: each identity's log (numbered as its unwrapped lines)
        if let Kind::Envelope(c) = opened.kind {
            match crate::ingest::kinds::envelopes::open(c, input, src, dates, &name) {
                Err(sk) => skipped.push(sk),
                Ok((env, logs)) => {
                    for (k, log) in logs.into_iter().enumerate() {
                        let (file, mut tally, err) = scan_log(
                            input,
                            log.name,
                            log.src,
                            log.dates,
                            LineNumbers::Absolute,
                            &work,
                            &mut |f: &FileCtx, r: R, _| sink(f, r),
                        );
                        env.account(k, &mut tally);
                        skipped.extend(err);
                        files.push((file, tally));
                    }
                }
            }
            continue;
        }
        if !matches!(opened.kind, Kind::Log | Kind::Empty) {
            skipped.push(Skipped {
                source: input.display(),
                why: match opened.kind {
                    Kind::Binary => BINARY.to_string(),
                    k => format!("{} content, not a server log", k.as_str()),
                },
                failed: false,
                partly_read: false,
            });
            continue;
        }
        let at_open = src.at_open;
        let (file, tally, err) = scan_log(
            input,
            name,
            src,
            dates,
            LineNumbers::Absolute,
            &work,
            &mut |f: &FileCtx, r: R, _| sink(f, r),
        );
        skipped.extend(err.or_else(|| Skipped::changed(input, at_open)));
        files.push((file, tally));
    }
    (files, skipped)
}
