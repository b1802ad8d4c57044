//! The kinds of input tokstat reads, one file each behind one trait, [`Reader`], listed in
//! [`READERS`]: server logs, JSON (completion records and benchmark result files),
//! Prometheus scrapes, and what is listed but not read (binary files). Saved reads, the
//! fifth kind, are folders an export wrote: found by path before any file is opened
//! ([`saved`]).
//!
//! A reader owns its reading (in input order, or apart for batches of small files), its part
//! of the read ([`Ingested`]'s fields it fills, saved with it), how that part is merged
//! with another read's and how it is finished, and its rows of the exported tables. Content detection is the parsers'
//! (`tokstat_parsers::detect`). A new kind of input is a new file here, its line in
//! [`READERS`], its field in [`Ingested`] and its rule in `detect`.

mod binary;
pub mod envelopes;
mod json;
mod logs;
mod prometheus;
pub mod saved;

use crate::ingest::instance::StepsSink;
use crate::ingest::read::{Ingested, ReadOptions};
use polars::prelude::{Column, DataFrame, DataType, PlSmallStr, PolarsResult, TimeUnit};
use std::sync::atomic::AtomicU64;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Input, Source};

/// What reading an input in order may use beyond the input itself.
pub struct InOrder<'a, 'b> {
    pub opts: &'a ReadOptions,
    /// The kind the input was detected as.
    pub kind: Kind,
    /// The instance a log's lines belong to (see `tokstat_parsers::source::instance_names`).
    pub instance: String,
    /// Receives each chunk's stats lines as they are read (`export`'s `steps` table).
    pub steps: Option<&'a mut StepsSink<'b>>,
    /// Bytes of a plain file counted as its chunks are read (for the progress display).
    pub counted: &'a AtomicU64,
}

/// One kind of input (see the module docs).
pub trait Reader: Sync {
    /// Whether it reads the inputs detected as `kind`.
    fn reads(&self, kind: Kind) -> bool;

    /// An input read whole, apart from the others and on any thread, as a read of its own
    /// merged in input order; `None` when it is read in order ([`Reader::read`]). For
    /// batches of files too small to split into chunks.
    fn read_apart(&self, _input: &Input, _src: Source, _opts: &ReadOptions) -> Option<Ingested> {
        None
    }

    /// Reads an input in order, into the read so far.
    fn read(&self, into: &mut Ingested, input: &Input, src: Source, at: &mut InOrder<'_, '_>);

    /// Adds its part of `other` (a read saved apart) to `into`, as if `other`'s inputs were
    /// read after `into`'s; called before the inputs' lists are joined.
    fn extend(&self, into: &mut Ingested, other: &mut Ingested);

    /// Finishes its part: the last step of reading (see [`Ingested::finish`]).
    fn finish(&self, _read: &mut Ingested, _interval_s: Option<f64>) {}

    /// Its tables, by the names of the documented schema (`tokstat schema`), built from its
    /// part of a finished read; `export` writes them (the streamed `steps` table aside).
    fn tables(&self, _read: &Ingested) -> PolarsResult<Vec<(&'static str, DataFrame)>> {
        Ok(Vec::new())
    }
}

/// Every kind of input read from files, in the order their parts are merged and finished.
pub static READERS: [&dyn Reader; 5] = [
    &logs::LogReader,
    &envelopes::EnvelopeReader,
    &json::JsonReader,
    &prometheus::PrometheusReader,
    &binary::BinaryReader,
];

/// The tables every reader builds from a finished read, in the readers' order.
pub fn tables(read: &Ingested) -> PolarsResult<Vec<(&'static str, DataFrame)>> {
    let mut all = Vec::new();
    for r in READERS {
        for (name, df) in r.tables(read)? {
            all.push((name, signed(df)?));
        }
    }
    Ok(all)
}

/// Counts as signed integers: Spark reads an unsigned 64-bit column as `decimal(20,0)`, and
/// every count fits.
pub fn signed(mut df: DataFrame) -> PolarsResult<DataFrame> {
    let names: Vec<(PlSmallStr, DataType)> = df
        .columns()
        .iter()
        .filter_map(|c| match c.dtype() {
            DataType::UInt64 => Some((c.name().clone(), DataType::Int64)),
            DataType::UInt32 => Some((c.name().clone(), DataType::Int32)),
            _ => None,
        })
        .collect();
    for (name, to) in names {
        let cast = df.column(&name)?.strict_cast(&to)?;
        df.with_column(cast)?;
    }
    Ok(df)
}

/// A column of naive datetimes in milliseconds (the engines log local time without a zone).
pub fn datetime(name: &str, ms: Vec<i64>) -> PolarsResult<Column> {
    Column::new(name.into(), ms).cast(&DataType::Datetime(TimeUnit::Milliseconds, None))
}

/// [`datetime`] with gaps.
pub fn datetime_opt(name: &str, ms: Vec<Option<i64>>) -> PolarsResult<Column> {
    Column::new(name.into(), ms).cast(&DataType::Datetime(TimeUnit::Milliseconds, None))
}

/// The reader of inputs detected as `kind` (server logs for a kind none claims).
pub fn reader(kind: Kind) -> &'static dyn Reader {
    READERS
        .iter()
        .copied()
        .find(|r| r.reads(kind))
        .unwrap_or(&logs::LogReader)
}
