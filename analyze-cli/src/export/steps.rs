//! The `steps` table, written as the logs are read: each chunk's stats lines arrive here
//! once summed into their instance's digest ([`crate::ingest::instance::StepsSink`]), are
//! gathered into row groups, and written; nothing keeps a log's rows.

use super::pages;
use super::staged::StagedFile;
use super::{metadata_pairs, part_dir, FileFormat, Options, Part, ROW_GROUP};
use crate::frames::steps::{Numbers, StepColumn, StepColumns, Strings};
use crate::ingest::series::Series;
use anyhow::Result;
use polars::prelude::*;
use polars_parquet::write::{
    array_to_columns, compress, fallible_streaming_iterator, CompressedPage, DynIter,
    DynStreamingIterator, Encoding, FileWriter, KeyValue, ParquetType, Version, WriteOptions,
};
use std::collections::BTreeMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::Receiver;

/// One chunk's stats lines of an instance (its name, its engine), as the reading hands them
/// over.
pub type Chunk = (String, Option<&'static str>, Series);

/// Writes the `steps` files of the chunks `chunks` brings, until it closes: the rows and
/// files written. An error stops the writing (and drops `chunks`: the reading goes on).
pub fn write(
    opts: &Options,
    run: &str,
    writer: &str,
    chunks: Receiver<Chunk>,
) -> Result<(usize, usize, Vec<super::staged::Staged>)> {
    let mut steps = Steps {
        opts,
        run,
        writer,
        parts: BTreeMap::new(),
    };
    for (name, engine, series) in chunks {
        steps.add(&name, engine, &series)?;
    }
    steps.finish()
}

/// One file of `steps`: its rows gathered up to a row group, then written.
struct StepsFile {
    path: PathBuf,
    sink: Option<Sink>,
    /// The file's staging, put in place when it is complete.
    staged: Option<super::staged::Staged>,
    pending: StepColumns,
    rows: usize,
}

/// The `steps` files of an export, by key (see [`Steps::path`]).
struct Steps<'a> {
    opts: &'a Options,
    run: &'a str,
    writer: &'a str,
    parts: BTreeMap<String, StepsFile>,
}

impl Steps<'_> {
    /// The file an instance's rows go to, and its key among the parts.
    fn path(&self, instance: &str) -> (String, PathBuf) {
        let (o, ext) = (self.opts, self.opts.format.extension());
        let file = format!("part-{}.{ext}", self.writer);
        if o.by_instance {
            let dir = part_dir(o, "steps", self.run, Part::Instance(instance));
            (instance.to_string(), dir.join(file))
        } else if o.by_run {
            (
                String::new(),
                part_dir(o, "steps", self.run, Part::Whole).join(file),
            )
        } else {
            (String::new(), o.to.join(format!("steps.{ext}")))
        }
    }

    /// Adds one chunk's lines of an instance, and writes its file's row group once full.
    fn add(&mut self, instance: &str, engine: Option<&'static str>, series: &Series) -> Result<()> {
        if series.points.is_empty() && series.prefill.is_empty() {
            return Ok(());
        }
        let (key, path) = self.path(instance);
        let part = self.parts.entry(key).or_insert_with(|| StepsFile {
            path,
            sink: None,
            staged: None,
            pending: StepColumns::default(),
            rows: 0,
        });
        let before = part.pending.len();
        part.pending.push(instance, engine, series);
        part.rows += part.pending.len() - before;
        if part.pending.len() >= ROW_GROUP {
            flush(part, self.opts, self.run)?;
        }
        Ok(())
    }

    /// Writes what is pending and closes the files: the rows and files written.
    /// Finishes every file: the rows and files written, and the files, staged.
    fn finish(mut self) -> Result<(usize, usize, Vec<super::staged::Staged>)> {
        let (mut rows, mut files) = (0, 0);
        let mut staged = Vec::new();
        for part in self.parts.values_mut() {
            flush(part, self.opts, self.run)?;
            let finished: Result<()> = match part.sink.take() {
                Some(Sink::Parquet(w)) => w.finish(),
                Some(Sink::Csv(mut w)) => w.finish().map_err(Into::into),
                Some(Sink::Jsonl(mut w)) => w.flush().map_err(Into::into),
                None => Ok(()),
            };
            if let Some(s) = part.staged.take() {
                match finished {
                    Ok(()) => match s.os_error() {
                        Some(_) => return Err(s.explain(anyhow::anyhow!("a write failed"))),
                        None => staged.push(s),
                    },
                    Err(e) => return Err(s.explain(e)),
                }
            } else {
                finished?;
            }
            rows += part.rows;
            files += usize::from(part.rows > 0);
        }
        Ok((rows, files, staged))
    }
}

