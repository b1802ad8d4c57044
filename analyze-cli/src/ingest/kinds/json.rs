//! JSON and JSONL: completion records of every known shape, one row per choice, and
//! benchmark result files (whole documents, or records of their requests), read by
//! [`crate::ingest::completions`]. Its part of the read: `completions`, the rows' files,
//! dropped choices, records of no known shape, and benchmark `runs`.

use super::datetime_opt;
use super::{InOrder, Reader};
use crate::ingest::completions::CompletionRow;
use crate::ingest::completions::{read_json, JsonPart};
use crate::ingest::inputs::Skipped;
use crate::ingest::read::{FileRead, Ingested, ReadOptions};
use crate::ingest::scan::FileCtx;
use polars::prelude::*;
use tokstat_parsers::completion::Finish;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::loadgen::Request;
use tokstat_parsers::source::{Input, Source};

pub struct JsonReader;

/// Adds an input's part to the read.
fn add(into: &mut Ingested, input: &Input, part: JsonPart, err: Option<Skipped>) {
    into.skipped.extend(err);
    if !part.rows.is_empty() {
        into.completion_files
            .push((into.files.len(), part.rows.len()));
    }
    into.completions.extend(part.rows);
    into.runs.extend(part.runs.into_iter().map(|mut r| {
        r.files.push(input.display());
        if let Some(view) = &mut r.server {
            view.file = input.display();
        }
        r
    }));
    into.dropped_choices += part.dropped_choices;
    into.unknown_records += part.unknown;
    into.files.push(FileRead {
        file: FileCtx {
            source: input.display(),
            stem: input.stem(),
        },
        tally: part.tally,
        kind: Kind::Json,
        envelope: None,
    });
}

impl Reader for JsonReader {
    fn reads(&self, kind: Kind) -> bool {
        kind == Kind::Json
    }

    fn read_apart(&self, input: &Input, src: Source, opts: &ReadOptions) -> Option<Ingested> {
        // (a plain file: a stream's bytes are read once, in order)
        src.data.at_hand()?;
        let at_open = src.at_open;
        let (part, err) = read_json(input, src, &opts.paths);
        let mut read = Ingested::default();
        add(
            &mut read,
            input,
            part,
            err.or_else(|| Skipped::changed(input, at_open)),
        );
        Some(read)
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, at: &mut InOrder<'_, '_>) {
        let (part, err) = read_json(input, src, &at.opts.paths);
        add(into, input, part, err);
    }

    fn extend(&self, into: &mut Ingested, other: &mut Ingested) {
        let shift = into.files.len();
        into.completion_files.extend(
            other
                .completion_files
                .drain(..)
                .map(|(file, rows)| (file + shift, rows)),
        );
        into.completions.append(&mut other.completions);
        into.dropped_choices += std::mem::take(&mut other.dropped_choices);
        into.unknown_records += std::mem::take(&mut other.unknown_records);
        into.runs.append(&mut other.runs);
    }

    fn finish(&self, read: &mut Ingested, _interval_s: Option<f64>) {
        tokstat_parsers::loadgen::join(&mut read.runs);
    }

    fn tables(&self, read: &Ingested) -> PolarsResult<Vec<(&'static str, DataFrame)>> {
        Ok(vec![
            ("completions", completions(read)?),
            ("requests", requests(read)?),
        ])
    }
}

/// One row per completion (per choice): the file it came from and its place among the
/// file's records, token counts, the finish reason (stop, length, error, abort, other),
/// latency and creation time where the record has them.
pub fn completions(read: &Ingested) -> PolarsResult<DataFrame> {
    let mut source = Vec::with_capacity(read.completions.len());
    let mut record = Vec::with_capacity(read.completions.len());
    for &(file, n) in &read.completion_files {
        let name = read.files[file].file.source.as_str();
        source.extend(std::iter::repeat_n(name, n));
        record.extend(1..=n as u64);
    }
    let rows = &read.completions;
    let count = |f: fn(&CompletionRow) -> Option<u64>| rows.iter().map(f).collect::<Vec<_>>();
    DataFrame::new_infer_height(vec![
        Column::new("source".into(), source),
        Column::new("record".into(), record),
        Column::new("output_tokens".into(), count(|r| r.completion_tokens.get())),
        Column::new("input_tokens".into(), count(|r| r.prompt_tokens.get())),
        Column::new(
            "reasoning_tokens".into(),
            count(|r| r.reasoning_tokens.get()),
        ),
        Column::new("output_chars".into(), count(|r| r.output_chars.get())),
        Column::new(
            "finish_reason".into(),
            rows.iter().map(|r| finish(r.finish)).collect::<Vec<_>>(),
        ),
        Column::new(
            "latency_s".into(),
            rows.iter().map(CompletionRow::latency).collect::<Vec<_>>(),
        ),
        datetime_opt(
            "created",
            rows.iter()
                .map(|r| r.created().map(|s| s as i64 * 1000))
                .collect(),
        )?,
    ])
}

/// A finish reason normalised to stop, length, error, abort or other.
fn finish(f: Finish) -> &'static str {
    match f {
        Finish::Stop => "stop",
        Finish::Length => "length",
        Finish::Error => "error",
        Finish::Abort => "abort",
        _ => "other",
    }
}

/// One row per request of every load generator's result files, in one schema: the tool and
/// the run, latencies in milliseconds, when it was sent and ended.
pub fn requests(read: &Ingested) -> PolarsResult<DataFrame> {
    let rows: Vec<(&str, &Request, &str, bool)> = read
        .runs
        .iter()
        .flat_map(|run| {
            run.requests
                .iter()
                .map(move |r| (run.name.as_str(), r, run.tool.name(), run.epoch))
        })
        .collect();
    // dates only from Unix times (inference-perf's are a monotonic clock's)
    let at = |f: fn(&Request) -> Option<f64>| {
        rows.iter()
            .map(|(_, r, _, epoch)| f(r).filter(|_| *epoch).map(|s| (s * 1000.0).round() as i64))
            .collect::<Vec<_>>()
    };
    let ms = |f: fn(&Request) -> Option<f64>| {
        rows.iter()
            .map(|(_, r, _, _)| f(r).map(|s| s * 1000.0))
            .collect::<Vec<_>>()
    };
    DataFrame::new_infer_height(vec![
        Column::new("tool".into(), rows.iter().map(|r| r.2).collect::<Vec<_>>()),
        Column::new(
            "bench_run".into(),
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        Column::new(
            "request".into(),
            rows.iter().map(|r| r.1.index).collect::<Vec<_>>(),
        ),
        Column::new(
            "input_tokens".into(),
            rows.iter().map(|r| r.1.input_len).collect::<Vec<_>>(),
        ),
        Column::new(
            "output_tokens".into(),
            rows.iter().map(|r| r.1.output_len).collect::<Vec<_>>(),
        ),
        Column::new("ttft_ms".into(), ms(|r| r.ttft_s)),
        Column::new("tpot_ms".into(), ms(|r| r.tpot_s)),
        Column::new("itl_ms".into(), ms(|r| r.itl_mean_s)),
        Column::new("e2e_ms".into(), ms(|r| r.e2e_s)),
        Column::new(
            "error".into(),
            rows.iter().map(|r| r.1.error).collect::<Vec<_>>(),
        ),
        Column::new(
            "cancelled".into(),
            rows.iter().map(|r| r.1.cancelled).collect::<Vec<_>>(),
        ),
        datetime_opt("start", at(|r| r.start_s))?,
        datetime_opt("end", at(|r| r.end_s))?,
    ])
}
