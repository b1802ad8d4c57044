//! A sweep: the compared runs as points of one curve — each run's load, its steady
//! throughput and (where its inputs have them) its latencies, each with its interval — and
//! the knee across them ([`crate::analysis::sweep`]), or why there is none.

use super::figures::{bench_point, gen, LATENCIES};
use super::unit::Unit;
use crate::analysis::quantile::quantile;
use crate::analysis::statistics::{mean_half_width, quantile_interval};
use crate::analysis::sweep::{self, Point, MARGINAL, MIN_POINTS};
use serde::Serialize;

/// The sweep section of a comparison.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// What the load is: `running` (mean running requests over the steady window),
    /// `concurrency` (the client's), or `request_rate` (requests/s the client sent).
    pub load: &'static str,
    /// The runs by load.
    pub points: Vec<SweepPoint>,
    /// The knee: where one more unit of load adds less than `marginal` of the rate per unit,
    /// to every higher point, while latency grows.
    pub knee: Option<SweepKnee>,
    /// `found`, `not_within_loads` (no knee within the loads seen), or `too_few_points`.
    pub knee_verdict: &'static str,
    pub marginal: f64,
    /// What the verdict rests on, in words.
    pub note: String,
}

/// A run of a sweep.
#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    pub label: String,
    pub load: f64,
    /// The steady rate (the run's own; a benchmark's output throughput), tok/s, with its
    /// 95% interval where the buckets give one.
    pub gen_tps: Option<f64>,
    pub gen_tps_low: Option<f64>,
    pub gen_tps_high: Option<f64>,
    /// Why the run has no steady rate (its trend test), if so: it takes no part in the knee.
    pub no_steady: Option<String>,
    /// Latencies, ms: p50 and p99 of TTFT, TPOT and ITL with their intervals.
    pub latencies: Vec<Latency>,
}

