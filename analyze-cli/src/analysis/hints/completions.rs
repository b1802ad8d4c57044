//! Hints from the job's completions (or, without them, the servers' finished-request
//! counters): outputs cut at the cap (`cap_hit_high`), a stretch of failures
//! (`failure_spike`), and a client keeping less than the servers make (`client_overhead`).

use super::vocabulary::{evidence, fig, pct, Hint, Inputs, Severity, Strength};
use crate::analysis::server::Server;
use crate::analysis::steady::mean;
use crate::ingest::completions::CompletionRow;
use tokstat_parsers::completion::Finish;

/// Share of completions hitting the cap.
pub const CAP_HIT_HIGH: f64 = 0.10;
/// Records the cap-hit rate needs to be judged.
pub const MIN_RECORDS: u64 = 20;
/// A window of records whose failure rate is at least this…
pub const FAILURE_SPIKE_MIN: f64 = 0.05;
/// …and this many times the job's median window rate.
pub const FAILURE_SPIKE_FACTOR: f64 = 3.0;
/// Windows a job is cut into to find a failure spike.
pub const FAILURE_WINDOWS: usize = 20;
/// Client-side tokens/s below this share of the server's over the same window.
pub const CLIENT_SHARE: f64 = 0.7;
/// Completions with times needed to compare client and server.
pub const CLIENT_MIN_ROWS: usize = 50;

const CAP_ACTION: &str = "Many outputs are cut off: raise max_tokens (the true lengths are longer than shown), or curb the prompt's verbosity; capped outputs usually have to be regenerated.";

/// The completions' hints, or the scrapes' cap hits where there are no completions.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out = Vec::new();
    let s = i.server;
    if let Some(c) = i.completions {
        if c.cap.hit_rate >= CAP_HIT_HIGH && c.count < MIN_RECORDS {
            out.push(Hint {
                id: "too_little_data",
                severity: Severity::Info,
                evidence: evidence(
                    format!("{} of {} completions stopped at the token cap: too few records to judge the cap-hit rate (cap_hit_high needs {MIN_RECORDS})", c.cap.hits, c.count),
                    None,
                    &[("records", fig(c.count)), ("min_records", fig(MIN_RECORDS))],
                ),
                action: "Give the whole output file: a handful of records cannot tell a cap set too low from chance.".into(),
            });
        } else if c.cap.hit_rate >= CAP_HIT_HIGH {
            out.push(
                Hint {
                    id: "cap_hit_high",
                    severity: if c.cap.hit_rate >= 2.0 * CAP_HIT_HIGH {
                        Severity::Critical
                    } else {
                        Severity::Warning
                    },
                    evidence: evidence(
                        format!(
                            "{} of {} completions ({}) stopped at the token cap{}",
                            c.cap.hits,
                            c.count,
                            pct(c.cap.hit_rate),
                            c.cap.value.map_or(String::new(), |v| format!(" ({v})"))
                        ),
                        None,
                        &[
                            ("hit_rate", fig(c.cap.hit_rate)),
                            ("hits", fig(c.cap.hits)),
                            ("cap", fig(c.cap.value)),
                            ("tokens_on_capped_share", fig(c.cap.tokens_on_capped_share)),
                        ],
                    ),
                    action: CAP_ACTION.into(),
                }
                .with(Strength {
                    span_s: None,
                    lines: c.count,
                    of: "records",
                    effect: Some(c.cap.hit_rate),
                    threshold: Some(CAP_HIT_HIGH),
                    fires: "above",
                }),
            );
        }
        if let Some(h) = failure_spike(i.rows) {
            out.push(h);
        }
        if let Some(h) = client_overhead(s, i.rows) {
            out.push(h);
        }
    } else if let Some((m, rate)) = i
        .metrics
        .and_then(|m| Some((m, m.cap_hit_rate.filter(|r| *r >= CAP_HIT_HIGH)?)))
    {
        let length = m.finished.get("length").copied().unwrap_or(0.0);
        let done: f64 = m.finished.values().sum();
        out.push(Hint {
            id: "cap_hit_high",
            severity: if rate >= 2.0 * CAP_HIT_HIGH { Severity::Critical } else { Severity::Warning },
            evidence: evidence(
                format!("{length:.0} of {done:.0} finished requests ({}) stopped at max_tokens (vllm:request_success_total{{finished_reason=\"length\"}})", pct(rate)),
                m.from.zip(m.to).map(|(a, b)| (a.0, b.0)),
                &[("hit_rate", fig(rate)), ("hits", fig(length)), ("finished", fig(done))],
            ),
            action: CAP_ACTION.into(),
        }.with(Strength {
            span_s: m.span_s,
            lines: done as u64,
            of: "finished requests",
            effect: Some(rate),
            threshold: Some(CAP_HIT_HIGH),
            fires: "above",
        }));
    }
    out
}

