//! `import tokstat`: the reader and the report of the `tokstat` crate as a Python module
//! (an abi3 extension built by maturin), for notebooks and cluster workers.
//!
//! - [`report`]: the JSON of `tokstat report --format json`, as a dict.
//! - [`read`] and [`read_bytes`]: a partial read ([`read::Read`]) of files, or of a file's
//!   bytes (a Spark `binaryFile` row, an object store's object); [`merge`] makes the read
//!   of all their inputs, order-free; a read pickles as the saved-read format's bytes.
//! - `Read.tables()`: the schema's tables as pyarrow tables, through the Arrow C data
//!   interface.
//! - [`compare`]: the JSON of `tokstat compare`.
//!
//! The GIL is released while reading and analysing; the options are the command line's
//! flags as keyword arguments, parsed by the same parsers; errors raise `tokstat.Error`
//! with the CLI's message.

mod arrow;
mod options;
mod read;

use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use read::Read;
use tokstat::compare;
use tokstat::export::host_name;
use tokstat::frames::steps::StepColumns;
use tokstat::ingest::instance::StepsSink;
use tokstat::ingest::saved::Header;
use tokstat::ingest::Ingested;
use tokstat::report::{self, Options};
use tokstat_parsers::source::Input;

pyo3::create_exception!(
    tokstat,
    Error,
    PyException,
    "What tokstat could not do, with the message the command line gives."
);

pub(crate) use Error as TokstatError;

pub(crate) fn run_err(e: anyhow::Error) -> PyErr {
    TokstatError::new_err(format!("{e:#}"))
}

/// A value as the CLI's JSON (keys sorted), for [`json`].
pub(crate) fn json_text(v: &impl serde::Serialize) -> anyhow::Result<Vec<u8>> {
    let mut buf = Vec::new();
    tokstat::render::json::write(&mut buf, v)?;
    Ok(buf)
}

/// JSON text as Python values.
pub(crate) fn json<'py>(py: Python<'py>, text: Vec<u8>) -> PyResult<Bound<'py, PyAny>> {
    let text = String::from_utf8(text).map_err(|e| run_err(e.into()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// The report of `inputs` (paths: files, folders, globs, exported datasets): a dict, equal
/// to the JSON of `tokstat report --format json` with the same options.
///
/// Keyword arguments, as the flags: `cap`, `slo`, `bucket` (`"1m"`, or seconds),
/// `interval`, `tokens_path`, `finish_path`, `year`, `date`, `benchmark`, `run`, `node`,
/// and `strict` (raise where `--strict` exits 1).
#[pyfunction(name = "report")]
#[pyo3(signature = (inputs, **kwargs))]
fn py_report<'py>(
    py: Python<'py>,
    inputs: &Bound<'py, PyAny>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let mut o = options::parse(
        "report",
        kwargs,
        &[options::READING, options::ANALYSIS],
        &["run", "node", "strict"],
    )?;
    o.inputs = options::inputs(inputs)?;
    o.run = options::get(kwargs, "run")?;
    o.node = options::get(kwargs, "node")?;
    let strict = options::get::<bool>(kwargs, "strict")?.unwrap_or(false);
    let text = py
        .detach(|| -> anyhow::Result<Vec<u8>> {
            let r = report::build(&o)?;
            refuse(&r, strict)?;
            json_text(&r)
        })
        .map_err(run_err)?;
    json(py, text)
}

/// What the CLI exits 1 on, as an error with its message: an input that could not be read,
/// nothing parsed, and with `strict` malformed lines or inputs cut short.
fn refuse(r: &report::Report, strict: bool) -> anyhow::Result<()> {
    if let Some(s) = r.skipped.iter().find(|s| s.failed) {
        anyhow::bail!("{}: {}", s.source, s.reason);
    }
    let mut err = Vec::new();
    if tokstat::cmd::report::exit_code(r, strict, &mut err)? != 0 {
        let text = String::from_utf8_lossy(&err);
        anyhow::bail!(
            "{}",
            text.trim().strip_prefix("tokstat: ").unwrap_or(text.trim())
        );
    }
    Ok(())
}

