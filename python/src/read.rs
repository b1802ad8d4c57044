//! `tokstat.Read`: a read of some inputs, before any analysis — what `tokstat export` saves
//! beside its tables. Reads made on many workers merge into the read of all their inputs
//! ([`merge`]), in an order of their own; a read travels as the saved-read format's bytes
//! (`to_bytes`, pickling).

use crate::options;
use crate::{json, json_text, run_err, TokstatError};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use std::path::{Path, PathBuf};
use tokstat::export;
use tokstat::frames::steps::StepColumns;
use tokstat::ingest::saved::{self, Header, Saved};
use tokstat::ingest::Ingested;
use tokstat::report::{self, Options};

/// A partial read: what `tokstat.read`, `tokstat.read_bytes` and `tokstat.merge` give.
#[pyclass(module = "tokstat", name = "Read")]
pub struct Read {
    pub header: Header,
    pub read: Ingested,
    /// The stats lines' rows, when read with `steps=True` (a saved read keeps none).
    pub steps: Option<StepColumns>,
    /// Seconds between scrapes that carry no time, as read.
    pub interval_s: Option<f64>,
}

impl Read {
    /// The report options of this read's analyses: its bucket and interval, and `o`'s
    /// analysis options.
    fn options(&self, o: Options) -> Options {
        Options {
            bucket_ms: self.read.logs.bucket,
            interval_s: self.interval_s,
            inputs: self.header.inputs.clone(),
            ..o
        }
    }

    /// The report of this read, with its samples.
    pub fn figures(&self, o: Options) -> anyhow::Result<(report::Report, report::Samples)> {
        report::figures(&self.read, &self.options(o))
    }

    fn from_saved(s: Saved) -> Read {
        Read {
            header: s.header,
            read: s.read,
            steps: None,
            interval_s: None,
        }
    }
}

#[pymethods]
impl Read {
    /// The report of the read: a dict, the JSON of `tokstat report --format json` on its
    /// inputs. Takes `cap`, `slo` and `benchmark`.
    #[pyo3(signature = (**kwargs))]
    fn report<'py>(
        &self,
        py: Python<'py>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let o = options::parse("Read.report", kwargs, &[options::ANALYSIS], &[])?;
        let text = py.detach(|| {
            let (r, _) = self.figures(o)?;
            json_text(&r)
        });
        json(py, text.map_err(run_err)?)
    }

    /// The tables of the schema (`steps` only when read with `steps=True`), as
    /// `pyarrow.Table`s by name, equal to the Parquet files `tokstat export` writes.
    fn tables<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let run = label(&self.header);
        let frames = py.detach(|| -> anyhow::Result<_> {
            let (r, _) = self.figures(Options::default())?;
            let mut all = export::tables(&r, &self.read, &run)?;
            if let Some(steps) = self.steps.as_ref().filter(|s| !s.is_empty()) {
                all.insert(0, ("steps", steps.frame(&run)?));
            }
            Ok(all)
        });
        let out = PyDict::new(py);
        for (name, df) in frames.map_err(run_err)? {
            let meta = export::metadata_pairs(name, &df, &run, &self.header.inputs);
            out.set_item(name, crate::arrow::table(py, &df, &meta)?)?;
        }
        Ok(out)
    }

    /// The read in the saved-read format (a JSON header line, then the read, zstd-compressed):
    /// the bytes of a `read-*.bin` file of an export.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = py
            .detach(|| saved::to_bytes(&self.header, &self.read))
            .map_err(run_err)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A read from the bytes of `to_bytes` or of a saved read's file: any saved-read format
    /// this tokstat reads.
    #[staticmethod]
    pub fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Read> {
        let s = py
            .detach(|| saved::from_bytes(data, Path::new("<bytes>")))
            .map_err(run_err)?;
        Ok(Read::from_saved(s))
    }

    /// A read saved by `tokstat export` (a `_tokstat/…/read-*.bin` file).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Read> {
        let s = py.detach(|| saved::load(&path)).map_err(run_err)?;
        Ok(Read::from_saved(s))
    }

    /// Pickled as its bytes.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let from = py.import("tokstat")?.getattr("_read_from_bytes")?;
        let bytes = self.to_bytes(py)?;
        PyTuple::new(py, [from, PyTuple::new(py, [bytes])?.into_any()])
    }

    /// The node that read the inputs (`node=`; the host name by default).
    #[getter]
    fn node(&self) -> Option<String> {
        self.header.node.clone()
    }

    /// The run's label (the tables' `run` column): as given, or the folder the inputs
    /// share (the file's name, for one), as `tokstat export` labels a run.
    #[getter]
    fn run(&self) -> String {
        label(&self.header)
    }

    /// The inputs as given.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.header.inputs.clone()
    }

    /// The server instances read, by name.
    #[getter]
    fn instances(&self) -> Vec<String> {
        self.read.logs.instances.keys().cloned().collect()
    }

    /// The saved-read format the read came in (the one this tokstat writes, for a read
    /// of its own).
    #[getter]
    fn format(&self) -> u32 {
        self.header.format
    }

    fn __repr__(&self) -> String {
        let lines: u64 = self.read.files.iter().map(|f| f.tally.total).sum();
        format!(
            "<tokstat.Read run={:?} node={} of {} input(s): {} line(s), {} instance(s), {} completion(s)>",
            label(&self.header),
            self.header.node.as_deref().map_or("none".into(), |n| format!("{n:?}")),
            self.read.files.len(),
            lines,
            self.read.logs.instances.len(),
            self.read.completions.len()
        )
    }
}

