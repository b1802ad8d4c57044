//! A comparison in the terminal: provenance first, the verdict in words, the figures with
//! their changes and intervals, and the runs' timelines and curves overlaid.

use crate::compare::Provenance;
use crate::compare::Verdict;
use crate::compare::{Comparison, FigureRow, Method};
use crate::render::num::group;
use crate::render::style::{Style, Tone};
use comfy_table::{Cell, CellAlignment};
use std::io::{self, Write};

/// Markers of the runs in overlaid charts, by run.
pub const MARKERS: [char; 6] = ['●', '○', '▲', '△', '■', '□'];

/// A value in a figure's unit.
pub fn value(v: Option<f64>, unit: &str) -> String {
    match v {
        None => "–".into(),
        Some(x) if unit == "share" => format!("{:.1}%", x * 100.0),
        Some(x) if x >= 100.0 => group(x.round() as u64),
        Some(x) if x <= -100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.2}"),
    }
}

/// A change: relative where the baseline is not zero, else in the unit (percentage points
/// for shares).
pub fn change(r: &FigureRow) -> String {
    match (r.ratio, r.delta) {
        (Some(q), _) => format!("{:+.1}%", (q - 1.0) * 100.0),
        (None, Some(d)) if r.unit == "share" => format!("{:+.1} pp", d * 100.0),
        (None, Some(d)) => format!("{d:+.2}"),
        _ => "–".into(),
    }
}

/// The interval of the change, in the same terms as [`change`].
pub fn interval(r: &FigureRow) -> String {
    let (Some(lo), Some(hi)) = (r.ci_low, r.ci_high) else {
        return if r.method == Method::Point && r.values.iter().all(Option::is_some) {
            "no interval †".into()
        } else {
            "–".into()
        };
    };
    match r.values[0].filter(|a| *a != 0.0) {
        Some(a) => format!("[{:+.1}%, {:+.1}%]", lo / a * 100.0, hi / a * 100.0),
        None if r.unit == "share" => format!("[{:+.1}, {:+.1}] pp", lo * 100.0, hi * 100.0),
        None => format!("[{lo:+.2}, {hi:+.2}]"),
    }
}

/// Writes the comparison in `style`.
pub fn write(out: &mut dyn Write, c: &Comparison, style: Style) -> io::Result<()> {
    let mut buf = Vec::new();
    write_comparison(&mut buf, c, style)?;
    out.write_all(
        style
            .finish(String::from_utf8_lossy(&buf).into_owned())
            .as_bytes(),
    )
}

