//! JSON and JSONL: completion records of every known shape, one row per choice, and
//! benchmark result files (whole documents, or records of their requests), read by
//! [`crate::ingest::completions`]. Its part of the read: `completions`, the rows' files,
//! dropped choices, records of no known shape, and benchmark `runs`.

use super::{InOrder, Reader};
use crate::ingest::completions::{read_json, JsonPart};
use crate::ingest::inputs::Skipped;
use crate::ingest::read::{FileRead, Ingested, ReadOptions};
use crate::ingest::scan::FileCtx;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Data, Input, Source};

pub struct JsonReader;

/// Adds an input's part to the read.
fn add(into: &mut Ingested, input: &Input, part: JsonPart, err: Option<Skipped>) {
    into.skipped.extend(err);
    if !part.rows.is_empty() {
        into.completion_files
            .push((into.files.len(), part.rows.len()));
    }
    into.completions.extend(part.rows);
    into.runs.extend(part.runs);
    into.dropped_choices += part.dropped_choices;
    into.unknown_records += part.unknown;
    into.files.push(FileRead {
        file: FileCtx {
            source: input.display(),
            stem: input.stem(),
        },
        tally: part.tally,
        kind: Kind::Json,
    });
}

impl Reader for JsonReader {
    fn reads(&self, kind: Kind) -> bool {
        kind == Kind::Json
    }

    fn read_apart(&self, input: &Input, src: Source, opts: &ReadOptions) -> Option<Ingested> {
        // (a plain file: a stream's bytes are read once, in order)
        if !matches!(src.data, Data::Mapped(_) | Data::Owned(_)) {
            return None;
        }
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
}
