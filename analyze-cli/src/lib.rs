//! `tokstat`: answers about LLM inference runs from the artifacts they leave behind.
//!
//! The binary is a thin wrapper around [`run`], so end-to-end tests drive the same code the
//! user runs, without depending on a built executable. Layers, each importing only those
//! before it: [`ingest`] reads inputs into rows and series; [`analysis`] computes figures
//! from them; [`report`] runs both into one [`report::Report`]; [`render`] shows a report in
//! each format; [`cli`] defines the flags and `cmd/` turns them into options, one file per
//! subcommand. [`frames`] gives the schema's tables as polars frames.

pub mod analysis;
pub mod cli;
pub mod cmd;
pub mod compare;
pub mod export;
pub mod frames;
pub mod ingest;
pub mod live;
pub mod render;
pub mod report;
pub mod schema;
#[cfg(test)]
mod testing;

use clap::Parser;
use std::ffi::OsString;
use std::io::Write;

/// Exit code for a runtime failure (I/O error, nothing parseable).
pub const EXIT_FAILURE: i32 = 1;
/// Exit code for a usage error.
pub const EXIT_USAGE: i32 = 2;

/// Runs the command line `args` (including the program name), writing results to `out` and
/// diagnostics to `err`, as plain Unicode text (no colour, any width). Returns the process
/// exit code.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_with(args, out, err, render::Style::plain())
}

/// [`run`] with the terminal style of `out` (colour, Unicode, width): what the binary uses.
pub fn run_with<I, T>(
    args: I,
    out: &mut dyn Write,
    err: &mut dyn Write,
    style: render::Style,
) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match cli::Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { 0 };
            let text = if e.use_stderr() {
                e.render().to_string()
            } else {
                e.to_string()
            };
            if e.use_stderr() {
                let _ = write!(err, "{text}");
            } else {
                let _ = write!(out, "{text}");
            }
            return code;
        }
    };
    // output may sit in a buffer (the binary's): flushed here, so that a failed write is
    // reported like any other
    let result = cmd::dispatch(cli, style, out, err)
        .and_then(|code| out.flush().map(|()| code).map_err(Into::into));
    match result {
        Ok(code) => code,
        Err(e) => {
            // a closed pipe (`tokstat parse … | head`) is not an error
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return 0;
            }
            let _ = writeln!(err, "tokstat: {e:#}");
            EXIT_FAILURE
        }
    }
}
