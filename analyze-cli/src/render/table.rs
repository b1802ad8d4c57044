//! The report in the terminal: aligned tables, a column chart of throughput over time, the
//! concurrency curve as bars, hints with their evidence.

use crate::analysis::bench::RunReport;
use crate::analysis::hints::Hint;
use crate::analysis::incidents::Incident;
use crate::analysis::lifecycle::Lifecycle;
use crate::analysis::metrics::Metrics;
use crate::analysis::quantile::Summary;
use crate::render::num::{duration, group, opt};
use crate::render::style::{Style, Tone};
use crate::render::Section;
use crate::report::{CompletionsReport, Report, SegmentReport};
use comfy_table::{Cell, CellAlignment, Table};
use std::cell::Cell as Shared;
use std::io::{self, Write};
use tokstat_parsers::stamp::Ts;

thread_local! {
    /// The style of the rendering under way (set by [`write`] for the helpers below).
    static STYLE: Shared<Style> = Shared::new(Style::plain());
}

fn style() -> Style {
    STYLE.get()
}

/// Writes the whole report in `style`.
pub fn write(out: &mut dyn Write, r: &Report, style: Style) -> io::Result<()> {
    STYLE.set(style);
    let mut buf = Vec::new();
    write_report(&mut buf, r)?;
    out.write_all(
        style
            .finish(String::from_utf8_lossy(&buf).into_owned())
            .as_bytes(),
    )
}

fn write_report(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let t = &r.lines;
    writeln!(
        out,
        "Inputs: {} file(s) · lines: {} total · {} · {} other · {} malformed\n",
        r.files.len(),
        group(t.total),
        super::accounting::parsed(t),
        group(t.other),
        group(t.malformed)
    )?;
    for note in super::opening_notes(r) {
        writeln!(out, "{note}\n")?;
    }
    for section in super::sections(r) {
        match section {
            Section::Incidents => write_incidents(out, &r.incidents)?,
            Section::Server if !r.instances.is_empty() => {
                write_instances(out, r)?;
                write_server(out, r)?;
            }
            Section::Server => {}
            Section::Hints => write_hints(out, &r.hints)?,
            Section::Lifecycle => write_lifecycle(out, &r.lifecycle)?,
            Section::Metrics => {
                if let Some(m) = &r.metrics {
                    write_metrics(out, m)?;
                }
            }
            Section::Completions => {
                if let Some(c) = &r.completions {
                    write_completions(out, c)?;
                }
            }
            Section::BenchRuns if !r.bench_runs.is_empty() => write_runs(out, &r.bench_runs)?,
            Section::BenchRuns => {}
            Section::OneClock => write_one_clock(out, r)?,
        }
    }
    for f in &r.files {
        if let Some(first) = f.malformed_samples.first() {
            let nums: Vec<String> = f
                .malformed_samples
                .iter()
                .map(|s| s.line.to_string())
                .collect();
            writeln!(
                out,
                "{}: {} malformed line(s) (lines {}); line {}: {}",
                f.source,
                group(f.lines.malformed),
                nums.join(", "),
                first.line,
                first.reason
            )?;
        }
    }
    for sk in &r.skipped {
        writeln!(out, "{}: {}: {}", sk.source, sk.label(), sk.reason)?;
    }
    Ok(())
}

