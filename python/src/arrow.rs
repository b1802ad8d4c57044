//! Tables handed to pyarrow through the Arrow C data interface: each column's buffers are
//! given over as they are (no copy, no file), typed as the export's Parquet files type them
//! (strings as `large_string`, the oldest Arrow layout every reader takes).

use polars::prelude::*;
use polars_arrow::array::StructArray;
use polars_arrow::datatypes::{ArrowDataType, Field};
use polars_arrow::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A frame as a `pyarrow.Table`, with the export's key-value metadata as its schema's.
pub fn table<'py>(
    py: Python<'py>,
    df: &DataFrame,
    metadata: &[(String, String)],
) -> PyResult<Bound<'py, PyAny>> {
    let pa = py.import("pyarrow")?;
    let compat = CompatLevel::oldest();
    let fields: Vec<Field> = df
        .schema()
        .to_arrow(compat)
        .into_iter()
        .map(|(_, f)| f)
        .collect();
    let arrays = df
        .columns()
        .iter()
        .map(|c| c.as_materialized_series().rechunk().to_arrow(0, compat))
        .collect::<Vec<_>>();
    let dtype = ArrowDataType::Struct(fields);
    let batch = StructArray::try_new(dtype.clone(), df.height(), arrays, None)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    // (boxed where pyarrow finds them; it moves their contents out, leaving them released)
    let array = Box::new(ffi::export_array_to_c(Box::new(batch)));
    let schema = Box::new(ffi::export_field_to_c(&Field::new("".into(), dtype, false)));
    let array_ptr = &*array as *const ffi::ArrowArray as usize;
    let schema_ptr = &*schema as *const ffi::ArrowSchema as usize;
    let batch = pa
        .getattr("RecordBatch")?
        .call_method1("_import_from_c", (array_ptr, schema_ptr))?;
    let table = pa
        .getattr("Table")?
        .call_method1("from_batches", (vec![batch],))?;
    let meta = PyDict::new(py);
    for (k, v) in metadata {
        // (the Arrow schema is the table's own)
        if k != "ARROW:schema" {
            meta.set_item(k, v)?;
        }
    }
    table.call_method1("replace_schema_metadata", (meta,))
}