fn write_comparison(out: &mut dyn Write, c: &Comparison, style: Style) -> io::Result<()> {
    let runs: Vec<String> = c
        .runs
        .iter()
        .enumerate()
        .map(|(k, r)| {
            format!(
                "{} {}{} ({} instance(s), {} steady buckets)",
                MARKERS[k % MARKERS.len()],
                r.label,
                if k == 0 { " (baseline)" } else { "" },
                r.instances,
                r.steady_buckets
            )
        })
        .collect();
    writeln!(
        out,
        "Comparing {} runs: {}\n",
        c.runs.len(),
        runs.join(" · ")
    )?;
    write_provenance(out, c)?;
    writeln!(out, "Verdict")?;
    for s in &c.summary {
        writeln!(out, "  {s}")?;
    }
    writeln!(out)?;
    write_figures(out, c, style)?;
    if let Some(sw) = &c.sweep {
        let (header, rows) = super::sweep_table(sw);
        let mut t = style.table();
        t.set_header(header);
        for r in rows {
            t.add_row(r);
        }
        for k in 1..t.column_count() {
            if let Some(col) = t.column_mut(k) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        writeln!(out, "Sweep: the runs by load")?;
        writeln!(out, "{t}")?;
        writeln!(out, "  {}\n", sw.note)?;
    }
    if c.overlays
        .timelines
        .iter()
        .filter(|t| !t.is_empty())
        .count()
        >= 2
    {
        writeln!(
            out,
            "Generated tok/s over time (seconds from each run's start)"
        )?;
        chart(out, &c.overlays.timelines, chart_width(style), 8)?;
        legend(out, c)?;
    }
    if c.overlays.curves.iter().filter(|t| !t.is_empty()).count() >= 2 {
        writeln!(
            out,
            "Concurrency vs throughput per instance (running → median tok/s)"
        )?;
        chart(out, &c.overlays.curves, chart_width(style), 8)?;
        legend(out, c)?;
    }
    Ok(())
}

/// Columns of an overlay chart: 64, fewer on a narrow terminal.
fn chart_width(style: Style) -> usize {
    style
        .width
        .map_or(64, |w| usize::from(w).saturating_sub(12).clamp(20, 64))
}

fn legend(out: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    let l: Vec<String> = c
        .runs
        .iter()
        .enumerate()
        .map(|(k, r)| format!("{} {}", MARKERS[k % MARKERS.len()], r.label))
        .collect();
    writeln!(out, "  {}\n", l.join("   "))
}

fn write_provenance(out: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    let p = &c.provenance;
    writeln!(out, "Provenance")?;
    let per = |v: &[Vec<String>]| Provenance::shown(v).join(" | ");
    writeln!(
        out,
        "  engines: {} · models: {} · versions: {}",
        per(&p.engines),
        per(&p.models),
        per(&p.versions)
    )?;
    if p.forced {
        writeln!(
            out,
            "  ⚠ compared with --force: the runs differ in engine or model"
        )?;
    }
    match (&p.single_change, p.changed.len()) {
        (Some(s), _) => writeln!(out, "  single change: {s}")?,
        (None, 0) => writeln!(
            out,
            "  settings: the same in every run (as far as the logs say)"
        )?,
        (None, n) => {
            writeln!(out, "  {n} settings differ:")?;
            for s in &p.changed {
                let v = s.shown();
                writeln!(out, "    {}: {}", s.key, v.join(" → "))?;
            }
        }
    }
    writeln!(out)
}

fn write_figures(out: &mut dyn Write, c: &Comparison, style: Style) -> io::Result<()> {
    let mut t = style.table();
    let mut header = vec![
        format!("figure ({} = baseline)", c.runs[0].label),
        c.runs[0].label.clone(),
    ];
    for r in &c.runs[1..] {
        header.extend([
            r.label.clone(),
            "change".into(),
            "95% interval".into(),
            "verdict".into(),
        ]);
    }
    t.set_header(header);
    let names = c.figure_names();
    for name in names {
        let rows: Vec<&FigureRow> = c.figures.iter().filter(|r| r.name == name).collect();
        let first = rows[0];
        let mut cells = vec![
            Cell::new(format!("{name} ({})", first.unit)),
            Cell::new(value(first.values[0], first.unit)),
        ];
        for run in &c.runs[1..] {
            match rows.iter().find(|r| r.run == run.label) {
                Some(r) => {
                    let mut v = match r.verdict {
                        Verdict::Better => style.paint("better", Tone::Good),
                        Verdict::Worse => style.paint("worse", Tone::Bad),
                        other => other.as_str().to_string(),
                    };
                    if let Some(p) = r.p_value {
                        v.push_str(&format!(" (p {p:.2})"));
                    }
                    cells.extend([
                        Cell::new(value(r.values[1], r.unit)),
                        Cell::new(change(r)),
                        Cell::new(interval(r)),
                        Cell::new(v),
                    ]);
                }
                None => cells.extend((0..4).map(|_| Cell::new("–"))),
            }
        }
        t.add_row(cells);
    }
    for k in 1..(2 + 4 * (c.runs.len() - 1)) {
        if let Some(col) = t.column_mut(k) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
    writeln!(out, "{t}")?;
    writeln!(
        out,
        "  intervals (95%): steady-state buckets with effective sample sizes (autocorrelation) · percentiles by order statistics, p: Mann-Whitney · rates of requests by Newcombe · the knee from each run's bootstrap · † a point figure of a summary, no interval\n  ~: no significant change, or one smaller than the threshold\n"
    )
}

/// Series of `(x, y)` points on one grid, one marker per series; `x` and `y` from 0.
pub fn chart(
    out: &mut dyn Write,
    series: &[Vec<(f64, f64)>],
    width: usize,
    height: usize,
) -> io::Result<()> {
    let all = series.iter().flatten();
    let xmax = all.clone().map(|p| p.0).fold(0.0, f64::max);
    let ymax = all.map(|p| p.1).fold(0.0, f64::max);
    if xmax <= 0.0 || ymax <= 0.0 {
        return Ok(());
    }
    let mut grid = vec![vec![' '; width]; height];
    for (k, s) in series.iter().enumerate() {
        for &(x, y) in s {
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            let col = ((x / xmax) * (width - 1) as f64).round() as usize;
            let row = ((y / ymax) * (height - 1) as f64).round() as usize;
            let cell = &mut grid[height - 1 - row.min(height - 1)][col.min(width - 1)];
            let m = MARKERS[k % MARKERS.len()];
            *cell = if *cell == ' ' || *cell == m { m } else { '✚' };
        }
    }
    let label_w = format!("{ymax:.0}").len();
    for (i, line) in grid.iter().enumerate() {
        let label = if i == 0 {
            format!("{ymax:.0}")
        } else if i == height - 1 {
            "0".into()
        } else {
            String::new()
        };
        let text: String = line.iter().collect();
        writeln!(out, "  {label:>label_w$} │{}", text.trim_end())?;
    }
    writeln!(out, "  {:>label_w$} └{}", "", "─".repeat(width))?;
    let right = format!("{xmax:.0}");
    writeln!(
        out,
        "  {:>label_w$}  0{}{right}",
        "",
        " ".repeat(width.saturating_sub(1 + right.len()))
    )
}
