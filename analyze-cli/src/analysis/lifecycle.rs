//! How each instance spent the time its log covers: starting (from a start-up to the
//! server's ready line, or to a crash that ends it), serving (stats intervals with at least
//! one request running), down (from a crash to the next start-up or ready line, or to the
//! end of the log), and idle (the rest: up with nothing running, or silent); and the time
//! from a crash to the next ready line.
//!
//! A start-up is cut into phases where the log marks them: the weights loaded (SGLang's
//! `Load weight end.`, vLLM's `Model loading took …`), the KV cache allocated (SGLang's `KV
//! Cache is allocated.`, vLLM's `GPU KV cache size` / `# GPU blocks`: after vLLM's memory
//! profiling and torch.compile, which this phase includes), the CUDA graphs captured
//! (`Capture cuda graph end.`, `Graph capturing finished`), and the rest up to ready (the
//! HTTP server, tokenizer, warm-up). A phase whose mark is missing is part of the next.
//!
//! A start-up ends at the server's ready line (or, in a log whose ready lines have no stamp,
//! at its first stats line). It begins at the instance's first line when its start-up lines
//! (`server_args`, `non-default args`, …) come before any stats line, else at those lines:
//! a log that starts mid-run has no start-up, and a start-up never followed by a ready line
//! lasts to the crash that ends it, or to the end of the log. A crash loop is start-ups
//! and the down time between them.

use crate::analysis::iso_opt;
use crate::ingest::series::{EventPoint, Setting};
use serde::Serialize;
use tokstat_parsers::record::EventKind;
use tokstat_parsers::stamp::Ts;

/// One instance's time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Life {
    /// Its first and last stamp, ms.
    pub first: i64,
    pub last: i64,
    /// Start-ups seen.
    pub starts: usize,
    /// The first ready line.
    pub ready: Option<i64>,
    pub starting_ms: i64,
    pub serving_ms: i64,
    /// From each crash to the next start-up or ready line (or the end of the log).
    pub down_ms: i64,
    pub idle_ms: i64,
    /// From each crash to the next ready line (crashes with none after them: not listed).
    pub crash_to_ready_ms: Vec<i64>,
    /// The phases of its start-ups that reached a ready line, summed.
    pub phases: Phases,
}

/// Start-up phases, ms: `None` where no start-up marked the phase's end.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    pub weights: Option<i64>,
    pub kv_cache: Option<i64>,
    pub graphs: Option<i64>,
    /// From the last mark (or the start) to ready.
    pub other: Option<i64>,
}

impl Phases {
    fn add(&mut self, o: &Phases) {
        let sum = |a: Option<i64>, b: Option<i64>| match (a, b) {
            (Some(x), Some(y)) => Some(x + y),
            (x, y) => x.or(y),
        };
        self.weights = sum(self.weights, o.weights);
        self.kv_cache = sum(self.kv_cache, o.kv_cache);
        self.graphs = sum(self.graphs, o.graphs);
        self.other = sum(self.other, o.other);
    }

    /// The phases of a start-up from `start` to `ready`, with its first marks.
    fn of(start: i64, ready: i64, marks: [Option<i64>; 3]) -> Phases {
        let mut cursor = start;
        let mut took = [None; 3];
        for (k, m) in marks.into_iter().enumerate() {
            if let Some(t) = m.filter(|&t| t >= cursor && t <= ready) {
                took[k] = Some(t - cursor);
                cursor = t;
            }
        }
        Phases {
            weights: took[0],
            kv_cache: took[1],
            graphs: took[2],
            other: Some(ready - cursor),
        }
    }

    /// Whether any phase's end was marked.
    pub fn marked(&self) -> bool {
        self.weights.is_some() || self.kv_cache.is_some() || self.graphs.is_some()
    }
}

/// Setting keys whose line marks the weights loaded (SGLang's `Load weight end.`).
const WEIGHTS_KEYS: [&str; 1] = ["model_type"];
/// Setting keys whose line marks the KV cache allocated.
const KV_KEYS: [&str; 3] = ["kv_cache_tokens", "num_gpu_blocks", "max_total_num_tokens"];

impl Life {
    pub fn held_ms(&self) -> i64 {
        self.last - self.first
    }
}

