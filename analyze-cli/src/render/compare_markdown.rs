//! A comparison as GitHub-flavoured markdown: provenance, the verdict, and the figures as a
//! GFM table, to paste into the pull request that made the change.

use crate::compare::Comparison;
use crate::compare::Provenance;
use crate::render::compare_table::{change, interval, value};
use std::io::{self, Write};

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn write(out: &mut dyn Write, c: &Comparison) -> io::Result<()> {
    let labels: Vec<String> = c.runs.iter().map(|r| format!("`{}`", r.label)).collect();
    writeln!(out, "## tokstat compare: {}\n", labels.join(" vs "))?;
    let p = &c.provenance;
    writeln!(out, "### Provenance\n")?;
    let per = |v: &[Vec<String>]| Provenance::shown(v).join(" \\| ");
    writeln!(out, "- engines: {}", per(&p.engines))?;
    writeln!(out, "- models: {}", per(&p.models))?;
    writeln!(out, "- versions: {}", per(&p.versions))?;
    if p.forced {
        writeln!(
            out,
            "- ⚠ compared with `--force`: the runs differ in engine or model"
        )?;
    }
    match &p.single_change {
        Some(s) => writeln!(out, "- single change: `{s}`")?,
        None if p.changed.is_empty() => writeln!(
            out,
            "- settings: the same in every run (as far as the logs say)"
        )?,
        None => {
            for s in &p.changed {
                let v = s.shown();
                writeln!(out, "- `{}`: {}", s.key, v.join(" → "))?;
            }
        }
    }
    writeln!(out, "\n### Verdict\n")?;
    for s in &c.summary {
        writeln!(out, "> {s}\n")?;
    }
    writeln!(out, "### Figures\n")?;
    let mut header = vec!["figure".to_string(), cell(&c.runs[0].label)];
    let mut rule = vec!["---".to_string(), "---:".to_string()];
    for r in &c.runs[1..] {
        header.extend([
            cell(&r.label),
            "change".into(),
            "95% interval".into(),
            "verdict".into(),
        ]);
        rule.extend(["---:".into(), "---:".into(), "---:".into(), "---".into()]);
    }
    writeln!(out, "| {} |\n|{}|", header.join(" | "), rule.join("|"))?;
    let names = c.figure_names();
    for name in names {
        let rows: Vec<_> = c.figures.iter().filter(|r| r.name == name).collect();
        let mut cells = vec![
            format!("{name} ({})", rows[0].unit),
            value(rows[0].values[0], rows[0].unit),
        ];
        for run in &c.runs[1..] {
            match rows.iter().find(|r| r.run == run.label) {
                Some(r) => cells.extend([
                    value(r.values[1], r.unit),
                    change(r),
                    interval(r),
                    format!("**{}**", r.verdict.as_str()),
                ]),
                None => cells.extend((0..4).map(|_| "–".to_string())),
            }
        }
        writeln!(
            out,
            "| {} |",
            cells
                .iter()
                .map(|c| cell(c))
                .collect::<Vec<_>>()
                .join(" | ")
        )?;
    }
    writeln!(
        out,
        "\nIntervals (95%): steady-state buckets with effective sample sizes; percentiles by order statistics; rates of requests by Newcombe; the knee from each run's bootstrap; † a point figure, no interval. `~`: no significant change, or one below the threshold."
    )?;
    if let Some(sw) = &c.sweep {
        let (header, rows) = super::sweep_table(sw);
        writeln!(out, "\n### Sweep\n")?;
        let head: Vec<String> = header.iter().map(|h| cell(h)).collect();
        let rule: Vec<&str> = (0..header.len())
            .map(|k| if k == 0 { "---" } else { "---:" })
            .collect();
        writeln!(out, "| {} |\n|{}|", head.join(" | "), rule.join("|"))?;
        for r in rows {
            let cells: Vec<String> = r.iter().map(|c| cell(c)).collect();
            writeln!(out, "| {} |", cells.join(" | "))?;
        }
        writeln!(out, "\n{}", sw.note)?;
    }
    Ok(())
}
