//! Output: every format a [`Report`] is shown in, and the records of `tokstat parse`.
//!
//! Each renderer takes the report and recomputes nothing: a figure shown in two formats is
//! the same number, read from the same field.

pub mod accounting;
pub mod compare_markdown;
pub mod compare_table;
pub mod html;
pub mod json;
pub mod json_writer;
pub mod markdown;
pub mod num;
pub mod one_clock;
pub mod pulse;
pub mod records;
pub mod style;
pub mod svg;
pub mod table;

use crate::compare::Comparison;
use crate::report::Report;
use std::io::{self, Write};
pub use style::Style;

/// The formats a report is rendered in (`--format`; the variants' docs are its help).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Aligned tables and charts for a terminal.
    #[default]
    Table,
    /// The report as one JSON document (keys in docs/json.md), for scripts.
    Json,
    /// GitHub-flavoured markdown, to paste into an issue or a pull request.
    Markdown,
    /// One self-contained HTML file with charts (inline SVG, nothing loaded from anywhere).
    Html,
}

impl Format {
    /// Writes `report` in this format (`style` says what the terminal table may use).
    pub fn render(self, report: &Report, style: Style, out: &mut dyn Write) -> io::Result<()> {
        match self {
            Format::Table => table::write(out, report, style),
            Format::Json => json::write(out, report),
            Format::Markdown => markdown::write(out, report),
            Format::Html => html::write(out, report),
        }
    }

    /// Writes a comparison in this format.
    pub fn render_comparison(
        self,
        c: &Comparison,
        style: Style,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        match self {
            Format::Table => compare_table::write(out, c, style),
            Format::Json => json::write(out, c),
            Format::Markdown => compare_markdown::write(out, c),
            Format::Html => html::write_comparison(out, c),
        }
    }
}

/// The notes every text rendering opens with, after the line accounting: records of no
/// known shape, places not placed exactly in time, and the warnings of a merge.
pub fn opening_notes(r: &Report) -> impl Iterator<Item = String> + '_ {
    unknown_note(r.unknown_records)
        .into_iter()
        .chain(inexact_note(r.inexact))
        .chain(r.warnings.iter().map(|w| format!("Warning: {w}")))
        .chain(r.files.iter().filter_map(|f| {
            let e = f.envelope.as_ref()?;
            Some(format!("{}: {}", f.source, accounting::envelope(e)))
        }))
}

/// Whether the incident census comes before the server's figures (something broke), or
/// after them: the one placement rule every rendering follows.
pub fn census_first(r: &Report) -> bool {
    crate::analysis::incidents::anything_broke(&r.incidents)
}

/// A section of a report, as every rendering has it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The incident census.
    Incidents,
    /// Instances, throughput over time, segments, the concurrency curve.
    Server,
    Hints,
    Lifecycle,
    /// Prometheus scrapes.
    Metrics,
    Completions,
    BenchRuns,
    /// Benchmark runs and the server's side on one clock.
    OneClock,
}

/// The sections of a report in the order every rendering (table, markdown, HTML) gives
/// them: the census first when something broke, else after the lifecycle; the hints after
/// the figures they cite. Each renderer writes what it has of each, and nothing else in
/// between (its header before, its list of inputs after).
pub fn sections(r: &Report) -> Vec<Section> {
    use Section::*;
    let first = census_first(r);
    let mut v = Vec::with_capacity(8);
    if first {
        v.push(Incidents);
    }
    v.extend([Server, Hints, Lifecycle]);
    if !first {
        v.push(Incidents);
    }
    v.extend([Metrics, Completions, BenchRuns, OneClock]);
    v
}

/// What to say of JSON records of no known shape: they are counted as `other` lines, and
/// without this the user would not know why a file of them reports nothing.
pub fn unknown_note(n: u64) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "Note: {} JSON record(s) have no field tokstat reads (token counts, finish reason, \
             error); point at yours with JSON pointers, e.g. --tokens-path /meta/ntok \
             --finish-path /fr",
            num::group(n)
        )
    })
}

/// The note on places in the logs that could not be placed exactly in time.
pub fn inexact_note(n: u64) -> Option<String> {
    (n > 0).then(|| {
        format!(
            "Note: {} place(s) in the server logs could not be placed exactly in time (lines \
             of one instance out of order across files, or a segment edge between two of its \
             lines): the token figures around them are approximate",
            num::group(n)
        )
    })
}

