//! `tokstat compare`: runs side by side, each analysed as `report` does, with the change of
//! every key figure, its interval and a verdict.

use crate::cli::CompareArgs;
use crate::compare::{self, Options, RunSpec};
use crate::render::Style;
use anyhow::Result;
use std::io::Write;

/// A run of `compare --prometheus URL`: `label=T1..T2`, a window of the server.
fn window(arg: &str, q: &crate::ingest::prometheus_server::Query) -> Result<RunSpec> {
    use crate::ingest::prometheus_server::parse_time;
    use anyhow::Context;
    let (label, span) = arg
        .split_once('=')
        .with_context(|| format!("{arg:?}: with --prometheus, a run is a window: LABEL=T1..T2"))?;
    let (a, b) = span
        .split_once("..")
        .with_context(|| format!("{arg:?}: a window is T1..T2"))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    Ok(RunSpec {
        label: label.to_string(),
        inputs: Vec::new(),
        benchmark: None,
        prometheus: Some(crate::ingest::prometheus_server::Query {
            since_ms: parse_time(a, now).with_context(|| format!("{arg:?}"))?,
            until_ms: parse_time(b, now).with_context(|| format!("{arg:?}"))?,
            ..q.clone()
        }),
    })
}

pub fn run(a: &CompareArgs, style: Style, out: &mut dyn Write) -> Result<i32> {
    let server = super::report::prometheus(&a.prometheus)?;
    let runs = match &server {
        None => a.runs.iter().map(|r| RunSpec::parse(r)).collect(),
        Some(q) => a
            .runs
            .iter()
            .map(|r| window(r, q))
            .collect::<Result<Vec<_>>>()?,
    };
    let opts = Options {
        runs,
        // each run has its own inputs
        report: super::report::options(&[], &a.dates, &a.completions, &a.server),
        threshold: a.threshold,
        force: a.force,
        segments: a.segments,
    };
    let c = super::progress::with_bar(false, |progress| {
        compare::build(&Options {
            report: crate::report::Options {
                progress,
                ..opts.report.clone()
            },
            ..opts.clone()
        })
    })?;
    a.format.format.render_comparison(&c, style, out)?;
    Ok(0)
}
