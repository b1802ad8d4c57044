//! `tokstat parse`: every recognised record as a JSON line; line accounting on stderr.

use crate::cli::ParseArgs;
use crate::logs::{self, visit_chunk, Dates};
use crate::render::records;
use anyhow::Result;
use std::io::Write;

pub fn run(args: &ParseArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let inputs = logs::inputs(&args.input)?;
    let dates = Dates::from_args(&args.input)?;
    let mut write_err = None;
    let (files, skipped) = logs::scan_logs(
        &inputs,
        dates,
        |file, chunk| {
            let cap = chunk.bytes.len() + chunk.bytes.len() / 2;
            visit_chunk(file, chunk, Vec::with_capacity(cap), |buf, v| {
                records::write(buf, &v)
            })
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
