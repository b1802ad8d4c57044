//! [`build`]: runs (or one run's segments) into a [`Comparison`].

use super::unit::Unit;
use super::*;
use crate::report::{self, Report, Samples, TimelineRow};
use anyhow::{bail, Result};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

/// One run to compare: its label, what it is read from, and which benchmark of its result
/// files it is (all when `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunSpec {
    pub label: String,
    pub inputs: Vec<String>,
    pub benchmark: Option<String>,
    /// A window of a Prometheus server (`compare --prometheus URL c128=T1..T2`).
    pub prometheus: Option<crate::ingest::prometheus_server::Query>,
}

impl RunSpec {
    /// `label=path` names a run; a bare path (a folder, a file or a glob) is named after its
    /// last component. `path#N` or `path#NAME` takes one benchmark of the path's result
    /// files (a path that exists with its `#` is taken whole).
    pub fn parse(arg: &str) -> RunSpec {
        let (label, path) = match arg.split_once('=') {
            Some((label, path))
                if !label.is_empty() && !label.contains('/') && !path.is_empty() =>
            {
                (Some(label.to_string()), path)
            }
            _ => (None, arg),
        };
        let (path, benchmark) = match path.rsplit_once('#') {
            Some((p, b)) if !p.is_empty() && !b.is_empty() && !Path::new(path).exists() => {
                (p, Some(b.to_string()))
            }
            _ => (path, None),
        };
        let label = label.unwrap_or_else(|| {
            let trimmed = path.trim_end_matches('/');
            let base = Path::new(trimmed)
                .file_name()
                .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned());
            match &benchmark {
                Some(b) => format!("{base}#{b}"),
                None => base,
            }
        });
        RunSpec {
            prometheus: None,
            label,
            inputs: vec![path.to_string()],
            benchmark,
        }
    }
}

/// What to compare, and how.
#[derive(Debug, Clone)]
pub struct Options {
    pub runs: Vec<RunSpec>,
    /// How each run is read and analysed (its `inputs` are ignored: each run has its own).
    pub report: report::Options,
    /// A change smaller than this share of the first run's value reads `~`, significant or
    /// not.
    pub threshold: f64,
    /// Compare runs of different engines or models.
    pub force: bool,
    /// Compare the segments of one run (before and after restarts and setting changes).
    pub segments: bool,
}

/// A trend that leaves no steady rate, in words.
fn no_steady(t: Option<&crate::analysis::trend::Trend>) -> Option<String> {
    t.filter(|t| !t.verdict.steady()).map(|t| t.describe())
}

fn whole_run<'a>(
    label: &str,
    inputs: &[String],
    report: &'a Report,
    samples: &'a Samples,
) -> Unit<'a> {
    let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut add = |k: &str, v: String| {
        let e = settings.entry(k.to_string()).or_default();
        if !e.contains(&v) {
            e.push(v);
        }
    };
    for g in &report.segments {
        for (k, vs) in &g.settings {
            for v in vs {
                add(k, v.clone());
            }
        }
    }
    // the benchmark client's own settings, from its result files and console summaries
    for b in &report.bench_runs {
        let number = |x: f64| {
            if x.is_infinite() {
                "inf".to_string()
            } else {
                format!("{x}")
            }
        };
        add(
            "load generator",
            match &b.tool_version {
                Some(v) => format!("{} {v}", b.tool),
                None => b.tool.to_string(),
            },
        );
        if let Some(c) = b.max_concurrency {
            add("bench max_concurrency", number(c));
        }
        if let Some(r) = b.request_rate {
            add("bench request_rate", number(r));
        }
        if let Some(n) = b.num_prompts {
            add("bench requests sent", number(n));
        }
        if let Some(m) = &b.model {
            add("model", m.clone());
        }
        if let Some(e) = &b.endpoint {
            add("bench endpoint", e.clone());
        }
        if let Some(st) = b.streaming {
            add("bench streaming", st.to_string());
        }
    }
    Unit {
        label: label.to_string(),
        inputs: inputs.to_vec(),
        report,
        samples: Some(samples),
        steady: report.total_timeline().filter(|r| r.steady).collect(),
        steady_gen_tps: report.steady.gen_tps,
        no_steady: no_steady(report.steady.trend.as_ref()),
        settings,
        engines: engines(report),
        instances: report.instances.len(),
        knee: report.knee.map(|k| k.running),
        knee_interval: report.knee.and_then(|k| {
            Some(crate::analysis::statistics::ConfidenceInterval {
                low: k.running_low,
                high: k.running_high?,
            })
        }),
        hints: report.hints.iter().collect(),
    }
}

fn engines(report: &Report) -> Vec<String> {
    let mut v: Vec<String> = report
        .instances
        .iter()
        .filter_map(|i| i.engine.map(str::to_string))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The segments of one run as units.
fn segments<'a>(inputs: &[String], report: &'a Report) -> Vec<Unit<'a>> {
    report
        .segments
        .iter()
        .map(|g| {
            let within = |t: tokstat_parsers::stamp::Ts| t >= g.start && t <= g.end;
            Unit {
                label: format!("segment {} ({})", g.index + 1, g.reason),
                inputs: inputs.to_vec(),
                report,
                samples: None,
                steady: g.steady.map_or_else(Vec::new, |w| {
                    report
                        .total_timeline()
                        .filter(|r| r.steady && r.ts >= w.from && r.ts < w.to)
                        .collect()
                }),
                steady_gen_tps: g.gen_tps,
                no_steady: no_steady(g.trend.as_ref()),
                settings: g.settings.clone(),
                engines: engines(report),
                instances: g.instances,
                knee: None,
                knee_interval: None,
                hints: report
                    .hints
                    .iter()
                    .filter(|h| h.evidence.from.is_some_and(within))
                    .collect(),
            }
        })
        .collect()
}

