//! The report as GitHub-flavoured markdown, to paste into an issue or a pull request as it
//! is: headings, GFM tables (numbers right-aligned), hints as a list with their evidence, and
//! the timeline and curve as compact tables.

use crate::analysis::quantile::Summary;
use crate::render::num::{duration, group, opt};
use crate::render::Section;
use crate::report::Report;
use std::io::{self, Write};

/// Timeline rows shown at most: longer timelines are averaged into this many rows.
const TIMELINE_ROWS: usize = 24;

/// A GFM table: a header, then rows; columns of numbers are right-aligned.
struct Gfm {
    rows: Vec<Vec<String>>,
}

impl Gfm {
    fn new(header: &[&str]) -> Gfm {
        Gfm {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let cols = self.rows[0].len();
        let cell = |s: &str| s.replace('|', "\\|");
        writeln!(
            out,
            "| {} |",
            self.rows[0]
                .iter()
                .map(|s| cell(s))
                .collect::<Vec<_>>()
                .join(" | ")
        )?;
        let rule: Vec<&str> = (0..cols)
            .map(|c| {
                let mut cells = self.rows[1..].iter().map(|r| r[c].as_str());
                if cells.all(numeric) {
                    "---:"
                } else {
                    "---"
                }
            })
            .collect();
        writeln!(out, "|{}|", rule.join("|"))?;
        for r in &self.rows[1..] {
            writeln!(
                out,
                "| {} |",
                r.iter().map(|s| cell(s)).collect::<Vec<_>>().join(" | ")
            )?;
        }
        writeln!(out)
    }
}

/// Whether a cell shows a number (`1,234`, `-24.9% ⚠`, `7–8`, `–`), as opposed to a name, a
/// time or a duration.
fn numeric(cell: &str) -> bool {
    cell.is_empty()
        || cell
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '+' | '-' | '–'))
            && !cell.chars().any(|c| c.is_alphabetic() || c == ':')
}

fn pct(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or("–".into(), |x| format!("{:.1}%", x * 100.0))
}

fn signed_pct(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map_or("–".into(), |x| format!("{:+.1}%", x * 100.0))
}

