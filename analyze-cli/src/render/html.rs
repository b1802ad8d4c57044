//! The report (or a comparison) as one self-contained HTML file: inline CSS and SVG, no
//! script, nothing loaded from anywhere, so it opens from disk or an e-mail attachment.
//! Readable on a laptop screen, in dark mode (`prefers-color-scheme`) and printed.

use crate::compare::{Comparison, Provenance, Verdict};
use crate::render::compare_table::{change, interval, value};
use crate::render::num::{duration, group, opt};
use crate::render::svg::{esc, Chart, PALETTE};
use crate::render::Section;
use crate::report::{Report, TimelineRow};
use std::fmt::Write as _;
use std::io::{self, Write};
use tokstat_parsers::stamp::Ts;

const STYLE: &str = r#"
:root{--bg:#fff;--fg:#1d2330;--muted:#5b6475;--line:#d8dce3;--card:#f5f7fa;--grid:#e6e9ee;--span:#59a14f;--warn:#b7791f;--crit:#c53030;--info:#2b6cb0}
@media (prefers-color-scheme:dark){:root{--bg:#15181e;--fg:#e3e6eb;--muted:#9aa3b2;--line:#343a46;--card:#1d212a;--grid:#2a2f3a;--span:#7bc96f;--warn:#e0a84f;--crit:#f07070;--info:#6ea8e8}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:980px;margin:0 auto;padding:24px 20px 60px}h1{font-size:1.6em;margin:0 0 4px}h2{font-size:1.2em;margin:32px 0 10px;border-bottom:1px solid var(--line);padding-bottom:4px}
.meta{color:var(--muted);margin:0 0 16px}table{border-collapse:collapse;width:100%;margin:8px 0 12px;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}th:first-child,td:first-child{text-align:left}th{color:var(--muted);font-weight:600}
.wrap{overflow-x:auto}figure{margin:8px 0 16px}svg{width:100%;height:auto;display:block}figcaption{color:var(--muted);font-size:.9em}
svg text{fill:var(--muted);font-size:11px}svg .title{font-size:12px}.grid{stroke:var(--grid);stroke-width:1}.axis{stroke:var(--muted);stroke-width:1}
.span{fill:var(--span);fill-opacity:.12}.rule line{stroke:var(--muted);stroke-dasharray:4 3}.marker circle{fill:var(--crit)}
.key{margin-left:12px}.key i{display:inline-block;width:10px;height:10px;margin-right:4px;border-radius:2px;vertical-align:middle}
.hint{border-left:4px solid var(--info);background:var(--card);padding:8px 12px;margin:10px 0;border-radius:4px}.hint.warning{border-color:var(--warn)}.hint.critical{border-color:var(--crit)}
.hint .id{font-weight:600}.hint .sev{text-transform:uppercase;font-size:.75em;letter-spacing:.05em;color:var(--muted);margin-right:6px}.hint .action{margin:4px 0 0}
.hint dl{display:flex;flex-wrap:wrap;gap:2px 16px;margin:6px 0 0;font-size:.9em;color:var(--muted)}.hint dt{font-weight:600}.hint dd{margin:0}
.better{color:var(--span);font-weight:600}.worse{color:var(--crit);font-weight:600}.verdict{background:var(--card);padding:10px 14px;border-radius:4px}
dl.glossary dt{font-weight:600;margin-top:8px}dl.glossary dd{margin:0 0 0 16px;color:var(--muted)}.imbalanced{color:var(--crit)}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--card:#f3f3f3}main{max-width:none;padding:0}section,figure,.hint{break-inside:avoid}}
"#;

fn page(out: &mut dyn Write, title: &str, body: &str) -> io::Result<()> {
    write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><meta name=\"generator\" content=\"tokstat {}\"><title>{}</title><style>{STYLE}</style></head>\n<body><main>\n{body}</main></body></html>\n",
        env!("CARGO_PKG_VERSION"),
        esc(title)
    )
}

/// A table of rows of cells (already escaped where needed).
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = String::from("<div class=\"wrap\"><table><thead><tr>");
    for h in header {
        let _ = write!(s, "<th>{}</th>", esc(h));
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            let _ = write!(s, "<td>{c}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    s
}

/// `HH:MM` of a time `secs` after `origin`.
fn clock(origin: i64, secs: f64) -> String {
    let t = Ts(origin + (secs * 1000.0) as i64).to_string();
    t.get(11..16).unwrap_or(&t).to_string()
}

/// Writes the report.
pub fn write(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let mut b = String::new();
    let t = &r.lines;
    let _ = write!(
        b,
        "<h1>tokstat report</h1><p class=\"meta\">{} input file(s) · {} lines: {} · {} other · {} malformed{}</p>",
        r.files.len(),
        group(t.total),
        super::accounting::parsed(t),
        group(t.other),
        group(t.malformed),
        if r.skipped.is_empty() { String::new() } else { format!(" · {} not read in full", r.skipped.len()) }
    );
    key_figures(&mut b, r);
    for section in super::sections(r) {
        match section {
            Section::Incidents => incidents(&mut b, r),
            Section::Server => server(&mut b, r),
            Section::Hints => hints(&mut b, r),
            Section::Lifecycle => lifecycle(&mut b, r),
            Section::Metrics => metrics(&mut b, r),
            Section::Completions => completions(&mut b, r),
            Section::BenchRuns => bench_runs(&mut b, r),
            Section::OneClock => one_clock(&mut b, r),
        }
    }
    inputs(&mut b, r);
    glossary(&mut b);
    page(out, "tokstat report", &b)
}

fn key_figures(b: &mut String, r: &Report) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let s = &r.steady;
    if !r.timeline.is_empty() {
        rows.push(vec![
            "steady generated tok/s (all instances)".into(),
            opt(s.gen_tps, 0),
        ]);
        if s.trend.is_some() {
            rows.push(vec![
                "steady state tested".into(),
                esc(&super::trend_phrase(s)),
            ]);
        }
        rows.push(vec![
            format!("peak tok/s (best {})", duration(s.peak_window_s)),
            opt(s.peak_gen_tps, 0),
        ]);
        rows.push(vec![
            "mean tok/s while serving".into(),
            opt(s.mean_gen_tps, 0),
        ]);
        if let Some(v) = s.span_mean() {
            rows.push(vec![
                "mean tok/s over the whole span".into(),
                format!("{v:.0}"),
            ]);
        }
        rows.push(vec![
            "tokens generated (estimated from the logged rates)".into(),
            group(s.gen_tokens as u64),
        ]);
        rows.push(vec![
            "ramp-up · drain".into(),
            format!(
                "{} · {}",
                s.ramp_up_s.map_or("–".into(), duration),
                s.drain_s.map_or("–".into(), duration)
            ),
        ]);
        rows.push(vec![
            "knee (running requests)".into(),
            r.knee.map_or("none in the observed range".into(), |k| {
                format!("{:.0}", k.running)
            }),
        ]);
    }
    if let Some(c) = &r.completions {
        let c = &c.figures;
        rows.push(vec!["completions".into(), group(c.count)]);
        if let Some(o) = &c.output_tokens {
            rows.push(vec![
                "output tokens p50 · p90 · p99".into(),
                format!("{:.0} · {:.0} · {:.0}", o.p50, o.p90, o.p99),
            ]);
        }
        rows.push(vec![
            "cap-hit rate".into(),
            c.cap.value.map_or("no cap found".into(), |v| {
                format!(
                    "{:.1}% of {} (cap {})",
                    c.cap.hit_rate * 100.0,
                    group(c.count),
                    group(v)
                )
            }),
        ]);
        rows.push(vec![
            "failure rate".into(),
            format!("{:.1}%", c.failure_rate * 100.0),
        ]);
    }
    if !rows.is_empty() {
        b.push_str("<section id=\"figures\"><h2>Key figures</h2>");
        b.push_str(&table(&["figure", "value"], &rows));
        b.push_str("</section>");
    }
}

fn hints(b: &mut String, r: &Report) {
    if r.hints.is_empty() {
        return;
    }
    b.push_str("<section id=\"hints\"><h2>Hints</h2>");
    let mut apart = false;
    for h in &r.hints {
        let e = &h.evidence;
        if e.level == crate::analysis::hints::Level::Borderline && !apart {
            apart = true;
            b.push_str("<h3>Borderline</h3><p class=\"meta\">The evidence's 95% interval holds the threshold: neither firm nor ruled out.</p>");
        }
        let _ = write!(
            b,
            "<aside class=\"hint {}\"><div><span class=\"sev\">{}</span><span class=\"id\">{}</span>: {}</div>",
            h.severity.as_str(),
            h.severity.as_str(),
            esc(h.id),
            esc(&e.text)
        );
        let mut dl = String::new();
        if let (Some(a), Some(z)) = (e.from, e.to) {
            let _ = write!(dl, "<dt>during</dt><dd>{a} → {z}</dd>");
        }
        if let Some(i) = &e.instance {
            let _ = write!(dl, "<dt>instance</dt><dd>{}</dd>", esc(i));
        }
        if let Some(st) = &e.strength {
            let _ = write!(
                dl,
                "<dt>strength</dt><dd>{}</dd>",
                esc(&super::strength_phrase(st))
            );
        }
        for (k, v) in &e.figures {
            if let Some(n) = v.number() {
                let shown = if n.fract() == 0.0 {
                    group(n.max(0.0) as u64)
                } else {
                    format!("{n:.3}")
                };
                let _ = write!(dl, "<dt>{}</dt><dd>{shown}</dd>", esc(k));
            }
        }
        if !dl.is_empty() {
            let _ = write!(b, "<dl>{dl}</dl>");
        }
        let _ = write!(b, "<p class=\"action\">→ {}</p></aside>", esc(&h.action));
    }
    b.push_str("</section>");
}

fn server(b: &mut String, r: &Report) {
    let total: Vec<&TimelineRow> = r.total_timeline().collect();
    if total.is_empty() {
        return;
    }
    let origin = total[0].ts.0;
    let secs = |row: &TimelineRow| (row.ts.0 - origin) as f64 / 1000.0;
    let end = secs(total[total.len() - 1]) + r.timeline_bucket_s;
    let x_label = |v: f64| clock(origin, v);
    b.push_str("<section id=\"throughput\"><h2>Throughput over time</h2>");
    // generated tok/s: total and each instance, steady windows shaded, segments marked
    let instances: Vec<&str> = {
        let mut v: Vec<&str> = r
            .timeline
            .iter()
            .filter_map(|x| x.instance.as_deref())
            .collect();
        v.dedup();
        v
    };
    let ymax = r
        .timeline
        .iter()
        .filter_map(|x| x.gen_tps)
        .fold(0.0, f64::max);
    let mut c = Chart::new("timeline", (0.0, end), ymax).time_axis();
    for w in &r.steady.windows {
        c.span(
            "steady",
            (w.from.0 - origin) as f64 / 1000.0,
            (w.to.0 - origin) as f64 / 1000.0,
        );
    }
    for g in r.segments.iter().skip(1) {
        c.rule(
            &format!("segment {}", g.index + 1),
            (g.start.0 - origin) as f64 / 1000.0,
            &format!("{} ({})", g.index + 1, g.reason),
        );
    }
    let mut legend: Vec<(&str, &str)> = vec![("total", PALETTE[0])];
    for (k, name) in instances.iter().enumerate() {
        let color = PALETTE[(k + 1) % PALETTE.len()];
        let pts: Vec<(f64, Option<f64>)> = r
            .timeline
            .iter()
            .filter(|x| x.instance.as_deref() == Some(name))
            .map(|x| (secs(x), x.gen_tps))
            .collect();
        c.line(name, color, &pts, 1.2);
        legend.push((name, color));
    }
    let pts: Vec<(f64, Option<f64>)> = total.iter().map(|x| (secs(x), x.gen_tps)).collect();
    c.line("total", PALETTE[0], &pts, 2.5);
    legend.push(("steady window", "var(--span)"));
    b.push_str(&c.finish(
        "time",
        "generated tok/s (estimated from the logged rates)",
        &x_label,
        &legend,
    ));
    // load: running and waiting; KV usage
    let ymax = total
        .iter()
        .flat_map(|x| [x.running, x.waiting])
        .flatten()
        .fold(0.0, f64::max);
    let mut c = Chart::new("load", (0.0, end), ymax).time_axis();
    for w in &r.steady.windows {
        c.span(
            "steady",
            (w.from.0 - origin) as f64 / 1000.0,
            (w.to.0 - origin) as f64 / 1000.0,
        );
    }
    c.line(
        "running",
        PALETTE[0],
        &total
            .iter()
            .map(|x| (secs(x), x.running))
            .collect::<Vec<_>>(),
        2.0,
    );
    c.line(
        "waiting",
        PALETTE[1],
        &total
            .iter()
            .map(|x| (secs(x), x.waiting))
            .collect::<Vec<_>>(),
        2.0,
    );
    b.push_str(&c.finish(
        "time",
        "requests (all instances)",
        &x_label,
        &[("running", PALETTE[0]), ("waiting", PALETTE[1])],
    ));
    if total.iter().any(|x| x.kv_usage.is_some()) {
        let mut c = Chart::new("kv", (0.0, end), 100.0).time_axis();
        c.line(
            "kv usage",
            PALETTE[2],
            &total
                .iter()
                .map(|x| (secs(x), x.kv_usage.map(|v| v * 100.0)))
                .collect::<Vec<_>>(),
            2.0,
        );
        b.push_str(&c.finish(
            "time",
            "KV cache usage, % (mean of instances)",
            &x_label,
            &[("KV usage", PALETTE[2])],
        ));
    }
    b.push_str("</section>");
    // instances
    b.push_str("<section id=\"instances\"><h2>Instances</h2>");
    let rates: Vec<(usize, &crate::report::InstanceReport)> = r
        .instances
        .iter()
        .enumerate()
        .filter(|(_, i)| i.gen_tps.is_some())
        .collect();
    if rates.len() > 1 {
        let ymax = rates
            .iter()
            .filter_map(|(_, i)| i.gen_tps)
            .fold(0.0, f64::max);
        let names: Vec<String> = rates.iter().map(|(_, i)| i.instance.clone()).collect();
        let mut c = Chart::new("instances", (0.0, rates.len() as f64), ymax).categories(names);
        let ok: Vec<(f64, f64, f64)> = rates
            .iter()
            .enumerate()
            .filter(|(_, (_, i))| i.imbalanced != Some(true))
            .map(|(k, (_, i))| (k as f64 + 0.1, k as f64 + 0.9, i.gen_tps.unwrap_or(0.0)))
            .collect();
        let off: Vec<(f64, f64, f64)> = rates
            .iter()
            .enumerate()
            .filter(|(_, (_, i))| i.imbalanced == Some(true))
            .map(|(k, (_, i))| (k as f64 + 0.1, k as f64 + 0.9, i.gen_tps.unwrap_or(0.0)))
            .collect();
        c.bars("steady tok/s", PALETTE[0], &ok);
        c.bars("imbalanced", PALETTE[3], &off);
        b.push_str(&c.finish(
            "instance",
            "steady generated tok/s",
            &|_| String::new(),
            &[
                ("steady tok/s", PALETTE[0]),
                ("beyond ±15% of the median", PALETTE[3]),
            ],
        ));
    }
    let rows: Vec<Vec<String>> = r
        .instances
        .iter()
        .map(|i| {
            let mut cells: Vec<String> = super::instance_cells(i).iter().map(|c| esc(c)).collect();
            if i.imbalanced == Some(true) {
                let v = &cells[super::VS_MEDIAN];
                cells[super::VS_MEDIAN] = format!("<span class=\"imbalanced\">{v}</span>");
            }
            cells
        })
        .collect();
    b.push_str(&table(&super::INSTANCE_COLUMNS, &rows));
    if r.segments.len() > 1 {
        let rows: Vec<Vec<String>> = r
            .segments
            .iter()
            .map(|g| {
                let changed: Vec<String> = g
                    .changes
                    .iter()
                    .map(|c| format!("{} {} → {}", esc(&c.key), esc(&c.before), esc(&c.after)))
                    .collect();
                vec![
                    (g.index + 1).to_string(),
                    g.start.to_string(),
                    g.end.to_string(),
                    g.reason.into(),
                    opt(g.gen_tps, 0),
                    g.vs_previous
                        .map_or("–".into(), |v| format!("{:+.1}%", v * 100.0)),
                    changed.join("; "),
                ]
            })
            .collect();
        b.push_str("<h3>Segments</h3>");
        b.push_str(&table(
            &[
                "#",
                "from",
                "to",
                "why",
                "steady tok/s",
                "vs before",
                "changed",
            ],
            &rows,
        ));
    }
    b.push_str("</section>");
    // the curve
    if !r.curve.is_empty() {
        b.push_str("<section id=\"curve\"><h2>Concurrency vs throughput</h2>");
        let xmax = r
            .curve
            .iter()
            .map(|c| f64::from(c.running_hi) + 1.0)
            .fold(0.0, f64::max);
        let ymax = r.curve.iter().map(|c| c.tps_p90).fold(0.0, f64::max);
        let mut c = Chart::new("curve", (0.0, xmax), ymax);
        c.band(
            "p10–p90",
            PALETTE[0],
            &r.curve
                .iter()
                .map(|b| (b.running, b.tps_p10, b.tps_p90))
                .collect::<Vec<_>>(),
        );
        c.line(
            "median",
            PALETTE[0],
            &r.curve
                .iter()
                .map(|b| (b.running, Some(b.tps_median)))
                .collect::<Vec<_>>(),
            2.5,
        );
        if let Some(k) = r.knee {
            c.marker(
                "knee",
                k.running,
                k.tps_median,
                &format!("knee ≈ {:.0}", k.running),
            );
        }
        b.push_str(&c.finish(
            "running requests (per instance)",
            "generated tok/s per instance",
            &|v| format!("{v:.0}"),
            &[("median", PALETTE[0]), ("p10–p90", PALETTE[0])],
        ));
        let _ = write!(
            b,
            "<p>{}</p></section>",
            match r.knee {
                Some(k) => format!("Knee at about {:.0} running requests ({:.0} tok/s; {}): beyond it one more request adds under 10% of a request's rate.", k.running, k.tps_median, super::knee_interval(&k)),
                None => "No knee in the observed range: throughput still grows with concurrency (or too few levels were seen).".into(),
            }
        );
    }
}

fn completions(b: &mut String, r: &Report) {
    let Some(c) = &r.completions else { return };
    let c = &c.figures;
    b.push_str("<section id=\"completions\"><h2>Completions</h2>");
    if !c.histogram.is_empty() {
        let xmax = c.histogram.last().map_or(1.0, |h| h.to);
        let ymax = c.histogram.iter().map(|h| h.count).max().unwrap_or(1) as f64;
        let mut ch = Chart::new("histogram", (0.0, xmax), ymax);
        ch.bars(
            "output tokens",
            PALETTE[0],
            &c.histogram
                .iter()
                .map(|h| (h.from, h.to, h.count as f64))
                .collect::<Vec<_>>(),
        );
        if let Some(cap) = c.cap.value {
            ch.rule("cap", cap as f64, &format!("cap {}", group(cap)));
        }
        let what = if c.token_counts_available {
            "output tokens"
        } else {
            "output characters"
        };
        b.push_str(&ch.finish(
            what,
            "completions",
            &|v| format!("{v:.0}"),
            &[(what, PALETTE[0])],
        ));
        if c.cap.censored {
            b.push_str("<p><strong>Censored:</strong> p90 or p99 sits at the cap, so the true tail is longer than shown.</p>");
        }
    }
    if !c.finish_reasons.is_empty() {
        let reasons: Vec<(&str, u64)> = c.finish_reasons.iter().map(|(k, v)| (*k, *v)).collect();
        let ymax = reasons.iter().map(|x| x.1).max().unwrap_or(1) as f64;
        let names: Vec<String> = reasons.iter().map(|x| x.0.to_string()).collect();
        let mut ch = Chart::new("finish", (0.0, reasons.len() as f64), ymax).categories(names);
        ch.bars(
            "finish reasons",
            PALETTE[1],
            &reasons
                .iter()
                .enumerate()
                .map(|(k, x)| (k as f64 + 0.15, k as f64 + 0.85, x.1 as f64))
                .collect::<Vec<_>>(),
        );
        b.push_str(&ch.finish(
            "finish reason",
            "completions",
            &|_| String::new(),
            &[("completions", PALETTE[1])],
        ));
    }
    let rows: Vec<Vec<String>> = [
        ("output", &c.output_tokens),
        ("input", &c.input_tokens),
        ("reasoning", &c.reasoning_tokens),
    ]
    .into_iter()
    .filter_map(|(n, s)| {
        let s = s.as_ref()?;
        Some(vec![
            n.to_string(),
            group(s.count),
            format!("{:.0}", s.p50),
            format!("{:.0}", s.p90),
            format!("{:.0}", s.p99),
            format!("{:.0}", s.max),
            format!("{:.1}", s.mean),
        ])
    })
    .collect();
    b.push_str(&table(
        &["tokens", "n", "p50", "p90", "p99", "max", "mean"],
        &rows,
    ));
    b.push_str("</section>");
}

fn metrics(b: &mut String, r: &Report) {
    if let Some(m) = &r.metrics {
        b.push_str("<section id=\"metrics\"><h2>Prometheus</h2>");
        let mut rows = vec![
            vec!["scrapes".into(), m.scrapes.to_string()],
            vec![
                "generated tok/s (counter increase)".into(),
                opt(m.gen_tps, 1),
            ],
            vec!["requests/s".into(), opt(m.requests_per_s, 2)],
            vec![
                "cap-hit rate".into(),
                m.cap_hit_rate
                    .map_or("–".into(), |v| format!("{:.1}%", v * 100.0)),
            ],
        ];
        for (name, q) in &m.latency {
            rows.push(vec![
                format!("{name} p50 · p99"),
                format!("{} · {}", opt(q.p50, 3), opt(q.p99, 3)),
            ]);
        }
        for bad in &m.malformed_series {
            rows.push(vec!["malformed series (kept out)".into(), esc(bad)]);
        }
        b.push_str(&table(&["figure", "value"], &rows));
        if !m.ranks.is_empty() {
            b.push_str(
                "<p>Engines side by side (each series once; the figures above are their sums):</p>",
            );
            let rows: Vec<Vec<String>> = m
                .ranks
                .iter()
                .map(|k| super::rank_cells(k).iter().map(|c| esc(c)).collect())
                .collect();
            b.push_str(&table(&super::RANK_COLUMNS, &rows));
        }
        b.push_str("</section>");
    }
}

fn bench_runs(b: &mut String, r: &Report) {
    if !r.bench_runs.is_empty() {
        b.push_str("<section id=\"bench\"><h2>Benchmark runs</h2>");
        let rows: Vec<Vec<String>> = r
            .bench_runs
            .iter()
            .map(|x| {
                let mut c = super::bench_cells(x);
                c.truncate(super::BENCH_COLUMNS.len() - 1);
                c.iter().map(|v| esc(v)).collect()
            })
            .collect();
        b.push_str(&table(
            &super::BENCH_COLUMNS[..super::BENCH_COLUMNS.len() - 1],
            &rows,
        ));
        if super::any_recomputed(&r.bench_runs) {
            let _ = write!(b, "<p>{}</p>", esc(super::RECOMPUTED_NOTE));
        }
        let mut notes = Vec::new();
        if super::bench_notes(&mut notes, &r.bench_runs, "").is_ok() {
            notes_list(b, String::from_utf8_lossy(&notes).lines());
        }
        for run in &r.bench_runs {
            if let Some((head, rows, notes)) = super::server_side(run) {
                let _ = write!(b, "<h3>{}</h3>", esc(&head));
                let rows: Vec<Vec<String>> = rows
                    .iter()
                    .map(|row| row.iter().map(|v| esc(v)).collect())
                    .collect();
                b.push_str(&table(&super::SERVER_SIDE_COLUMNS, &rows));
                notes_list(b, notes.iter().map(String::as_str));
            }
        }
        b.push_str("</section>");
    }
}

/// A list of notes (nothing for none).
fn notes_list<'a>(b: &mut String, notes: impl Iterator<Item = &'a str>) {
    let mut notes = notes.peekable();
    if notes.peek().is_none() {
        return;
    }
    b.push_str("<ul class=\"notes\">");
    for n in notes {
        let _ = write!(b, "<li>{}</li>", esc(n));
    }
    b.push_str("</ul>");
}

fn lifecycle(b: &mut String, r: &Report) {
    let l = &r.lifecycle;
    if l.summary.is_empty() {
        return;
    }
    b.push_str("<section id=\"lifecycle\"><h2>Lifecycle</h2>");
    let _ = write!(b, "<p>{}.</p>", esc(&l.summary));
    let rows: Vec<Vec<String>> = l
        .instances
        .iter()
        .map(|i| {
            vec![
                esc(&i.instance),
                i.starts.to_string(),
                duration(i.held_s),
                duration(i.starting_s),
                duration(i.serving_s),
                duration(i.down_s),
                duration(i.idle_s),
            ]
        })
        .collect();
    b.push_str(&table(
        &[
            "instance", "starts", "held", "starting", "serving", "down", "idle",
        ],
        &rows,
    ));
    b.push_str("</section>");
}

fn incidents(b: &mut String, r: &Report) {
    if r.incidents.is_empty() {
        return;
    }
    b.push_str("<section id=\"incidents\"><h2>Incidents</h2>");
    let none: Vec<&str> = r
        .incidents
        .iter()
        .filter(|i| i.count == 0)
        .map(|i| i.kind.as_str())
        .collect();
    let rows: Vec<Vec<String>> = r
        .incidents
        .iter()
        .filter(|i| i.count > 0)
        .map(|i| {
            let kind = if i.broke {
                format!("<strong>{}</strong>", i.kind.as_str())
            } else {
                i.kind.as_str().to_string()
            };
            vec![
                kind,
                group(i.count),
                i.first_ts.map_or("–".into(), |t| t.to_string()),
                i.last_ts.map_or("–".into(), |t| t.to_string()),
                i.samples.first().map_or(String::new(), |s| {
                    format!(
                        "<code>{}:{}</code> {}",
                        esc(&s.source),
                        s.line,
                        esc(&s.text)
                    )
                }),
            ]
        })
        .collect();
    if !rows.is_empty() {
        b.push_str(&table(
            &["kind", "lines", "first", "last", "first line"],
            &rows,
        ));
    }
    if !none.is_empty() {
        let _ = write!(b, "<p>None: {}.</p>", none.join(", "));
    }
    b.push_str("</section>");
}

fn inputs(b: &mut String, r: &Report) {
    b.push_str("<section id=\"inputs\"><h2>Inputs</h2>");
    let rows: Vec<Vec<String>> = r
        .files
        .iter()
        .map(|f| {
            vec![
                esc(&f.source),
                f.kind.into(),
                group(f.lines.total),
                group(f.lines.parsed),
                group(f.lines.other),
                group(f.lines.malformed),
            ]
        })
        .chain(r.skipped.iter().map(|s| {
            vec![
                esc(&s.source),
                format!("{}: {}", s.label(), esc(&s.reason)),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]
        }))
        .collect();
    b.push_str(&table(
        &["file", "kind", "lines", "parsed", "other", "malformed"],
        &rows,
    ));
    b.push_str("</section>");
}

fn glossary(b: &mut String) {
    b.push_str(r#"<section id="glossary"><h2>Glossary</h2><dl class="glossary">
<dt>generated tok/s</dt><dd>Output tokens decoded per second by the servers. Engines log a rate, not a count: each stats line's rate covers the interval since the previous line, so tokens are estimated as rate × interval (lines sharing a second are spread over it; a silence longer than four typical intervals counts as one).</dd>
<dt>steady state</dt><dd>The part of each segment after ramp-up and before drain, where throughput holds its plateau (shaded in the charts). Steady tok/s is the mean over it; the mean while serving also counts ramp-up and drain, and the mean over the whole span the silences between segments too.</dd>
<dt>running · waiting</dt><dd>Requests being decoded, and requests queued, as the stats lines report them (summed over instances).</dd>
<dt>KV cache usage</dt><dd>The share of the KV cache in use (mean over instances).</dd>
<dt>knee</dt><dd>The number of running requests beyond which one more request adds under 10% of a request's own rate: past it, more concurrency buys latency, not throughput.</dd>
<dt>segment</dt><dd>A stretch of the run between restarts or long silences; settings that changed between segments are listed.</dd>
<dt>cap-hit rate</dt><dd>The share of completions that stopped at the output token cap (<code>finish_reason = length</code>). When p90 or p99 reaches the cap, the true length distribution is censored.</dd>
<dt>failure rate</dt><dd>The share of records that carry an error instead of a completion.</dd>
<dt>TTFT · TPOT · ITL · E2E</dt><dd>Time to first token, time per output token after the first, inter-token latency, end-to-end latency (from benchmark result files).</dd>
</dl></section>"#);
}

/// Writes a comparison.
pub fn write_comparison(out: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    let mut b = String::new();
    let labels: Vec<String> = c.runs.iter().map(|r| esc(&r.label)).collect();
    let _ = write!(
        b,
        "<h1>tokstat compare</h1><p class=\"meta\">{}; the first is the baseline</p>",
        labels.join(" vs ")
    );
    let p = &c.provenance;
    b.push_str("<section id=\"provenance\"><h2>Provenance</h2>");
    let per = |v: &[Vec<String>]| {
        Provenance::shown(v)
            .iter()
            .map(|x| esc(x))
            .collect::<Vec<_>>()
    };
    let mut rows = vec![];
    for (name, v) in [
        ("engine", &p.engines),
        ("model", &p.models),
        ("version", &p.versions),
    ] {
        let mut row = vec![name.to_string()];
        row.extend(per(v));
        rows.push(row);
    }
    for s in &p.changed {
        let mut row = vec![format!("<strong>{}</strong>", esc(&s.key))];
        row.extend(s.shown().iter().map(|x| esc(x)));
        rows.push(row);
    }
    let mut header = vec!["what"];
    header.extend(c.runs.iter().map(|r| r.label.as_str()));
    b.push_str(&table(&header, &rows));
    if let Some(s) = &p.single_change {
        let _ = write!(b, "<p>Single change: <strong>{}</strong></p>", esc(s));
    }
    if p.forced {
        b.push_str(
            "<p class=\"worse\">Compared with --force: the runs differ in engine or model.</p>",
        );
    }
    b.push_str("</section><section id=\"verdict\"><h2>Verdict</h2>");
    for s in &c.summary {
        let _ = write!(b, "<p class=\"verdict\">{}</p>", esc(s));
    }
    b.push_str("</section><section id=\"figures\"><h2>Figures</h2>");
    let names = c.figure_names();
    let rows: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            let rs: Vec<_> = c.figures.iter().filter(|r| r.name == *name).collect();
            let mut row = vec![
                format!("{} ({})", esc(name), rs[0].unit),
                value(rs[0].values[0], rs[0].unit),
            ];
            for run in &c.runs[1..] {
                match rs.iter().find(|r| r.run == run.label) {
                    Some(r) => {
                        let class = match r.verdict {
                            Verdict::Better => "better",
                            Verdict::Worse => "worse",
                            _ => "",
                        };
                        row.extend([
                            value(r.values[1], r.unit),
                            change(r),
                            esc(&interval(r)),
                            format!("<span class=\"{class}\">{}</span>", r.verdict.as_str()),
                        ]);
                    }
                    None => row.extend((0..4).map(|_| "–".to_string())),
                }
            }
            row
        })
        .collect();
    let mut header = vec!["figure".to_string(), c.runs[0].label.clone()];
    for r in &c.runs[1..] {
        header.extend([
            r.label.clone(),
            "change".into(),
            "95% interval".into(),
            "verdict".into(),
        ]);
    }
    b.push_str(&table(
        &header.iter().map(String::as_str).collect::<Vec<_>>(),
        &rows,
    ));
    b.push_str("<p class=\"meta\">Intervals (95%): steady-state buckets with effective sample sizes; percentiles by order statistics; rates of requests by Newcombe; the knee from each run's bootstrap; † a point figure, no interval. ~: no significant change, or one below the threshold.</p></section>");
    if let Some(sw) = &c.sweep {
        let (header, rows) = super::sweep_table(sw);
        let rows: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(|c| esc(c)).collect())
            .collect();
        b.push_str("<section id=\"sweep\"><h2>Sweep</h2>");
        b.push_str(&table(
            &header.iter().map(String::as_str).collect::<Vec<_>>(),
            &rows,
        ));
        let _ = write!(b, "<p class=\"verdict\">{}</p></section>", esc(&sw.note));
    }
    // overlays: the runs' timelines and curves
    let timelines = overlay(
        c,
        "timelines",
        &c.overlays.timelines,
        true,
        "seconds from each run's start",
        "generated tok/s",
    );
    if let Some(t) = timelines {
        b.push_str("<section id=\"overlays\"><h2>Overlaid</h2>");
        b.push_str(&t);
        let curves = overlay(
            c,
            "curves",
            &c.overlays.curves,
            false,
            "running requests (per instance)",
            "median generated tok/s per instance",
        );
        b.push_str(&curves.unwrap_or_default());
        b.push_str("</section>");
    }
    page(out, "tokstat compare", &b)
}

