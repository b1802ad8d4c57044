//! Segments: a log that spans restarts is several runs, reported apart.
//!
//! An instance's log is cut where the server starts again after it has already served
//! (start-up configuration lines or the ready line, after a stats line) or where it falls
//! silent for longer than [`GAP_MIN_MS`] and [`GAP_FACTOR`] typical intervals. Cuts of all
//! instances within [`CLUSTER_MS`] of each other are one run-wide cut (a fleet restarts
//! together, one GPU a little later than the next). Each segment lists the settings that
//! changed at its start, compared with the segment before.

use crate::analysis::intervals::typical_gap_and_longer;
use crate::ingest::series::Series;
use std::collections::BTreeMap;
use tokstat_parsers::record::EventKind;

/// A silence must be this many typical intervals long to cut…
pub const GAP_FACTOR: i64 = 30;
/// …and at least this long.
pub const GAP_MIN_MS: i64 = 300_000;
/// Cuts of different instances this close are one.
pub const CLUSTER_MS: i64 = 600_000;
/// Start-up lines this close belong to one start.
const START_MS: i64 = 120_000;

/// Why a segment starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The beginning of the logs.
    Begin,
    /// The server started again (start-up lines).
    Restart,
    /// A long silence.
    Gap,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Begin => "begin",
            Reason::Restart => "restart",
            Reason::Gap => "gap",
        }
    }
}

/// Where one instance's log is cut.
pub fn cuts(s: &Series) -> Vec<(i64, Reason)> {
    // read twice rather than copied: a fresh copy of millions of stamps cost more
    let stats = || {
        s.points
            .iter()
            .zip(s.stats_flags())
            .filter(|(_, stats)| *stats)
            .map(|(p, _)| p.ts)
    };
    let first = stats().next();
    let mut starts: Vec<i64> = s
        .settings
        .iter()
        .map(|c| c.ts)
        .chain(
            s.events
                .iter()
                .filter(|e| e.kind == EventKind::ServerReady)
                .map(|e| e.ts),
        )
        .collect();
    starts.sort_unstable();
    let mut out: Vec<(i64, Reason)> = Vec::new();
    let mut last_start = i64::MIN;
    for t in starts {
        if t.saturating_sub(last_start) <= START_MS {
            continue;
        }
        last_start = t;
        // a start after work has been logged
        if first.is_some_and(|f| f < t) {
            out.push((t, Reason::Restart));
        }
    }
    // (every gap is longer than `GAP_MIN_MS`: its candidates come from the same pass)
    let (typical, long) = typical_gap_and_longer(stats(), GAP_MIN_MS);
    let min_gap = typical.map_or(GAP_MIN_MS, |t| (t * GAP_FACTOR).max(GAP_MIN_MS));
    if typical.is_some() {
        for (a, b) in long {
            if b - a > min_gap && !out.iter().any(|&(c, _)| c > a && c <= b) {
                out.push((b, Reason::Gap));
            }
        }
    }
    // a silence before the first stats line or after the last, with other lines (prefill
    // batches) beyond it, is a gap too: an idle stretch, not ramp-up or drain
    if let (Some(first), Some(last)) = (first, stats().last()) {
        let others = || s.prefill.iter().map(|p| p.ts);
        if others().any(|t| t < first - min_gap) && !out.iter().any(|&(c, _)| c <= first) {
            out.push((first, Reason::Gap));
        }
        if let Some(after) = others().filter(|&t| t > last + min_gap).min() {
            if !out.iter().any(|&(c, _)| c > last && c <= after) {
                out.push((after, Reason::Gap));
            }
        }
    }
    out.sort_unstable_by_key(|c| c.0);
    out
}

/// Run-wide cuts from every instance's cuts: the earliest of each cluster, a restart if any
/// instance restarted there.
pub fn cluster(mut all: Vec<(i64, Reason)>) -> Vec<(i64, Reason)> {
    all.sort_unstable_by_key(|c| c.0);
    let mut out: Vec<(i64, Reason)> = Vec::new();
    for (t, r) in all {
        match out.last_mut() {
            Some(last) if t - last.0 <= CLUSTER_MS => {
                if r == Reason::Restart {
                    last.1 = Reason::Restart;
                }
            }
            _ => out.push((t, r)),
        }
    }
    out
}

/// A setting that differs from the previous segment.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct Change {
    pub key: String,
    pub before: String,
    pub after: String,
    /// How many instances show this change.
    pub instances: u32,
}

/// The last value of every setting of an instance in `[from, to)`.
pub fn settings_in(s: &Series, from: i64, to: i64) -> BTreeMap<&str, &str> {
    s.settings
        .iter()
        .filter(|c| c.ts >= from && c.ts < to)
        .map(|c| (c.key.as_str(), c.value.as_str()))
        .collect()
}

/// Settings that changed between two segments of the same instances.
pub fn changes<'a>(
    pairs: impl Iterator<Item = (BTreeMap<&'a str, &'a str>, BTreeMap<&'a str, &'a str>)>,
) -> Vec<Change> {
    let mut seen: BTreeMap<(&str, &str, &str), u32> = BTreeMap::new();
    for (before, after) in pairs {
        for (k, v) in &after {
            if let Some(old) = before.get(k) {
                if old != v {
                    *seen.entry((k, old, v)).or_default() += 1;
                }
            }
        }
    }
    seen.into_iter()
        .map(|((k, b, a), n)| Change {
            key: k.to_string(),
            before: b.to_string(),
            after: a.to_string(),
            instances: n,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::series::{Point, Setting};

    fn stats(ts: i64) -> Point {
        Point {
            ts,
            gen_tps: 100.0,
            running: 1.0,
            waiting: 0.0,
            kv_usage: 0.1,
            accept_len: f32::NAN,
        }
    }
    fn set(ts: i64, k: &str, v: &str) -> Setting {
        Setting {
            ts,
            key: k.into(),
            value: v.into(),
        }
    }

    #[test]
    fn restarts_gaps_and_changes() {
        let mut s = Series {
            points: (0..100).map(|i| stats(i * 1000)).collect(),
            settings: vec![
                set(0, "max_running_requests", "16"),
                set(1000, "context_len", "4096"),
            ],
            ..Series::default()
        };
        // restart at 200 s with a new setting, then a 20-minute silence at 400 s
        s.settings.push(set(200_000, "max_running_requests", "40"));
        s.settings.push(set(200_500, "context_len", "4096"));
        s.points.extend((201..400).map(|i| stats(i * 1000)));
        s.points.extend((1600..1700).map(|i| stats(i * 1000)));
        assert_eq!(
            cuts(&s),
            vec![(200_000, Reason::Restart), (1_600_000, Reason::Gap)]
        );
        let ch = changes(std::iter::once((
            settings_in(&s, 0, 200_000),
            settings_in(&s, 200_000, 1_600_000),
        )));
        assert_eq!(
            ch,
            vec![Change {
                key: "max_running_requests".into(),
                before: "16".into(),
                after: "40".into(),
                instances: 1
            }]
        );
        assert_eq!(
            cluster(vec![
                (10, Reason::Gap),
                (5000, Reason::Restart),
                (900_000, Reason::Gap)
            ]),
            vec![(10, Reason::Restart), (900_000, Reason::Gap)]
        );
    }
}
