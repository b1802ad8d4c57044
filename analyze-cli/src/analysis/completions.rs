//! Completions: token-length distributions, finish reasons, the cap and how often outputs
//! hit it, failures, and drift along the job.
//!
//! The cap is `--cap N` when given; else a cap the records state themselves (SGLang's
//! `{"type": "length", "length": N}`, `FINISH_LENGTH: N`); else the most common output
//! length among `length` finishes — with a fixed `max_tokens` they all pile up there.

use super::quantile::Summary;
use crate::ingest::completions::CompletionRow;
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::completion::{Finish, Shape};

/// Share of the first / last tenth of the job, to see drift.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Drift {
    pub first_mean_output_tokens: Option<f64>,
    pub last_mean_output_tokens: Option<f64>,
    pub first_cap_hit_rate: Option<f64>,
    pub last_cap_hit_rate: Option<f64>,
}

/// The cap and how it was found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Cap {
    pub value: Option<u64>,
    /// `flag`, `records`, `inferred` or `none`.
    pub source: &'static str,
    /// Share of completions that stopped at the cap.
    pub hit_rate: f64,
    pub hits: u64,
    /// Output tokens spent on capped completions, and their share of all output tokens.
    pub tokens_on_capped: u64,
    pub tokens_on_capped_share: Option<f64>,
    /// p90 or p99 sits at the cap: the true tail is longer than shown.
    pub censored: bool,
}

/// One finish reason's share and lengths.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ByFinish {
    pub count: u64,
    pub share: f64,
    pub output_tokens: Option<Summary>,
}

/// One bin of a histogram: values in `[from, to)`; the last bin also holds the maximum.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HistogramBin {
    pub from: f64,
    pub to: f64,
    pub count: u64,
}

/// The completions part of a report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Completions {
    pub count: u64,
    pub token_counts_available: bool,
    pub output_tokens: Option<Summary>,
    pub input_tokens: Option<Summary>,
    pub reasoning_tokens: Option<Summary>,
    pub output_chars: Option<Summary>,
    pub latency_s: Option<Summary>,
    pub finish_reasons: BTreeMap<&'static str, u64>,
    pub by_finish: BTreeMap<&'static str, ByFinish>,
    pub cap: Cap,
    pub failure_rate: f64,
    pub abort_rate: f64,
    pub drift: Option<Drift>,
    pub shapes: BTreeMap<&'static str, u64>,
    /// Histogram of output tokens (characters where no record has token counts).
    pub histogram: Vec<HistogramBin>,
}

fn values(rows: &[CompletionRow], f: impl Fn(&CompletionRow) -> Option<f64>) -> Vec<f64> {
    rows.iter().filter_map(f).collect()
}

fn mode(v: impl Iterator<Item = u64>) -> Option<u64> {
    let mut counts: BTreeMap<u64, u64> = BTreeMap::new();
    for x in v {
        *counts.entry(x).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(v, n)| (n, v))
        .map(|(v, _)| v)
}

fn find_cap(rows: &[CompletionRow], flag: Option<u64>) -> (Option<u64>, &'static str) {
    if flag.is_some() {
        return (flag, "flag");
    }
    if let Some(c) = mode(rows.iter().filter_map(|r| r.cap_hint.get())) {
        return (Some(c), "records");
    }
    match mode(
        rows.iter()
            .filter(|r| r.finish == Finish::Length)
            .filter_map(|r| r.completion_tokens.get()),
    ) {
        Some(c) => (Some(c), "inferred"),
        None => (None, "none"),
    }
}

fn is_hit(r: &CompletionRow, cap: Option<u64>, have_reasons: bool) -> bool {
    if have_reasons {
        r.finish == Finish::Length
    } else {
        matches!((r.completion_tokens.get(), cap), (Some(t), Some(c)) if t >= c)
    }
}

fn histogram(v: &[f64], bins: usize) -> Vec<HistogramBin> {
    let Some(&max) = v.iter().max_by(|a, b| a.total_cmp(b)) else {
        return Vec::new();
    };
    let width = (max / bins as f64).max(1.0).ceil();
    let mut h: Vec<HistogramBin> = (0..bins)
        .map(|i| HistogramBin {
            from: i as f64 * width,
            to: (i + 1) as f64 * width,
            count: 0,
        })
        .collect();
    for &x in v {
        let i = ((x / width) as usize).min(bins - 1);
        h[i].count += 1;
    }
    while h.len() > 1 && h.last().is_some_and(|b| b.count == 0) {
        h.pop();
    }
    h
}

