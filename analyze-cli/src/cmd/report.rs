//! `tokstat report`: the post-mortem of the given inputs — server logs and completions.

use crate::analysis::bench::{self, RunReport};
use crate::analysis::completions::{analyze, Completions};
use crate::analysis::hints::{self, Hint};
use crate::analysis::metrics::{self, Metrics, Scrapes};
use crate::analysis::quantile::Summary;
use crate::analysis::server::{self, Server};
use crate::cli::{CompletionArgs, Format, InputArgs, ServerArgs};
use crate::logs::{self, visit_chunk, ChunkOut, Dates, FileCtx, Skipped, Tally};
use crate::records::{self, Row};
use crate::render::num::{duration, group, opt};
use crate::summary::{ChunkSummary, Instance, Summary as LogSummary};
use anyhow::Result;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::io::Write;
use tokstat_parsers::bench::Run;
use tokstat_parsers::completion::Paths;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::scan::{self, Chunk};
use tokstat_parsers::source::{Data, Input};
use tokstat_parsers::stamp::Calendar;

/// Everything read from the inputs.
#[derive(Default)]
struct Read {
    files: Vec<(FileCtx, Tally, Kind)>,
    skipped: Vec<Skipped>,
    logs: LogSummary,
    rows: Vec<Row>,
    dropped_choices: u64,
    /// JSON records of no known shape.
    unknown_records: u64,
    runs: Vec<Run>,
    scrapes: Scrapes,
}

fn log_work(file: &FileCtx, chunk: Chunk<'_>) -> (ChunkOut<ChunkSummary>, Calendar) {
    thread_local! {
        /// The size of the last chunk this thread read (see [`ChunkSummary::sized_like`]).
        static LAST: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    }
    let (out, calendar) = visit_chunk(file, chunk, ChunkSummary::sized_like(LAST.get()));
    LAST.set(out.out.size());
    (out, calendar)
}

impl Read {
    fn add_json(&mut self, input: &Input, part: records::Part, err: Option<Skipped>) {
        self.skipped.extend(err);
        self.rows.extend(part.rows);
        self.runs.extend(part.runs);
        self.dropped_choices += part.dropped_choices;
        self.unknown_records += part.unknown;
        self.files.push((
            FileCtx {
                source: input.display(),
                stem: input.stem(),
            },
            part.tally,
            Kind::Json,
        ));
    }
}

fn read(args: &InputArgs, c: &CompletionArgs) -> Result<Read> {
    let inputs = logs::inputs(args)?;
    let dates = Dates::from_args(args)?;
    let paths = Paths {
        tokens: c.tokens_path.as_deref().map(Paths::pointer),
        finish: c.finish_path.as_deref().map(Paths::pointer),
    };
    let mut r = Read::default();
    let names = tokstat_parsers::source::instance_names(&inputs);
    // A folder of 500-record batch files is hundreds of JSONL files too small to split into
    // chunks: read one after the other they kept a core idle (727 files of 275 KB: 1.64x the
    // time of the same records in one file). Such files (plain, and no bigger than a chunk,
    // so that a worker reads each whole and never waits on other work) are read side by
    // side first; the rest is read below, in order, each in parallel chunks (logs of one
    // instance build on each other). Only regular files are looked at here: the others are
    // opened once, below (a pipe's first bytes, read here, would be lost).
    let small = |input: &Input| match input {
        Input::Path(p) => {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() <= scan::CHUNK as u64)
        }
        Input::Stdin => false,
    };
    let json: Vec<Option<(records::Part, Option<Skipped>)>> = inputs
        .par_iter()
        .map(|input| {
            if !small(input) {
                return None;
            }
            let opened = logs::open(input);
            let src = opened.source.ok()?;
            let plain = matches!(src.data, Data::Mapped(_) | Data::Owned(_));
            (opened.kind == Kind::Json && plain).then(|| records::read_json(input, src, &paths))
        })
        .collect();
    for ((input, name), read) in inputs.iter().zip(names).zip(json) {
        if let Some((part, err)) = read {
            r.add_json(input, part, err);
            continue;
        }
        let opened = logs::open(input);
        let src = match opened.source {
            Ok(s) => s,
            Err(sk) => {
                r.skipped.push(sk);
                continue;
            }
        };
        match opened.kind {
            Kind::Log | Kind::Empty => {
                let logs = &mut r.logs;
                let (file, tally, err) = logs::scan_log(
                    input,
                    name,
                    src,
                    dates,
                    logs::LineNumbers::Relative,
                    &log_work,
                    &mut |f: &FileCtx, s: ChunkSummary| logs.absorb(f, s),
                );
                r.skipped.extend(err);
                r.files.push((file, tally, opened.kind));
            }
            Kind::Json => {
                let (part, err) = records::read_json(input, src, &paths);
                r.add_json(input, part, err);
            }
            Kind::Prometheus => {
                let tally = match r.scrapes.read_input(input, src) {
                    Ok(t) => t,
                    Err(e) => {
                        r.skipped.push(Skipped {
                            source: input.display(),
                            why: format!("cannot read: {e}"),
                            failed: true,
                        });
                        continue;
                    }
                };
                r.files.push((
                    FileCtx {
                        source: input.display(),
                        stem: input.stem(),
                    },
                    tally,
                    Kind::Prometheus,
                ));
            }
        }
    }
    Ok(r)
}