/// Refuses a comparison in which a run has none of the figures compared: a verdict of "no
/// change" over an empty table would be drawn from nothing. The message names the run and
/// what its inputs held.
fn nothing_to_compare(units: &[Unit<'_>], rows: &[FigureRow]) -> Result<()> {
    for (k, u) in units.iter().enumerate() {
        let has = rows.iter().any(|r| {
            if k == 0 {
                r.values[0].is_some()
            } else {
                r.run == u.label && r.values[1].is_some()
            }
        });
        if has {
            continue;
        }
        let l = &u.report.lines;
        let mut held = format!(
            "{} line(s): {} parsed, {} other, {} malformed",
            l.total, l.parsed, l.other, l.malformed
        );
        if u.report.unknown_records > 0 {
            held.push_str(&format!(
                "; {} JSON record(s) of no shape tokstat reads",
                u.report.unknown_records
            ));
        }
        for sk in &u.report.skipped {
            held.push_str(&format!("; {}: {}", sk.source, sk.reason));
        }
        bail!(
            "{}: none of the figures compared (steady throughput, latencies, completions, benchmark results) can be read from its inputs ({held}); nothing to compare it with. Check that they are server logs, completion records, Prometheus scrapes or benchmark result files tokstat reads (docs/formats.md), or run `tokstat report` on them to see what was read",
            u.label
        );
    }
    Ok(())
}

/// Refuses a comparison of too few runs, before any is read.
fn runs_asked(opts: &Options) -> Result<()> {
    if opts.segments && opts.runs.len() != 1 {
        bail!("--segments compares the segments of one run: give one RUN");
    }
    if !opts.segments && opts.runs.len() < 2 {
        bail!("compare needs two runs or more (or one run with --segments)");
    }
    Ok(())
}

/// Analyses each run as `report` does (side by side) and compares every later run with the
/// first.
pub fn build(opts: &Options) -> Result<Comparison> {
    runs_asked(opts)?;
    let built: Vec<(Report, Samples)> = opts
        .runs
        .par_iter()
        .map(|run| {
            let o = report::Options {
                inputs: run.inputs.clone(),
                benchmark: run.benchmark.clone(),
                prometheus: run.prometheus.clone(),
                ..opts.report.clone()
            };
            report::build_with_samples(&o).map_err(|e| anyhow::anyhow!("{}: {e:#}", run.label))
        })
        .collect::<Result<_>>()?;
    of_reports(opts, &built)
}

/// Compares runs already analysed: `built[i]` is the report of `opts.runs[i]` (the Python
/// package's `compare` of reads in memory), as [`build`] does once it has read them.
pub fn of_reports(opts: &Options, built: &[(Report, Samples)]) -> Result<Comparison> {
    runs_asked(opts)?;
    if built.len() != opts.runs.len() {
        bail!("{} runs and {} reports", opts.runs.len(), built.len());
    }
    let units: Vec<Unit<'_>> = if opts.segments {
        let u = segments(&opts.runs[0].inputs, &built[0].0);
        if u.len() < 2 {
            bail!(
                "{}: one segment only (no restart, no long silence): nothing to compare with --segments",
                opts.runs[0].label
            );
        }
        u
    } else {
        opts.runs
            .iter()
            .zip(built)
            .map(|(spec, (r, s))| whole_run(&spec.label, &spec.inputs, r, s))
            .collect()
    };
    let provenance = provenance::of(&units, opts.force).map_err(anyhow::Error::msg)?;
    let rows = figures::rows(&units, opts.threshold);
    nothing_to_compare(&units, &rows)?;
    let summary = summary::sentences(&units, &rows, &provenance);
    let overlays = Overlays {
        curves: units
            .iter()
            .map(|u| {
                if u.samples.is_none() {
                    return Vec::new();
                }
                u.report
                    .curve
                    .iter()
                    .map(|b| (b.running, b.tps_median))
                    .collect()
            })
            .collect(),
        timelines: units
            .iter()
            .map(|u| {
                let rows: Vec<&TimelineRow> = if u.samples.is_some() {
                    u.report.total_timeline().collect()
                } else {
                    u.steady.clone()
                };
                let t0 = rows.first().map_or(0, |r| r.ts.0);
                rows.iter()
                    .filter_map(|r| Some(((r.ts.0 - t0) as f64 / 1000.0, r.gen_tps?)))
                    .collect()
            })
            .collect(),
    };
    Ok(Comparison {
        schema_version: SCHEMA_VERSION,
        runs: units
            .iter()
            .map(|u| RunInfo {
                label: u.label.clone(),
                inputs: u.inputs.clone(),
                instances: u.instances,
                steady_buckets: u.steady.len(),
                hints: u.hints.iter().map(|h| h.id).collect(),
            })
            .collect(),
        provenance,
        figures: rows,
        summary,
        overlays,
        sweep: if opts.segments {
            None
        } else {
            super::sweep::of(&units)
        },
    })
}