/// Writes the whole report.
pub fn write(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "## tokstat report\n")?;
    let t = &r.lines;
    writeln!(
        out,
        "**Inputs:** {} file(s) · {} lines: {} · {} other · {} malformed\n",
        r.files.len(),
        group(t.total),
        super::accounting::parsed(t),
        group(t.other),
        group(t.malformed)
    )?;
    for note in super::opening_notes(r) {
        writeln!(out, "> {note}\n")?;
    }
    for section in super::sections(r) {
        match section {
            Section::Incidents => write_incidents(out, r)?,
            Section::Hints if !r.hints.is_empty() => write_hints(out, r)?,
            Section::Server if !r.instances.is_empty() => write_server(out, r)?,
            Section::Lifecycle if !r.lifecycle.summary.is_empty() => {
                writeln!(out, "**Lifecycle:** {}.\n", r.lifecycle.summary)?;
            }
            Section::Metrics => write_metrics(out, r)?,
            Section::Completions => {
                if let Some(c) = &r.completions {
                    write_completions(out, c)?;
                }
            }
            Section::BenchRuns => write_bench_runs(out, r)?,
            Section::OneClock => write_one_clock(out, r)?,
            Section::Hints | Section::Server | Section::Lifecycle => {}
        }
    }
    let problems: Vec<String> = r
        .files
        .iter()
        .filter_map(|f| {
            let first = f.malformed_samples.first()?;
            Some(format!(
                "- `{}`: {} malformed line(s); line {}: {}",
                f.source,
                group(f.lines.malformed),
                first.line,
                first.reason
            ))
        })
        .chain(
            r.skipped
                .iter()
                .map(|s| format!("- `{}`: {}: {}", s.source, s.label(), s.reason)),
        )
        .collect();
    if !problems.is_empty() {
        writeln!(out, "### Inputs not fully read\n")?;
        for p in problems {
            writeln!(out, "{p}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn write_hints(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "### Hints\n")?;
    let mut apart = false;
    for h in &r.hints {
        if h.evidence.level == crate::analysis::hints::Level::Borderline && !apart {
            apart = true;
            writeln!(
                out,
                "\n#### Borderline\n\nThe evidence's 95% interval holds the threshold: neither firm nor ruled out.\n"
            )?;
        }
        write!(
            out,
            "- **{}** `{}`: {}",
            h.severity.as_str(),
            h.id,
            h.evidence.text
        )?;
        if let (Some(a), Some(b)) = (h.evidence.from, h.evidence.to) {
            write!(out, " ({a} → {b})")?;
        }
        if let Some(st) = &h.evidence.strength {
            write!(out, "; {}", super::strength_phrase(st))?;
        }
        writeln!(out, "  \n  → {}", h.action)?;
    }
    writeln!(out)
}

/// The incident census (see the terminal table's).
fn write_incidents(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    if r.incidents.is_empty() {
        return Ok(());
    }
    let none: Vec<&str> = r
        .incidents
        .iter()
        .filter(|i| i.count == 0)
        .map(|i| i.kind.as_str())
        .collect();
    writeln!(out, "### Incidents\n")?;
    if none.len() == r.incidents.len() {
        writeln!(out, "None: {}.\n", none.join(", "))?;
        return Ok(());
    }
    let mut g = Gfm::new(&["kind", "lines", "first", "last", "first line"]);
    for i in r.incidents.iter().filter(|i| i.count > 0) {
        let kind = if i.broke {
            format!("**{}**", i.kind.as_str())
        } else {
            i.kind.as_str().to_string()
        };
        g.row(vec![
            kind,
            group(i.count),
            i.first_ts.map_or("–".into(), |t| t.to_string()),
            i.last_ts.map_or("–".into(), |t| t.to_string()),
            i.samples.first().map_or(String::new(), |s| {
                format!("`{}:{}` {}", s.source, s.line, s.text.replace('`', "'"))
            }),
        ]);
    }
    g.write(out)?;
    if !none.is_empty() {
        writeln!(out, "None: {}.\n", none.join(", "))?;
    }
    Ok(())
}

fn write_server(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    writeln!(out, "### Server: {} instance(s)\n", r.instances.len())?;
    let s = &r.steady;
    if !r.timeline.is_empty() {
        writeln!(
            out,
            "**{}** tokens generated (estimated from the logged rates) · steady **{}** tok/s · peak {} tok/s (best {}) · mean {} tok/s while serving{} · ramp-up {} · drain {}\n",
            group(s.gen_tokens as u64),
            opt(s.gen_tps, 0),
            opt(s.peak_gen_tps, 0),
            duration(s.peak_window_s),
            opt(s.mean_gen_tps, 0),
            super::span_phrase(s),
            s.ramp_up_s.map_or("–".into(), duration),
            s.drain_s.map_or("–".into(), duration)
        )?;
        let trend = super::trend_phrase(s);
        if !trend.is_empty() {
            writeln!(out, "steady state tested: {trend}\n")?;
        }
    }
    let mut g = Gfm::new(&super::INSTANCE_COLUMNS);
    for i in &r.instances {
        let mut cells = super::instance_cells(i);
        cells[0] = format!("`{}`", cells[0]);
        g.row(cells);
    }
    g.write(out)?;
    if r.segments.len() > 1 {
        writeln!(out, "#### Segments\n")?;
        let mut g = Gfm::new(&[
            "#",
            "from",
            "to",
            "why",
            "instances",
            "steady tok/s",
            "vs before",
            "tokens",
            "changed",
        ]);
        for s in &r.segments {
            let changed: Vec<String> = s
                .changes
                .iter()
                .map(|c| format!("{} {} → {}", c.key, c.before, c.after))
                .collect();
            g.row(vec![
                (s.index + 1).to_string(),
                s.start.to_string(),
                s.end.to_string(),
                s.reason.into(),
                s.instances.to_string(),
                opt(s.gen_tps, 0),
                signed_pct(s.vs_previous),
                group(s.gen_tokens as u64),
                changed.join("; "),
            ]);
        }
        g.write(out)?;
    }
    write_timeline(out, r)?;
    if !r.curve.is_empty() {
        writeln!(out, "#### Concurrency vs throughput (per instance)\n")?;
        let mut g = Gfm::new(&[
            "running",
            "tok/s p50",
            "p10",
            "p90",
            "per request",
            "share of time",
            "",
        ]);
        for c in &r.curve {
            let knee = r.knee.is_some_and(|k| {
                k.running >= f64::from(c.running_lo) && k.running < f64::from(c.running_hi) + 1.0
            });
            g.row(vec![
                if c.running_lo == c.running_hi {
                    c.running_lo.to_string()
                } else {
                    format!("{}–{}", c.running_lo, c.running_hi)
                },
                format!("{:.0}", c.tps_median),
                format!("{:.0}", c.tps_p10),
                format!("{:.0}", c.tps_p90),
                format!("{:.1}", c.tps_per_req),
                format!("{:.1}%", c.time_share * 100.0),
                if knee {
                    "◀ knee".into()
                } else {
                    String::new()
                },
            ]);
        }
        g.write(out)?;
        match r.knee {
            Some(k) => writeln!(out, "Knee at about {:.0} running ({:.0} tok/s; {}): beyond it one more request adds under 10% of a request's rate.\n", k.running, k.tps_median, super::knee_interval(&k))?,
            None => writeln!(out, "No knee in the observed range.\n")?,
        }
    }
    Ok(())
}

/// The run's total timeline, averaged into at most [`TIMELINE_ROWS`] rows.
fn write_timeline(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    let total: Vec<_> = r.total_timeline().collect();
    if total.is_empty() {
        return Ok(());
    }
    let per = total.len().div_ceil(TIMELINE_ROWS);
    writeln!(
        out,
        "#### Timeline ({} per row; steady rows marked ✓)\n",
        duration(r.timeline_bucket_s * per as f64)
    )?;
    let mut g = Gfm::new(&[
        "from",
        "gen tok/s",
        "prompt tok/s",
        "running",
        "waiting",
        "kv usage",
        "steady",
    ]);
    let mean = |rows: &[&crate::report::TimelineRow],
                f: fn(&crate::report::TimelineRow) -> Option<f64>| {
        let v: Vec<f64> = rows.iter().filter_map(|r| f(r)).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    for rows in total.chunks(per) {
        g.row(vec![
            rows[0].ts.to_string(),
            opt(mean(rows, |r| r.gen_tps), 0),
            opt(mean(rows, |r| r.prompt_tps), 0),
            opt(mean(rows, |r| r.running), 1),
            opt(mean(rows, |r| r.waiting), 1),
            opt(mean(rows, |r| r.kv_usage), 2),
            if rows.iter().all(|r| r.steady) {
                "✓".into()
            } else if rows.iter().any(|r| r.steady) {
                "part".into()
            } else {
                String::new()
            },
        ]);
    }
    g.write(out)
}

fn write_completions(out: &mut dyn Write, r: &crate::report::CompletionsReport) -> io::Result<()> {
    let c = &r.figures;
    writeln!(out, "### Completions: {}\n", group(c.count))?;
    let mut g = Gfm::new(&["tokens", "n", "p50", "p90", "p95", "p99", "max", "mean"]);
    let mut add = |name: String, s: &Option<Summary>| {
        if let Some(s) = s {
            let mut row = vec![name, group(s.count)];
            row.extend([s.p50, s.p90, s.p95, s.p99, s.max].map(|v| format!("{v:.0}")));
            row.push(format!("{:.1}", s.mean));
            g.row(row);
        }
    };
    add("output".into(), &c.output_tokens);
    add("input".into(), &c.input_tokens);
    add("reasoning".into(), &c.reasoning_tokens);
    for (reason, b) in &c.by_finish {
        add(format!("output · {reason}"), &b.output_tokens);
    }
    if !c.token_counts_available {
        add("output chars".into(), &c.output_chars);
    }
    g.write(out)?;
    let reasons: Vec<String> = c
        .by_finish
        .iter()
        .map(|(k, b)| format!("{k} {} ({})", group(b.count), pct(Some(b.share))))
        .collect();
    writeln!(out, "- Finish reasons: {}", reasons.join(" · "))?;
    match c.cap.value {
        Some(cap) => {
            writeln!(
                out,
                "- Cap: {} tokens ({}), hit by {} of {} ({})",
                group(cap),
                c.cap.source,
                group(c.cap.hits),
                group(c.count),
                pct(Some(c.cap.hit_rate))
            )?;
            if c.cap.censored {
                writeln!(out, "- ⚠ p90 or p99 reaches the cap: the true tail is longer than shown (censored at {}).", group(cap))?;
            }
        }
        None => writeln!(out, "- Cap: none found")?,
    }
    writeln!(
        out,
        "- Failures: {} · aborts: {}\n",
        pct(Some(c.failure_rate)),
        pct(Some(c.abort_rate))
    )
}

/// The Prometheus section.
fn write_metrics(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    if let Some(m) = &r.metrics {
        writeln!(out, "### Prometheus\n")?;
        let mut g = Gfm::new(&["figure", "value"]);
        g.row(vec!["scrapes".into(), m.scrapes.to_string()]);
        g.row(vec!["generated tok/s".into(), opt(m.gen_tps, 1)]);
        g.row(vec!["prompt tok/s".into(), opt(m.prompt_tps, 1)]);
        g.row(vec!["requests/s".into(), opt(m.requests_per_s, 2)]);
        g.row(vec!["cap-hit rate".into(), pct(m.cap_hit_rate)]);
        for (name, s) in [
            ("running", &m.running),
            ("waiting", &m.waiting),
            ("kv usage", &m.kv_usage),
        ] {
            if let Some(s) = s {
                g.row(vec![
                    format!("{name} (mean / max)"),
                    format!("{:.2} / {:.2}", s.mean, s.max),
                ]);
            }
        }
        for (name, q) in &m.latency {
            g.row(vec![
                format!("{name} (p50 / p90 / p99)"),
                format!("{} / {} / {}", opt(q.p50, 3), opt(q.p90, 3), opt(q.p99, 3)),
            ]);
        }
        for bad in &m.malformed_series {
            g.row(vec![
                "malformed series (kept out)".into(),
                bad.replace('|', "\\|"),
            ]);
        }
        g.write(out)?;
        if !m.ranks.is_empty() {
            writeln!(
                out,
                "Engines side by side (each series once; the figures above are their sums):\n"
            )?;
            let mut g = Gfm::new(&super::RANK_COLUMNS);
            for k in &m.ranks {
                let mut cells = super::rank_cells(k);
                cells[0] = format!("`{}`", cells[0]);
                g.row(cells);
            }
            g.write(out)?;
        }
    }
    Ok(())
}

/// The benchmark runs section.
fn write_bench_runs(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    if !r.bench_runs.is_empty() {
        writeln!(out, "### Benchmark runs\n")?;
        let mut g = Gfm::new(&super::BENCH_COLUMNS);
        for run in &r.bench_runs {
            g.row(super::bench_cells(run));
        }
        g.write(out)?;
        if super::any_recomputed(&r.bench_runs) {
            writeln!(out, "\n{}", super::RECOMPUTED_NOTE)?;
        }
        super::bench_notes(out, &r.bench_runs, "- ")?;
        for run in &r.bench_runs {
            if let Some((head, rows, notes)) = super::server_side(run) {
                writeln!(out, "\n**{head}**\n")?;
                let mut g = Gfm::new(&super::SERVER_SIDE_COLUMNS);
                for row in rows {
                    g.row(row);
                }
                g.write(out)?;
                for n in notes {
                    writeln!(out, "- {n}")?;
                }
            }
        }
    }
    Ok(())
}

/// Each benchmark run and the server's side on one clock (the stacked series in a code
/// block: blocks of one width line up there).
fn write_one_clock(out: &mut dyn Write, r: &Report) -> io::Result<()> {
    use super::one_clock as oc;
    for c in oc::aligned(r) {
        writeln!(out, "### {}\n", oc::head(c))?;
        for l in oc::lines(c) {
            writeln!(out, "- {l}")?;
        }
        if !c.ttft_path.is_empty() {
            writeln!(out)?;
            let mut g = Gfm::new(&oc::PATH_COLUMNS);
            for row in oc::path_rows(c) {
                g.row(row);
            }
            g.write(out)?;
        }
        let stacked = oc::stacked(c);
        if !stacked.is_empty() {
            writeln!(out, "\n```")?;
            for l in stacked {
                writeln!(out, "{l}")?;
            }
            writeln!(out, "```")?;
        }
        for n in oc::notes(c) {
            writeln!(out, "- {n}")?;
        }
        writeln!(out)?;
    }
    let refused = oc::refused(r);
    if !refused.is_empty() {
        writeln!(out, "### {}\n", oc::REFUSED_HEAD)?;
        for l in refused {
            writeln!(out, "- {l}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}