/// A partial read of `inputs` (paths), to merge with others (`merge`), save (`to_bytes`)
/// or analyse (`Read.report`, `Read.tables`).
///
/// Keyword arguments: `node` (the node that read them, which tells same-named logs of two
/// nodes apart; default: the host name, as `tokstat export`), `run` (the run's label;
/// default: none, and the tables say the inputs' folder), `steps` (keep the stats lines' rows for
/// `Read.tables()`), and the reading flags `bucket`, `interval`, `year`, `date`,
/// `tokens_path`, `finish_path`.
#[pyfunction(name = "read")]
#[pyo3(signature = (inputs, **kwargs))]
fn py_read(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Read> {
    let inputs = options::inputs(inputs)?;
    partial_read(py, "read", kwargs, inputs, |o, steps| {
        report::read(o, steps)
    })
}

/// A partial read of one file's bytes (`data`: `bytes` or `bytearray`), read as the file
/// `name` would be (its name gives its instance, its bytes their kind; compressed bytes
/// are decompressed). Keyword arguments as `read`.
#[pyfunction(name = "read_bytes")]
#[pyo3(signature = (data, name, **kwargs))]
fn py_read_bytes(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    name: std::path::PathBuf,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Read> {
    let bytes: Vec<u8> = if let Ok(b) = data.cast::<pyo3::types::PyBytes>() {
        b.as_bytes().to_vec()
    } else if let Ok(b) = data.cast::<pyo3::types::PyByteArray>() {
        b.to_vec()
    } else {
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "read_bytes() takes bytes or bytearray, not {}",
            data.get_type().name()?
        )));
    };
    let inputs = vec![name.display().to_string()];
    let input = Input::bytes(name, bytes);
    partial_read(py, "read_bytes", kwargs, inputs, |o, steps| {
        report::read_inputs(std::slice::from_ref(&input), o, steps)
    })
}

/// A partial read of `inputs` by `read` (the GIL released), with the keyword arguments of
/// `read` and `read_bytes`: the stats lines' rows kept with `steps=True`.
fn partial_read(
    py: Python<'_>,
    function: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
    inputs: Vec<String>,
    read: impl FnOnce(&Options, Option<&mut StepsSink<'_>>) -> anyhow::Result<Ingested> + Send,
) -> PyResult<Read> {
    let mut o = options::parse(
        function,
        kwargs,
        &[options::READING],
        &["node", "run", "steps"],
    )?;
    o.inputs = inputs;
    o.node = options::get(kwargs, "node")?;
    let keep = options::get::<bool>(kwargs, "steps")?.unwrap_or(false);
    let run = options::get(kwargs, "run")?;
    py.detach(|| {
        let mut steps = keep.then(StepColumns::default);
        let r = match steps.as_mut() {
            Some(s) => read(
                &o,
                Some(&mut |name: &str, engine, series| s.push(name, engine, &series)),
            ),
            None => read(&o, None),
        }?;
        Ok(partial(&o, run, r, steps))
    })
    .map_err(run_err)
}

/// A read of `o.inputs` as a [`Read`]: its node (the host name by default) and run label
/// (none by default: see [`read::label`]) in its header.
fn partial(o: &Options, run: Option<String>, read: Ingested, steps: Option<StepColumns>) -> Read {
    let node = o.node.clone().unwrap_or_else(host_name);
    Read {
        header: Header::new(
            &run.unwrap_or_default(),
            Some(&node),
            &tokstat::export::writer_id(),
            &o.inputs,
        ),
        read,
        steps,
        interval_s: o.interval_s,
    }
}

/// Reads merged into one, the read of all their inputs at once: the same report to the
/// last digit whatever order they are given in (same-named instances of two nodes are two,
/// `NODE/NAME`; a read given twice counts once, and is warned of). Keyword arguments:
/// `run` (the merged run's label: by default the one the reads share), `interval`.
#[pyfunction(name = "merge")]
#[pyo3(signature = (reads, **kwargs))]
fn py_merge(
    py: Python<'_>,
    reads: &Bound<'_, PyAny>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Read> {
    let o = options::parse("merge", kwargs, &[&["interval"]], &["run"])?;
    let run = options::get(kwargs, "run")?;
    let mut parts = Vec::new();
    for r in reads.try_iter()? {
        let r = r?;
        let r = r.cast::<Read>().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "merge() takes tokstat.Read objects, not {}",
                r.get_type()
                    .name()
                    .map_or_else(|_| "this".into(), |n| n.to_string())
            ))
        })?;
        let r: &Read = &r.borrow();
        let encoded = py
            .detach(|| postcard::to_stdvec(&r.read))
            .map_err(|e| run_err(e.into()))?;
        parts.push((r.header.clone(), encoded));
    }
    py.detach(|| read::merge(parts, run, o.interval_s))
}

