//! Bursts of failures (`error_burst`): a window of the timeline where HTTP 5xx or 4xx
//! responses, or error lines, run far above their usual rate, with what the logs show just
//! before it (a crash, a server start).
//!
//! A bucket is hot when it holds at least [`HOT_MIN`] failures and [`HOT_FACTOR`] times
//! the median bucket's count (so a steady trickle of 404s is no burst, and a failure-free
//! run's first failures are). Hot buckets one cool bucket apart form one window; the window
//! with the most failures is the burst when it holds at least [`BURST_MIN`] of them.

use super::vocabulary::{evidence, fig, Hint, Inputs, Severity};
use crate::analysis::incidents::Incident;
use crate::analysis::lifecycle::spell;
use crate::analysis::timeline::Timeline;
use crate::ingest::series::EventPoint;
use tokstat_parsers::record::EventKind;
use tokstat_parsers::stamp::Ts;

/// Failures a bucket needs to be hot…
pub const HOT_MIN: u64 = 5;
/// …and this many times the median bucket's.
pub const HOT_FACTOR: f64 = 4.0;
/// Failures a window needs to be a burst.
pub const BURST_MIN: u64 = 10;
/// How far before a burst its cause is looked for, ms.
pub const CAUSE_BEFORE_MS: i64 = 15 * 60_000;

/// One kind of failure counted per bucket.
struct FailureKind {
    name: &'static str,
    what: &'static str,
    counts: Vec<u64>,
}

/// A burst found: buckets `from..=to` of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Burst {
    pub from: usize,
    pub to: usize,
    pub count: u64,
    /// Failures per minute in the window, and in the rest of the timeline.
    pub per_min: f64,
    pub elsewhere_per_min: f64,
}

/// Whether an event line is an error line for the burst count: error-level lines, failed
/// health checks and KV transfers (the lines of a crash are the `crash` hint's).
fn is_error(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Error | EventKind::Oom | EventKind::HealthCheck | EventKind::KvTransfer
    )
}

