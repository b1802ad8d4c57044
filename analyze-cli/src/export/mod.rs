//! `export`: every table of the schema written as files a notebook or a query engine reads —
//! Parquet (zstd, min / max / null-count statistics, row groups of 128 k rows, key-value metadata naming the
//! tokstat and schema versions, the table, the run, the inputs and each column's unit), CSV
//! or JSON lines — with the report beside them as `report.json`.
//!
//! `--partition-by run,instance` lays tables out in folders,
//! `TABLE/run-LABEL/instance-NAME/part-WRITER.parquet` (see [`part_dir`]), with file names
//! unique per writer (host, process, time), so that the nodes of a cluster export their own
//! logs into one shared folder and DuckDB, polars, Spark or Dask read the union as one table
//! per kind. Every file of a table has one schema ([`conform`]).

mod pages;
mod staged;
mod steps;

use crate::frames;
use crate::ingest::kinds;
use crate::ingest::saved;
use crate::ingest::series::Series;
use crate::ingest::Ingested;
use crate::report::{self, Report};
use crate::schema::{unit, TABLES};
use anyhow::{bail, Context, Result};
use polars::prelude::*;
use std::path::{Path, PathBuf};

/// The file format of the tables (`--format` of `export`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FileFormat {
    #[default]
    Parquet,
    Csv,
    Jsonl,
}

impl FileFormat {
    pub(crate) fn extension(self) -> &'static str {
        match self {
            FileFormat::Parquet => "parquet",
            FileFormat::Csv => "csv",
            FileFormat::Jsonl => "jsonl",
        }
    }
}

/// What to export, where, and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub report: report::Options,
    pub to: PathBuf,
    pub format: FileFormat,
    /// Partition by the run's label.
    pub by_run: bool,
    /// Partition by instance (tables that have the column).
    pub by_instance: bool,
    /// The run's label (default: the folder or file name of the first input).
    pub run: Option<String>,
    /// The node the inputs are read on (default: the host name), saved with the read.
    pub node: Option<String>,
}

/// One table written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub table: &'static str,
    pub rows: usize,
    pub files: usize,
}

/// What an export wrote.
#[derive(Debug)]
pub struct Exported {
    pub written: Vec<Written>,
    pub report: report::Report,
    /// Read from exported datasets' saved reads: no `steps` (the nodes' exports hold them).
    pub merged: bool,
}

/// Chunks read and not yet gathered into `steps`, at most: the reading runs ahead of the
/// writing by this much (each is a few hundred kilobytes) before it waits.
const CHUNKS_WAITING: usize = 64;

/// Rows in a Parquet row group: large enough for scans, small enough to skip by statistics.
pub(crate) const ROW_GROUP: usize = 128 * 1024;

/// zstd at level 1 rather than the default 3: exporting a 1.1 GB log takes about a tenth
/// less time, for a `steps` file 14% larger (see bench/README.md).
pub(crate) fn compression() -> ParquetCompression {
    ParquetCompression::Zstd(polars_parquet::write::ZstdLevel::try_new(1).ok())
}

/// The host's name (`host` when none is found).
pub fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into())
}

/// A name unique to this writer: host, process and start time.
pub fn writer_id() -> String {
    let host = host_name();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{}-{}-{nanos:x}", escape(&host), std::process::id())
}

