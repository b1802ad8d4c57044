//! `tokstat demo`: the report on the demo run bundled with the sources.

use crate::cli::DemoArgs;
use crate::render::Format;
use crate::report::Options;
use anyhow::{bail, Result};
use std::io::Write;

/// Where the demo run lives in the source tree: two GPUs' server logs, and the job's
/// completions (three 500-record batches, one zstd-compressed, one cut short).
pub const DEMO_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs/demo");
pub const DEMO_COMPLETIONS: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs/completions");

pub fn run(args: &DemoArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<i32> {
    if !std::path::Path::new(DEMO_DIR).is_dir() {
        bail!("the demo run is not at {DEMO_DIR}: run `tokstat demo` from a checkout of the sources, or `tokstat report <your logs>`");
    }
    let opts = Options {
        inputs: vec![DEMO_DIR.to_string(), DEMO_COMPLETIONS.to_string()],
        year: Some(2026),
        ..Options::default()
    };
    let format = args.format.format.into();
    // a heading for people; JSON and HTML stay one document
    if matches!(format, Format::Table | Format::Markdown) {
        writeln!(
            out,
            "tokstat demo: report on {DEMO_DIR} and {DEMO_COMPLETIONS}\n"
        )?;
    }
    super::report::run(&opts, format, true, out, err)
}
