//! `tokstat pulse`: a running job over a window ([`crate::pulse`]).

use crate::cli::{DateArgs, Format, PulseArgs, ServerArgs};
use crate::live::pulse::{self, Options};
use crate::render::{self, Style};
use anyhow::{Context, Result};
use std::io::Write;

pub fn run(a: &PulseArgs, style: Style, out: &mut dyn Write) -> Result<i32> {
    let total = match &a.total_from {
        Some(path) => Some(requests_in(path)?),
        None => a.total,
    };
    let dates = DateArgs {
        year: a.input.dates.year,
        date: a.input.dates.date.clone(),
    };
    let opts = Options {
        report: super::report::options(
            &a.input.inputs,
            &dates,
            &a.completions,
            &ServerArgs::default(),
        ),
        window: a.window,
        samples: a.samples,
        total,
        metrics: a.metrics.clone(),
        save_scrapes: a.save_scrapes.clone(),
        prometheus: match &a.prometheus.prometheus {
            Some(url) => Some(super::report::prometheus_access(
                url,
                &a.prometheus.access,
                0,
                0,
            )?),
            None => None,
        },
    };
    let p = pulse::measure(&opts)?;
    match a.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &serde_json::to_value(&p)?)?;
            writeln!(out)?;
        }
        _ => render::pulse::table(&p, style, out)?,
    }
    Ok(0)
}

/// Requests in a prompts file: its non-empty lines.
pub(super) fn requests_in(path: &std::path::Path) -> Result<u64> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("--total-from {}: cannot read", path.display()))?;
    Ok(bytes
        .split(|&c| c == b'\n')
        .filter(|l| !l.trim_ascii().is_empty())
        .count() as u64)
}