/// A value as a path component: characters outside `[A-Za-z0-9._-]` as `%XX`.
pub(crate) fn escape(v: &str) -> String {
    v.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The run's label: given; from exported datasets, the label their saved reads share;
/// else the first input's folder or file name.
fn label(opts: &Options) -> String {
    if let Some(run) = &opts.run {
        return run.clone();
    }
    let mut runs = std::collections::BTreeSet::new();
    for input in &opts.report.inputs {
        for path in saved::find(Path::new(input)).unwrap_or_default() {
            match saved::header(&path) {
                Ok(h) => runs.insert(h.run),
                Err(_) => runs.insert(String::new()),
            };
        }
    }
    if runs.len() == 1 {
        if let Some(run) = runs.pop_first().filter(|r| !r.is_empty()) {
            return run;
        }
    }
    opts.run.clone().unwrap_or_else(|| {
        opts.report
            .inputs
            .first()
            .and_then(|i| Path::new(i.trim_end_matches('/')).file_name())
            .map_or_else(|| "run".into(), |n| n.to_string_lossy().into_owned())
    })
}

pub(crate) fn metadata(
    table: &str,
    df: &DataFrame,
    run: &str,
    inputs: &[String],
) -> KeyValueMetadata {
    KeyValueMetadata::from_static(metadata_pairs(table, df, run, inputs))
}

/// The key-value metadata of a table's Parquet files: tokstat's version, the report's
/// (`report.json` beside) and the tables' schema versions, the table, the run, the inputs and each column's unit.
pub fn metadata_pairs(
    table: &str,
    df: &DataFrame,
    run: &str,
    inputs: &[String],
) -> Vec<(String, String)> {
    // (the columns' units from the frame at hand: every batch of a table has its columns)
    let units: serde_json::Map<String, serde_json::Value> = df
        .get_column_names()
        .iter()
        .map(|c| (c.to_string(), serde_json::Value::from(unit(c))))
        .collect();
    // the Arrow schema readers take the columns' types from: strings as `large_string`
    // (polars' own `string_view` is one pandas, and so Ray Data and older pyarrow-based
    // readers, cannot take); the Parquet columns are the same either way
    let arrow = df.schema().to_arrow(CompatLevel::oldest());
    let arrow = polars_parquet::write::schema_to_metadata_key(&arrow);
    vec![
        (arrow.key, arrow.value.unwrap_or_default()),
        ("tokstat_version".into(), env!("CARGO_PKG_VERSION").into()),
        (
            "tokstat_schema_version".into(),
            crate::report::SCHEMA_VERSION.to_string(),
        ),
        (
            "tokstat_table_schema_version".into(),
            crate::schema::VERSION.to_string(),
        ),
        ("tokstat_table".into(), table.into()),
        ("tokstat_run".into(), run.into()),
        (
            "tokstat_inputs".into(),
            serde_json::to_string(inputs).unwrap_or_default(),
        ),
        (
            "tokstat_units".into(),
            serde_json::Value::Object(units).to_string(),
        ),
    ]
}

fn write_file(
    path: &Path,
    df: &mut DataFrame,
    format: FileFormat,
    meta: KeyValueMetadata,
) -> Result<staged::Staged> {
    staged::write_staged(path, |file| {
        match format {
            FileFormat::Parquet => {
                ParquetWriter::new(file)
                    .with_compression(compression())
                    .with_statistics(StatisticsOptions::default())
                    .with_row_group_size(Some(ROW_GROUP))
                    .with_key_value_metadata(Some(meta))
                    .finish(df)?;
            }
            FileFormat::Csv => {
                CsvWriter::new(file).finish(df)?;
            }
            FileFormat::Jsonl => {
                use std::io::Write;
                let mut w = std::io::BufWriter::new(file);
                for row in frames::json_rows(df)? {
                    serde_json::to_writer(&mut w, &row)?;
                    w.write_all(b"\n")?;
                }
                w.flush()?;
            }
        }
        Ok(())
    })
}

/// The folder of a table's files in a partitioned export: `TABLE/run-LABEL`, then
/// `instance-NAME` (or `total`, for the run's total timeline rows) when partitioned by
/// instance. `KEY-VALUE`, not Hive's `KEY=VALUE`: Spark, pyarrow, DuckDB and polars infer a
/// Hive value such as `run=128` as a number, and every file holds its `run` and `instance`
/// columns itself. (A folder of Spark's starts with neither `_` nor `.`, which it skips.)
pub(crate) fn part_dir(opts: &Options, table: &str, run: &str, instance: Part) -> PathBuf {
    let mut dir = opts.to.join(table);
    if opts.by_run {
        dir = dir.join(format!("run-{}", escape(run)));
    }
    match instance {
        Part::Whole => dir,
        Part::Total => dir.join("total"),
        Part::Instance(name) => dir.join(format!("instance-{}", escape(name))),
    }
}

/// Which rows of a table a file of a partitioned export holds.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Part<'a> {
    /// All of them (a table with no `instance`, or no partitioning by instance).
    Whole,
    /// The run's total rows (`instance` null).
    Total,
    Instance(&'a str),
}

/// Where the read is saved: one file per writer when partitioned, as the tables are.
fn saved_path(opts: &Options, run: &str, writer: &str) -> PathBuf {
    let dir = opts.to.join(saved::DIR);
    if opts.by_run || opts.by_instance {
        dir.join(format!("run-{}", escape(run)))
            .join(format!("read-{writer}.bin"))
    } else {
        dir.join("read.bin")
    }
}

/// The tables of a read and its report other than `steps`, by name, in the schema's order
/// (empty ones left out), each as [`conform`] makes it: each input kind's, and the report's
/// timeline, instances, segments and the runs on one clock.
pub fn tables(r: &Report, read: &Ingested, run: &str) -> Result<Vec<(&'static str, DataFrame)>> {
    let mut all = kinds::tables(read)?;
    all.push((
        "timeline",
        frames::timeline_by_instance(&r.timeline, &r.instances, r.timeline_bucket_s)?,
    ));
    all.push(("instances", frames::instances(&r.instances)?));
    all.push(("segments", frames::segments(&r.segments)?));
    all.push(("one_clock", frames::one_clock(&r.one_clock)?));
    let rank = |name: &str| TABLES.iter().position(|t| t.0 == name);
    all.sort_by_key(|(name, _)| rank(name));
    all.into_iter()
        .filter(|(_, df)| df.height() > 0)
        .map(|(name, df)| Ok((name, conform(name, run, df)?)))
        .collect()
}

/// A table as every file and writer has it, whatever its rows: the run's label first, then
/// every documented column in the schema's order, one that no row has typed as documented
/// (a reader of many files then finds one schema, with no column left out of some).
fn conform(table: &str, run: &str, df: DataFrame) -> Result<DataFrame> {
    let cols = crate::schema::columns(table)
        .with_context(|| format!("{table} is not a table of the schema"))?;
    if let Some(c) = df
        .get_column_names()
        .iter()
        .find(|c| !cols.iter().any(|d| d.0 == c.as_str()))
    {
        bail!("{table}.{c} is not a documented column");
    }
    let height = df.height();
    let columns = cols
        .iter()
        .map(|&(name, ty, _)| match (name, df.column(name)) {
            ("run", _) => Ok(Column::new("run".into(), vec![run; height])),
            (_, Ok(c)) => Ok(c.clone()),
            (_, Err(_)) => Ok(Column::full_null(
                name.into(),
                height,
                &crate::schema::dtype(ty),
            )),
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(DataFrame::new(height, columns)?)
}

/// Reads the inputs once (logs and other files, or the saved reads of exported datasets:
/// not both), writes every table and `report.json`; returns what was written and the report.
/// From saved reads, `steps` is not written (a read keeps no stats line: each node's export
/// has its own) and the merged read is saved, so the merged run is itself a dataset.
pub fn run(opts: &Options) -> Result<Exported> {
    let datasets = opts
        .report
        .inputs
        .iter()
        .filter(|i| saved::find(Path::new(i)).is_some())
        .count();
    if datasets > 0 && datasets < opts.report.inputs.len() {
        bail!(
            "export reads either exported datasets or the files they were made from, not both \
             (the steps table would hold the lines of some inputs only): export the files \
             first, then export the datasets together"
        );
    }
    let run = label(opts);
    let writer = writer_id();
    let ext = opts.format.extension();
    let mut written = Vec::new();
    let partitioned = opts.by_run || opts.by_instance;
    // steps: written chunk by chunk as the logs are read (a 1 GB log has millions), one
    // file per instance when partitioned, on a thread of its own (`steps::write`): its
    // gathering and Parquet encoding overlap the reading instead of holding up the thread
    // that takes chunks in order. Chunks are handed over, not copied.
    let (built, steps) = std::thread::scope(|scope| {
        let (send, recv) = std::sync::mpsc::sync_channel::<steps::Chunk>(CHUNKS_WAITING);
        let (run, writer) = (&run, &writer);
        let writing = scope.spawn(move || steps::write(opts, run, writer, recv));
        let read = report::read(
            &opts.report,
            Some(&mut |name, engine, series: Series| {
                // (a closed channel: the writer failed, and says why when joined)
                let _ = send.send((name.to_string(), engine, series));
            }),
        );
        drop(send);
        // the read saved for `report DIR` (the analyses leave it as it is); a merged
        // read names no node of its own unless given one
        let built = read.and_then(|read| {
            let built = report::analyze(read, &opts.report)?;
            let node = match (&opts.node, datasets) {
                (Some(n), _) => Some(n.clone()),
                (None, 0) => Some(host_name()),
                (None, _) => None,
            };
            let header = saved::Header::new(run, node.as_deref(), writer, &opts.report.inputs);
            // (staged as every file of the export, and put in place last: a node's read
            // in the folder says its export finished, every table of it in place)
            let path = saved_path(opts, run, writer);
            let saved = staged::Staged::adopt(&path);
            if let Err(e) = saved::save(saved.staging(), &header, &built.read) {
                bail!("cannot write {}: {}", path.display(), e.root_cause());
            }
            Ok((built, saved))
        });
        let steps = writing
            .join()
            .unwrap_or_else(|_| Err(anyhow::anyhow!("the steps writer stopped")));
        (built, steps)
    });
    let (built, saved) = built?;
    // every file of the export stays staged until all are written: then the tables, the
    // report and last the read are put in place, so that a killed or failed export shows
    // nothing, and a retried one no second copy of what its first attempt wrote
    let (rows, files, mut staged) = steps?;
    if rows > 0 {
        written.push(Written {
            table: "steps",
            rows,
            files,
        });
    }
    for (table, mut df) in tables(&built.report, &built.read, &run)? {
        let meta = metadata(table, &df, &run, &opts.report.inputs);
        if !partitioned {
            staged.push(write_file(
                &opts.to.join(format!("{table}.{ext}")),
                &mut df,
                opts.format,
                meta,
            )?);
            written.push(Written {
                table,
                rows: df.height(),
                files: 1,
            });
            continue;
        }
        let by_instance = opts.by_instance
            && df
                .get_column_names()
                .iter()
                .any(|c| c.as_str() == "instance");
        // (the key stays in the files: each file holds what its path says)
        let parts: Vec<(Option<Option<String>>, DataFrame)> = if by_instance {
            df.partition_by_stable(["instance"], true)?
                .into_iter()
                .map(|part| {
                    let name = part
                        .column("instance")
                        .ok()
                        .and_then(|c| c.str().ok()?.get(0).map(str::to_string));
                    (Some(name), part)
                })
                .collect()
        } else {
            vec![(None, df.clone())]
        };
        let rows = df.height();
        let files = parts.len();
        for (instance, mut part) in parts {
            let which = match &instance {
                None => Part::Whole,
                Some(None) => Part::Total,
                Some(Some(name)) => Part::Instance(name),
            };
            staged.push(write_file(
                &part_dir(opts, table, &run, which).join(format!("part-{writer}.{ext}")),
                &mut part,
                opts.format,
                meta.clone(),
            )?);
        }
        written.push(Written { table, rows, files });
    }
    // the report beside the tables (one per writer when partitioned)
    let report_path = if partitioned {
        opts.to
            .join("report")
            .join(format!("run-{}", escape(&run)))
            .join(format!("report-{writer}.json"))
    } else {
        opts.to.join("report.json")
    };
    let mut buf = Vec::new();
    crate::render::json::write(&mut buf, &built.report)?;
    staged.push(staged::write_staged(&report_path, |f| {
        Ok(std::io::Write::write_all(f, &buf)?)
    })?);
    // (serving benchmark summaries have no table: their figures are in `report.json`)
    if written.is_empty() && built.report.bench_runs.is_empty() {
        bail!("nothing to export: no input held a record of any table");
    }
    for s in staged {
        s.commit()?;
    }
    saved.commit()?;
    Ok(Exported {
        written,
        report: built.report,
        merged: datasets > 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::dtype as dtype_of;
    use crate::schema::TABLES;

    fn fixtures(rel: &str) -> String {
        format!("{}/../fixtures/{rel}", env!("CARGO_MANIFEST_DIR"))
    }

    /// Every table written agrees with the schema column by column (name and type), holds
    /// the rows the report counts, and `report.json` is the report.
    #[test]
    fn written_tables_follow_the_schema() {
        let dir = std::env::temp_dir().join(format!("tokstat-export-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let opts = Options {
            report: report::Options {
                inputs: vec![fixtures("runs/demo"), fixtures("runs/completions")],
                year: Some(2026),
                ..Default::default()
            },
            to: dir.clone(),
            format: FileFormat::Parquet,
            by_run: false,
            by_instance: false,
            run: None,
            node: None,
        };
        let Exported {
            written, report, ..
        } = run(&opts).unwrap();
        let names: Vec<&str> = written.iter().map(|w| w.table).collect();
        // the demo logs have no events (retractions, preemptions)
        assert_eq!(
            names,
            [
                "steps",
                "config",
                "timeline",
                "completions",
                "instances",
                "segments"
            ]
        );
        for w in &written {
            let file = std::fs::File::open(dir.join(format!("{}.parquet", w.table))).unwrap();
            let df = ParquetReader::new(file).finish().unwrap();
            assert_eq!(df.height(), w.rows, "{}", w.table);
            let cols = TABLES.iter().find(|t| t.0 == w.table).unwrap().1;
            for c in df.columns() {
                let (_, ty, _) = cols
                    .iter()
                    .find(|d| d.0 == c.name().as_str())
                    .unwrap_or_else(|| panic!("{}.{} is not documented", w.table, c.name()));
                assert_eq!(c.dtype(), &dtype_of(ty), "{}.{}", w.table, c.name());
            }
            // one schema in every file: each documented column, in order (`steps` holds
            // those the analyses keep)
            let have: Vec<&str> = df.get_column_names().iter().map(|c| c.as_str()).collect();
            if w.table != "steps" {
                let names: Vec<&str> = cols.iter().map(|c| c.0).collect();
                assert_eq!(have, names, "{}", w.table);
            }
            assert_eq!(have[0], "run");
        }
        let c = report.completions.as_ref().unwrap();
        assert_eq!(written[3].rows as u64, c.figures.count);
        assert_eq!(written[2].rows, report.timeline.len());
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("report.json")).unwrap()).unwrap();
        assert_eq!(json["completions"]["count"], c.figures.count);
        // the same tables as CSV and JSON lines
        for format in [FileFormat::Csv, FileFormat::Jsonl] {
            let o = Options {
                format,
                ..opts.clone()
            };
            run(&o).unwrap();
            let text =
                std::fs::read_to_string(dir.join(format!("timeline.{}", format.extension())))
                    .unwrap();
            let lines = text.lines().count();
            let header = usize::from(format == FileFormat::Csv);
            assert_eq!(lines, report.timeline.len() + header, "{format:?}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn partition_values_are_escaped() {
        assert_eq!(escape("gpu0"), "gpu0");
        assert_eq!(escape("node-1/gpu0#DP1"), "node-1%2Fgpu0%23DP1");
        assert_eq!(escape("a b"), "a%20b");
    }
}
