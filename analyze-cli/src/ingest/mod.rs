//! Reading inputs: paths expanded and opened, logs scanned in parallel chunks into each
//! instance's aggregates and series, completion records into rows, benchmark result files and
//! Prometheus scrapes, every line accounted for. Nothing here analyses or prints.

// no panics on any input: the same denials as the parsers crate (see its lib.rs)
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

mod aiperf_parquet;
pub mod census;
pub mod completions;
pub mod digest;
pub mod inputs;
pub mod instance;
pub mod kinds;
pub mod progress;
pub mod prometheus_server;
pub mod read;
pub mod responses;
pub mod scan;
pub mod scrapes;
pub mod series;

pub use kinds::saved;
pub use read::{FileRead, Ingested, Limits, ReadOptions};

use crate::ingest::inputs::{open_upto, Skipped};
use crate::ingest::instance::StepsSink;
use crate::ingest::kinds::{InOrder, READERS};
use rayon::prelude::*;
use tokstat_parsers::scan::CHUNK;
use tokstat_parsers::source::{instance_names, Input};

fn limit_of(limits: &Limits, input: &Input) -> Option<u64> {
    match input {
        Input::Path(p) => limits.as_ref()?.get(p).copied(),
        Input::Stdin | Input::Bytes(_) => None,
    }
}

impl Ingested {
    /// The last step of reading: each instance's events and settings in time order, each
    /// scrape placed in time (`interval_s` apart where they carry no time). Nothing is
    /// dropped or summed: a read finished, saved and merged with others, then finished
    /// again, is the read of all their inputs finished once. The analyses take a finished
    /// read by shared reference and change nothing in it.
    pub fn finish(&mut self, interval_s: Option<f64>) {
        for kind in READERS {
            kind.finish(self, interval_s);
        }
    }

    /// Adds another read (a saved one: see [`saved`]), as if its inputs were given after
    /// these.
    pub fn extend(&mut self, mut other: Ingested) {
        for kind in READERS {
            kind.extend(self, &mut other);
        }
        self.files.append(&mut other.files);
        self.skipped.append(&mut other.skipped);
        self.warnings.append(&mut other.warnings);
    }
}

/// Reads every input: logs in parallel chunks (one file after the other, in order), small
/// JSON files side by side, scrapes whole. An input that cannot be read is listed in
/// [`Ingested::skipped`], never fatal.
pub fn read(inputs: &[Input], opts: &ReadOptions) -> Ingested {
    read_with(inputs, opts, None)
}

/// [`read`], handing every chunk's stats lines to `steps` as they are read.
pub fn read_with(
    inputs: &[Input],
    opts: &ReadOptions,
    mut steps: Option<&mut StepsSink<'_>>,
) -> Ingested {
    let mut r = Ingested::default();
    r.logs.bucket = opts.bucket;
    let names = instance_names(inputs);
    let size = |input: &Input| match input {
        Input::Path(p) => std::fs::metadata(p).map_or(0, |m| m.len()),
        Input::Bytes(b) => b.bytes.len() as u64,
        Input::Stdin => 0,
    };
    let progress = opts.progress.as_deref();
    if let Some(p) = progress {
        p.start(inputs.len() as u64, inputs.iter().map(size).sum());
    }
    // A folder of 500-record batch files is hundreds of JSONL files too small to split into
    // chunks: read one after the other they kept a core idle. Such files (plain, and no
    // bigger than a chunk, so that a worker reads each whole and never waits on other work)
    // are read side by side first; the rest is read below, in order, each in parallel
    // chunks (logs of one instance build on each other). Only regular files are looked at
    // here: the others are opened once, below (a pipe's first bytes, read here, would be
    // lost).
    let small = |input: &Input| match input {
        Input::Path(p) => {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= CHUNK as u64)
        }
        Input::Bytes(b) => b.bytes.len() <= CHUNK,
        Input::Stdin => false,
    };
    let apart: Vec<Option<Ingested>> = inputs
        .par_iter()
        .map(|input| {
            if !small(input) {
                return None;
            }
            let opened = open_upto(input, limit_of(&opts.limits, input));
            let src = opened.source.ok()?;
            kinds::reader(opened.kind).read_apart(input, src, opts)
        })
        .collect();
    for ((input, name), part) in inputs.iter().zip(names).zip(apart) {
        if let Some(part) = part {
            r.extend(part);
            if let Some(p) = progress {
                p.file_done(size(input), 0);
            }
            continue;
        }
        let counted = std::sync::atomic::AtomicU64::new(0);
        let opened = open_upto(input, limit_of(&opts.limits, input));
        let src = match opened.source {
            Ok(s) => s,
            Err(sk) => {
                r.skipped.push(sk);
                if let Some(p) = progress {
                    p.file_done(size(input), 0);
                }
                continue;
            }
        };
        let (at_open, skipped_before) = (src.at_open, r.skipped.len());
        let mut at = InOrder {
            opts,
            kind: opened.kind,
            instance: name,
            steps: steps.as_deref_mut(),
            counted: &counted,
        };
        kinds::reader(opened.kind).read(&mut r, input, src, &mut at);
        // a file that changed while read says so, unless its reading already failed
        if r.skipped.len() == skipped_before {
            r.skipped.extend(Skipped::changed(input, at_open));
        }
        if let Some(p) = progress {
            p.file_done(size(input), counted.into_inner());
        }
    }
    r
}