/// Summarises completion rows (in job order).
pub fn analyze(rows: &[CompletionRow], cap_flag: Option<u64>) -> Completions {
    let count = rows.len() as u64;
    // counts by finish reason and shape in arrays (a map entry per row cost more than the
    // rest of the analysis), output tokens by finish reason in one pass
    let mut by_reason = [0u64; Finish::ALL.len()];
    let mut by_shape = [0u64; Shape::ALL.len()];
    let mut tokens_by_reason: [Vec<f64>; Finish::ALL.len()] = Default::default();
    let tok = |r: &CompletionRow| r.completion_tokens.get().map(|t| t as f64);
    for r in rows {
        by_reason[r.finish as usize] += 1;
        by_shape[r.shape as usize] += 1;
        if let Some(t) = tok(r) {
            tokens_by_reason[r.finish as usize].push(t);
        }
    }
    let finish_reasons: BTreeMap<&'static str, u64> = Finish::ALL
        .iter()
        .filter(|f| by_reason[**f as usize] > 0)
        .map(|f| (f.as_str(), by_reason[*f as usize]))
        .collect();
    let shapes: BTreeMap<&'static str, u64> = Shape::ALL
        .iter()
        .filter(|s| by_shape[**s as usize] > 0)
        .map(|s| (s.as_str(), by_shape[*s as usize]))
        .collect();
    let mut out = values(rows, tok);
    let output_tokens = Summary::of(&mut out);
    let hist = histogram(&out, 20);
    let (cap, source) = find_cap(rows, cap_flag);
    let have_reasons = rows.iter().any(|r| r.finish != Finish::Unknown);
    let hits = rows.iter().filter(|r| is_hit(r, cap, have_reasons)).count() as u64;
    let total_out: u64 = rows.iter().filter_map(|r| r.completion_tokens.get()).sum();
    let on_capped: u64 = rows
        .iter()
        .filter(|r| is_hit(r, cap, have_reasons))
        .filter_map(|r| r.completion_tokens.get())
        .sum();
    let censored = matches!((output_tokens, cap), (Some(s), Some(c)) if s.p90 >= c as f64 || s.p99 >= c as f64);
    let rate = |n: u64| {
        if count == 0 {
            0.0
        } else {
            n as f64 / count as f64
        }
    };
    let by_finish = Finish::ALL
        .iter()
        .zip(&mut tokens_by_reason)
        .filter(|(f, _)| by_reason[**f as usize] > 0)
        .map(|(f, v)| {
            let n = by_reason[*f as usize];
            (
                f.as_str(),
                ByFinish {
                    count: n,
                    share: rate(n),
                    output_tokens: Summary::of(v),
                },
            )
        })
        .collect();
    let drift = (count >= 20).then(|| {
        let tenth = (rows.len() / 10).max(1);
        let part = |p: &[CompletionRow]| {
            let v: Vec<f64> = p.iter().filter_map(tok).collect();
            let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let hit = (have_reasons || cap.is_some()).then(|| {
                p.iter().filter(|r| is_hit(r, cap, have_reasons)).count() as f64 / p.len() as f64
            });
            (mean, hit)
        };
        let (fm, fh) = part(&rows[..tenth]);
        let (lm, lh) = part(&rows[rows.len() - tenth..]);
        Drift {
            first_mean_output_tokens: fm,
            last_mean_output_tokens: lm,
            first_cap_hit_rate: fh,
            last_cap_hit_rate: lh,
        }
    });
    Completions {
        count,
        token_counts_available: output_tokens.is_some(),
        output_tokens,
        input_tokens: Summary::of(&mut values(rows, |r| {
            r.prompt_tokens.get().map(|t| t as f64)
        })),
        reasoning_tokens: Summary::of(&mut values(rows, |r| {
            r.reasoning_tokens.get().map(|t| t as f64)
        })),
        output_chars: Summary::of(&mut values(rows, |r| {
            r.output_chars.get().map(|t| t as f64)
        })),
        latency_s: Summary::of(&mut values(rows, |r| r.latency())),
        finish_reasons,
        by_finish,
        cap: Cap {
            value: cap,
            source,
            hit_rate: rate(hits),
            hits,
            tokens_on_capped: on_capped,
            tokens_on_capped_share: (total_out > 0).then(|| on_capped as f64 / total_out as f64),
            censored,
        },
        failure_rate: rate(by_reason[Finish::Error as usize]),
        abort_rate: rate(by_reason[Finish::Abort as usize]),
        drift,
        shapes,
        histogram: hist,
    }
}
