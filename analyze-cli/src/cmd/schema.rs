//! `tokstat schema`: the documented tables ([`crate::schema`]).

use crate::cli::Format;
use crate::schema::{unit, TABLES, VERSION};
use anyhow::Result;
use serde_json::json;
use std::io::Write;

pub fn run(format: Format, out: &mut dyn Write) -> Result<i32> {
    match format {
        Format::Json => {
            let v: serde_json::Map<String, serde_json::Value> = TABLES
                .iter()
                .map(|(t, cols)| {
                    let cols: Vec<_> = cols
                        .iter()
                        .map(|(c, ty, m)| json!({"name": c, "type": ty, "unit": unit(c), "meaning": m}))
                        .collect();
                    (t.to_string(), json!(cols))
                })
                .collect();
            serde_json::to_writer_pretty(&mut *out, &v)?;
            writeln!(out)?;
        }
        Format::Table => {
            writeln!(
                out,
                "tables of schema version {VERSION} (tokstat_table_schema_version)\n"
            )?;
            for (t, cols) in TABLES {
                writeln!(out, "{t}")?;
                let w = cols.iter().map(|c| c.0.len()).max().unwrap_or(0);
                for (c, ty, m) in *cols {
                    writeln!(out, "  {c:<w$}  {ty:<8}  {:<14}  {m}", unit(c))?;
                }
                writeln!(out)?;
            }
        }
        Format::Html => {
            anyhow::bail!("schema is written as table, json or markdown; --format html is for report and compare")
        }
        Format::Markdown => {
            for (t, cols) in TABLES {
                writeln!(
                    out,
                    "### `{t}`\n\n| column | type | meaning |\n|---|---|---|"
                )?;
                for (c, ty, m) in *cols {
                    writeln!(out, "| `{c}` | {ty} | {m} |")?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(0)
}
