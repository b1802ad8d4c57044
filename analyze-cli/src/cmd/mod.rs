//! One file per subcommand.

mod compare;
mod demo;
mod parse;
mod report;
pub mod schema;

use crate::cli::{Cli, Command};
use anyhow::Result;
use std::io::Write;

/// Runs a parsed command line; returns the exit code.
pub fn dispatch(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    match cli.command {
        Command::Parse(a) => parse::run(&a, out, err),
        Command::Report(a) => report::run(
            &report::options(&a.input, &a.completions, &a.server),
            a.format.format.into(),
            a.input.quiet,
            out,
            err,
        ),
        Command::Compare(a) => compare::run(&a, out),
        Command::Demo(a) => demo::run(&a, out, err),
        Command::Schema(a) => schema::run(a.format, out),
    }
}