/// One chart of every run's series (`None` when there is nothing to draw).
fn overlay(
    c: &Comparison,
    name: &str,
    series: &[Vec<(f64, f64)>],
    time: bool,
    x_title: &str,
    y_title: &str,
) -> Option<String> {
    let points = series.iter().flatten();
    let xmax = points.clone().map(|p| p.0).fold(0.0, f64::max);
    let ymax = points.map(|p| p.1).fold(0.0, f64::max);
    if xmax <= 0.0 {
        return None;
    }
    let mut ch = Chart::new(name, (0.0, xmax), ymax);
    if time {
        ch = ch.time_axis();
    }
    let mut legend = Vec::new();
    for (k, (s, run)) in series.iter().zip(&c.runs).enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        ch.line(
            &run.label,
            colour,
            &s.iter().map(|p| (p.0, Some(p.1))).collect::<Vec<_>>(),
            2.0,
        );
        legend.push((run.label.as_str(), colour));
    }
    Some(ch.finish(x_title, y_title, &|v| format!("{v:.0}"), &legend))
}

/// Each benchmark run and the server's side on one clock: the checks, and one chart per
/// series stacked on one time axis (seconds since the first bucket, the client's clock).
fn one_clock(b: &mut String, r: &Report) {
    use super::one_clock as oc;
    for (ci, c) in oc::aligned(r).enumerate() {
        let _ = write!(b, "<section><h2>{}</h2><ul>", esc(&oc::head(c)));
        for l in oc::lines(c) {
            let _ = write!(b, "<li>{}</li>", esc(&l));
        }
        b.push_str("</ul>");
        if !c.ttft_path.is_empty() {
            let rows: Vec<Vec<String>> = oc::path_rows(c)
                .iter()
                .map(|row| row.iter().map(|v| esc(v)).collect())
                .collect();
            b.push_str(&table(&oc::PATH_COLUMNS, &rows));
        }
        let end = c.rows.len() as f64 * c.bucket_s;
        let start = c.rows.first().map_or(0.0, |r| c.shown(r.t));
        for (k, s) in oc::series(c).iter().enumerate() {
            let ymax = s.values.iter().flatten().copied().fold(0.0, f64::max);
            let mut chart = Chart::new(&format!("clock{ci}-{k}"), (0.0, end), ymax)
                .time_axis()
                .height(140.0);
            let pts: Vec<(f64, Option<f64>)> = s
                .values
                .iter()
                .enumerate()
                .map(|(i, v)| ((i as f64 + 0.5) * c.bucket_s, *v))
                .collect();
            chart.line(s.name, PALETTE[k % PALETTE.len()], &pts, 1.5);
            let label = |x: f64| {
                tokstat_parsers::stamp::Ts(((start + x) * 1000.0).round() as i64)
                    .to_string()
                    .chars()
                    .skip(11)
                    .collect::<String>()
            };
            b.push_str(&chart.finish(
                if c.shown_on() == "client" {
                    "client clock (UTC)"
                } else {
                    "server clock (as logged)"
                },
                s.unit,
                &label,
                &[(s.name, PALETTE[k % PALETTE.len()])],
            ));
        }
        notes_list(b, oc::notes(c).iter().map(String::as_str));
        b.push_str("</section>");
    }
    let refused = oc::refused(r);
    if !refused.is_empty() {
        let _ = write!(b, "<section><h2>{}</h2><ul>", esc(oc::REFUSED_HEAD));
        for l in refused {
            let _ = write!(b, "<li>{}</li>", esc(&l));
        }
        b.push_str("</ul></section>");
    }
}
