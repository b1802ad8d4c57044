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
/// known shape, and places not placed exactly in time.
pub fn opening_notes(r: &Report) -> impl Iterator<Item = String> {
    unknown_note(r.unknown_records)
        .into_iter()
        .chain(inexact_note(r.inexact))
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
}

/// The sections of a report in the order every rendering (table, markdown, HTML) gives
/// them: the census first when something broke, else after the lifecycle; the hints after
/// the figures they cite. Each renderer writes what it has of each, and nothing else in
/// between (its header before, its list of inputs after).
pub fn sections(r: &Report) -> Vec<Section> {
    use Section::*;
    let first = census_first(r);
    let mut v = Vec::with_capacity(7);
    if first {
        v.push(Incidents);
    }
    v.extend([Server, Hints, Lifecycle]);
    if !first {
        v.push(Incidents);
    }
    v.extend([Metrics, Completions, BenchRuns]);
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
pub const BENCH_COLUMNS: [&str; 9] = [
    "run",
    "requests",
    "failed",
    "req/s",
    "output tok/s",
    "TTFT p50 ms",
    "TPOT p50 ms",
    "E2E p50 ms",
    "goodput req/s",
];

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
