//! The knee of a sweep: runs at several loads, one point each — the load past which more of
//! it buys (almost) no throughput while latency grows.
//!
//! Points are ordered by load. The knee is the lowest load beyond which one more unit of
//! load adds less than [`MARGINAL`] of the rate per unit there, to every higher point, while
//! the latency (where the points have one) does not fall: the rule of one run's curve
//! (`curve::knee`) applied across runs. Its interval is a parametric bootstrap: each
//! resample draws every point's throughput from a normal distribution of its own interval's
//! width and finds the knee again; the 2.5th and 97.5th percentiles of the knee's place are
//! the interval (its upper end open when some resamples find no knee within the loads).

use crate::analysis::statistics::Z95;
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

/// One more unit of load must add at least this share of the rate per unit.
pub const MARGINAL: f64 = 0.10;
/// Resamples of the knee's interval.
pub const RESAMPLES: usize = 2000;
/// Points a sweep needs for a knee.
pub const MIN_POINTS: usize = 3;

/// One run of a sweep, as the knee sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub load: f64,
    pub tps: f64,
    /// The 95% interval of `tps` (none for a point figure).
    pub tps_ci: Option<(f64, f64)>,
    /// A latency that grows past the knee (TPOT p50, else TTFT p50), where known.
    pub latency: Option<f64>,
}

/// Where more load stops paying, with its interval: indices into the points (sorted by load).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Knee {
    pub at: usize,
    /// The interval's ends; `high` none when resamples find no knee within the loads seen.
    pub low: usize,
    pub high: Option<usize>,
    /// The share of resamples with a knee within the loads seen.
    pub found_share: f64,
}

/// The knee of points sorted by load, if one is within them.
pub fn knee_of(points: &[Point]) -> Option<usize> {
    knee_at(points, &points.iter().map(|p| p.tps).collect::<Vec<_>>())
}

fn knee_at(points: &[Point], tps: &[f64]) -> Option<usize> {
    if points.len() < MIN_POINTS {
        return None;
    }
    (0..points.len() - 1).find(|&i| {
        let (li, ti) = (points[i].load, tps[i]);
        if li <= 0.0 || ti <= 0.0 {
            return false;
        }
        let per_unit = ti / li;
        let flat = (i + 1..points.len()).all(|j| {
            let dl = points[j].load - li;
            dl > 0.0 && (tps[j] - ti) / dl < MARGINAL * per_unit
        });
        // latency grows (or holds) past the knee, where the points have one
        let slower = match (points[i].latency, points[i + 1].latency) {
            (Some(a), Some(b)) => b >= a,
            _ => true,
        };
        flat && slower
    })
}

/// The knee with its bootstrap interval; `None` when the points find none.
pub fn knee(points: &[Point]) -> Option<Knee> {
    let at = knee_of(points)?;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5eed_cafe);
    let se: Vec<f64> = points
        .iter()
        .map(|p| p.tps_ci.map_or(0.0, |(lo, hi)| (hi - lo) / (2.0 * Z95)))
        .collect();
    let mut places: Vec<usize> = Vec::with_capacity(RESAMPLES);
    let mut tps = vec![0.0; points.len()];
    for _ in 0..RESAMPLES {
        for (k, p) in points.iter().enumerate() {
            tps[k] = p.tps + se[k] * normal(&mut rng);
        }
        // (no knee within the loads: past the last point)
        places.push(knee_at(points, &tps).unwrap_or(points.len()));
    }
    places.sort_unstable();
    let q = |p: f64| places[((p * RESAMPLES as f64) as usize).min(RESAMPLES - 1)];
    let (low, high) = (q(0.025), q(0.975));
    Some(Knee {
        at,
        low: low.min(at),
        high: (high < points.len()).then_some(high.max(at)),
        found_share: places.iter().filter(|&&p| p < points.len()).count() as f64 / RESAMPLES as f64,
    })
}

/// A standard normal variate (Box-Muller).
fn normal(rng: &mut Xoshiro256PlusPlus) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(model: impl Fn(f64) -> f64, loads: &[f64], rel: f64) -> Vec<Point> {
        loads
            .iter()
            .map(|&l| {
                let t = model(l);
                Point {
                    load: l,
                    tps: t,
                    tps_ci: Some((t * (1.0 - rel), t * (1.0 + rel))),
                    latency: Some(l / t),
                }
            })
            .collect()
    }

    /// A server whose step takes `0.012 + 0.0003 × running` s: one more request adds less than
    /// a tenth of a request's rate past 360 running. Loads up to 128 hold no knee; up to
    /// 1024, the knee is 256, the first load from which every higher point adds less than a
    /// tenth of the rate per request there (256 → 512 adds 0.82 tok/s a request, against
    /// 11.3 per request at 256), its interval about it.
    #[test]
    fn the_knee_of_a_saturating_server() {
        let model = |r: f64| r / (0.012 + 0.0003 * r);
        let low = pts(model, &[8.0, 16.0, 32.0, 64.0, 128.0], 0.01);
        assert_eq!(knee(&low), None);
        let wide = pts(model, &[8.0, 32.0, 128.0, 256.0, 512.0, 1024.0], 0.01);
        let k = knee(&wide).unwrap();
        assert_eq!(wide[k.at].load, 256.0);
        assert!(k.low <= k.at && k.high.is_some_and(|h| h >= k.at), "{k:?}");
        assert!(k.found_share > 0.9, "{k:?}");
        // noisier points widen the interval, never narrow it
        let noisy = pts(model, &[8.0, 32.0, 128.0, 256.0, 512.0, 1024.0], 0.08);
        let kn = knee(&noisy).unwrap();
        assert!(
            kn.low <= k.low && kn.high.unwrap_or(usize::MAX) >= k.high.unwrap(),
            "{kn:?}"
        );
        // too few points
        assert_eq!(knee_of(&wide[..2]), None);
    }
}
