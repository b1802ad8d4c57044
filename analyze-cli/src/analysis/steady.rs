//! Steady state: the part of a run between ramp-up and drain.
//!
//! A generation job ramps up while clients connect and the batch fills, holds a plateau, and
//! drains while the last long requests finish alone. The plateau level is the median of the
//! buckets running at least half the 90th-percentile rate (so that neither the idle edges nor
//! a few bursty buckets move it); ramp-up ends at the first bucket reaching
//! [`PLATEAU_SHARE`] of that level and drain starts after the last one. The steady rate is
//! the mean over that window; the peak is the best mean over any window of
//! [`PEAK_WINDOW_MS`] (at least one bucket).

use crate::analysis::quantile::quantile;

/// A bucket belongs to the plateau from this share of the plateau level.
pub const PLATEAU_SHARE: f64 = 0.9;
/// The window of the peak throughput.
pub const PEAK_WINDOW_MS: i64 = 60_000;

/// The steady window of a series of bucket rates: `[start, end)` bucket indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steady {
    pub start: usize,
    pub end: usize,
    /// Mean rate over the window.
    pub rate: f64,
    /// The plateau level it was found from.
    pub level: f64,
}

/// Finds the steady window of `rates` (one per bucket), or `None` when nothing ran.
pub fn find(rates: &[f64]) -> Option<Steady> {
    let mut busy: Vec<f64> = rates
        .iter()
        .copied()
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    if busy.is_empty() {
        return None;
    }
    busy.sort_unstable_by(f64::total_cmp);
    let p90 = quantile(&busy, 0.9);
    let plateau: Vec<f64> = busy.iter().copied().filter(|&r| r >= 0.5 * p90).collect();
    let level = quantile(&plateau, 0.5);
    let at = |r: &f64| *r >= PLATEAU_SHARE * level;
    let start = rates.iter().position(at)?;
    let end = rates.iter().rposition(at)? + 1;
    let rate = mean(&rates[start..end]);
    Some(Steady {
        start,
        end,
        rate,
        level,
    })
}

/// Mean of the finite values (0 when none).
pub fn mean(v: &[f64]) -> f64 {
    let (s, n) = v
        .iter()
        .filter(|x| x.is_finite())
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        s / n as f64
    }
}

/// The best mean over `w` consecutive buckets: `(first bucket, rate)`.
pub fn peak(rates: &[f64], w: usize) -> Option<(usize, f64)> {
    let w = w.clamp(1, rates.len().max(1));
    if rates.len() < w {
        return None;
    }
    let v: Vec<f64> = rates
        .iter()
        .map(|r| if r.is_finite() { *r } else { 0.0 })
        .collect();
    let mut sum: f64 = v[..w].iter().sum();
    let mut best = (0, sum);
    for i in w..v.len() {
        sum += v[i] - v[i - w];
        if sum > best.1 {
            best = (i + 1 - w, sum);
        }
    }
    Some((best.0, best.1 / w as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_plateau_drain() {
        let mut r = vec![0.0, 100.0, 500.0, 950.0];
        r.extend([1000.0, 1010.0, 990.0, 1000.0, 1005.0, 995.0]);
        r.extend([700.0, 300.0, 50.0, 0.0]);
        let s = find(&r).unwrap();
        assert_eq!((s.start, s.end), (3, 10));
        assert!((s.rate - 6950.0 / 7.0).abs() < 1e-9);
        assert_eq!(peak(&r, 2), Some((4, 1005.0)));
        assert_eq!(find(&[0.0, 0.0]), None);
    }
}
