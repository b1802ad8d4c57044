//! Hints from a benchmark run's client and server on one clock ([`crate::analysis::one_clock`]):
//! what the server did where the client's latency moved.
//!
//! - `latency_queueing`: requests queued at a full batch (the server's running at its
//!   most, requests waiting) and the queue is most of the client's TTFT there, by Little's
//!   law on the server's queue (mean waiting × time ÷ requests sent). Its interval is the
//!   jackknife's over the buckets: firm when the interval clears [`QUEUE_SHARE`], borderline
//!   where requests were preempted (they wait again, and the waiting count holds them).
//! - `latency_memory`: KV usage at [`KV_FULL`] or above with requests preempted.
//! - `latency_client_path`: the client's TTFT p99 [`MOVED`]× its usual with the server
//!   as usual over its requests' whole life (running and waiting within 10% or one request
//!   of the run's median, KV not full, nothing preempted): the client or the network.

use super::vocabulary::{evidence, fig, pct, Hint, Inputs, Level, Severity, Strength};
use crate::analysis::one_clock::{ClockRow, OneClock};
use tokstat_parsers::stamp::Ts;

/// The queue's share of the client's TTFT from which queueing is the hint.
pub const QUEUE_SHARE: f64 = 0.5;
/// KV usage taken for full.
pub const KV_FULL: f64 = 0.90;
/// How many times a bucket's TTFT p99 must be the run's median bucket's to have moved.
pub const MOVED: f64 = 2.0;
/// Requests a bucket must have sent for its p99 to be weighed.
pub const MIN_STARTS: u64 = 3;

pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    i.one_clock
        .iter()
        .filter(|c| c.alignment.offset().is_some())
        .flat_map(|c| {
            [queueing(c), memory(c), client_path(c)]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    Some(crate::analysis::quantile::quantile(&v, 0.5))
}

/// The rows' time range on the clock they are shown on ([`OneClock::shown`]), ms.
fn range(c: &OneClock, rows: &[&ClockRow]) -> Option<(i64, i64)> {
    let a = rows
        .iter()
        .map(|r| c.shown(r.t))
        .fold(f64::INFINITY, f64::min);
    let b = rows
        .iter()
        .map(|r| c.shown(r.t))
        .fold(f64::NEG_INFINITY, f64::max)
        + c.bucket_s;
    a.is_finite()
        .then(|| ((a * 1000.0).round() as i64, (b * 1000.0).round() as i64))
}

fn strength(c: &OneClock, rows: usize, effect: f64, threshold: f64) -> Strength {
    Strength {
        span_s: Some(rows as f64 * c.bucket_s),
        lines: c.alignment.offset().map_or(0, |o| o.readings as u64),
        of: if c.server == "scrapes" {
            "scrapes"
        } else {
            "server readings"
        },
        effect: Some(effect),
        threshold: Some(threshold),
        fires: "above",
    }
}

fn named(c: &OneClock, mut h: Hint, range: Option<(i64, i64)>) -> Hint {
    h.evidence.from = range.map(|r| Ts(r.0));
    h.evidence.to = range.map(|r| Ts(r.1));
    h.evidence.instance = Some(format!(
        "{} run '{}' beside the {}",
        c.tool, c.run, c.server
    ));
    h
}

/// The queue's share of the client's TTFT over `rows`: (Σ waiting × bucket ÷ Σ requests
/// sent) ÷ their mean TTFT.
fn share(rows: &[&ClockRow], bucket_s: f64) -> Option<f64> {
    let sent: f64 = rows.iter().map(|r| r.starts as f64).sum();
    let waited: f64 = rows.iter().filter_map(|r| r.waiting).sum::<f64>() * bucket_s;
    let ttft: f64 = rows
        .iter()
        .filter_map(|r| Some(r.ttft_mean_ms? * r.starts as f64))
        .sum::<f64>()
        / 1000.0;
    (sent > 0.0 && ttft > 0.0).then(|| (waited / sent) / (ttft / sent))
}

fn queueing(c: &OneClock) -> Option<Hint> {
    let top = c
        .rows
        .iter()
        .filter_map(|r| r.running)
        .fold(f64::NEG_INFINITY, f64::max);
    let full = |r: &ClockRow| {
        r.starts > 0
            && r.ttft_mean_ms.is_some()
            && r.waiting.is_some_and(|w| w >= 0.5)
            && r.running.is_some_and(|n| n >= top - 0.5)
    };
    let queued: Vec<&ClockRow> = c.rows.iter().filter(|r| full(r)).collect();
    if queued.len() < 2 {
        return None;
    }
    let point = share(&queued, c.bucket_s)?;
    if point < QUEUE_SHARE {
        return None;
    }
    // the jackknife's interval over the buckets
    let n = queued.len() as f64;
    let leave: Vec<f64> = (0..queued.len())
        .filter_map(|k| {
            let rest: Vec<&ClockRow> = queued
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != k)
                .map(|(_, r)| *r)
                .collect();
            share(&rest, c.bucket_s)
        })
        .collect();
    let m = leave.iter().sum::<f64>() / leave.len() as f64;
    let se = ((n - 1.0) / n * leave.iter().map(|x| (x - m).powi(2)).sum::<f64>()).sqrt();
    let low = point - 1.96 * se;
    let p99 = |rows: &[&ClockRow]| median(rows.iter().filter_map(|r| r.ttft_p99_ms).collect());
    let elsewhere: Vec<&ClockRow> = c.rows.iter().filter(|r| !full(r) && r.starts > 0).collect();
    let (at, other) = (p99(&queued), p99(&elsewhere));
    let waiting = queued.iter().filter_map(|r| r.waiting).sum::<f64>() / n;
    let text = format!(
        "requests queued at a full batch ({top:.0} running, {waiting:.1} waiting on average) in {} of {} buckets; there the queue is {} of the client's TTFT (interval {}–{}), TTFT p99 {} against {} elsewhere",
        queued.len(),
        c.rows.len(),
        pct(point),
        pct(low.max(0.0)),
        pct(point + 1.96 * se),
        at.map_or("–".into(), |v| format!("{v:.0} ms")),
        other.map_or("– (no other bucket)".into(), |v| format!("{v:.0} ms")),
    );
    let mut h = Hint {
        id: "latency_queueing",
        severity: Severity::Warning,
        evidence: evidence(
            text,
            None,
            &[
                ("queue_share", fig(point)),
                ("queue_share_low", fig(low)),
                ("running", fig(top)),
                ("waiting", fig(waiting)),
                ("buckets", fig(queued.len())),
                ("ttft_p99_ms", fig(at)),
                ("ttft_p99_elsewhere_ms", fig(other)),
            ],
        ),
        action: "The client's TTFT is mostly waiting for a slot: the server runs at its cap. Raise max_num_seqs (or --max-running-requests) if KV memory allows, add replicas, or lower the client's concurrency to the cap.".into(),
    }
    .with(strength(c, queued.len(), point, QUEUE_SHARE));
    // requests preempted go back to the queue: the waiting count holds their waits after
    // their first token too, and the share is at most what it says
    let requeued = c.queue_share.is_some_and(|q| q.upper_bound)
        || queued
            .iter()
            .any(|r| r.preemptions.is_some_and(|p| p > 0.0));
    if requeued {
        h.evidence
            .text
            .push_str(" (at most: the waiting count holds preempted requests waiting again)");
    }
    if low < QUEUE_SHARE || requeued {
        h.evidence.level = Level::Borderline;
    }
    Some(named(c, h, range(c, &queued)))
}