pub fn run(
    args: &InputArgs,
    c: &CompletionArgs,
    srv: &ServerArgs,
    format: Format,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let mut r = read(args, c)?;
    let completions = (!r.rows.is_empty()).then(|| analyze(&r.rows, c.cap));
    let server = server::analyze(&mut r.logs.instances, srv.bucket)?;
    r.scrapes.order(srv.interval);
    let metrics = metrics::analyze(&r.scrapes);
    let hints = hints::hints(&hints::Inputs {
        server: &server,
        instances: &r.logs.instances,
        completions: completions.as_ref(),
        rows: &r.rows,
        metrics: metrics.as_ref(),
    });
    let a = Analysis {
        server: &server,
        hints: &hints,
        metrics: metrics.as_ref(),
    };
    let slo = c.slo.unwrap_or_default();
    let runs: Vec<RunReport> = r.runs.iter().map(|run| bench::analyze(run, &slo)).collect();
    match format {
        Format::Json => {
            serde_json::to_writer_pretty(
                &mut *out,
                &to_json(&r, &a, completions.as_ref(), &runs)?,
            )?;
            writeln!(out)?;
        }
        Format::Table => write_table(out, &r, &a, completions.as_ref(), &runs)?,
    }
    if !args.quiet && format == Format::Json {
        let files: Vec<(FileCtx, Tally)> = r
            .files
            .iter()
            .map(|(f, t, _)| (f.clone(), t.clone()))
            .collect();
        logs::write_accounting(err, &files, &r.skipped)?;
        if let Some(note) = unknown_note(r.unknown_records) {
            writeln!(err, "{note}")?;
        }
    }
    let failed = r.skipped.iter().any(|s| s.failed);
    let parsed: u64 = r.files.iter().map(|(_, t, _)| t.parsed).sum();
    Ok(if failed || parsed == 0 {
        crate::EXIT_FAILURE
    } else {
        0
    })
}

fn totals(files: &[(FileCtx, Tally, Kind)]) -> Tally {
    let mut t = Tally::default();
    for (_, f, _) in files {
        t.merge(f);
    }
    t
}

fn num(v: Option<f64>) -> Value {
    v.filter(|x| x.is_finite())
        .map_or(Value::Null, |x| json!(x))
}

