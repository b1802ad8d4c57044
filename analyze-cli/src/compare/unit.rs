//! One side of a comparison — a run, or a segment of one — as every part of `compare` reads
//! it (the figures, the summary, the sweep).

use crate::analysis::hints::Hint;
use crate::report::{Report, Samples, TimelineRow};
use std::collections::BTreeMap;

/// One side of a comparison: a run, or a segment of one.
pub struct Unit<'a> {
    pub label: String,
    pub inputs: Vec<String>,
    pub report: &'a Report,
    /// Per-request values (none for a segment: requests are not placed in time).
    pub samples: Option<&'a Samples>,
    /// The steady buckets of the run's total timeline (a segment's: those in its window).
    pub steady: Vec<&'a TimelineRow>,
    /// The steady rate as the report states it: the run's `steady.gen_tps`, a segment's
    /// `gen_tps`.
    pub steady_gen_tps: Option<f64>,
    /// Why the run has no steady rate, where its trend test found a drift or a ramp (its
    /// steady throughput is then not compared).
    pub no_steady: Option<String>,
    /// Start-up settings: per key, the distinct values.
    pub settings: BTreeMap<String, Vec<String>>,
    pub engines: Vec<String>,
    pub instances: usize,
    /// Running requests at the knee of the curve.
    pub knee: Option<f64>,
    /// The knee's 95% interval (the curve's bootstrap), where it has an upper bound.
    pub knee_interval: Option<crate::analysis::statistics::ConfidenceInterval>,
    pub hints: Vec<&'a Hint>,
}
