//! The `steps` table, written as the logs are read: each chunk's stats lines arrive here
//! once summed into their instance's digest ([`crate::ingest::instance::StepsSink`]), are
//! gathered into row groups, and written; nothing keeps a log's rows.

use super::{escape, metadata, FileFormat, Options, ROW_GROUP};
use crate::frames;
use crate::ingest::series::Series;
use anyhow::{Context, Result};
use polars::prelude::*;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;

/// An open file of one table, written batch by batch.
enum Sink {
    Parquet(Box<polars::io::parquet::write::BatchedWriter<File>>),
    Csv(polars::io::csv::write::BatchedWriter<File>),
    Jsonl(std::io::BufWriter<File>),
}

/// One file of `steps`: frames gathered up to a row group, then written.
struct Part {
    path: PathBuf,
    sink: Option<Sink>,
    pending: Option<DataFrame>,
    rows: usize,
}

/// The `steps` files of an export (see the module docs).
pub struct Steps<'a> {
    opts: &'a Options,
    run: &'a str,
    writer: &'a str,
    parts: BTreeMap<String, Part>,
    /// The first error met: later chunks are not written, and `finish` returns it.
    failed: Option<anyhow::Error>,
}

impl<'a> Steps<'a> {
    pub fn new(opts: &'a Options, run: &'a str, writer: &'a str) -> Steps<'a> {
        Steps {
            opts,
            run,
            writer,
            parts: BTreeMap::new(),
            failed: None,
        }
    }

    /// The file an instance's rows go to, and its key among the parts.
    fn path(&self, instance: &str) -> (String, PathBuf) {
        let (o, ext) = (self.opts, self.opts.format.extension());
        let mut dir = o.to.join("steps");
        if o.by_run {
            dir = dir.join(format!("run={}", escape(self.run)));
        }
        if o.by_instance {
            let d = dir.join(format!("instance={}", escape(instance)));
            (
                instance.to_string(),
                d.join(format!("part-{}.{ext}", self.writer)),
            )
        } else if o.by_run {
            (
                String::new(),
                dir.join(format!("part-{}.{ext}", self.writer)),
            )
        } else {
            (String::new(), o.to.join(format!("steps.{ext}")))
        }
    }

    /// Adds one chunk's lines of an instance.
    pub fn add(&mut self, instance: &str, engine: Option<&str>, series: &Series) {
        if self.failed.is_some() || (series.points.is_empty() && series.prefill.is_empty()) {
            return;
        }
        if let Err(e) = self.try_add(instance, engine, series) {
            self.failed = Some(e);
        }
    }

    fn try_add(&mut self, instance: &str, engine: Option<&str>, series: &Series) -> Result<()> {
        let mut df = frames::steps_of(instance, engine, series)?;
        if self.opts.by_instance {
            // the key is the path's: dropped from the files, as readers add it back from there
            let _ = df.drop_in_place("instance");
        }
        let (key, path) = self.path(instance);
        let part = self.parts.entry(key).or_insert_with(|| Part {
            path,
            sink: None,
            pending: None,
            rows: 0,
        });
        part.rows += df.height();
        match &mut part.pending {
            Some(p) => {
                p.vstack_mut_owned(df)?;
            }
            None => part.pending = Some(df),
        }
        if part
            .pending
            .as_ref()
            .is_some_and(|p| p.height() >= ROW_GROUP)
        {
            let (opts, run) = (self.opts, self.run);
            flush(part, opts, run)?;
        }
        Ok(())
    }

    /// Writes what is pending and closes the files: the rows and files written.
    pub fn finish(mut self) -> Result<(usize, usize)> {
        if let Some(e) = self.failed.take() {
            return Err(e);
        }
        let (mut rows, mut files) = (0, 0);
        for part in self.parts.values_mut() {
            flush(part, self.opts, self.run)?;
            match part.sink.take() {
                Some(Sink::Parquet(w)) => {
                    w.finish()?;
                }
                Some(Sink::Csv(mut w)) => w.finish()?,
                Some(Sink::Jsonl(mut w)) => {
                    use std::io::Write;
                    w.flush()?;
                }
                None => {}
            }
            rows += part.rows;
            files += usize::from(part.rows > 0);
        }
        Ok((rows, files))
    }
}

/// Writes a part's pending rows (opening its file at the first).
fn flush(part: &mut Part, opts: &Options, run: &str) -> Result<()> {
    let Some(mut df) = part.pending.take() else {
        return Ok(());
    };
    df.rechunk_mut();
    if part.sink.is_none() {
        let path = &part.path;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let file =
            File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
        let schema = df.schema().clone();
        part.sink = Some(match opts.format {
            FileFormat::Parquet => Sink::Parquet(Box::new(
                ParquetWriter::new(file)
                    .with_compression(super::compression())
                    .with_statistics(StatisticsOptions::default())
                    .with_row_group_size(Some(ROW_GROUP))
                    .with_key_value_metadata(Some(metadata("steps", &df, run, &opts.report.inputs)))
                    .batched(&schema)?,
            )),
            FileFormat::Csv => Sink::Csv(CsvWriter::new(file).batched(&schema)?),
            FileFormat::Jsonl => Sink::Jsonl(std::io::BufWriter::new(file)),
        });
    }
    match &mut part.sink {
        Some(Sink::Parquet(w)) => w.write_batch(&df)?,
        Some(Sink::Csv(w)) => w.write_batch(&df)?,
        Some(Sink::Jsonl(w)) => {
            use std::io::Write;
            for row in frames::json_rows(&df)? {
                serde_json::to_writer(&mut *w, &row)?;
                w.write_all(b"\n")?;
            }
        }
        None => {}
    }
    Ok(())
}