fn memory(c: &OneClock) -> Option<Hint> {
    let full: Vec<&ClockRow> = c
        .rows
        .iter()
        .filter(|r| {
            r.kv_usage.is_some_and(|k| k >= KV_FULL) && r.preemptions.is_some_and(|p| p > 0.0)
        })
        .collect();
    if full.is_empty() {
        return None;
    }
    let preempted: f64 = full.iter().filter_map(|r| r.preemptions).sum();
    let p99 = |rows: Vec<&ClockRow>| median(rows.iter().filter_map(|r| r.e2e_p99_ms).collect());
    let at = p99(full.clone());
    let other = p99(c
        .rows
        .iter()
        .filter(|r| !full.iter().any(|f| std::ptr::eq(*f, *r)) && r.starts > 0)
        .collect());
    let text = format!(
        "KV usage at {} or above with {preempted:.0} requests preempted in {} of {} buckets; end-to-end p99 {} there against {} elsewhere",
        pct(KV_FULL),
        full.len(),
        c.rows.len(),
        at.map_or("–".into(), |v| format!("{v:.0} ms")),
        other.map_or("–".into(), |v| format!("{v:.0} ms")),
    );
    let h = Hint {
        id: "latency_memory",
        severity: Severity::Warning,
        evidence: evidence(
            text,
            None,
            &[
                ("preemptions", fig(preempted)),
                ("buckets", fig(full.len())),
                ("e2e_p99_ms", fig(at)),
                ("e2e_p99_elsewhere_ms", fig(other)),
            ],
        ),
        action: "The KV cache is full and requests are preempted (recomputed): lower max_num_seqs, raise --gpu-memory-utilization, shorten contexts, or add tensor parallelism.".into(),
    }
    .with(strength(c, full.len(), preempted, 0.0));
    Some(named(c, h, range(c, &full)))
}

