//! `tokstat parse`: every recognised record as a JSON line; line accounting on stderr.

use crate::analysis::metrics::Scrapes;
use crate::cli::ParseArgs;
use crate::logs::{self, visit_chunk, Dates, FileCtx, Visit, Visitor};
use crate::render::records;
use anyhow::Result;
use std::io::Write;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::Input;

pub fn run(args: &ParseArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let all = logs::inputs(&args.input)?;
    let dates = Dates::from_args(&args.input)?;
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
        let opened = logs::open(&input);
        match opened.source {
            Ok(src) if opened.kind == Kind::Prometheus => {
                let tally = scrapes.read_input(&input, src)?;
                let file = FileCtx {
                    source: input.display(),
                    stem: input.stem(),
                };
                prom_files.push((file, tally));
            }
            _ => inputs.push(input),
        }
    }
    scrapes.order(None);
    let mut rows = Vec::new();
    scrapes.write_rows(&mut rows);
    out.write_all(&rows)?;
    let mut write_err = None;
    let (files, skipped) = logs::scan_logs(
        &inputs,
        dates,
        |file, chunk| {
            let cap = chunk.bytes.len() + chunk.bytes.len() / 2;
            let (out, cal) = visit_chunk(file, chunk, Writer(Vec::with_capacity(cap)));
            (
                logs::ChunkOut {
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
    out.flush()?;
    let mut files = files;
    files.extend(prom_files);
    if !args.input.quiet {
        logs::write_accounting(err, &files, &skipped)?;
    }
    let failed = skipped.iter().any(|s| s.failed);
    let parsed: u64 = files.iter().map(|(_, t)| t.parsed).sum();
    Ok(
        if failed || (parsed == 0 && !files.is_empty() && files.iter().any(|(_, t)| t.total > 0)) {
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
}