/// Reads merged into the read of all their inputs, whatever order they are given in (see
/// the CLI's `report DIR`).
pub fn merge(
    reads: Vec<(Header, Vec<u8>)>,
    run: Option<String>,
    interval_s: Option<f64>,
) -> PyResult<Read> {
    let Some(writer) = reads.first().map(|(h, _)| h.writer.clone()) else {
        return Err(PyValueError::new_err("merge() needs one read or more"));
    };
    let mut saved = Vec::with_capacity(reads.len());
    for (header, encoded) in reads {
        let read = postcard::from_bytes::<Ingested>(&encoded).map_err(|e| run_err(e.into()))?;
        let node = header.node.as_deref().unwrap_or("none");
        // (named by what it read, not by its place in the list: the merge's messages name it)
        let path = PathBuf::from(format!(
            "read of {} on node {node}",
            header.inputs.join(" ")
        ));
        saved.push(Saved {
            path,
            header,
            encoded,
            read,
        });
    }
    let with_logs = || saved.iter().filter(|s| !s.read.logs.instances.is_empty());
    let bucket = with_logs().next().map(|s| s.read.logs.bucket);
    if let Some(other) = with_logs().find(|s| Some(s.read.logs.bucket) != bucket) {
        let of = |b: Option<i64>| b.map_or("no bucket".to_string(), |b| format!("bucket {b} ms"));
        return Err(TokstatError::new_err(format!(
            "the reads were read with different timeline buckets ({} and {}, the read of {}): \
             read them all with the same bucket=",
            of(bucket.flatten()),
            of(other.read.logs.bucket),
            other.header.inputs.join(" ")
        )));
    }
    let mut runs: Vec<&str> = saved
        .iter()
        .map(|s| s.header.run.as_str())
        .filter(|r| !r.is_empty())
        .collect();
    runs.sort_unstable();
    runs.dedup();
    let mut inputs: Vec<String> = saved
        .iter()
        .flat_map(|s| s.header.inputs.iter().cloned())
        .collect();
    inputs.sort();
    inputs.dedup();
    let label = match (run, runs.as_slice()) {
        (Some(r), _) => r,
        (None, []) => String::new(),
        (None, [one]) => one.to_string(),
        (None, many) => {
            return Err(PyValueError::new_err(format!(
                "the reads are of {} runs ({}): name the merged run with run=",
                many.len(),
                many.join(", ")
            )))
        }
    };
    let mut base = Ingested::default();
    base.logs.bucket = bucket.flatten();
    let mut merged = saved::merge(base, None, saved);
    merged.finish(interval_s);
    Ok(Read {
        header: Header::new(&label, None, &writer, &inputs),
        read: merged,
        steps: None,
        interval_s,
    })
}

/// A read's run label: as given (`run=`), else the last folder its inputs share, else the
/// name of its one input (`tokstat export fleet/` labels its run `fleet`), else `run`.
pub fn label(h: &Header) -> String {
    if !h.run.is_empty() {
        return h.run.clone();
    }
    let paths: Vec<&Path> = h
        .inputs
        .iter()
        .map(|i| Path::new(i.trim_end_matches('/')))
        .collect();
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    let shared = match paths.as_slice() {
        [] => None,
        [one] => name(one),
        [first, rest @ ..] => first
            .ancestors()
            .skip(1)
            .find(|a| rest.iter().all(|p| p.starts_with(a)))
            .and_then(name),
    };
    shared.unwrap_or_else(|| "run".into())
}
