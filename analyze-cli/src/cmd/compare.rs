//! `tokstat compare`: runs side by side, each analysed as `report` does, with the change of
//! every key figure, its interval and a verdict.

use crate::cli::CompareArgs;
use crate::compare::{self, Options, RunSpec};
use crate::render::Style;
use anyhow::Result;
use std::io::Write;

pub fn run(a: &CompareArgs, style: Style, out: &mut dyn Write) -> Result<i32> {
    let opts = Options {
        runs: a.runs.iter().map(|r| RunSpec::parse(r)).collect(),
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