fn instance_json(name: &str, i: &Instance, s: &Server) -> Value {
    let row = s.instances.iter().find(|r| r.name == name);
    json!({
        "instance": name,
        "gen_tps": row.map(|r| num(Some(r.gen_tps))),
        "vs_median": row.map(|r| num(Some(r.vs_median))),
        "imbalanced": row.map(|r| r.imbalanced),
        "engine": i.engine,
        "first_ts": i.first.map(|t| t.to_string()),
        "last_ts": i.last.map(|t| t.to_string()),
        "span_s": num(i.span_s()),
        "stat_lines": i.stat_lines,
        "prefill_lines": i.prefill_lines,
        "gen_tps_mean": num(i.gen_tps.mean()),
        "gen_tps_max": num(i.gen_tps.max()),
        "gen_tokens": row.map(|r| num(Some(r.gen_tokens.round()))),
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

/// The server-side results, for rendering.
struct Analysis<'a> {
    server: &'a Server,
    hints: &'a [Hint],
    metrics: Option<&'a Metrics>,
}

fn to_json(
    r: &Read,
    a: &Analysis<'_>,
    completions: Option<&Completions>,
    runs: &[RunReport],
) -> Result<Value> {
    let t = totals(&r.files);
    let mut v = json!({
        "lines": {"total": t.total, "parsed": t.parsed, "other": t.other, "malformed": t.malformed},
        "files": r.files.iter().map(|(f, t, k)| json!({
            "source": f.source,
            "kind": k.as_str(),
            "total": t.total, "parsed": t.parsed, "other": t.other, "malformed": t.malformed,
            "malformed_samples": t.samples.iter().map(|(n, why)| json!({"line": n, "reason": why})).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "skipped": r.skipped.iter().map(|s| json!({"source": s.source, "reason": s.why})).collect::<Vec<_>>(),
        "instances": r.logs.instances.iter().map(|(k, i)| instance_json(k, i, a.server)).collect::<Vec<_>>(),
        "bench_runs": runs,
        "unknown_records": r.unknown_records,
        "completions": completions.map(|c| {
            let mut v = serde_json::to_value(c).unwrap_or(Value::Null);
            v["dropped_choices"] = json!(r.dropped_choices);
            v
        }),
    });
    if let Value::Object(obj) = &mut v {
        crate::render::server::json_into(obj, a.server, a.hints)?;
        obj.insert("metrics".into(), json!(a.metrics));
    }
    Ok(v)
}

/// What to say of JSON records of no known shape: they are counted as `other` lines, and
/// without this the user would not know why a file of them reports nothing.
fn unknown_note(n: u64) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "Note: {} JSON record(s) have no field tokstat reads (token counts, finish reason, \
             error); point at yours with JSON pointers, e.g. --tokens-path /meta/ntok \
             --finish-path /fr",
            group(n)
        )
    })
}

fn write_table(
    out: &mut dyn Write,
    r: &Read,
    a: &Analysis<'_>,
    completions: Option<&Completions>,
    runs: &[RunReport],
) -> Result<()> {
    let t = totals(&r.files);
    writeln!(
        out,
        "Inputs: {} file(s) · lines: {} total · {} parsed · {} other · {} malformed\n",
        r.files.len(),
        group(t.total),
        group(t.parsed),
        group(t.other),
        group(t.malformed)
    )?;
    if let Some(note) = unknown_note(r.unknown_records) {
        writeln!(out, "{note}\n")?;
    }
    if !r.logs.instances.is_empty() {
        write_instances(out, &r.logs, a.server)?;
        crate::render::server::write(out, a.server, a.hints)?;
    }
    if let Some(m) = a.metrics {
        crate::render::server::write_metrics(out, m)?;
    }
    if r.logs.instances.is_empty() && !a.hints.is_empty() {
        crate::render::server::write_hints(out, a.hints)?;
    }
    if let Some(c) = completions {
        write_completions(out, c)?;
    }
    if !runs.is_empty() {
        write_runs(out, runs)?;
    }
    for (f, t, _) in &r.files {
        if let Some((n, why)) = t.samples.first() {
            let nums: Vec<String> = t.samples.iter().map(|(n, _)| n.to_string()).collect();
            writeln!(
                out,
                "{}: {} malformed line(s) (lines {}); line {n}: {why}",
                f.source,
                group(t.malformed),
                nums.join(", ")
            )?;
        }
    }
    for sk in &r.skipped {
        writeln!(out, "{}: skipped: {}", sk.source, sk.why)?;
    }
    Ok(())
}

fn table(header: Vec<&str>) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(header);
    t
}

