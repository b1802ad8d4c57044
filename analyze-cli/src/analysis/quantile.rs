//! Distribution summaries.

use serde::Serialize;

/// p50 / p90 / p95 / p99 / max / mean of a sample; quantiles interpolate linearly between
/// order statistics (numpy's default, DuckDB's `quantile_cont`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
    pub mean: f64,
}

/// Quantile `q` (0–1) of sorted `v`.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Summary {
    /// Summarises `v` (sorted in place). None when empty.
    pub fn of(v: &mut [f64]) -> Option<Summary> {
        if v.is_empty() {
            return None;
        }
        v.sort_unstable_by(f64::total_cmp);
        let sum: f64 = v.iter().sum();
        Some(Summary {
            count: v.len() as u64,
            p50: quantile(v, 0.5),
            p90: quantile(v, 0.9),
            p95: quantile(v, 0.95),
            p99: quantile(v, 0.99),
            max: v[v.len() - 1],
            mean: sum / v.len() as f64,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_like_numpy() {
        let mut v: Vec<f64> = (1..=10).map(f64::from).collect();
        let s = Summary::of(&mut v).unwrap();
        assert_eq!((s.p50, s.p90, s.max, s.mean), (5.5, 9.1, 10.0, 5.5));
        assert!((s.p99 - 9.91).abs() < 1e-12);
        assert_eq!(Summary::of(&mut []), None);
    }
}