/// The life of an instance whose lines span `first..=last`, whose first stats line is at
/// `stats_first`, with its start-up settings and events (each in time order) and the time
/// its intervals had a request running.
pub fn life(
    (first, last): (i64, i64),
    stats_first: Option<i64>,
    settings: &[Setting],
    events: &[EventPoint],
    serving_ms: i64,
) -> Life {
    // (at one time: start-up lines, then crashes, the phases' ends, then ready lines)
    #[derive(PartialEq, Eq, PartialOrd, Ord)]
    enum Mark {
        Setting,
        Crash,
        Phase(usize),
        Ready,
    }
    let mut marks: Vec<(i64, Mark)> = Vec::new();
    for s in settings {
        marks.push((s.ts, Mark::Setting));
        if WEIGHTS_KEYS.contains(&s.key.as_str()) {
            marks.push((s.ts, Mark::Phase(0)));
        } else if KV_KEYS.contains(&s.key.as_str()) {
            marks.push((s.ts, Mark::Phase(1)));
        }
    }
    for e in events {
        match e.kind {
            EventKind::ServerReady => marks.push((e.ts, Mark::Ready)),
            EventKind::WeightsLoaded => marks.push((e.ts, Mark::Phase(0))),
            EventKind::GraphsCaptured => marks.push((e.ts, Mark::Phase(2))),
            k if k.fatal() => marks.push((e.ts, Mark::Crash)),
            _ => {}
        }
    }
    // (no ready line with a stamp, as uvicorn's own has none: the first stats line says
    // the server was up)
    if !marks.iter().any(|m| m.1 == Mark::Ready) {
        if let Some(s) = stats_first {
            marks.push((s, Mark::Ready));
        }
    }
    marks.sort_unstable();
    let mut l = Life {
        first,
        last,
        serving_ms,
        ..Life::default()
    };
    // the start-up under way and its phases' first marks, and the crash waiting for a
    // ready line
    let mut starting: Option<i64> = None;
    let mut phase_marks: [Option<i64>; 3] = [None; 3];
    let mut crash: Option<i64> = None;
    let mut down: Option<i64> = None;
    for (t, m) in marks {
        match m {
            Mark::Setting if starting.is_none() && l.ready.is_none_or(|r| r <= t) => {
                let at = if l.starts == 0 && stats_first.is_none_or(|s| t <= s) {
                    first
                } else {
                    t
                };
                starting = Some(at);
                phase_marks = [None; 3];
                l.starts += 1;
                if let Some(d) = down.take() {
                    l.down_ms += (at - d).max(0);
                }
            }
            Mark::Setting => {}
            Mark::Phase(k) => {
                if starting.is_some() {
                    phase_marks[k].get_or_insert(t);
                }
            }
            Mark::Crash => {
                crash.get_or_insert(t);
                // a start-up cut short by the crash ends there
                if let Some(s) = starting.take() {
                    l.starting_ms += (t - s).max(0);
                }
                down.get_or_insert(t);
            }
            Mark::Ready => {
                if let Some(d) = down.take() {
                    l.down_ms += (t - d).max(0);
                }
                if let Some(s) = starting.take() {
                    l.starting_ms += (t - s).max(0);
                    l.phases.add(&Phases::of(s, t, phase_marks));
                }
                if let Some(c) = crash.take() {
                    l.crash_to_ready_ms.push(t - c);
                }
                l.ready.get_or_insert(t);
            }
        }
    }
    if let Some(s) = starting {
        l.starting_ms += (last - s).max(0);
    }
    if let Some(d) = down {
        l.down_ms += (last - d).max(0);
    }
    l.idle_ms = (l.held_ms() - l.starting_ms - l.serving_ms - l.down_ms).max(0);
    l
}

/// The run's lifecycle, as the report shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Lifecycle {
    pub instances: Vec<InstanceLife>,
    /// Instance-hours: each instance's span, and how it was spent.
    pub held_h: f64,
    pub starting_h: f64,
    pub serving_h: f64,
    /// Down: from a crash to the next start-up (see the module documentation).
    pub down_h: f64,
    pub idle_h: f64,
    /// The start-ups' phases over all instances, seconds (null where no log marked one).
    pub startup_phases_s: PhasesReport,
    /// The same in words.
    pub summary: String,
}

/// Start-up phases, seconds (see [`Phases`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct PhasesReport {
    pub weights: Option<f64>,
    pub kv_cache: Option<f64>,
    pub graphs: Option<f64>,
    pub other: Option<f64>,
}