fn table(header: Vec<&str>) -> Table {
    let mut t = style().table();
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

/// Columns of the instance table dropped, in this order, until it fits a narrow terminal.
const INSTANCE_DROP: [&str; 7] = [
    "preempted",
    "retracted",
    "engine",
    "kv max",
    "waiting",
    "span",
    "lines",
];

/// A table of `header` and `rows` that fits the style's width: columns named in `drop` are
/// left out, in that order, while it does not (the others wrap). Returns the table and the
/// columns left out. Columns from `right` on are right-aligned.
fn fitted(
    header: &[&str],
    rows: &[Vec<String>],
    right: usize,
    drop: &[&str],
) -> (Table, Vec<String>) {
    // `wrap`: the style's table (wrapped to its width); else one at its natural width, to
    // measure
    let build = |skip: &[&str], wrap: bool| {
        let keep: Vec<usize> = (0..header.len())
            .filter(|&k| !skip.contains(&header[k]))
            .collect();
        let mut t = if wrap {
            style().table()
        } else {
            Style {
                width: None,
                ..style()
            }
            .table()
        };
        t.set_header(keep.iter().map(|&k| header[k]).collect::<Vec<_>>());
        for r in rows {
            t.add_row(keep.iter().map(|&k| Cell::new(&r[k])).collect::<Vec<_>>());
        }
        for (n, &k) in keep.iter().enumerate() {
            if k >= right {
                if let Some(col) = t.column_mut(n) {
                    col.set_cell_alignment(CellAlignment::Right);
                }
            }
        }
        t
    };
    let mut skip: Vec<&str> = Vec::new();
    if let Some(w) = style().width {
        while skip.len() < drop.len() {
            let natural = build(&skip, false)
                .to_string()
                .lines()
                .next()
                .map_or(0, |l| l.chars().count());
            if natural <= usize::from(w) {
                break;
            }
            skip.push(drop[skip.len()]);
        }
    }
    let dropped = skip.iter().map(|s| s.to_string()).collect();
    (build(&skip, true), dropped)
}

fn write_instances(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "Server logs: {} instance(s)", r.instances.len())?;
    // (a terminal is narrow: "stats lines" is "lines", said in the note below)
    let mut header = super::INSTANCE_COLUMNS;
    header[3] = "lines";
    let rows: Vec<Vec<String>> = r.instances.iter().map(super::instance_cells).collect();
    let (t, dropped) = fitted(&header, &rows, 2, &INSTANCE_DROP);
    writeln!(out, "{t}")?;
    if !dropped.is_empty() {
        writeln!(
            out,
            "  left out to fit the terminal: {}",
            dropped.join(", ")
        )?;
    }
    writeln!(
        out,
        "  lines: stats lines · tokens: generated, estimated from the logged rates · running, waiting: means · retracted: requests\n"
    )?;
    Ok(())
}

fn ts(ms: i64) -> String {
    Ts(ms).to_string()
}

