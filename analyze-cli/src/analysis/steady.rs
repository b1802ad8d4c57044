//! Steady state: the part of a run between ramp-up and drain.
//!
//! A generation job ramps up while clients connect and the batch fills, holds a plateau, and
//! drains while the last long requests finish alone. The plateau level is the median of the
//! buckets running at least half the 90th-percentile rate (so that neither the idle edges nor
//! a few bursty buckets move it); ramp-up ends at the first bucket reaching
//! [`PLATEAU_SHARE`] of that level and drain starts after the last one. The steady rate is
//! the mean over that window; the peak is the best mean over any window of
//! [`PEAK_WINDOW_MS`] (at least one bucket). Means are weighted by the time each bucket was
//! served (its weight): tokens over time, so that a bucket the run covers for a second counts
//! for a second.

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
    /// The window's weight: the time it was served, in the weights' unit.
    pub weight: f64,
    /// The plateau level it was found from.
    pub level: f64,
}

/// Finds the steady window of `rates` (one per bucket, weighed by `weights`), or `None`
/// when nothing ran.
pub fn find(rates: &[f64], weights: &[f64]) -> Option<Steady> {
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
    let rate = weighted(&rates[start..end], &weights[start..end]);
    Some(Steady {
        start,
        end,
        rate,
        weight: terms(&rates[start..end], &weights[start..end])
            .map(|t| t.1)
            .sum(),
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

/// The mean of the finite `rates` weighed by `weights` (0 when none weighs).
pub fn weighted(rates: &[f64], weights: &[f64]) -> f64 {
    let (s, n) = terms(rates, weights).fold((0.0, 0.0), |(s, n), (x, w)| (s + x, n + w));
    if n > 0.0 {
        s / n
    } else {
        0.0
    }
}

/// Each bucket's rate × weight and weight (0 and 0 for a rate that is not a number).
fn terms<'a>(rates: &'a [f64], weights: &'a [f64]) -> impl Iterator<Item = (f64, f64)> + 'a {
    rates.iter().zip(weights).map(|(&r, &w)| {
        if r.is_finite() && w.is_finite() && w > 0.0 {
            (r * w, w)
        } else {
            (0.0, 0.0)
        }
    })
}

/// The best weighted mean over `w` consecutive buckets: `(first bucket, rate)`.
pub fn peak(rates: &[f64], weights: &[f64], w: usize) -> Option<(usize, f64)> {
    let w = w.clamp(1, rates.len().max(1));
    if rates.len() < w {
        return None;
    }
    let v: Vec<(f64, f64)> = terms(rates, weights).collect();
    let rate = |from: usize| weighted(&rates[from..from + w], &weights[from..from + w]);
    let (mut sum, mut best) = (0.0, (0, f64::MIN));
    // (the window sums slide; the best window's mean is taken again from its own buckets)
    let mut weight = 0.0;
    for i in 0..v.len() {
        sum += v[i].0;
        weight += v[i].1;
        if i >= w {
            sum -= v[i - w].0;
            weight -= v[i - w].1;
        }
        if i + 1 >= w {
            let m = if weight > 0.0 { sum / weight } else { 0.0 };
            if m > best.1 {
                best = (i + 1 - w, m);
            }
        }
    }
    Some((best.0, rate(best.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ramp_plateau_drain() {
        let mut r = vec![0.0, 100.0, 500.0, 950.0];
        r.extend([1000.0, 1010.0, 990.0, 1000.0, 1005.0, 995.0]);
        r.extend([700.0, 300.0, 50.0, 0.0]);
        let full = vec![1.0; r.len()];
        let s = find(&r, &full).unwrap();
        assert_eq!((s.start, s.end), (3, 10));
        assert!((s.rate - 6950.0 / 7.0).abs() < 1e-9);
        assert_eq!(peak(&r, &full, 2), Some((4, 1005.0)));
        assert_eq!(find(&[0.0, 0.0], &[1.0, 1.0]), None);
    }

    /// A bucket served for part of its time weighs that much: a second at 1,200 tok/s
    /// beside 15 s at 1,000 is a mean of 1,012.5, not 1,100.
    #[test]
    fn means_weigh_buckets_by_their_time_served() {
        let (r, w) = ([1200.0, 1000.0, f64::NAN], [1.0, 15.0, 0.0]);
        let s = find(&r, &w).unwrap();
        assert_eq!((s.start, s.end), (0, 2));
        assert_eq!(s.rate, 1012.5);
        assert_eq!(peak(&r, &w, 1), Some((0, 1200.0)));
        assert_eq!(peak(&r, &w, 2), Some((0, 1012.5)));
        assert_eq!(weighted(&[f64::NAN], &[3.0]), 0.0);
    }
}