/// [`SteadyReport::span_mean`](crate::report::SteadyReport::span_mean) as the text
/// renderers append it to the mean while serving (empty when it says nothing more).
pub fn span_phrase(s: &crate::report::SteadyReport) -> String {
    s.span_mean().map_or(String::new(), |v| {
        format!(", {v:.0} tok/s over the whole span")
    })
}

/// The trend test of the steady window in words, as every renderer gives it beside the
/// throughput (after "steady state tested"): the verdict, and where the window does not
/// hold steady its mean, which is not a steady rate (empty without a window).
pub fn trend_phrase(s: &crate::report::SteadyReport) -> String {
    let Some(t) = &s.trend else {
        return String::new();
    };
    let mut text = t.describe();
    if s.gen_tps.is_none() {
        if let Some(w) = s.window_gen_tps {
            text.push_str(&format!(
                "; the window found averages {w:.0} tok/s, which is no steady rate"
            ));
        }
    }
    text
}

/// A hint's strength in words: `over 2h 00m, 4,320 stats lines; effect 0.820, fires above
/// 0.500`.
pub fn strength_phrase(s: &crate::analysis::hints::Strength) -> String {
    let mut text = match s.span_s {
        Some(span) => format!(
            "over {}, {} {}",
            num::duration(span),
            num::group(s.lines),
            s.of
        ),
        None => format!("on {} {}", num::group(s.lines), s.of),
    };
    if let (Some(e), Some(t)) = (s.effect, s.threshold) {
        text.push_str(&format!("; effect {e:.3}, fires {} {t:.3}", s.fires));
    }
    text
}

/// A sweep's table, as every renderer shows it: the runs by load with their steady rate and
/// its interval, then each latency quantile any run has (`value [low, high]`, ms).
pub fn sweep_table(s: &crate::compare::sweep::Sweep) -> (Vec<String>, Vec<Vec<String>>) {
    let load = match s.load {
        "running" => "mean running",
        "concurrency" => "concurrency",
        _ => "request rate (/s)",
    };
    let mut names: Vec<&str> = Vec::new();
    for p in &s.points {
        for l in &p.latencies {
            if !names.contains(&l.name) {
                names.push(l.name);
            }
        }
    }
    let mut header: Vec<String> = ["run", load, "steady tok/s", "95% interval"]
        .iter()
        .map(|h| h.to_string())
        .collect();
    header.extend(names.iter().map(|n| format!("{n} (ms)")));
    let rows = s
        .points
        .iter()
        .map(|p| {
            let mut row = vec![
                p.label.clone(),
                format!("{:.1}", p.load),
                match (p.gen_tps, &p.no_steady) {
                    (Some(t), _) => format!("{t:.0}"),
                    (None, Some(_)) => "no steady state".into(),
                    (None, None) => "–".into(),
                },
                match (p.gen_tps_low, p.gen_tps_high) {
                    (Some(a), Some(b)) => format!("[{a:.0}, {b:.0}]"),
                    _ => "–".into(),
                },
            ];
            for n in &names {
                row.push(match p.latencies.iter().find(|l| l.name == *n) {
                    Some(l) => match (l.low, l.high) {
                        (Some(a), Some(b)) => format!("{:.2} [{a:.2}, {b:.2}]", l.ms),
                        _ => format!("{:.2}", l.ms),
                    },
                    None => "–".into(),
                });
            }
            row
        })
        .collect();
    (header, rows)
}

/// A knee's 95% interval in words: `95% interval 80–110 running`, or open at the top.
pub fn knee_interval(k: &crate::analysis::curve::Knee) -> String {
    match k.running_high {
        Some(h) => format!("95% interval {:.0}–{h:.0} running", k.running_low),
        None => format!(
            "95% interval from {:.0} running to beyond the concurrencies seen",
            k.running_low
        ),
    }
}

/// The instance table's columns, as every renderer heads them.
pub const INSTANCE_COLUMNS: [&str; 12] = [
    "instance",
    "engine",
    "span",
    "stats lines",
    "tokens",
    "steady tok/s",
    "vs median",
    "running",
    "waiting",
    "kv max",
    "retracted",
    "preempted",
];

