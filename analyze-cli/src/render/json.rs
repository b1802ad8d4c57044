//! A report or a comparison as JSON: the serialised model, pretty-printed with its keys
//! sorted, so that the same inputs always give the same bytes.

use serde::Serialize;
use std::io::{self, Write};

pub fn write(out: &mut dyn Write, report: &impl Serialize) -> io::Result<()> {
    // through a value: its maps keep keys sorted, whatever the structs' field order
    let value = serde_json::to_value(report).map_err(io::Error::other)?;
    serde_json::to_writer_pretty(&mut *out, &value).map_err(io::Error::other)?;
    writeln!(out)
}