/// The burst of one series of counts per bucket of `bucket_ms`, if any.
fn burst(counts: &[u64], bucket_ms: i64) -> Option<Burst> {
    let total: u64 = counts.iter().sum();
    if total < BURST_MIN {
        return None;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable();
    let median = sorted[sorted.len() / 2];
    let hot_from = HOT_MIN.max((HOT_FACTOR * median as f64).ceil() as u64);
    let hot = |k: usize| counts[k] >= hot_from;
    // windows of hot buckets, one cool bucket apart at most
    let mut best: Option<(usize, usize, u64)> = None;
    let mut k = 0;
    while k < counts.len() {
        if !hot(k) {
            k += 1;
            continue;
        }
        let from = k;
        let mut to = k;
        let mut j = k + 1;
        while j < counts.len() && (hot(j) || (j + 1 < counts.len() && hot(j + 1))) {
            if hot(j) {
                to = j;
            }
            j += 1;
        }
        let n: u64 = counts[from..=to].iter().sum();
        if best.is_none_or(|b| n > b.2) {
            best = Some((from, to, n));
        }
        k = to + 1;
    }
    let (from, to, count) = best.filter(|b| b.2 >= BURST_MIN)?;
    let mins = |buckets: usize| buckets as f64 * bucket_ms as f64 / 60_000.0;
    let rest = counts.len() - (to - from + 1);
    Some(Burst {
        from,
        to,
        count,
        per_min: count as f64 / mins(to - from + 1),
        elsewhere_per_min: if rest > 0 {
            (total - count) as f64 / mins(rest)
        } else {
            0.0
        },
    })
}

/// The clock time of a stamp (`HH:MM:SS`).
fn clock(t: i64) -> String {
    let s = Ts(t).to_string();
    s.split_once('T').map_or(s.clone(), |(_, c)| c.to_string())
}

/// What the logs show in the [`CAUSE_BEFORE_MS`] before `at` (and up to `until`): the
/// fatal incidents, with the first exception line among them, and the server starts.
fn cause(
    at: i64,
    until: i64,
    bucket_ms: i64,
    events: &[(&str, &[EventPoint])],
    incidents: &[Incident],
) -> Option<String> {
    let near = |t: i64| t >= at - CAUSE_BEFORE_MS && t <= until;
    // (instances, first and last time) of the events of a kind near the burst, from `from`
    let seen = |f: &dyn Fn(EventKind) -> bool, from: i64| {
        let mut names = Vec::new();
        let mut range: Option<(i64, i64)> = None;
        for (n, evs) in events {
            let mut any = false;
            for e in evs
                .iter()
                .filter(|e| f(e.kind) && near(e.ts) && e.ts >= from)
            {
                any = true;
                range = Some(range.map_or((e.ts, e.ts), |(a, b)| (a.min(e.ts), b.max(e.ts))));
            }
            if any {
                names.push(*n);
            }
        }
        range.map(|r| (names, r))
    };
    let span = |(a, b): (i64, i64)| {
        if a == b {
            format!("at {}", clock(a))
        } else {
            format!("from {} to {}", clock(a), clock(b))
        }
    };
    let who = |names: &[&str]| match names {
        [one] => (*one).to_string(),
        _ => format!("{} instances", names.len()),
    };
    let mut said = Vec::new();
    let crashed = seen(&|k| k.fatal(), i64::MIN);
    // (the starts after the crash, if any)
    let since = crashed.as_ref().map_or(i64::MIN, |c| c.1 .1);
    if let Some((names, range)) = crashed {
        let kinds: Vec<&str> = incidents
            .iter()
            .filter(|i| i.kind.fatal() && i.count > 0)
            .map(|i| i.kind.as_str())
            .collect();
        // the first line naming the exception, near the crash
        let detail = incidents
            .iter()
            .filter(|i| {
                matches!(
                    i.kind,
                    EventKind::Exception | EventKind::CudaOom | EventKind::Distributed
                )
            })
            .flat_map(|i| &i.samples)
            .filter(|s| s.ts.is_some_and(|t| near(t.0)))
            .min_by_key(|s| s.ts)
            .map(|s| match s.text.char_indices().nth(160) {
                Some((cut, _)) => format!(": {}…", &s.text[..cut]),
                None => format!(": {}", s.text),
            });
        said.push(format!(
            "{} logged {} {}{}",
            who(&names),
            kinds.join(" and "),
            span(range),
            detail.unwrap_or_default()
        ));
    }
    if let Some((names, (first, last))) = seen(&|k| k == EventKind::ServerReady, since) {
        said.push(if last <= at {
            let after = if at - last < bucket_ms {
                format!("within {} of it", spell(bucket_ms))
            } else {
                format!("{} after", spell(at - last))
            };
            format!(
                "{} became ready {}, and the burst began {after}",
                who(&names),
                span((first, last)),
            )
        } else {
            format!(
                "{} became ready {} as it ran",
                who(&names),
                span((first, last))
            )
        });
    }
    (!said.is_empty()).then(|| said.join("; "))
}

/// The `error_burst` hints of a run's timeline (one per kind of failure that bursts), with
/// the instances' events for the error lines and the cause.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let events: Vec<(&str, &[EventPoint])> = i
        .instances
        .iter()
        .map(|(n, i)| (n.as_str(), i.digest.events()))
        .collect();
    let (tl, events, incidents) = (&i.server.timeline, &events[..], i.incidents);
    within(tl, events, incidents)
}