/// One instance's row of the instance table, as text, in [`INSTANCE_COLUMNS`] (`⚠` after
/// vs median beyond the imbalance threshold).
pub fn instance_cells(i: &crate::report::InstanceReport) -> Vec<String> {
    use num::{duration, group, opt};
    vec![
        i.instance.clone(),
        i.engine.unwrap_or("?").to_string(),
        i.span_s.map_or("–".into(), duration),
        group(i.stat_lines),
        i.gen_tokens.map_or("–".into(), |v| group(v as u64)),
        opt(i.gen_tps, 1),
        i.vs_median.map_or("–".into(), |v| {
            let flag = if i.imbalanced == Some(true) {
                " ⚠"
            } else {
                ""
            };
            format!("{:+.1}%{flag}", v * 100.0)
        }),
        opt(i.running_mean, 1),
        opt(i.waiting_mean, 1),
        opt(i.kv_usage_max, 2),
        group(i.retracted_requests),
        group(i.preemptions),
    ]
}

/// The benchmark runs table's columns, as every renderer heads them (HTML leaves out the
/// last, goodput).
pub const BENCH_COLUMNS: [&str; 12] = [
    "run",
    "tool",
    "load",
    "requests",
    "failed",
    "req/s",
    "output tok/s",
    "TTFT p50 ms",
    "TTFT p99 ms",
    "TPOT p50 ms",
    "E2E p50 ms",
    "goodput req/s",
];

/// One benchmark run's row of the runs table, in [`BENCH_COLUMNS`]. A rate tokstat
/// recomputed from per-request rows (the file states none) ends in `*`.
pub fn bench_cells(run: &crate::analysis::bench::RunReport) -> Vec<String> {
    use num::{group, opt};
    let count = |v: Option<f64>| v.map_or("–".into(), |c| group(c.round() as u64));
    let ours = |stated: Option<f64>, mine: Option<f64>, d: usize| match (stated, mine) {
        (Some(v), _) => opt(Some(v), d),
        (None, Some(v)) => format!("{}*", opt(Some(v), d)),
        _ => "–".into(),
    };
    let p99 = |s: &Option<crate::analysis::quantile::Summary>, stated: Option<f64>| {
        s.as_ref().map(|s| s.p99).or(stated)
    };
    let tool = match &run.tool_version {
        Some(v) => format!("{} {v}", run.tool),
        None => run.tool.to_string(),
    };
    vec![
        run.name.clone(),
        tool,
        load(run),
        count(run.total()),
        count(run.failures()),
        ours(
            run.request_throughput,
            run.recomputed.map(|r| r.request_throughput),
            2,
        ),
        ours(
            run.output_throughput,
            run.recomputed.and_then(|r| r.output_throughput),
            1,
        ),
        opt(run.ttft_p50_ms(), 1),
        opt(p99(&run.ttft_ms, run.p99_ttft_ms), 1),
        opt(run.tpot_p50_ms(), 1),
        opt(run.e2e_p50_ms(), 1),
        opt(run.goodput, 3),
    ]
}

/// The load a run was under, in few words: `c8` (a concurrency limit), `5 req/s`, `inf
/// req/s` (all at once), both, or `–`.
pub fn load(run: &crate::analysis::bench::RunReport) -> String {
    let rate = run.request_rate.map(|r| {
        if r.is_infinite() {
            "inf req/s".to_string()
        } else {
            format!("{} req/s", num::trim(r, 2))
        }
    });
    let conc = run.max_concurrency.map(|c| format!("c{}", num::trim(c, 0)));
    match (conc, rate) {
        (Some(c), Some(r)) => format!("{c} · {r}"),
        (Some(c), None) => c,
        (None, Some(r)) => r,
        (None, None) => "–".into(),
    }
}

/// Whether any run's row holds a rate tokstat recomputed (the `*` of [`bench_cells`]).
pub fn any_recomputed(runs: &[crate::analysis::bench::RunReport]) -> bool {
    runs.iter().any(|r| {
        r.recomputed.is_some() && (r.request_throughput.is_none() || r.output_throughput.is_none())
    })
}