/// Writes a part's pending rows (opening its file at the first).
fn flush(part: &mut StepsFile, opts: &Options, run: &str) -> Result<()> {
    if part.pending.is_empty() {
        return Ok(());
    }
    if part.sink.is_none() {
        let (sink, staged) = open(&part.path, opts, run)?;
        part.sink = Some(sink);
        part.staged = Some(staged);
    }
    let written = (|| -> Result<()> {
        match part.sink.as_mut() {
            Some(Sink::Parquet(w)) => w.write(&part.pending, run)?,
            Some(Sink::Csv(w)) => w.write_batch(&part.pending.frame(run)?)?,
            Some(Sink::Jsonl(w)) => {
                for row in crate::frames::json_rows(&part.pending.frame(run)?)? {
                    serde_json::to_writer(&mut *w, &row)?;
                    w.write_all(b"\n")?;
                }
            }
            None => {}
        }
        Ok(())
    })();
    if let Err(e) = written {
        return Err(match &part.staged {
            Some(s) => s.explain(e),
            None => e,
        });
    }
    part.pending.clear();
    Ok(())
}

/// An open file of one table, written batch by batch.
enum Sink {
    Parquet(Box<ParquetSink>),
    Csv(polars::io::csv::write::BatchedWriter<StagedFile>),
    Jsonl(BufWriter<StagedFile>),
}

/// Creates a file of `steps` (and its folder), at its staging name.
fn open(path: &Path, opts: &Options, run: &str) -> Result<(Sink, super::staged::Staged)> {
    let (file, staged) = super::staged::create(path)?;
    let sink = match opts.format {
        FileFormat::Parquet => {
            Sink::Parquet(Box::new(ParquetSink::new(file, run, &opts.report.inputs)?))
        }
        FileFormat::Csv => {
            let schema = StepColumns::default().frame(run)?.schema().clone();
            Sink::Csv(CsvWriter::new(file).batched(&schema)?)
        }
        FileFormat::Jsonl => Sink::Jsonl(BufWriter::new(file)),
    };
    Ok((sink, staged))
}

/// A `steps` Parquet file, written a row group at a time through polars-parquet with
/// encodings chosen per column, rather than polars' default (a dictionary tried for every
/// column, found by hashing each row): the strings as the dictionaries [`StepColumns`]
/// builds and the stamps delta-packed (by polars-parquet's encoders), the number columns
/// as [`pages`] makes them. The file reads as every exported file does (the Arrow schema in
/// its metadata: [`metadata_pairs`]).
struct ParquetSink {
    writer: FileWriter<BufWriter<StagedFile>>,
    fields: Vec<ParquetType>,
    options: WriteOptions,
    metadata: Vec<KeyValue>,
    /// The pages of the all-null columns (a list per leaf) by column and rows: every full row group has the
    /// same, so they are encoded and compressed once.
    nulls: BTreeMap<(usize, usize), Vec<Vec<CompressedPage>>>,
}

impl ParquetSink {
    fn new(file: StagedFile, run: &str, inputs: &[String]) -> Result<ParquetSink> {
        let empty = StepColumns::default().frame(run)?;
        let schema = Arc::new(empty.schema().to_arrow(CompatLevel::newest()));
        let options = WriteOptions {
            statistics: StatisticsOptions::default(),
            version: Version::V1,
            compression: super::compression().into(),
            data_page_size: None,
        };
        let writer = FileWriter::try_new(BufWriter::new(file), (*schema).clone(), options)?;
        let fields = writer.parquet_schema().fields().to_vec();
        let metadata: Vec<KeyValue> = metadata_pairs("steps", &empty, run, inputs)
            .into_iter()
            .map(|(key, value)| KeyValue {
                key,
                value: Some(value),
            })
            .collect();
        Ok(ParquetSink {
            writer,
            fields,
            options,
            metadata,
            nulls: BTreeMap::new(),
        })
    }

    /// Writes the rows as one row group.
    fn write(&mut self, rows: &StepColumns, run: &str) -> Result<()> {
        let options = self.options;
        let compressed = |page| Ok(compress(page, vec![], options.compression)?);
        // the column chunks in the schema's order: encoded for these rows, or the cached
        // pages of an all-null column
        enum Chunk {
            Rows(usize),
            Null((usize, usize), usize),
        }
        let mut encoded: Vec<Vec<CompressedPage>> = Vec::with_capacity(self.fields.len());
        let mut chunks = Vec::with_capacity(self.fields.len());
        for (i, ((name, column), field)) in rows
            .columns(Strings::Dictionary, run)?
            .into_iter()
            .zip(&self.fields)
            .enumerate()
        {
            let (array, encoding) = match column {
                StepColumn::Label(array) => (array, encoding(field)),
                StepColumn::Null(name, dtype) => {
                    let key = (i, rows.len());
                    if let std::collections::btree_map::Entry::Vacant(slot) = self.nulls.entry(key)
                    {
                        let array = StepColumn::null_array(name, &dtype, rows.len());
                        let leaves =
                            array_to_columns(array, field.clone(), options, &[Encoding::Plain])?
                                .into_iter()
                                .map(|pages| {
                                    pages.map(|p| compressed(p?)).collect::<Result<Vec<_>>>()
                                })
                                .collect::<Result<Vec<_>>>()?;
                        slot.insert(leaves);
                    }
                    chunks.extend((0..self.nulls[&key].len()).map(|leaf| Chunk::Null(key, leaf)));
                    continue;
                }
                StepColumn::Numbers(numbers) => {
                    let ParquetType::PrimitiveType(t) = field else {
                        anyhow::bail!("steps: {name} is not a number column");
                    };
                    let page = match numbers {
                        Numbers::F32(v) => pages::floats(v, t),
                        Numbers::F64(v) => pages::floats(v, t),
                        Numbers::Count32(v) => pages::counts(v, t),
                        Numbers::Count64(v) => pages::counts(v, t),
                    };
                    chunks.push(Chunk::Rows(encoded.len()));
                    encoded.push(vec![compressed(page)?]);
                    continue;
                }
            };
            for pages in array_to_columns(array, field.clone(), options, &[encoding])? {
                chunks.push(Chunk::Rows(encoded.len()));
                encoded.push(pages.map(|p| compressed(p?)).collect::<Result<_>>()?);
            }
        }
        let nulls = &self.nulls;
        let group = DynIter::new(chunks.iter().map(|chunk| {
            let pages = match chunk {
                Chunk::Rows(i) => &encoded[*i],
                Chunk::Null(key, leaf) => &nulls[key][*leaf],
            };
            Ok(DynStreamingIterator::new(
                fallible_streaming_iterator::convert(pages.iter().map(Ok)),
            ))
        }));
        self.writer.write(rows.len() as u64, group)?;
        Ok(())
    }

