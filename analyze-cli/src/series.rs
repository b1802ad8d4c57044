//! The time series of one instance, as the timeline, curve, segment and hint analyses need
//! them: one compact [`Point`] per stamped stats line, plus its events and start-up settings.
//!
//! Collected per chunk on all cores (like [`crate::summary`]) and appended in file order.
//! A point is 48 bytes, so a 1 GB log's five million stats lines cost about 250 MB; the
//! values an analysis never reads (`extra`, cached tokens, …) are not kept here — they stay
//! in the parsed records that `parse` and `export` write.

use tokstat_parsers::record::{Body, EventKind, Gauges, StepKind};
use tokstat_parsers::stamp::Ts;

/// What kind of stats line a point came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointKind {
    /// SGLang `Decode batch`, vLLM periodic stats: carries the generation throughput.
    Stats,
    /// SGLang `Prefill batch`: carries new prompt tokens.
    Prefill,
    /// Speculative-decoding metrics.
    Spec,
}

/// One stats line; absent values are NaN.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Milliseconds since 1970 (naive local time).
    pub ts: i64,
    pub gen_tps: f64,
    pub prompt_tps: f64,
    pub running: f32,
    pub waiting: f32,
    pub kv_usage: f32,
    pub accept_len: f32,
    /// New prompt tokens of a prefill batch (0 elsewhere).
    pub new_tokens: u32,
    pub kind: PointKind,
}

fn f<T: Into<f64>>(v: Option<T>) -> f64 {
    v.map_or(f64::NAN, Into::into)
}

impl Point {
    /// The point of a stats line, or `None` for kinds no analysis reads.
    pub fn of(ts: Ts, kind: StepKind, s: &Gauges) -> Option<Point> {
        let kind = match kind {
            StepKind::Decode | StepKind::Stats => PointKind::Stats,
            StepKind::Prefill => PointKind::Prefill,
            StepKind::Spec => PointKind::Spec,
            StepKind::Cache => return None,
        };
        Some(Point {
            ts: ts.0,
            gen_tps: f(s.gen_tps),
            prompt_tps: f(s.prompt_tps),
            running: s.running.map_or(f32::NAN, |v| v as f32),
            waiting: s.waiting.map_or(f32::NAN, |v| v as f32),
            kv_usage: f(s.kv_usage) as f32,
            accept_len: f(s.accept_len) as f32,
            new_tokens: s.new_tokens.unwrap_or(0).min(u64::from(u32::MAX)) as u32,
            kind,
        })
    }
}

/// A stamped event: retraction, preemption, error, out-of-memory, server start.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventPoint {
    pub ts: i64,
    pub kind: EventKind,
    /// Requests concerned (retracted requests), 1 when the line does not say.
    pub count: u64,
}

/// A configuration value read from a start-up line.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub ts: i64,
    pub key: String,
    pub value: String,
}

/// Everything stamped of one instance, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub points: Vec<Point>,
    pub events: Vec<EventPoint>,
    pub settings: Vec<Setting>,
}

impl Series {
    /// Adds one line (lines without a complete stamp cannot be placed in time).
    pub fn visit(&mut self, ts: Option<Ts>, body: &Body<'_>) {
        let Some(ts) = ts else { return };
        match body {
            Body::Step(s) => {
                if let Some(kind) = s.kind {
                    self.step(ts, kind, &s.gauges());
                }
            }
            Body::Event(e) => self.events.push(EventPoint {
                ts: ts.0,
                kind: e.kind,
                count: match e.kind {
                    EventKind::Retraction => e.count.unwrap_or(1),
                    _ => 1,
                },
            }),
            Body::Config(c) => self.settings.extend(c.pairs().map(|(k, v)| Setting {
                ts: ts.0,
                key: k.to_string(),
                value: v.to_string(),
            })),
            _ => {}
        }
    }

    /// Adds one stats line.
    #[inline]
    pub fn step(&mut self, ts: Ts, kind: StepKind, g: &Gauges) {
        let Some(p) = Point::of(ts, kind, g) else {
            return;
        };
        // prefill batches logged in the same stamp add up (only their tokens are read): a
        // third fewer points on busy SGLang logs
        if let Some(last) = self.points.last_mut() {
            if p.kind == PointKind::Prefill && last.kind == PointKind::Prefill && last.ts == p.ts {
                last.new_tokens = last.new_tokens.saturating_add(p.new_tokens);
                return;
            }
        }
        self.points.push(p);
    }

    /// Appends a later part of the same instance.
    pub fn append(&mut self, o: &Series) {
        self.points.extend_from_slice(&o.points);
        self.events.extend_from_slice(&o.events);
        self.settings.extend_from_slice(&o.settings);
    }

    /// Puts everything in time order (files of one instance may be given in any order);
    /// stable, so lines sharing a stamp keep their file order.
    pub fn sort(&mut self) {
        use rayon::prelude::*;
        // the check alone reads every point (20 ms for 3.8 M): on all cores
        let sorted = self.points.par_windows(2).all(|w| w[0].ts <= w[1].ts);
        if !sorted {
            self.points.sort_by_key(|p| p.ts);
        }
        if !self.events.is_sorted_by_key(|p| p.ts) {
            self.events.sort_by_key(|p| p.ts);
        }
        if !self.settings.is_sorted_by_key(|p| p.ts) {
            self.settings.sort_by_key(|p| p.ts);
        }
    }
}
