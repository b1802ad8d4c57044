//! One file per subcommand.

mod compare;
mod demo;
mod export;
mod parse;
mod progress;
mod pulse;
pub mod report;
mod schema;
mod watch;

use crate::cli::{Cli, Command};
use crate::render::Style;
use anyhow::{Context, Result};
use std::io::Write;
use std::path::Path;

/// Runs a parsed command line; returns the exit code.
pub fn dispatch(cli: Cli, style: Style, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let output = match &cli.command {
        Command::Report(a) => a.format.output.clone(),
        Command::Compare(a) => a.format.output.clone(),
        Command::Demo(a) => a.format.output.clone(),
        Command::Schema(a) => a.output.clone(),
        Command::Parse(_) | Command::Export(_) | Command::Pulse(_) | Command::Watch(_) => None,
    };
    match output {
        // a file gets no colour and no terminal's width
        Some(path) => {
            let plain = Style {
                colour: false,
                width: None,
                ..style
            };
            to_file(&path, |file| run(cli, plain, file, err))
        }
        None => run(cli, style, out, err),
    }
}

/// Sets the number of worker threads, for the scan (rayon) and the tables (polars), once
/// per process: a later call (a second command run in the same process, as tests do) keeps
/// the first setting. Without it both use `std::thread::available_parallelism`, which counts
/// the CPU quota of the process's cgroup.
fn threads(n: usize) {
    if std::env::var_os("POLARS_MAX_THREADS").is_none() {
        std::env::set_var("POLARS_MAX_THREADS", n.to_string());
    }
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global();
}

/// Runs `f` writing into a new file at `path` (`--output`), flushed before it returns.
fn to_file(path: &Path, f: impl FnOnce(&mut dyn Write) -> Result<i32>) -> Result<i32> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let code = f(&mut w)?;
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(code)
}

fn run(cli: Cli, style: Style, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let input = match &cli.command {
        Command::Parse(a) => Some(&a.input),
        Command::Report(a) => Some(&a.input),
        Command::Export(a) => Some(&a.input),
        Command::Pulse(a) => Some(&a.input),
        _ => None,
    };
    if let Some(t) = input.and_then(|i| i.timeout) {
        tokstat_parsers::source::set_pipe_timeout(t);
    }
    if let Some(n) = input.and_then(|i| i.threads) {
        threads(usize::from(n));
    }
    match cli.command {
        Command::Parse(a) => parse::run(&a, out, err),
        Command::Report(a) => report::run(
            &crate::report::Options {
                run: a.run.clone(),
                node: a.node.clone(),
                prometheus: report::prometheus(&a.prometheus)?,
                ..report::options(&a.input.inputs, &a.input.dates, &a.completions, &a.server)
            },
            a.format.format,
            a.input.quiet,
            a.input.strict,
            style,
            out,
            err,
        ),
        Command::Compare(a) => compare::run(&a, style, out),
        Command::Demo(a) => demo::run(&a, style, out, err),
        Command::Export(a) => export::run(&a, out, err),
        Command::Schema(a) => schema::run(a.format, out),
        Command::Pulse(a) => pulse::run(&a, style, out),
        Command::Watch(a) => {
            let tty = style.width.is_some() && std::io::IsTerminal::is_terminal(&std::io::stdout());
            watch::run(&a, style, out, tty)
        }
    }
}
