//! Segments: a log that spans restarts is several runs, reported apart.
//!
//! An instance's log is cut where the server starts again after it has already served
//! (start-up configuration lines or the ready line, after a stats line) or where it falls
//! silent for longer than [`GAP_MIN_MS`] and [`GAP_FACTOR`] typical intervals. Cuts of all
//! instances within [`CLUSTER_MS`] of each other are one run-wide cut (a fleet restarts
//! together, one GPU a little later than the next). Each segment lists the settings that
//! changed at its start, compared with the segment before.

use crate::ingest::series::Setting;
use std::collections::BTreeMap;

/// A silence must be this many typical intervals long to cut…
pub const GAP_FACTOR: i64 = 30;
/// …and at least this long (the digest lists every silence this long as it reads).
pub use crate::ingest::digest::stretch::GAP_MIN_MS;
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

/// What the cuts of one instance are found from.
#[derive(Debug, Clone, Copy)]
pub struct CutInputs<'a> {
    /// Stamps of start-up (configuration) lines and ready lines, sorted.
    pub starts: &'a [i64],
    /// First and last stamp of its stats lines (decode / periodic stats).
    pub stats: Option<(i64, i64)>,
    /// Their typical (median) difference.
    pub typical: Option<i64>,
    /// Consecutive stats stamps further apart than [`GAP_MIN_MS`], in order.
    pub long: &'a [(i64, i64)],
    /// The first prefill stamp, and those after the last stats line (in order).
    pub prefill_first: Option<i64>,
    pub prefill_tail: &'a [i64],
}

/// Where one instance's log is cut.
pub fn cuts(c: &CutInputs<'_>) -> Vec<(i64, Reason)> {
    let first = c.stats.map(|s| s.0);
    let mut out: Vec<(i64, Reason)> = Vec::new();
    let mut last_start = i64::MIN;
    for &t in c.starts {
        if t.saturating_sub(last_start) <= START_MS {
            continue;
        }
        last_start = t;
        // a start after work has been logged
        if first.is_some_and(|f| f < t) {
            out.push((t, Reason::Restart));
        }
    }
    // (every gap is longer than `GAP_MIN_MS`: its candidates are listed as read)
    let min_gap = c
        .typical
        .map_or(GAP_MIN_MS, |t| (t * GAP_FACTOR).max(GAP_MIN_MS));
    if c.typical.is_some() {
        for &(a, b) in c.long {
            if b - a > min_gap && !out.iter().any(|&(c, _)| c > a && c <= b) {
                out.push((b, Reason::Gap));
            }
        }
    }
    // a silence before the first stats line or after the last, with other lines (prefill
    // batches) beyond it, is a gap too: an idle stretch, not ramp-up or drain
    if let Some((first, last)) = c.stats {
        if c.prefill_first.is_some_and(|t| t < first - min_gap)
            && !out.iter().any(|&(c, _)| c <= first)
        {
            out.push((first, Reason::Gap));
        }
        if let Some(after) = c
            .prefill_tail
            .iter()
            .copied()
            .filter(|&t| t > last + min_gap)
            .min()
        {
            if !out.iter().any(|&(c, _)| c > last && c <= after) {
                out.push((after, Reason::Gap));
            }
        }
    }
    out.sort_unstable_by_key(|c| c.0);
    out
}

/// Stretch-wide cuts from every instance's cuts: the earliest of each cluster, a restart if any
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
pub struct SettingChange {
    pub key: String,
    pub before: String,
    pub after: String,
    /// How many instances show this change.
    pub instances: u32,
}

/// The last value of every setting of an instance in `[from, to)`.
pub fn settings_in(settings: &[Setting], from: i64, to: i64) -> BTreeMap<&str, &str> {
    settings
        .iter()
        .filter(|c| c.ts >= from && c.ts < to)
        .map(|c| (c.key.as_str(), c.value.as_str()))
        .collect()
}

/// Settings that changed between two segments of the same instances.
pub fn changes<'a>(
    pairs: impl Iterator<Item = (BTreeMap<&'a str, &'a str>, BTreeMap<&'a str, &'a str>)>,
) -> Vec<SettingChange> {
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
        .map(|((k, b, a), n)| SettingChange {
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
    use crate::ingest::digest::Digest;
    use crate::ingest::series::{Point, Series};

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
        let d = Digest::of(&s);
        assert_eq!(
            crate::analysis::settle::settle(&d).cuts,
            vec![(200_000, Reason::Restart), (1_600_000, Reason::Gap)]
        );
        let ch = changes(std::iter::once((
            settings_in(&s.settings, 0, 200_000),
            settings_in(&s.settings, 200_000, 1_600_000),
        )));
        assert_eq!(
            ch,
            vec![SettingChange {
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
