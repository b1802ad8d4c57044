//! `tokstat export`: every table written into a folder, and what was written.

use crate::cli::{ExportArgs, Partition};
use crate::export::{self, Options};
use crate::render::num::group;
use anyhow::Result;
use std::io::Write;

pub fn run(a: &ExportArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    let opts = Options {
        report: crate::report::Options {
            prometheus: super::report::prometheus(&a.prometheus)?,
            ..super::report::options(&a.input.inputs, &a.input.dates, &a.completions, &a.server)
        },
        to: a.to.clone(),
        format: a.format,
        by_run: a.partition_by.contains(&Partition::Run),
        by_instance: a.partition_by.contains(&Partition::Instance),
        run: a.run.clone(),
        node: a.node.clone(),
    };
    let export::Exported {
        written,
        report,
        merged,
    } = export::run(&opts)?;
    for w in &written {
        writeln!(
            out,
            "{:<12} {:>12} rows in {} file(s)",
            w.table,
            group(w.rows as u64),
            w.files
        )?;
    }
    if merged {
        writeln!(
            out,
            "{:<12} not written: a saved read keeps no stats line (each node's export has its own)",
            "steps"
        )?;
    }
    writeln!(out, "written to {}", a.to.display())?;
    if !a.input.quiet {
        crate::render::accounting::write(err, &report.files, &report.skipped)?;
    }
    super::report::exit_code(&report, a.input.strict, err)
}