/// A window of records (in job order) failing far more often than the job as a whole.
fn failure_spike(rows: &[CompletionRow]) -> Option<Hint> {
    if rows.len() < FAILURE_WINDOWS * 10 {
        return None;
    }
    let w = rows.len() / FAILURE_WINDOWS;
    let rates: Vec<f64> = rows
        .chunks(w)
        .filter(|c| c.len() == w)
        .map(|c| c.iter().filter(|r| r.finish == Finish::Error).count() as f64 / w as f64)
        .collect();
    let mut sorted = rates.clone();
    sorted.sort_unstable_by(f64::total_cmp);
    let median = crate::analysis::quantile::quantile(&sorted, 0.5);
    let bad: Vec<usize> = (0..rates.len())
        .filter(|&k| {
            rates[k] >= FAILURE_SPIKE_MIN
                && rates[k] >= FAILURE_SPIKE_FACTOR * median.max(1.0 / w as f64)
        })
        .collect();
    let (&first, &last) = (bad.first()?, bad.last()?);
    let worst = bad.iter().map(|&k| rates[k]).fold(0.0, f64::max);
    let failed: usize = rows[first * w..(last + 1) * w]
        .iter()
        .filter(|r| r.finish == Finish::Error)
        .count();
    Some(Hint {
        id: "failure_spike",
        severity: Severity::Critical,
        evidence: evidence(
            format!("records {}–{} (of {}) fail at up to {} ({failed} failures) against a typical {}", first * w + 1, (last + 1) * w, rows.len(), pct(worst), pct(median)),
            None,
            &[("first_record", fig(first * w + 1)), ("last_record", fig((last + 1) * w)), ("failures", fig(failed)), ("worst_rate", fig(worst)), ("median_rate", fig(median))],
        ),
        action: "Failures cluster in one stretch of the job: look at the server log around that time (restart, OOM, timeouts) and retry the failed records.".into(),
    }.with(Strength {
        span_s: None,
        lines: rows.len() as u64,
        of: "records",
        effect: Some(worst / median.max(1.0 / w as f64)),
        threshold: Some(FAILURE_SPIKE_FACTOR),
        fires: "above",
    }))
}

/// Client-side tokens/s (completions finished in a window) against the server's (the
/// timeline) over the window both cover. Engines stamp local time and clients Unix time, so
/// the client window is shifted by the whole number of hours (±14) that overlaps best.
fn client_overhead(s: &Server, rows: &[CompletionRow]) -> Option<Hint> {
    let done: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| {
            let end = r.created()? as f64 + r.latency().unwrap_or(0.0);
            Some((end, r.completion_tokens.get()? as f64))
        })
        .collect();
    let tl = &s.timeline;
    if done.len() < CLIENT_MIN_ROWS || tl.total.is_empty() {
        return None;
    }
    let c0 = done.iter().map(|d| d.0).fold(f64::INFINITY, f64::min);
    let c1 = done.iter().map(|d| d.0).fold(f64::NEG_INFINITY, f64::max);
    let b = tl.bucket_ms as f64 / 1000.0;
    let s0 = tl.origin as f64 / 1000.0;
    let s1 = s0 + b * tl.total.len() as f64;
    let overlap = |h: i64| {
        let shift = h as f64 * 3600.0;
        ((c1 + shift).min(s1) - (c0 + shift).max(s0), shift)
    };
    let (len, shift) = (-14..=14)
        .map(overlap)
        .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.abs().total_cmp(&a.1.abs())))?;
    if len < 10.0 * b {
        return None;
    }
    let (w0, w1) = ((c0 + shift).max(s0), (c1 + shift).min(s1));
    let client: f64 = done
        .iter()
        .filter(|d| d.0 + shift >= w0 && d.0 + shift <= w1)
        .map(|d| d.1)
        .sum::<f64>()
        / (w1 - w0);
    // buckets wholly inside the window
    let inside: Vec<f64> = tl
        .total
        .iter()
        .filter(|r| {
            let t = r.ts as f64 / 1000.0;
            t >= w0 && t + b <= w1
        })
        .map(|r| r.gen_tps)
        .collect();
    if inside.is_empty() {
        return None;
    }
    let server = mean(&inside);
    if server <= 0.0 || client >= CLIENT_SHARE * server {
        return None;
    }
    let ms = |t: f64| (t * 1000.0) as i64;
    Some(Hint {
        id: "client_overhead",
        severity: Severity::Warning,
        evidence: evidence(
            format!(
                "completions received {client:.0} tok/s while the servers generated {server:.0} tok/s over the same window ({:.0}%){}",
                client / server * 100.0,
                if shift != 0.0 { format!("; client times shifted {:+.0} h to the servers' clock", shift / 3600.0) } else { String::new() }
            ),
            Some((ms(w0), ms(w1))),
            &[("client_tps", fig(client)), ("server_tps", fig(server)), ("clock_shift_h", fig(shift / 3600.0))],
        ),
        action: "The servers generate more than the job keeps: other clients share them, or requests are retried, aborted or timed out after generating. Check the client's retries and timeouts, and whether every result is written.".into(),
    }.with(Strength {
        span_s: Some(w1 - w0),
        lines: done.len() as u64,
        of: "records",
        effect: Some(client / server),
        threshold: Some(CLIENT_SHARE),
        fires: "below",
    }))
}