fn right_align(t: &mut Table, from: usize, to: usize) {
    for c in from..to {
        if let Some(col) = t.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn write_instances(out: &mut dyn Write, s: &LogSummary, server: &Server) -> Result<()> {
    writeln!(out, "Server logs: {} instance(s)", s.instances.len())?;
    let mut t = table(vec![
        "instance",
        "engine",
        "span",
        "lines",
        "tokens",
        "steady tok/s",
        "vs median",
        "running",
        "waiting",
        "kv max",
        "retracted",
        "preempted",
    ]);
    for (name, i) in &s.instances {
        let row = server.instances.iter().find(|r| &r.name == name);
        t.add_row(vec![
            Cell::new(name),
            Cell::new(i.engine.unwrap_or("?")),
            Cell::new(i.span_s().map_or("–".into(), duration)),
            Cell::new(group(i.stat_lines)),
            Cell::new(row.map_or("–".into(), |r| group(r.gen_tokens.round() as u64))),
            Cell::new(row.map_or("–".into(), |r| format!("{:.1}", r.gen_tps))),
            Cell::new(row.map_or("–".into(), |r| {
                format!(
                    "{:+.1}%{}",
                    r.vs_median * 100.0,
                    if r.imbalanced { " ⚠" } else { "" }
                )
            })),
            Cell::new(opt(i.running.mean(), 1)),
            Cell::new(opt(i.waiting.mean(), 1)),
            Cell::new(opt(i.kv_usage.max(), 2)),
            Cell::new(group(i.retracted)),
            Cell::new(group(i.preemptions)),
        ]);
    }
    right_align(&mut t, 2, 12);
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "  lines: stats lines · tokens: generated, estimated from the logged rates · running, waiting: means · retracted: requests\n"
    )?;
    Ok(())
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// A distribution as a table row: name, n, p50 p90 p95 p99 max with `d` decimals, mean.
fn summary_row(name: &str, s: &Option<Summary>, d: usize) -> Option<Vec<Cell>> {
    let s = s.as_ref()?;
    let mut row = vec![Cell::new(name), Cell::new(group(s.count))];
    row.extend([s.p50, s.p90, s.p95, s.p99, s.max].map(|v| Cell::new(format!("{v:.d$}"))));
    row.push(Cell::new(format!("{:.1}", s.mean)));
    Some(row)
}

fn write_completions(out: &mut dyn Write, c: &Completions) -> Result<()> {
    writeln!(out, "Completions: {}", group(c.count))?;
    let mut t = table(vec![
        "tokens", "n", "p50", "p90", "p95", "p99", "max", "mean",
    ]);
    for (name, s) in [
        ("output", &c.output_tokens),
        ("input", &c.input_tokens),
        ("reasoning", &c.reasoning_tokens),
    ] {
        if let Some(row) = summary_row(name, s, 0) {
            t.add_row(row);
        }
    }
    for (reason, b) in &c.by_finish {
        if let Some(row) = summary_row(&format!("output · {reason}"), &b.output_tokens, 0) {
            t.add_row(row);
        }
    }
    if !c.token_counts_available {
        if let Some(row) = summary_row("output chars", &c.output_chars, 0) {
            t.add_row(row);
        }
        writeln!(
            out,
            "Token counts are unavailable in these records: output characters are shown instead."
        )?;
    }
    right_align(&mut t, 1, 8);
    writeln!(out, "{t}")?;
    let reasons: Vec<String> = c
        .by_finish
        .iter()
        .map(|(k, b)| format!("{k} {} ({})", group(b.count), pct(b.share)))
        .collect();
    writeln!(out, "Finish reasons: {}", reasons.join(" · "))?;
    match c.cap.value {
        Some(cap) => {
            writeln!(
                out,
                "Cap: {} tokens ({}) · hit by {} of {} ({}) · {} output tokens spent on capped outputs{}",
                group(cap),
                c.cap.source,
                group(c.cap.hits),
                group(c.count),
                pct(c.cap.hit_rate),
                group(c.cap.tokens_on_capped),
                c.cap.tokens_on_capped_share.map_or(String::new(), |s| format!(" ({} of all)", pct(s)))
            )?;
            if c.cap.censored {
                writeln!(out, "Warning: p90 or p99 reaches the cap: the true tail is longer than shown (censored at {}).", group(cap))?;
            }
        }
        None => writeln!(
            out,
            "Cap: none found (no `length` finishes; pass --cap N to set it)"
        )?,
    }
    writeln!(
        out,
        "Failures: {} · aborts: {}",
        pct(c.failure_rate),
        pct(c.abort_rate)
    )?;
    if let Some(d) = &c.drift {
        let f = |v: Option<f64>| v.map_or("–".to_string(), |x| format!("{x:.0}"));
        let p = |v: Option<f64>| v.map_or("–".to_string(), pct);
        writeln!(
            out,
            "Drift (first → last tenth of the job): mean output {} → {} tokens · cap-hit {} → {}",
            f(d.first_mean_output_tokens),
            f(d.last_mean_output_tokens),
            p(d.first_cap_hit_rate),
            p(d.last_cap_hit_rate)
        )?;
    }
    if !c.histogram.is_empty() {
        writeln!(out, "\nOutput tokens")?;
        let most = c.histogram.iter().map(|b| b.2).max().unwrap_or(1).max(1);
        let w = c
            .histogram
            .iter()
            .map(|b| format!("{:.0}–{:.0}", b.0, b.1).len())
            .max()
            .unwrap_or(0);
        for (lo, hi, n) in &c.histogram {
            let bar = "█".repeat(((*n as f64 / most as f64) * 40.0).round() as usize);
            writeln!(
                out,
                "  {:>w$} {bar} {}",
                format!("{lo:.0}–{hi:.0}"),
                group(*n)
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}

fn write_runs(out: &mut dyn Write, runs: &[RunReport]) -> Result<()> {
    writeln!(out, "Benchmark runs: {}", runs.len())?;
    for run in runs {
        writeln!(
            out,
            "{} · {} requests ({} failed) · {} · {} req/s · {} output tok/s",
            run.name,
            run.completed
                .map(|c| group(c as u64))
                .or((run.requests > 0).then(|| group(run.requests as u64)))
                .unwrap_or_else(|| "–".into()),
            run.errors,
            run.duration_s.map_or("–".into(), duration),
            opt(run.request_throughput, 2),
            opt(run.output_throughput, 1)
        )?;
        let rows = [
            ("TTFT", &run.ttft_ms),
            ("TPOT", &run.tpot_ms),
            ("ITL", &run.itl_ms),
            ("E2E", &run.e2e_ms),
        ];
        if rows.iter().any(|(_, s)| s.is_some()) {
            let mut t = table(vec!["ms", "n", "p50", "p90", "p95", "p99", "max", "mean"]);
            for (name, s) in rows {
                if let Some(row) = summary_row(name, s, 1) {
                    t.add_row(row);
                }
            }
            right_align(&mut t, 1, 8);
            writeln!(out, "{t}")?;
        } else {
            writeln!(
                out,
                "  no per-request lists in this file; its medians: TTFT {} ms · TPOT {} ms · ITL {} ms · E2E {} ms",
                opt(run.median_ttft_ms, 1),
                opt(run.median_tpot_ms, 1),
                opt(run.median_itl_ms, 1),
                opt(run.median_e2e_ms, 1)
            )?;
        }
        if let (Some(g), Some(share)) = (run.goodput, run.goodput_share) {
            writeln!(
                out,
                "  goodput: {g:.3} req/s ({} of requests meet every objective)",
                pct(share)
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}