/// [`hints`] of a timeline and the instances' events.
fn within(tl: &Timeline, events: &[(&str, &[EventPoint])], incidents: &[Incident]) -> Vec<Hint> {
    let nb = tl.total.len();
    if nb == 0 {
        return Vec::new();
    }
    let b = tl.bucket_ms;
    let mut errors = vec![0u64; nb];
    for (_, evs) in events {
        for e in evs.iter().filter(|e| is_error(e.kind)) {
            if let Some(c) = usize::try_from((e.ts - tl.origin).div_euclid(b))
                .ok()
                .and_then(|k| errors.get_mut(k))
            {
                *c += 1;
            }
        }
    }
    let http = |c: usize| tl.total.iter().map(|x| x.http[c]).collect::<Vec<u64>>();
    let series = [
        FailureKind {
            name: "http_5xx",
            what: "HTTP 5xx responses",
            counts: http(2),
        },
        FailureKind {
            name: "http_4xx",
            what: "HTTP 4xx responses",
            counts: http(1),
        },
        FailureKind {
            name: "errors",
            what: "error lines",
            counts: errors,
        },
    ];
    let mut out = Vec::new();
    for s in &series {
        let Some(bu) = burst(&s.counts, b) else {
            continue;
        };
        let t0 = tl.origin + bu.from as i64 * b;
        let t1 = tl.origin + (bu.to + 1) as i64 * b;
        let responses: u64 = tl.total[bu.from..=bu.to]
            .iter()
            .map(|x| x.http.iter().sum::<u64>())
            .sum();
        let share =
            (s.name != "errors" && responses > 0).then(|| bu.count as f64 / responses as f64);
        let mut text = format!(
            "{} {} in {} from {} to {} ({:.1}/min, against {:.2}/min in the rest of the run)",
            bu.count,
            s.what,
            spell(t1 - t0),
            clock(t0),
            clock(t1),
            bu.per_min,
            bu.elsewhere_per_min
        );
        if let Some(sh) = share {
            text.push_str(&format!("; {:.0}% of the responses then", 100.0 * sh));
        }
        let why = cause(t0, t1, b, events, incidents);
        if let Some(w) = &why {
            text.push_str(&format!(". Before it: {w}"));
        }
        let action = match s.name {
            "http_5xx" => "The server failed requests in this window: read the census's lines around its start (a crash, a restart, an engine error) and the clients' retries; after a restart, hold traffic until the server is ready and warmed up (a readiness probe on /health).",
            "http_4xx" => "Requests were refused in this window: check what the clients sent then (an expired key, a wrong model name, prompts over the context length after a settings change).",
            _ => "Error lines ran together in this window: read the first of them in the census; the rest usually follow from it.",
        };
        let mut figures = vec![
            ("count", fig(bu.count)),
            ("per_min", fig(bu.per_min)),
            ("elsewhere_per_min", fig(bu.elsewhere_per_min)),
        ];
        if let Some(sh) = share {
            figures.push(("share", fig(sh)));
        }
        out.push(Hint {
            id: "error_burst",
            severity: if share.is_some_and(|sh| sh >= 0.5) {
                Severity::Critical
            } else {
                Severity::Warning
            },
            evidence: evidence(text, Some((t0, t1)), &figures),
            action: action.to_string(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spike over a zero background is a burst; a steady trickle is not; hot buckets one
    /// cool bucket apart make one window, and the biggest window wins.
    #[test]
    fn bursts_stand_out_of_their_background() {
        let mut c = vec![0u64; 40];
        c[10] = 30;
        c[11] = 2;
        c[12] = 8;
        c[30] = 6;
        let b = burst(&c, 60_000).unwrap();
        assert_eq!((b.from, b.to, b.count), (10, 12, 40));
        assert_eq!(b.per_min, 40.0 / 3.0);
        assert_eq!(b.elsewhere_per_min, 6.0 / 37.0);
        // a trickle of 6 per bucket everywhere: the median is 6, nothing reaches 24
        assert_eq!(burst(&[6; 40], 60_000), None);
        let mut t = vec![6u64; 40];
        t[20] = 24;
        assert_eq!(burst(&t, 60_000).map(|b| (b.from, b.to)), Some((20, 20)));
        // too few failures in all
        let mut few = vec![0u64; 10];
        few[3] = 9;
        assert_eq!(burst(&few, 60_000), None);
    }
}