/// Runs compared: `runs` maps each run's label to its inputs (a path or a list of paths)
/// or to a `tokstat.Read`; the first is the baseline. A dict, the JSON of
/// `tokstat compare --format json`. Keyword arguments: `threshold` (`"2%"` or 0.02),
/// `force`, and the reading and analysis flags.
#[pyfunction(name = "compare")]
#[pyo3(signature = (runs, **kwargs))]
fn py_compare<'py>(
    py: Python<'py>,
    runs: &Bound<'py, PyDict>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let o = options::parse(
        "compare",
        kwargs,
        &[options::READING, &["cap", "slo"]],
        &["threshold", "force"],
    )?;
    let threshold = match options::get::<Bound<'_, PyAny>>(kwargs, "threshold")? {
        None => 0.02,
        Some(v) => {
            let s = match v.extract::<String>() {
                Ok(s) => s,
                Err(_) => v.extract::<f64>()?.to_string(),
            };
            tokstat::cli::parse_share(&s)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("threshold: {e}")))?
        }
    };
    let force = options::get::<bool>(kwargs, "force")?.unwrap_or(false);
    enum Of<'a> {
        Paths(Vec<String>),
        Read(PyRef<'a, Read>),
    }
    let mut specs = Vec::new();
    let mut sources = Vec::new();
    for (label, value) in runs.iter() {
        let label: String = label.extract()?;
        let of = match value.cast::<Read>() {
            Ok(r) => Of::Read(r.borrow()),
            Err(_) => Of::Paths(options::inputs(&value)?),
        };
        let inputs = match &of {
            Of::Paths(p) => p.clone(),
            Of::Read(r) => r.header.inputs.clone(),
        };
        specs.push(compare::RunSpec {
            prometheus: None,
            label,
            inputs,
            benchmark: None,
        });
        sources.push(of);
    }
    let opts = compare::Options {
        runs: specs,
        report: o,
        threshold,
        force,
        segments: false,
    };
    let mut built = Vec::with_capacity(sources.len());
    for (spec, of) in opts.runs.iter().zip(&sources) {
        let b = match of {
            Of::Read(r) => {
                let r: &Read = r;
                py.detach(|| r.figures(opts.report.clone()))
            }
            Of::Paths(p) => {
                let ro = Options {
                    inputs: p.clone(),
                    ..opts.report.clone()
                };
                py.detach(|| report::build_with_samples(&ro))
            }
        }
        .map_err(|e| run_err(anyhow::anyhow!("{}: {e:#}", spec.label)))?;
        built.push(b);
    }
    let text = py
        .detach(|| -> anyhow::Result<Vec<u8>> {
            let c = compare::of_reports(&opts, &built)?;
            json_text(&c)
        })
        .map_err(run_err)?;
    json(py, text)
}

/// The unpickling of a [`Read`]: [`Read::from_bytes`], as a function of the module that
/// pickle can name.
#[pyfunction]
fn _read_from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Read> {
    Read::from_bytes(py, data)
}

/// Answers about LLM inference runs from the artifacts they leave behind: `report`, `read`,
/// `read_bytes`, `merge`, `compare`, and `Read` (see docs/python.md).
#[pymodule(name = "tokstat")]
fn tokstat_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("Error", m.py().get_type::<Error>())?;
    m.add_class::<Read>()?;
    m.add_function(wrap_pyfunction!(py_report, m)?)?;
    m.add_function(wrap_pyfunction!(py_read, m)?)?;
    m.add_function(wrap_pyfunction!(py_read_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(py_merge, m)?)?;
    m.add_function(wrap_pyfunction!(py_compare, m)?)?;
    m.add_function(wrap_pyfunction!(_read_from_bytes, m)?)?;
    Ok(())
}
