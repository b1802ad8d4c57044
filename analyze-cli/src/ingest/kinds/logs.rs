//! Server logs (SGLang, vLLM, or text of no known engine): scanned in parallel whole-line
//! chunks into each instance's aggregates and digest ([`crate::ingest::instance`]); the
//! serving benchmark summaries a log holds become benchmark runs. Its part of the read:
//! `logs`, and the runs of its consoles.

use super::datetime;
use super::{InOrder, Reader};
use crate::ingest::instance::ChunkSummary;
use crate::ingest::instance::Instance;
use crate::ingest::read::{FileRead, Ingested};
use crate::ingest::scan::{scan_log, visit_chunk, ChunkOut, FileCtx, LineNumbers};
use polars::prelude::*;
use std::collections::BTreeMap;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::record::EventKind;
use tokstat_parsers::scan::Chunk;
use tokstat_parsers::source::{Input, Source};
use tokstat_parsers::stamp::Calendar;

pub struct LogReader;

/// A chunk of a log into its instances' aggregates and series.
fn log_work(file: &FileCtx, chunk: Chunk<'_>) -> (ChunkOut<ChunkSummary>, Calendar) {
    thread_local! {
        /// The size of the last chunk this thread read (see [`ChunkSummary::sized_like`]).
        static LAST: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    }
    let (out, calendar) = visit_chunk(file, chunk, ChunkSummary::sized_like(LAST.get()));
    LAST.set(out.out.size());
    (out, calendar)
}

impl Reader for LogReader {
    fn reads(&self, kind: Kind) -> bool {
        matches!(kind, Kind::Log | Kind::Empty)
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, at: &mut InOrder<'_, '_>) {
        // chunks of a plain file count as they are read (a stream's decompressed bytes are
        // not its size on disk: it counts when done)
        let plain = src.data.at_hand().is_some();
        let kind = at.kind;
        let progress = at.opts.progress.as_deref();
        let counted = at.counted;
        let logs = &mut into.logs;
        let steps = &mut at.steps;
        let work = |f: &FileCtx, c: Chunk<'_>| {
            if let (Some(p), true) = (progress, plain) {
                let n = c.bytes.len() as u64;
                p.read(n);
                counted.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            }
            log_work(f, c)
        };
        let (file, tally, err) = scan_log(
            input,
            std::mem::take(&mut at.instance),
            src,
            at.opts.dates,
            LineNumbers::Relative,
            &work,
            &mut |f: &FileCtx, s: ChunkSummary, before: u64| {
                logs.absorb(f, s, before, steps.as_deref_mut())
            },
        );
        into.skipped.extend(err);
        into.files.push(FileRead {
            file,
            tally,
            kind,
            envelope: None,
        });
        // its serving benchmark summaries are runs, as result files are (named by their
        // line when the file holds several)
        let several = into.logs.consoles.len() > 1;
        into.runs
            .extend(into.logs.consoles.drain(..).map(|(line, mut run)| {
                if several {
                    run.name = format!("{} (line {line})", run.name);
                }
                run
            }));
    }

    fn extend(&self, into: &mut Ingested, other: &mut Ingested) {
        into.logs.extend(std::mem::take(&mut other.logs));
    }

    fn finish(&self, read: &mut Ingested, _interval_s: Option<f64>) {
        for i in read.logs.instances.values_mut() {
            i.digest.finish();
        }
    }

    fn tables(&self, read: &Ingested) -> PolarsResult<Vec<(&'static str, DataFrame)>> {
        let instances = &read.logs.instances;
        Ok(vec![
            ("events", events(instances)?),
            ("config", config(instances)?),
        ])
    }
}

/// Every census kind with a stamp: retractions, preemptions, errors, crashes, server starts
/// (a row per line), and HTTP 4xx / 5xx responses (a row per time slot of an instance's
/// responses, `count` the lines in it: see [`crate::ingest::responses`]).
pub fn events(instances: &BTreeMap<String, Instance>) -> PolarsResult<DataFrame> {
    let mut rows: Vec<(&str, i64, &'static str, u64)> = Vec::new();
    for (n, i) in instances {
        rows.extend(
            i.digest
                .events()
                .iter()
                .map(|e| (n.as_str(), e.ts, e.kind.as_str(), e.count)),
        );
        for &(t, counts) in i.census.responses.slots() {
            for (kind, c) in [
                (EventKind::Http4xx, counts[1]),
                (EventKind::Http5xx, counts[2]),
            ] {
                if c > 0 {
                    rows.push((n.as_str(), t, kind.as_str(), c));
                }
            }
        }
    }
    DataFrame::new_infer_height(vec![
        Column::new(
            "instance".into(),
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        datetime("ts", rows.iter().map(|r| r.1).collect())?,
        Column::new("kind".into(), rows.iter().map(|r| r.2).collect::<Vec<_>>()),
        Column::new("count".into(), rows.iter().map(|r| r.3).collect::<Vec<_>>()),
    ])
}

/// Settings read from start-up lines.
pub fn config(instances: &BTreeMap<String, Instance>) -> PolarsResult<DataFrame> {
    let rows = instances
        .iter()
        .flat_map(|(n, i)| i.digest.settings().iter().map(move |s| (n, s)));
    DataFrame::new_infer_height(vec![
        Column::new(
            "instance".into(),
            rows.clone().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ),
        datetime("ts", rows.clone().map(|r| r.1.ts).collect())?,
        Column::new(
            "key".into(),
            rows.clone().map(|r| r.1.key.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "value".into(),
            rows.map(|r| r.1.value.as_str()).collect::<Vec<_>>(),
        ),
    ])
}