/// A column chart of `v` (NaN = no data), `height` rows, with the steady window underlined.
pub fn chart(out: &mut dyn Write, v: &[f64], steady: &[bool], height: usize) -> io::Result<()> {
    const BLOCKS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = v
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    if max <= 0.0 {
        return Ok(());
    }
    let label_w = format!("{max:.0}").len();
    for row in (0..height).rev() {
        let label = if row == height - 1 {
            format!("{max:.0}")
        } else if row == 0 {
            "0".to_string()
        } else {
            String::new()
        };
        let mut line = format!("  {label:>label_w$} │");
        for x in v {
            let eighths = if x.is_finite() {
                (x / max * (height * 8) as f64).round() as usize
            } else {
                0
            };
            let here = eighths.saturating_sub(row * 8).min(8);
            line.push(BLOCKS[here]);
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    let mut axis = format!("  {:>label_w$} └", "");
    for &st in steady {
        axis.push(if st { '━' } else { '─' });
    }
    writeln!(out, "{axis}")
}

/// Throughput, the chart, segments, the curve and the hints.
fn write_server(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let total: Vec<_> = r.total_timeline().collect();
    if total.is_empty() {
        return Ok(());
    }
    let s = &r.steady;
    let b = (r.timeline_bucket_s * 1000.0).round() as i64;
    writeln!(
        out,
        "Throughput: {} tokens generated (estimated from the logged rates) · steady {} tok/s · peak {} tok/s (best {})",
        group(s.gen_tokens as u64),
        s.gen_tps.map_or("–".into(), |v| format!("{v:.0}")),
        s.peak_gen_tps.map_or("–".into(), |v| format!("{v:.0}")),
        duration(s.peak_window_s)
    )?;
    if let Some(mean) = s.mean_gen_tps {
        writeln!(
            out,
            "  mean {:.0} tok/s while serving{} · ramp-up {} · drain {}",
            mean,
            super::span_phrase(s),
            s.ramp_up_s.map_or("–".into(), duration),
            s.drain_s.map_or("–".into(), duration)
        )?;
    }
    let trend = super::trend_phrase(s);
    if !trend.is_empty() {
        writeln!(out, "  steady state tested: {trend}")?;
    }
    let rates: Vec<f64> = total
        .iter()
        .map(|row| row.gen_tps.unwrap_or(f64::NAN))
        .collect();
    let steady: Vec<bool> = total.iter().map(|row| row.steady).collect();
    // a column a bucket, at most 100 (fewer on a narrow terminal)
    let width = style()
        .width
        .map_or(100, |w| (usize::from(w).saturating_sub(12)).clamp(20, 100));
    let (rates, steady, per) = if rates.len() > width {
        let per = rates.len().div_ceil(width);
        let r: Vec<f64> = rates
            .chunks(per)
            .map(crate::analysis::steady::mean)
            .collect();
        let st: Vec<bool> = steady.chunks(per).map(|c| c.iter().any(|x| *x)).collect();
        (r, st, per)
    } else {
        (rates, steady, 1)
    };
    let origin = total[0].ts.0;
    writeln!(
        out,
        "\nGenerated tok/s over time ({} per column, {} → {}; ━ marks steady state)",
        duration((b * per as i64) as f64 / 1000.0),
        ts(origin),
        ts(origin + b * total.len() as i64)
    )?;
    chart(out, &rates, &steady, 8)?;
    writeln!(out)?;

    if r.segments.len() > 1 {
        write_segments(out, &r.segments)?;
    }
    if !r.curve.is_empty() {
        write_curve(out, r)?;
    }
    Ok(())
}

fn write_segments(out: &mut dyn Write, segments: &[SegmentReport]) -> io::Result<()> {
    writeln!(out, "Segments: {}", segments.len())?;
    for g in segments {
        let vs = g.vs_previous.map_or(String::new(), |v| {
            format!(" ({:+.0}% vs before)", v * 100.0)
        });
        writeln!(
            out,
            "  {}. {} → {} ({}, {}) · {} instance(s) · steady {} tok/s{vs} · {} tokens",
            g.index + 1,
            g.start,
            g.end,
            duration(g.duration_s),
            g.reason,
            g.instances,
            g.gen_tps.map_or("–".into(), |v| format!("{v:.0}")),
            group(g.gen_tokens as u64)
        )?;
        for c in &g.changes {
            writeln!(
                out,
                "       changed: {} {} → {} ({} instance(s))",
                c.key, c.before, c.after, c.instances
            )?;
        }
    }
    writeln!(out)
}

fn write_curve(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(
        out,
        "Concurrency vs throughput (per instance, from every stats line)"
    )?;
    let max = r
        .curve
        .iter()
        .map(|c| c.tps_median)
        .fold(0.0, f64::max)
        .max(1e-9);
    // the bar takes what a narrow terminal leaves beside the figures (about 90 columns)
    let bar_w = style()
        .width
        .map_or(40, |w| usize::from(w).saturating_sub(92).clamp(6, 40));
    for c in &r.curve {
        let bar = "█".repeat((c.tps_median / max * bar_w as f64).round() as usize);
        let knee = r
            .knee
            .filter(|k| {
                k.running >= f64::from(c.running_lo) && k.running < f64::from(c.running_hi) + 1.0
            })
            .map_or("", |_| "  ◀ knee");
        let range = if c.running_lo == c.running_hi {
            format!("{}", c.running_lo)
        } else {
            format!("{}–{}", c.running_lo, c.running_hi)
        };
        writeln!(
            out,
            "  {range:>9} running {bar:<bar_w$} {:>8.0} tok/s (p10 {:.0}, p90 {:.0}) · {:>6.1} per req · {:>5.1}% of time{knee}",
            c.tps_median,
            c.tps_p10,
            c.tps_p90,
            c.tps_per_req,
            c.time_share * 100.0
        )?;
    }
    match r.knee {
        Some(k) => writeln!(
            out,
            "  Knee at about {:.0} running ({:.0} tok/s; {}): beyond it one more request adds under 10% of a request's rate ({:.0} tok/s at {:.0}).",
            k.running, k.tps_median, super::knee_interval(&k), k.tps_at_max, k.running_max
        )?,
        None => writeln!(out, "  No knee in the observed range: throughput still grows with concurrency (or too few levels were seen).")?,
    }
    writeln!(out)
}

/// The hints, most severe first.
pub fn write_hints(out: &mut dyn Write, hints: &[Hint]) -> io::Result<()> {
    if !hints.is_empty() {
        writeln!(out, "Hints")?;
        let mut apart = false;
        for h in hints {
            // (the borderline ones come last, under a heading of their own)
            if h.evidence.level == crate::analysis::hints::Level::Borderline && !apart {
                apart = true;
                writeln!(
                    out,
                    "  Borderline (the evidence's 95% interval holds the threshold):"
                )?;
            }
            let tone = match h.severity {
                crate::analysis::hints::Severity::Critical => Tone::Bad,
                crate::analysis::hints::Severity::Warning => Tone::Warning,
                crate::analysis::hints::Severity::Info => Tone::Muted,
            };
            writeln!(
                out,
                "  [{}] {}: {}",
                style().paint(h.severity.as_str(), tone),
                h.id,
                h.evidence.text
            )?;
            if let (Some(a), Some(b)) = (h.evidence.from, h.evidence.to) {
                writeln!(out, "      during {a} → {b}")?;
            }
            if let Some(st) = &h.evidence.strength {
                writeln!(out, "      {}", super::strength_phrase(st))?;
            }
            writeln!(out, "      → {}", h.action)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// How the instances spent their time, and how long crashed ones took to be ready again.
fn write_lifecycle(out: &mut dyn Write, l: &Lifecycle) -> io::Result<()> {
    if l.summary.is_empty() {
        return Ok(());
    }
    writeln!(out, "Lifecycle: {}", l.summary)?;
    for i in &l.instances {
        for s in &i.crash_to_ready_s {
            writeln!(
                out,
                "  {}: ready again {} after a crash",
                i.instance,
                duration(*s)
            )?;
        }
    }
    writeln!(out)
}

/// The incident census: the kinds that occurred in a table, with the first line of each,
/// and those that did not in one line.
fn write_incidents(out: &mut dyn Write, incidents: &[Incident]) -> io::Result<()> {
    if incidents.is_empty() {
        return Ok(());
    }
    let (seen, none): (Vec<&Incident>, Vec<&Incident>) =
        incidents.iter().partition(|i| i.count > 0);
    let names = |v: &[&Incident]| {
        v.iter()
            .map(|i| i.kind.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if seen.is_empty() {
        writeln!(out, "Incidents: none ({})\n", names(&none))?;
        return Ok(());
    }
    let broke = seen.iter().any(|i| i.broke);
    writeln!(
        out,
        "Incidents{}",
        if broke {
            style().paint(": something broke", Tone::Bad)
        } else {
            String::new()
        }
    )?;
    let mut t = table(vec!["kind", "lines", "first", "last", "instances"]);
    for i in &seen {
        let inst: Vec<String> = i
            .by_instance
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        let tone = if i.broke { Tone::Bad } else { Tone::Warning };
        t.add_row(vec![
            style().paint(i.kind.as_str(), tone),
            group(i.count),
            i.first_ts.map_or("–".into(), |t| t.to_string()),
            i.last_ts.map_or("–".into(), |t| t.to_string()),
            inst.join(", "),
        ]);
    }
    right_align(&mut t, 1, 2);
    writeln!(out, "{t}")?;
    for i in &seen {
        if let Some(s) = i.samples.first() {
            writeln!(
                out,
                "  {}: {}:{}: {}",
                i.kind.as_str(),
                s.source,
                s.line,
                s.text
            )?;
        }
    }
    if !none.is_empty() {
        writeln!(out, "  none: {}", names(&none))?;
    }
    writeln!(out)
}

/// The Prometheus section.
fn write_metrics(out: &mut dyn Write, m: &Metrics) -> io::Result<()> {
    writeln!(
        out,
        "Prometheus: {} scrape(s), {} samples{}{}",
        m.scrapes,
        group(m.samples as u64),
        m.engine.map_or(String::new(), |e| format!(" · {e}")),
        match (m.from, m.to, m.span_s) {
            (Some(a), Some(b), Some(s)) => format!(" · {a} → {b} ({})", duration(s)),
            _ => " · no time span (one scrape, or scrapes without times: give --interval)".into(),
        }
    )?;
    if m.span_s.is_some() {
        writeln!(
            out,
            "  generated {} tok/s · prompt {} tok/s · {} requests/s (counter increases over the window)",
            opt(m.gen_tps, 1),
            opt(m.prompt_tps, 1),
            opt(m.requests_per_s, 2)
        )?;
    }
    writeln!(
        out,
        "  counters at the last scrape: {} generated tokens · {} prompt tokens",
        opt(m.generation_tokens, 0),
        opt(m.prompt_tokens, 0)
    )?;
    if !m.finished.is_empty() {
        let done: f64 = m.finished.values().sum();
        let parts: Vec<String> = m
            .finished
            .iter()
            .map(|(k, v)| format!("{k} {v:.0}"))
            .collect();
        writeln!(
            out,
            "  finished requests{}: {} · cap-hit rate {}",
            if m.span_s.is_some() {
                " in the window"
            } else {
                " since start"
            },
            parts.join(" · "),
            m.cap_hit_rate
                .map_or("–".into(), |r| format!("{:.1}% of {done:.0}", r * 100.0))
        )?;
    }
    for (name, s) in [
        ("running", &m.running),
        ("waiting", &m.waiting),
        ("kv usage", &m.kv_usage),
    ] {
        if let Some(s) = s {
            writeln!(
                out,
                "  {name}: mean {:.2} · max {:.2} over {} scrape(s)",
                s.mean, s.max, s.count
            )?;
        }
    }
    for (name, q) in &m.latency {
        writeln!(
            out,
            "  {name}: p50 {} · p90 {} · p99 {} · mean {} ({:.0} observations, from histogram buckets)",
            opt(q.p50, 3),
            opt(q.p90, 3),
            opt(q.p99, 3),
            opt(q.mean, 3),
            q.count
        )?;
    }
    for bad in &m.malformed_series {
        writeln!(out, "  malformed, kept out of the quantiles: {bad}")?;
    }
    if !m.ranks.is_empty() {
        writeln!(
            out,
            "  engines side by side (each series once; the figures above are their sums):"
        )?;
        let rows: Vec<Vec<String>> = m.ranks.iter().map(super::rank_cells).collect();
        let (t, _) = fitted(&super::RANK_COLUMNS, &rows, 1, &[]);
        writeln!(out, "{t}")?;
    }
    writeln!(out)
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

fn write_completions(out: &mut dyn Write, r: &CompletionsReport) -> io::Result<()> {
    let c = &r.figures;
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
        let most = c
            .histogram
            .iter()
            .map(|b| b.count)
            .max()
            .unwrap_or(1)
            .max(1);
        let w = c
            .histogram
            .iter()
            .map(|b| format!("{:.0}–{:.0}", b.from, b.to).len())
            .max()
            .unwrap_or(0);
        for b in &c.histogram {
            let bar = "█".repeat(((b.count as f64 / most as f64) * 40.0).round() as usize);
            writeln!(
                out,
                "  {:>w$} {bar} {}",
                format!("{:.0}–{:.0}", b.from, b.to),
                group(b.count)
            )?;
        }
    }
    writeln!(out)?;
    Ok(())
}

fn write_runs(out: &mut dyn Write, runs: &[RunReport]) -> io::Result<()> {
    writeln!(out, "Benchmark runs: {}", runs.len())?;
    let goodput = runs.iter().any(|r| r.goodput.is_some());
    let columns = &super::BENCH_COLUMNS[..super::BENCH_COLUMNS.len() - usize::from(!goodput)];
    let mut t = table(columns.to_vec());
    for run in runs {
        let mut cells = super::bench_cells(run);
        cells.truncate(columns.len());
        t.add_row(cells);
    }
    right_align(&mut t, 3, columns.len());
    writeln!(out, "{t}")?;
    if super::any_recomputed(runs) {
        writeln!(out, "{}", super::RECOMPUTED_NOTE)?;
    }
    super::bench_notes(out, runs, "  ")?;
    for run in runs {
        let rows = [
            ("TTFT", &run.ttft_ms),
            ("TPOT", &run.tpot_ms),
            ("ITL", &run.itl_ms),
            ("E2E", &run.e2e_ms),
        ];
        if rows.iter().any(|(_, s)| s.is_some()) {
            writeln!(
                out,
                "{} · {} request rows · {} failed ({} cancelled) · {}",
                run.name,
                group(run.requests.unwrap_or(0) as u64),
                group(run.errors.unwrap_or(0) as u64),
                group(run.cancelled.unwrap_or(0) as u64),
                run.duration_s.map_or("–".into(), duration),
            )?;
            let mut t = table(vec!["ms", "n", "p50", "p90", "p95", "p99", "max", "mean"]);
            for (name, s) in rows {
                if let Some(row) = summary_row(name, s, 1) {
                    t.add_row(row);
                }
            }
            right_align(&mut t, 1, 8);
            writeln!(out, "{t}")?;
        } else if run.requests_sampled {
            writeln!(
                out,
                "{}: its {} request rows are a sample; the figures above are the file's",
                run.name,
                group(run.requests.unwrap_or(0) as u64)
            )?;
        }
        if let (Some(g), Some(share)) = (run.goodput, run.goodput_share) {
            writeln!(
                out,
                "  goodput: {g:.3} req/s ({} of requests meet every objective)",
                pct(share)
            )?;
        }
        if let Some((head, rows, notes)) = super::server_side(run) {
            writeln!(out, "{head}")?;
            let mut t = table(super::SERVER_SIDE_COLUMNS.to_vec());
            for row in rows {
                t.add_row(row);
            }
            right_align(&mut t, 1, super::SERVER_SIDE_COLUMNS.len());
            writeln!(out, "{t}")?;
            for n in notes {
                writeln!(out, "  {n}")?;
            }
        }
    }
    writeln!(out)?;
    Ok(())
}

/// Each benchmark run and the server's side on one clock: the offset, the checks, the
/// client path per quantile, and the series stacked on one time axis.
fn write_one_clock(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    use super::one_clock as oc;
    for c in oc::aligned(r) {
        writeln!(out, "{}", oc::head(c))?;
        for l in oc::lines(c) {
            writeln!(out, "  {l}")?;
        }
        if !c.ttft_path.is_empty() {
            let mut t = table(oc::PATH_COLUMNS.to_vec());
            for row in oc::path_rows(c) {
                t.add_row(row);
            }
            right_align(&mut t, 1, oc::PATH_COLUMNS.len());
            writeln!(out, "{t}")?;
        }
        for l in oc::stacked(c) {
            writeln!(out, "  {l}")?;
        }
        for n in oc::notes(c) {
            writeln!(out, "  {n}")?;
        }
        writeln!(out)?;
    }
    let refused = oc::refused(r);
    if !refused.is_empty() {
        writeln!(out, "{}", oc::REFUSED_HEAD)?;
        for l in refused {
            writeln!(out, "  {l}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}