/// The notes under a runs table, one per line after `bullet`: where each tool's files came
/// from (tool, version, model, endpoint, streaming), where its definitions differ from
/// tokstat's, and each run's stated rates beside tokstat's recomputed ones.
pub fn bench_notes(
    out: &mut dyn std::io::Write,
    runs: &[crate::analysis::bench::RunReport],
    bullet: &str,
) -> std::io::Result<()> {
    let mut seen: Vec<String> = Vec::new();
    for r in runs {
        let mut parts = vec![match &r.tool_version {
            Some(v) => format!("{} {v}", r.tool),
            None => format!("{} (version not stamped)", r.tool),
        }];
        parts.extend(r.model.as_ref().map(|m| format!("model {m}")));
        parts.extend(r.endpoint.clone());
        parts.extend(
            r.streaming
                .map(|s| if s { "streaming" } else { "not streaming" }.to_string()),
        );
        parts.extend(r.strategy.as_ref().map(|s| format!("strategy {s}")));
        let line = parts.join(" · ");
        if !seen.contains(&line) {
            writeln!(out, "{bullet}{line}")?;
            seen.push(line);
        }
    }
    let mut tools: Vec<&str> = Vec::new();
    for r in runs {
        if r.definitions.is_empty() || tools.contains(&r.tool) {
            continue;
        }
        tools.push(r.tool);
        for d in r.definitions {
            writeln!(out, "{bullet}{}: {d}", r.tool)?;
        }
    }
    for r in runs {
        let key = |figure: &str| {
            r.stated
                .iter()
                .find(|s| s.figure.as_deref() == Some(figure))
                .map(|s| s.key.as_str())
        };
        let mut parts = Vec::new();
        for (figure, value, unit, d) in [
            ("request_throughput", r.request_throughput, "req/s", 2),
            ("output_throughput", r.output_throughput, "output tok/s", 1),
        ] {
            if let (Some(v), Some(k)) = (value, key(figure)) {
                parts.push(format!("{} {unit} ({k})", num::opt(Some(v), d)));
            }
        }
        // rates the tool defines its own way, under its names
        let own: Vec<String> = r
            .stated
            .iter()
            .filter(|s| s.figure.is_none() && (s.unit.contains("/sec") || s.unit.contains("/s")))
            .filter(|s| {
                s.key.ends_with(".mean") || s.key.ends_with("_mean") || !s.key.contains('.')
            })
            .map(|s| format!("{} {}", s.key, num::opt(Some(s.value), 2)))
            .collect();
        let mine = r.recomputed.map(|m| {
            format!(
                "tokstat's over the per-request rows: {} req/s, {} output tok/s over {}",
                num::opt(Some(m.request_throughput), 2),
                num::opt(m.output_throughput, 1),
                num::duration(m.span_s)
            )
        });
        if parts.is_empty() || (own.is_empty() && mine.is_none()) {
            continue;
        }
        let mut line = format!("{bullet}{}: {}", r.name, parts.join(", "));
        if !own.is_empty() {
            line.push_str(&format!("; {}'s own: {}", r.tool, own.join(", ")));
        }
        if let Some(m) = mine {
            line.push_str(&format!("; {m}"));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The note under a runs table with recomputed rates.
pub const RECOMPUTED_NOTE: &str =
    "* tokstat's own: successful requests (or their output tokens) over the span from the first request sent to the last response, from the file's per-request rows";

/// The columns of the scrapes' engines side by side, as every renderer heads them.
pub const RANK_COLUMNS: [&str; 10] = [
    "engine",
    "gen tok/s",
    "gen tokens",
    "share",
    "vs median",
    "finished",
    "cap-hit",
    "running",
    "waiting",
    "kv usage",
];

/// One engine's row of the scrapes' engine table, in [`RANK_COLUMNS`] (`⚠` after vs median
/// beyond the imbalance threshold).
pub fn rank_cells(r: &crate::analysis::metrics::Rank) -> Vec<String> {
    use num::{group, opt};
    let pct = |v: Option<f64>| v.map_or("–".into(), |v| format!("{:.1}%", v * 100.0));
    vec![
        r.rank.clone(),
        opt(r.gen_tps, 1),
        r.generation_tokens.map_or("–".into(), |v| group(v as u64)),
        pct(r.share),
        r.vs_median.map_or("–".into(), |v| {
            let flag = if v.abs() > crate::analysis::server::IMBALANCE {
                " ⚠"
            } else {
                ""
            };
            format!("{:+.1}%{flag}", v * 100.0)
        }),
        r.finished.map_or("–".into(), |v| group(v as u64)),
        pct(r.cap_hit_rate),
        opt(r.running, 1),
        opt(r.waiting, 1),
        opt(r.kv_usage, 2),
    ]
}

/// Column of the vs-median cell in [`instance_cells`].
pub const VS_MEDIAN: usize = 6;

/// The columns of a run's server side, as every renderer heads them.
pub const SERVER_SIDE_COLUMNS: [&str; 4] = ["server's side", "server", "client", "client − server"];

/// A run's server side for every renderer: its heading line, its rows in
/// [`SERVER_SIDE_COLUMNS`] and the notes under it (None: the run holds none).
pub fn server_side(
    run: &crate::analysis::bench::RunReport,
) -> Option<(String, Vec<Vec<String>>, Vec<String>)> {
    let s = run.server.as_ref()?;
    let mut head = format!(
        "{} · the server's side: {} · {}",
        run.name, s.source, s.file
    );
    if s.series > 1 {
        head.push_str(&format!(" · {} series summed", s.series));
    }
    let rows = s
        .figures
        .iter()
        .map(|f| {
            let value = |v: Option<f64>| v.map_or("–".to_string(), |x| server_value(x, f.unit));
            let server = match f.server {
                None => "not measured".to_string(),
                Some(x) if x == 0.0 && f.server_zero_unsure => "0, or not measured".to_string(),
                Some(x) if f.server_estimated => format!("≈{}", server_value(x, f.unit)),
                Some(x) => server_value(x, f.unit),
            };
            let path = f
                .client_path
                .map_or(String::new(), |d| format!("{d:+.1} ms"));
            vec![server_label(&f.figure), server, value(f.client), path]
        })
        .collect();
    let mut notes = Vec::new();
    if !s.has_client {
        notes.push(format!(
            "no client result read beside {}: the server's side alone",
            s.file
        ));
    }
    notes.extend(s.disagreement.clone());
    notes.extend(s.notes.iter().cloned());
    if s.figures.iter().any(|f| f.client_path.is_some()) {
        notes.push("client − server: the client's path (network, HTTP server, the client's own loop), of the means: exact on both sides".to_string());
    }
    if s.figures
        .iter()
        .any(|f| f.server_estimated && f.server.is_some())
    {
        notes.push("≈: a quantile the server's side estimated from histogram buckets (linear within a bucket): as far off as the bucket is wide".to_string());
    }
    if s.figures.iter().any(|f| f.server.is_none()) {
        notes.push("not measured: the tool wrote 0 or NaN, which it also writes where its query found no series".to_string());
    }
    Some((head, rows, notes))
}

/// A server figure's value in its unit, for display.
fn server_value(x: f64, unit: &str) -> String {
    match unit {
        "fraction" => format!("{:.1}%", x * 100.0),
        "s" => format!("{} s", num::opt(Some(x), 2)),
        "ms" => format!("{} ms", num::opt(Some(x), 1)),
        "req/s" => format!("{} req/s", num::opt(Some(x), 2)),
        "tok/s" => format!("{} tok/s", num::opt(Some(x), 1)),
        "tokens" | "requests" if x.fract() == 0.0 && x.abs() < 1e15 => num::group(x as u64),
        _ => num::opt(Some(x), 1),
    }
}

/// A server figure's name in words.
fn server_label(name: &str) -> String {
    let fixed = match name {
        "window" => "window",
        "completed" => "finished requests",
        "finished_length" => "finished at the length cap",
        "request_throughput" => "request rate",
        "output_throughput" => "output token rate",
        "input_throughput" => "input token rate",
        "total_output_tokens" => "output tokens",
        "total_input_tokens" => "input tokens",
        "mean_input_tokens" => "input tokens per request, mean",
        "mean_output_tokens" => "output tokens per request, mean",
        "mean_running" => "requests running, mean",
        "mean_waiting" => "requests waiting, mean",
        "mean_kv_usage" => "KV cache usage, mean",
        "p99_kv_usage" => "KV cache usage, p99",
        "preemptions" => "preemptions",
        "prefix_cache_hit" => "prefix cache hit rate",
        _ => "",
    };
    if !fixed.is_empty() {
        return fixed.to_string();
    }
    let Some((stat, rest)) = name.split_once('_') else {
        return name.to_string();
    };
    let figure = match rest.strip_suffix("_ms") {
        Some("ttft") => "TTFT",
        Some("tpot") => "TPOT",
        Some("itl") => "ITL",
        Some("e2el") => "E2E",
        Some("queue") => "queue time",
        _ => return name.to_string(),
    };
    format!("{figure} {stat}")
}