    /// Writes the footer.
    fn finish(mut self) -> Result<()> {
        self.writer.end(Some(self.metadata))?;
        self.writer.into_inner().flush()?;
        Ok(())
    }
}

/// The encoding of a label column (see [`StepColumns::labels`]): the strings as
/// dictionaries, the stamps delta-packed (they rise by a few milliseconds a row).
fn encoding(field: &ParquetType) -> Encoding {
    match field.name() {
        "ts" => Encoding::DeltaBinaryPacked,
        _ => Encoding::RleDictionary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::series::{Point, PointKind, Prefill};

    /// A series of every row shape: points with all, some or no gauges, speculative ones,
    /// prompt rates on some, and prefill stamps between them.
    fn mixed(points: usize, seed: u64) -> Series {
        let mut s = Series::default();
        let mut x = seed;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        for i in 0..points {
            let r = next();
            let gauge = |v: f32| if r % 7 == 0 { f32::NAN } else { v };
            if r % 3 == 0 {
                s.prefill.push(Prefill {
                    ts: 1_000 * i as i64,
                    // (deltas of every size, both ways, for the delta-packed counts)
                    new_tokens: if r % 97 == 0 {
                        u32::MAX
                    } else {
                        (r % 5000) as u32
                    },
                    at: s.points.len() as u32,
                });
            }
            let spec = r % 11 == 0;
            s.push(
                Point {
                    ts: 1_000 * i as i64 + 500,
                    gen_tps: if r % 5 == 0 {
                        f64::NAN
                    } else {
                        (r % 9000) as f64 / 3.0
                    },
                    running: gauge(if r % 89 == 0 { 3e9 } else { (r % 200) as f32 }),
                    waiting: gauge((r % 17) as f32),
                    kv_usage: gauge((r % 100) as f32 / 100.0),
                    accept_len: if spec { 2.5 } else { f32::NAN },
                },
                if spec {
                    PointKind::Spec
                } else {
                    PointKind::Stats
                },
                if r % 4 == 0 {
                    (r % 3000) as f64
                } else {
                    f64::NAN
                },
            );
        }
        s
    }

    /// What the Parquet file holds is what was gathered, row for row and null for null, over
    /// several row groups and three instances (one with no engine), with its run's label.
    /// (The interop check, `tests/interop/check_export.py`, compares every row group's
    /// statistics with its values.)
    #[test]
    fn a_written_file_reads_back_as_its_rows() {
        let dir = std::env::temp_dir().join(format!("tokstat-steps-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("steps.parquet");
        let (file, staged) = super::super::staged::create(&path).unwrap();
        let mut sink = ParquetSink::new(file, "c128", &[]).unwrap();
        let mut all = StepColumns::default();
        for (group, (name, engine, points)) in [
            ("gpu0", Some("sglang"), 1000),
            ("engine1", Some("vllm"), 4099),
            ("odd", None, 1),
            ("gpu0", Some("sglang"), 129),
            ("gpu0", Some("sglang"), 2),
        ]
        .into_iter()
        .enumerate()
        {
            let series = mixed(points, group as u64);
            let mut rows = StepColumns::default();
            rows.push(name, engine, &series);
            sink.write(&rows, "c128").unwrap();
            all.push(name, engine, &series);
        }
        sink.finish().unwrap();
        staged.commit().unwrap();
        let read = ParquetReader::new(std::fs::File::open(&path).unwrap())
            .finish()
            .unwrap();
        let want = all.frame("c128").unwrap();
        assert_eq!(read.height(), want.height());
        assert!(read.equals_missing(&want), "{read:?}\n{want:?}");
        assert_eq!(
            read.column("run").unwrap().str().unwrap().get(7),
            Some("c128")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