/// A latency quantile of a point.
#[derive(Debug, Clone, Serialize)]
pub struct Latency {
    /// `TTFT p50`, `TPOT p99`, …
    pub name: &'static str,
    pub ms: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// The knee of a sweep, with its interval (runs by label; `high` null when some resamples
/// find no knee within the loads seen).
#[derive(Debug, Clone, Serialize)]
pub struct SweepKnee {
    pub label: String,
    pub load: f64,
    pub gen_tps: f64,
    pub low_label: String,
    pub low_load: f64,
    pub high_label: Option<String>,
    pub high_load: Option<f64>,
    /// The share of bootstrap resamples with a knee within the loads seen.
    pub found_share: f64,
}

/// The load of a run, by kind.
fn load(u: &Unit<'_>, kind: &str) -> Option<f64> {
    match kind {
        "running" => {
            let v: Vec<f64> = u.steady.iter().filter_map(|r| r.running).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        }
        "concurrency" => bench_point(u, |b| b.max_concurrency),
        _ => bench_point(u, |b| b.request_rate),
    }
}

/// The sweep of three runs or more; `None` for fewer, for runs whose loads cannot be put on
/// one axis, or for runs at one load (within 5%: seeds of one configuration).
pub fn of(units: &[Unit<'_>]) -> Option<Sweep> {
    if units.len() < MIN_POINTS {
        return None;
    }
    let kind = ["running", "concurrency", "request_rate"]
        .into_iter()
        .find(|k| units.iter().all(|u| load(u, k).is_some()))?;
    let mut points: Vec<SweepPoint> = units.iter().map(|u| point(u, kind)).collect();
    points.sort_by(|a, b| a.load.total_cmp(&b.load));
    // runs at one load (seeds of one configuration) are no curve
    let (lo, hi) = (points[0].load, points[points.len() - 1].load);
    if hi.is_nan() || hi <= lo * 1.05 {
        return None;
    }
    let usable: Vec<(usize, Point)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            Some((
                i,
                Point {
                    load: p.load,
                    tps: p.gen_tps.filter(|_| p.no_steady.is_none())?,
                    tps_ci: p.gen_tps_low.zip(p.gen_tps_high),
                    latency: ["TPOT p50", "TTFT p50"]
                        .iter()
                        .find_map(|n| p.latencies.iter().find(|l| l.name == *n))
                        .map(|l| l.ms),
                },
            ))
        })
        .collect();
    let left_out: Vec<&str> = points
        .iter()
        .filter(|p| p.no_steady.is_some() || p.gen_tps.is_none())
        .map(|p| p.label.as_str())
        .collect();
    let pts: Vec<Point> = usable.iter().map(|u| u.1).collect();
    let k = sweep::knee(&pts);
    let label = |i: usize| points[usable[i].0].label.clone();
    let knee = k.map(|k| SweepKnee {
        label: label(k.at),
        load: pts[k.at].load,
        gen_tps: pts[k.at].tps,
        low_label: label(k.low),
        low_load: pts[k.low].load,
        high_label: k.high.map(label),
        high_load: k.high.map(|h| pts[h].load),
        found_share: k.found_share,
    });
    let verdict = if pts.len() < MIN_POINTS {
        "too_few_points"
    } else if knee.is_some() {
        "found"
    } else {
        "not_within_loads"
    };
    let mut note = match (&knee, pts.as_slice()) {
        (Some(k), _) => format!(
            "knee at {} ({} {:.1}, {:.0} tok/s), 95% interval [{}, {}]: past it one more unit of load adds less than {:.0}% of the rate per unit",
            k.label,
            kind.replace('_', " "),
            k.load,
            k.gen_tps,
            k.low_label,
            k.high_label.as_deref().unwrap_or("beyond the loads seen"),
            MARGINAL * 100.0
        ),
        (None, [.., a, b]) if verdict == "not_within_loads" && b.load > a.load => format!(
            "no knee within the loads seen: from {:.1} to {:.1} one more unit of load still adds {:.0}% of the rate per unit (a knee needs under {:.0}%)",
            a.load,
            b.load,
            (b.tps - a.tps) / (b.load - a.load) / (a.tps / a.load) * 100.0,
            MARGINAL * 100.0
        ),
        _ => format!(
            "too few runs with a steady rate for a knee ({} of {MIN_POINTS} needed)",
            pts.len()
        ),
    };
    if !left_out.is_empty() {
        note.push_str(&format!(
            "; left out of the knee (no steady rate): {}",
            left_out.join(", ")
        ));
    }
    Some(Sweep {
        load: kind,
        points,
        knee,
        knee_verdict: verdict,
        marginal: MARGINAL,
        note,
    })
}

fn point(u: &Unit<'_>, kind: &str) -> SweepPoint {
    let (tps, half) = match u.steady_gen_tps {
        Some(t) => {
            let rates: Vec<f64> = u.steady.iter().filter_map(|r| gen(r)).collect();
            (Some(t), mean_half_width(&rates))
        }
        // a result file's output throughput, where the run has no server logs
        None if u.no_steady.is_none() => (bench_point(u, |b| b.output_throughput), None),
        None => (None, None),
    };
    let mut latencies = Vec::new();
    // (TTFT, TPOT and ITL: a sweep's latencies)
    for &(p50, p99, values, point50, point99) in &LATENCIES[..3] {
        let mut v = values(u);
        v.sort_by(f64::total_cmp);
        for (name, q, point) in [(p50, 0.5, point50), (p99, 0.99, point99)] {
            if v.len() >= 2 {
                let ci = quantile_interval(&v, q);
                latencies.push(Latency {
                    name,
                    ms: quantile(&v, q),
                    low: ci.map(|c| c.low),
                    high: ci.map(|c| c.high),
                });
            } else if let Some(ms) = point(u) {
                latencies.push(Latency {
                    name,
                    ms,
                    low: None,
                    high: None,
                });
            }
        }
    }
    SweepPoint {
        label: u.label.clone(),
        load: load(u, kind).unwrap_or(f64::NAN),
        gen_tps: tps,
        gen_tps_low: tps.zip(half).map(|(t, h)| t - h),
        gen_tps_high: tps.zip(half).map(|(t, h)| t + h),
        no_steady: u.no_steady.clone(),
        latencies,
    }
}
