//! `tokstat report`: the post-mortem of the given inputs.

use crate::cli::{Format, InputArgs};
use crate::logs::{self, visit_chunk, Dates, FileCtx, Skipped, Tally};
use crate::render::num::{duration, group, opt};
use crate::summary::{ChunkSummary, Instance, Summary};
use anyhow::Result;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use serde_json::{json, Value};
use std::io::Write;

pub fn run(
    args: &InputArgs,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let inputs = logs::inputs(args)?;
    let dates = Dates::from_args(args)?;
    let mut summary = Summary::default();
    let (files, skipped) = logs::scan_logs(
        &inputs,
        dates,
        |file, chunk| visit_chunk(file, chunk, ChunkSummary::default(), |s, v| s.visit(&v)),
        |file, s: ChunkSummary| summary.absorb(file, s),
    );
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut *out, &to_json(&files, &skipped, &summary))?;
            writeln!(out)?;
        }
        Format::Table => write_table(out, &files, &skipped, &summary)?,
    }
    if !args.quiet && format == Format::Json {
        logs::write_accounting(err, &files, &skipped)?;
    }
    let failed = skipped.iter().any(|s| s.failed);
    let parsed: u64 = files.iter().map(|(_, t)| t.parsed).sum();
    Ok(if failed || parsed == 0 {
        crate::EXIT_FAILURE
    } else {
        0
    })
}

fn totals(files: &[(FileCtx, Tally)]) -> Tally {
    let mut t = Tally::default();
    for (_, f) in files {
        t.merge(f);
    }
    t
}

fn num(v: Option<f64>) -> Value {
    v.filter(|x| x.is_finite())
        .map_or(Value::Null, |x| json!(x))
}

fn instance_json(name: &str, i: &Instance) -> Value {
    json!({
        "instance": name,
        "engine": i.engine,
        "first_ts": i.first.map(|t| t.to_string()),
        "last_ts": i.last.map(|t| t.to_string()),
        "span_s": num(i.span_s()),
        "stat_lines": i.stat_lines,
        "prefill_lines": i.prefill_lines,
        "gen_tps_mean": num(i.gen_tps.mean()),
        "gen_tps_max": num(i.gen_tps.max()),
        "prompt_tps_mean": num(i.prompt_tps.mean()),
        "running_mean": num(i.running.mean()),
        "running_max": num(i.running.max()),
        "waiting_mean": num(i.waiting.mean()),
        "kv_usage_mean": num(i.kv_usage.mean()),
        "kv_usage_max": num(i.kv_usage.max()),
        "accept_len_mean": num(i.accept_len.mean()),
        "prefill_tokens": i.prefill_tokens,
        "retractions": i.retraction_events,
        "retracted_requests": i.retracted,
        "preemptions": i.preemptions,
        "errors": i.errors,
    })
}

fn to_json(files: &[(FileCtx, Tally)], skipped: &[Skipped], s: &Summary) -> Value {
    let t = totals(files);
    json!({
        "lines": {"total": t.total, "parsed": t.parsed, "other": t.other, "malformed": t.malformed},
        "files": files.iter().map(|(f, t)| json!({
            "source": f.source,
            "total": t.total, "parsed": t.parsed, "other": t.other, "malformed": t.malformed,
            "malformed_samples": t.samples.iter().map(|(n, why)| json!({"line": n, "reason": why})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "skipped": skipped.iter().map(|s| json!({"source": s.source, "reason": s.why})).collect::<Vec<_>>(),
        "instances": s.instances.iter().map(|(k, i)| instance_json(k, i)).collect::<Vec<_>>(),
    })
}

fn write_table(
    out: &mut dyn Write,
    files: &[(FileCtx, Tally)],
    skipped: &[Skipped],
    s: &Summary,
) -> Result<()> {
    let t = totals(files);
    writeln!(
        out,
        "Server logs: {} file(s), {} instance(s)",
        files.len(),
        s.instances.len()
    )?;
    writeln!(
        out,
        "Lines: {} total · {} parsed · {} other · {} malformed\n",
        group(t.total),
        group(t.parsed),
        group(t.other),
        group(t.malformed)
    )?;
    if !s.instances.is_empty() {
        let mut table = Table::new();
        table.load_preset(UTF8_FULL_CONDENSED);
        table.set_header(vec![
            "instance",
            "engine",
            "span",
            "stat lines",
            "gen tok/s mean",
            "gen tok/s max",
            "running mean",
            "waiting mean",
            "kv max",
            "retractions",
            "preemptions",
        ]);
        for (name, i) in &s.instances {
            let row = vec![
                Cell::new(name),
                Cell::new(i.engine.unwrap_or("?")),
                Cell::new(i.span_s().map_or("–".into(), duration)),
                Cell::new(group(i.stat_lines)),
                Cell::new(opt(i.gen_tps.mean(), 1)),
                Cell::new(opt(i.gen_tps.max(), 1)),
                Cell::new(opt(i.running.mean(), 1)),
                Cell::new(opt(i.waiting.mean(), 1)),
                Cell::new(opt(i.kv_usage.max(), 2)),
                Cell::new(group(i.retraction_events)),
                Cell::new(group(i.preemptions)),
            ];
            table.add_row(row);
        }
        for c in 2..11 {
            if let Some(col) = table.column_mut(c) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        writeln!(out, "{table}")?;
    }
    for (f, t) in files {
        if let Some((n, why)) = t.samples.first() {
            writeln!(
                out,
                "{}: {} malformed line(s), first at line {n}: {why}",
                f.source,
                group(t.malformed)
            )?;
        }
    }
    for sk in skipped {
        writeln!(out, "{}: skipped: {}", sk.source, sk.why)?;
    }
    Ok(())
}