fn client_path(c: &OneClock) -> Option<Hint> {
    let weighed: Vec<&ClockRow> = c
        .rows
        .iter()
        .filter(|r| r.starts >= MIN_STARTS && r.ttft_p99_ms.is_some())
        .collect();
    if weighed.len() < 4 {
        return None;
    }
    let usual = median(weighed.iter().filter_map(|r| r.ttft_p99_ms).collect())?;
    let waiting = median(weighed.iter().filter_map(|r| r.waiting).collect());
    let running = median(weighed.iter().filter_map(|r| r.running).collect());
    let near = |v: Option<f64>, usual: Option<f64>| match (v, usual) {
        (Some(v), Some(u)) => (v - u).abs() <= (0.1 * u).max(1.0),
        _ => false,
    };
    // the server as usual over the whole life of the bucket's requests: from the bucket
    // before (a ramp from idle is a change) to its p99's end
    let unchanged = |k: usize, p99_ms: f64| {
        let r = &c.rows[k];
        let (from, to) = (r.t - c.bucket_s, r.t + c.bucket_s + p99_ms / 1000.0);
        k > 0
            && c.rows
                .iter()
                .filter(|x| x.t >= from - 1e-9 && x.t < to)
                .all(|x| {
                    near(x.waiting, waiting)
                        && near(x.running, running)
                        && x.kv_usage.is_none_or(|kv| kv < KV_FULL)
                        && x.preemptions.is_none_or(|p| p == 0.0)
                })
    };
    let moved: Vec<&ClockRow> = c
        .rows
        .iter()
        .enumerate()
        .filter(|(k, r)| {
            r.starts >= MIN_STARTS
                && r.ttft_p99_ms
                    .is_some_and(|p| p >= MOVED * usual && unchanged(*k, p))
        })
        .map(|(_, r)| r)
        .collect();
    if moved.is_empty() || usual <= 0.0 {
        return None;
    }
    let worst = moved
        .iter()
        .filter_map(|r| r.ttft_p99_ms)
        .fold(f64::NEG_INFINITY, f64::max);
    let text = format!(
        "the client's TTFT p99 rose to {worst:.0} ms ({:.1}× its usual {usual:.0} ms) in {} bucket(s) while the server's running, waiting and KV usage stayed as usual: the time was spent outside the server (the client or the network)",
        worst / usual,
        moved.len()
    );
    let h = Hint {
        id: "latency_client_path",
        severity: Severity::Info,
        evidence: evidence(
            text,
            None,
            &[
                ("ttft_p99_ms", fig(worst)),
                ("usual_ttft_p99_ms", fig(usual)),
                ("buckets", fig(moved.len())),
            ],
        ),
        action: "Look at the client's host (its event loop, CPU, tokenizer) and the network between it and the server for those minutes; the server was not the cause.".into(),
    }
    .with(strength(c, moved.len(), worst / usual, MOVED));
    Some(named(c, h, range(c, &moved)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::align::{Alignment, Offset};

    /// Twelve buckets of a steady run (8 running, none waiting, TTFT p99 50 ms); `edit`
    /// changes some.
    fn run(edit: impl Fn(usize, &mut ClockRow)) -> OneClock {
        let rows = (0..12)
            .map(|k| {
                let mut r = ClockRow {
                    t: 1_800_000_000.0 + k as f64,
                    starts: 10,
                    completions: 10,
                    errors: 0,
                    in_flight: 8.0,
                    ttft_mean_ms: Some(40.0),
                    ttft_p50_ms: Some(40.0),
                    ttft_p99_ms: Some(50.0),
                    itl_p50_ms: Some(10.0),
                    itl_p99_ms: Some(12.0),
                    e2e_p50_ms: Some(800.0),
                    e2e_p99_ms: Some(900.0),
                    running: Some(8.0),
                    waiting: Some(0.0),
                    kv_usage: Some(0.4),
                    preemptions: Some(0.0),
                    gen_tps: Some(600.0),
                };
                edit(k, &mut r);
                r
            })
            .collect();
        OneClock {
            run: "r".into(),
            tool: "AIPerf",
            server: "scrapes",
            client_clock: "unix",
            alignment: Alignment::Aligned(Offset {
                offset_s: 0.0,
                low_s: 0.0,
                high_s: 0.0,
                zone_hours: Some(0.0),
                skew_s: Some(0.0),
                mismatch: 0.1,
                readings: 12,
            }),
            bucket_s: 1.0,
            rows,
            little: None,
            client_tokens: None,
            server_tokens: None,
            ttft_path: Vec::new(),
            queue_share: None,
            notes: Vec::new(),
        }
    }

    /// The client's p99 jumps in one bucket while the server stays as it was: the client
    /// or the network; the same jump with the queue filling up is not.
    #[test]
    fn a_jump_with_the_server_unchanged_is_the_clients() {
        let c = run(|k, r| {
            if k == 6 {
                r.ttft_p99_ms = Some(400.0);
            }
        });
        let h = client_path(&c).expect("fires");
        assert_eq!(h.evidence.figures["ttft_p99_ms"].number(), Some(400.0));
        assert_eq!(h.evidence.figures["buckets"].number(), Some(1.0));
        assert!(queueing(&c).is_none() && memory(&c).is_none());
        let queued = run(|k, r| {
            if k == 6 {
                r.ttft_p99_ms = Some(400.0);
            }
            if (6..8).contains(&k) {
                r.waiting = Some(6.0);
            }
        });
        assert!(client_path(&queued).is_none());
        // the first bucket has none before it: a ramp, not judged
        let first = run(|k, r| {
            if k == 0 {
                r.ttft_p99_ms = Some(400.0);
            }
        });
        assert!(client_path(&first).is_none());
    }

    /// KV usage full with requests preempted names memory, with the buckets' count.
    #[test]
    fn a_full_cache_that_preempts_is_memory() {
        let c = run(|k, r| {
            if (4..7).contains(&k) {
                r.kv_usage = Some(0.99);
                r.preemptions = Some(2.0);
                r.e2e_p99_ms = Some(3000.0);
            }
        });
        let h = memory(&c).expect("fires");
        assert_eq!(h.evidence.figures["preemptions"].number(), Some(6.0));
        assert_eq!(h.evidence.figures["e2e_p99_ms"].number(), Some(3000.0));
        assert_eq!(
            h.evidence.figures["e2e_p99_elsewhere_ms"].number(),
            Some(900.0)
        );
        // full but nothing preempted: not memory
        assert!(memory(&run(|_, r| r.kv_usage = Some(0.99))).is_none());
    }

    /// Queued at a full batch with the queue most of TTFT: firm; a queue that is a small
    /// part of TTFT: nothing.
    #[test]
    fn queueing_weighs_the_queues_share() {
        let c = run(|_, r| {
            r.waiting = Some(4.0);
            r.ttft_mean_ms = Some(450.0);
        });
        // 4 waiting × 1 s ÷ 10 sent = 400 ms of 450
        let h = queueing(&c).expect("fires");
        let share = h.evidence.figures["queue_share"].number().unwrap();
        assert!((share - 400.0 / 450.0).abs() < 1e-9);
        assert_eq!(h.evidence.level, Level::Firm);
        let small = run(|_, r| {
            r.waiting = Some(1.0);
            r.ttft_mean_ms = Some(450.0);
        });
        assert!(queueing(&small).is_none());
    }
}