impl From<&Phases> for PhasesReport {
    fn from(p: &Phases) -> PhasesReport {
        let s = |v: Option<i64>| v.map(|ms| ms as f64 / 1000.0);
        PhasesReport {
            weights: s(p.weights),
            kv_cache: s(p.kv_cache),
            graphs: s(p.graphs),
            other: s(p.other),
        }
    }
}

/// The phases in words, when any was marked and they took any time: `weights 36s, KV cache 1s, graphs 20s, rest
/// 4s`.
pub fn phases_in_words(p: &Phases) -> Option<String> {
    let total: i64 = [p.weights, p.kv_cache, p.graphs, p.other]
        .iter()
        .flatten()
        .sum();
    if !p.marked() || total == 0 {
        return None;
    }
    let parts: Vec<String> = [
        ("weights", p.weights),
        ("KV cache", p.kv_cache),
        ("graphs", p.graphs),
        ("rest", p.other),
    ]
    .into_iter()
    .filter_map(|(n, v)| v.map(|ms| format!("{n} {}", spell(ms))))
    .collect();
    Some(parts.join(", "))
}

/// One instance's lifecycle, seconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceLife {
    pub instance: String,
    pub starts: usize,
    #[serde(serialize_with = "iso_opt")]
    pub ready_ts: Option<Ts>,
    pub held_s: f64,
    pub starting_s: f64,
    pub serving_s: f64,
    pub down_s: f64,
    pub idle_s: f64,
    pub crash_to_ready_s: Vec<f64>,
    /// Its start-ups' phases, seconds.
    pub startup_phases_s: PhasesReport,
}

