//! The keyword arguments of the package's functions, as the command line's flags: one list of
//! names, each parsed by the flag's own parser (so `bucket="1m"` means `--bucket 1m`, and a
//! bad value raises the CLI's message).

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;
use tokstat::cli;
use tokstat::report::Options;

/// Which options a function takes.
pub const READING: &[&str] = &[
    "year",
    "date",
    "tokens_path",
    "finish_path",
    "bucket",
    "interval",
];
pub const ANALYSIS: &[&str] = &["cap", "slo", "benchmark"];

/// `kwargs` into report options, refusing a name not in `allowed` (or in `extra`, which the
/// caller reads itself).
pub fn parse(
    function: &str,
    kwargs: Option<&Bound<'_, PyDict>>,
    allowed: &[&[&str]],
    extra: &[&str],
) -> PyResult<Options> {
    let mut o = Options::default();
    let Some(kwargs) = kwargs else {
        return Ok(o);
    };
    for (key, value) in kwargs.iter() {
        let key: String = key.extract()?;
        if extra.contains(&key.as_str()) {
            continue;
        }
        if !allowed.iter().any(|names| names.contains(&key.as_str())) {
            let mut names: Vec<&str> = allowed.iter().flat_map(|n| n.iter().copied()).collect();
            names.extend(extra);
            return Err(PyTypeError::new_err(format!(
                "{function}() got an unexpected keyword argument '{key}' (it takes {})",
                names.join(", ")
            )));
        }
        if value.is_none() {
            continue;
        }
        let bad = |e: String| PyValueError::new_err(format!("{key}: {e}"));
        match key.as_str() {
            "cap" => o.cap = Some(value.extract()?),
            "year" => o.year = Some(value.extract()?),
            "date" => o.date = Some(value.extract()?),
            "tokens_path" => o.tokens_path = Some(value.extract()?),
            "finish_path" => o.finish_path = Some(value.extract()?),
            "slo" => o.slo = Some(cli::parse_slo(&value.extract::<String>()?).map_err(bad)?),
            "bucket" => o.bucket_ms = Some(cli::parse_bucket(&duration(&value)?).map_err(bad)?),
            "interval" => {
                o.interval_s = Some(cli::parse_interval(&duration(&value)?).map_err(bad)?)
            }
            "benchmark" => o.benchmark = Some(value.str()?.to_string()),
            _ => {}
        }
    }
    Ok(o)
}

/// A keyword argument the caller reads itself, if given.
pub fn get<'py, T: FromPyObjectOwned<'py>>(
    kwargs: Option<&Bound<'py, PyDict>>,
    key: &str,
) -> PyResult<Option<T>> {
    match kwargs.map(|k| k.get_item(key)).transpose()?.flatten() {
        Some(v) if !v.is_none() => Ok(Some(v.extract().map_err(Into::into)?)),
        _ => Ok(None),
    }
}

/// A duration as the flags take it: a string (`"1m"`), or a number of seconds.
fn duration(value: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = value.extract::<String>() {
        return Ok(s);
    }
    let secs: f64 = value.extract()?;
    Ok(format!("{secs}s"))
}

/// The inputs: one path (a `str` or `os.PathLike`) or a list of them.
pub fn inputs(value: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let one = |v: &Bound<'_, PyAny>| -> PyResult<String> {
        let p: PathBuf = v.extract()?;
        Ok(p.to_string_lossy().into_owned())
    };
    if let Ok(p) = one(value) {
        return Ok(vec![p]);
    }
    let mut all = Vec::new();
    for v in value.try_iter()? {
        all.push(one(&v?)?);
    }
    Ok(all)
}