/// A length of instance time in words: `3h 12m`, `11m`, `2m 05s`, `40s`.
pub(crate) fn spell(ms: i64) -> String {
    let s = ms / 1000;
    match s {
        s if s >= 3600 => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
        s if s >= 600 => format!("{}m", (s + 30) / 60),
        s if s >= 60 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

/// The report's lifecycle from the instances' lives.
pub fn report(lives: &[(String, Life)]) -> Lifecycle {
    let sum = |f: fn(&Life) -> i64| lives.iter().map(|(_, l)| f(l)).sum::<i64>();
    let (held, starting, serving, down, idle) = (
        sum(Life::held_ms),
        sum(|l| l.starting_ms),
        sum(|l| l.serving_ms),
        sum(|l| l.down_ms),
        sum(|l| l.idle_ms),
    );
    let share = |x: i64| {
        if held > 0 {
            format!(" ({:.0}%)", 100.0 * x as f64 / held as f64)
        } else {
            String::new()
        }
    };
    let hours = |ms: i64| ms as f64 / 3_600_000.0;
    let mut phases = Phases::default();
    for (_, l) in lives {
        phases.add(&l.phases);
    }
    let summary = if lives.is_empty() {
        String::new()
    } else {
        format!(
            "{} instance(s) held {} of instance time: {} starting{}, {} serving{}, {}{} idle{}",
            lives.len(),
            spell(held),
            spell(starting),
            match (share(starting), phases_in_words(&phases)) {
                (sh, Some(w)) if !sh.is_empty() => format!("{}: {w})", sh.trim_end_matches(')')),
                (sh, _) => sh,
            },
            spell(serving),
            share(serving),
            if down > 0 {
                format!("{} down{}, ", spell(down), share(down))
            } else {
                String::new()
            },
            spell(idle),
            share(idle),
        )
    };
    Lifecycle {
        instances: lives
            .iter()
            .map(|(name, l)| InstanceLife {
                instance: name.clone(),
                starts: l.starts,
                ready_ts: l.ready.map(Ts),
                held_s: l.held_ms() as f64 / 1000.0,
                starting_s: l.starting_ms as f64 / 1000.0,
                serving_s: l.serving_ms as f64 / 1000.0,
                down_s: l.down_ms as f64 / 1000.0,
                idle_s: l.idle_ms as f64 / 1000.0,
                crash_to_ready_s: l
                    .crash_to_ready_ms
                    .iter()
                    .map(|&m| m as f64 / 1000.0)
                    .collect(),
                startup_phases_s: PhasesReport::from(&l.phases),
            })
            .collect(),
        startup_phases_s: PhasesReport::from(&phases),
        held_h: hours(held),
        starting_h: hours(starting),
        serving_h: hours(serving),
        down_h: hours(down),
        idle_h: hours(idle),
        summary,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(ts: i64) -> Setting {
        Setting {
            ts,
            key: "tp_size".into(),
            value: "1".into(),
        }
    }

    fn ev(ts: i64, kind: EventKind) -> EventPoint {
        EventPoint { ts, kind, count: 1 }
    }

    /// Start-up, serving, a crash and a restart: each stretch where it belongs.
    #[test]
    fn start_crash_restart() {
        let s = 1000;
        let l = life(
            (0, 3600 * s),
            Some(700 * s),
            &[setting(0), setting(2000 * s)],
            &[
                ev(600 * s, EventKind::ServerReady),
                ev(1900 * s, EventKind::Crash),
                ev(1901 * s, EventKind::CudaOom),
                ev(2300 * s, EventKind::ServerReady),
            ],
            2000 * s,
        );
        assert_eq!(l.starts, 2);
        assert_eq!(l.ready, Some(600 * s));
        assert_eq!(l.starting_ms, 900 * s);
        assert_eq!(l.crash_to_ready_ms, vec![400 * s]);
        // down from the crash (1900 s) to the restart (2000 s); before issue 40 this was idle
        assert_eq!(l.down_ms, 100 * s);
        assert_eq!(l.idle_ms, 600 * s);
    }

    fn keyed(ts: i64, key: &str) -> Setting {
        Setting {
            ts,
            key: key.into(),
            value: "1".into(),
        }
    }

    /// Each start-up's phases end at their first marks, in order; a missing mark leaves its
    /// phase to the next, marks out of order or after ready are not phases, and a start-up
    /// never ready has none.
    #[test]
    fn startup_phases() {
        let l = life(
            (0, 1_000_000),
            Some(200_000),
            &[
                setting(0),
                keyed(30_000, "model_type"),
                keyed(35_000, "kv_cache_tokens"),
                // (SGLang's max_total_num_tokens comes after the graphs: not the KV mark)
                keyed(61_000, "max_total_num_tokens"),
                // a second start: no weights line, graphs before the KV line
                setting(500_000),
                keyed(560_000, "num_gpu_blocks"),
                // the third start never becomes ready
                setting(900_000),
            ],
            &[
                ev(60_000, EventKind::GraphsCaptured),
                ev(65_000, EventKind::ServerReady),
                ev(540_000, EventKind::GraphsCaptured),
                ev(600_000, EventKind::ServerReady),
                ev(950_000, EventKind::WeightsLoaded),
            ],
            100_000,
        );
        assert_eq!(l.starts, 3);
        assert_eq!(
            l.phases,
            Phases {
                // 30 s; then the second start: none
                weights: Some(30_000),
                // 5 s; then 60 s (500 → 560, the graphs mark before it is passed over)
                kv_cache: Some(65_000),
                // 25 s
                graphs: Some(25_000),
                // 5 s, and 40 s
                other: Some(45_000),
            }
        );
        assert_eq!(
            phases_in_words(&l.phases).unwrap(),
            "weights 30s, KV cache 1m 05s, graphs 25s, rest 45s"
        );
        assert_eq!(phases_in_words(&Phases::default()), None);
    }

    /// A log that starts mid-run has no start-up; one never ready is starting to its end.
    #[test]
    fn mid_run_and_crash_loop() {
        let l = life((0, 100_000), Some(0), &[], &[], 80_000);
        assert_eq!((l.starts, l.starting_ms, l.idle_ms), (0, 0, 20_000));
        let l = life(
            (0, 100_000),
            None,
            &[setting(0), setting(40_000)],
            &[ev(30_000, EventKind::Crash)],
            0,
        );
        // a start-up to the crash (30 s), down to the next (10 s), that one to the end (60 s)
        assert_eq!(
            (l.starts, l.starting_ms, l.down_ms, l.idle_ms),
            (2, 90_000, 10_000, 0)
        );
        assert!(l.crash_to_ready_ms.is_empty());
        // a crash with nothing after it: down to the end of the log
        let l = life(
            (0, 100_000),
            Some(10_000),
            &[setting(0)],
            &[
                ev(5_000, EventKind::ServerReady),
                ev(70_000, EventKind::Crash),
            ],
            50_000,
        );
        assert_eq!((l.down_ms, l.idle_ms), (30_000, 15_000));
    }
}
