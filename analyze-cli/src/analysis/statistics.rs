//! The statistics behind `compare`'s verdicts: intervals at 95% for the change of a figure
//! between two runs, each fitted to what its samples are.
//!
//! - **Throughput and load over time** (steady-state buckets of the timeline) are
//!   autocorrelated: a slow minute is followed by another, so `n` buckets hold fewer than `n`
//!   independent observations. Each mean gets an effective sample size from the series'
//!   lag-1 autocorrelation (an AR(1) fit, bias-corrected): `n (1 - ρ) / (1 + ρ)`, and its
//!   variance grows by the same factor. Treating neighbouring buckets as independent gives
//!   intervals far too narrow (the tests measure both). A moving-block bootstrap was tried
//!   first: with the few dozen steady buckets of a run it held the truth in only 80–84% of
//!   simulated pairs.
//! - **Per-request distributions** (output tokens, TTFT, TPOT, E2E) hold independent
//!   requests: each percentile gets its distribution-free interval from order statistics,
//!   the difference's interval combines the two (each side from its own half-width), and a
//!   Mann-Whitney rank test says whether one distribution is shifted against the other.
//! - **Proportions** (cap-hit, failures): Newcombe's hybrid score interval for the difference
//!   of two proportions (from Wilson intervals; sound near 0 and 1, unlike the Wald
//!   interval).
//!

/// The two-sided normal quantile of a 95% interval.
pub const Z95: f64 = 1.959_963_984_540_054;
/// Bootstrap resamples.
pub const RESAMPLES: usize = 2000;

/// An interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ConfidenceInterval {
    pub low: f64,
    pub high: f64,
}

impl ConfidenceInterval {
    /// Whether `v` lies outside.
    pub fn excludes(&self, v: f64) -> bool {
        v < self.low || v > self.high
    }
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Lag-1 autocorrelation of `v`, corrected for its small-sample bias (Kendall: an AR(1)
/// estimate with an estimated mean falls short by about `(1 + 3ρ) / n`), within `[0, 0.95]`.
pub fn persistence(v: &[f64]) -> f64 {
    let n = v.len();
    let m = mean(v);
    let var: f64 = v.iter().map(|x| (x - m) * (x - m)).sum();
    if n < 3 || var <= 0.0 {
        return 0.0;
    }
    let r: f64 = v.windows(2).map(|w| (w[0] - m) * (w[1] - m)).sum::<f64>() / var;
    (r + (1.0 + 3.0 * r) / n as f64).clamp(0.0, 0.95)
}

/// The variance of a mean of autocorrelated values, and their effective sample size: the
/// i.i.d. variance scaled by the AR(1) long-run factor `(1 + ρ) / (1 - ρ)`.
fn mean_variance(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = mean(v);
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
    let rho = persistence(v);
    let factor = (1.0 + rho) / (1.0 - rho);
    (var / n * factor, n / factor)
}

/// A series of columns measured over the same buckets (gen tok/s, running, …): a statistic
/// of their means (one column's mean, or the ratio of two) is compared between runs.
pub struct Buckets<'a> {
    pub columns: Vec<&'a [f64]>,
}

impl Buckets<'_> {
    fn len(&self) -> usize {
        self.columns.first().map_or(0, |c| c.len())
    }

    fn means(&self) -> Vec<f64> {
        self.columns.iter().map(|c| mean(c)).collect()
    }

    /// The statistic, the variance of its estimate and its effective sample size: the
    /// statistic is linearised around the means (its influence series, with numerical
    /// derivatives), whose mean has the variance of an autocorrelated mean.
    fn estimate(&self, stat: &impl Fn(&[f64]) -> f64) -> Option<(f64, f64, f64)> {
        let m = self.means();
        let s = stat(&m);
        if !s.is_finite() {
            return None;
        }
        let grad: Vec<f64> = (0..m.len())
            .map(|j| {
                let h = m[j].abs().max(1.0) * 1e-6;
                let mut up = m.clone();
                up[j] += h;
                (stat(&up) - s) / h
            })
            .collect();
        let influence: Vec<f64> = (0..self.len())
            .map(|t| {
                self.columns
                    .iter()
                    .zip(&m)
                    .zip(&grad)
                    .map(|((c, mj), g)| g * (c[t] - mj))
                    .sum()
            })
            .collect();
        let (var, n_eff) = mean_variance(&influence);
        Some((s, var, n_eff))
    }
}

/// The ratio `stat(b) / stat(a)` of a statistic of column means, with its 95% interval from
/// effective sample sizes (see the module's doc): on the log scale, the two estimates'
/// variances add, and Student's t with Welch-Satterthwaite degrees of freedom (from the
/// effective sizes) gives the width. `None` when a run has fewer than 3 buckets or a
/// statistic is not positive.
pub fn ratio_interval(
    a: &Buckets<'_>,
    b: &Buckets<'_>,
    stat: impl Fn(&[f64]) -> f64,
) -> Option<(f64, ConfidenceInterval)> {
    if a.len() < 3 || b.len() < 3 {
        return None;
    }
    let (sa, va, na) = a.estimate(&stat)?;
    let (sb, vb, nb) = b.estimate(&stat)?;
    if !(sa > 0.0 && sb > 0.0) {
        return None;
    }
    // variances of the logs (delta method)
    let (la, lb) = (va / (sa * sa), vb / (sb * sb));
    let var = la + lb;
    let df = if var > 0.0 {
        var * var / (la * la / (na - 1.0).max(1.0) + lb * lb / (nb - 1.0).max(1.0))
    } else {
        f64::INFINITY
    };
    let ratio = sb / sa;
    let half = t95(df) * var.sqrt();
    Some((
        ratio,
        ConfidenceInterval {
            low: ratio * (-half).exp(),
            high: ratio * half.exp(),
        },
    ))
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (Cornish-Fisher
/// expansion around the normal; within 1% of the exact value from 3 degrees of freedom).
pub fn t95(df: f64) -> f64 {
    let df = df.max(3.0);
    let z = Z95;
    let (z3, z5) = (z.powi(3), z.powi(5));
    z + (z3 + z) / (4.0 * df) + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * df * df)
}

/// The 95% interval of the mean of autocorrelated values (its effective sample size from
/// their persistence), half its width: `None` below 3 values.
pub fn mean_half_width(v: &[f64]) -> Option<f64> {
    if v.len() < 3 {
        return None;
    }
    let (var, n_eff) = mean_variance(v);
    Some(t95(n_eff - 1.0) * var.sqrt()).filter(|h| h.is_finite())
}

/// The distribution-free 95% interval of quantile `q` of sorted `v`, from order statistics.
pub fn quantile_interval(sorted: &[f64], q: f64) -> Option<ConfidenceInterval> {
    let n = sorted.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let half = Z95 * (nf * q * (1.0 - q)).sqrt();
    let lo = ((nf * q - half).floor().max(1.0) as usize).min(n) - 1;
    let hi = ((nf * q + half).ceil().max(1.0) as usize).min(n) - 1;
    Some(ConfidenceInterval {
        low: sorted[lo],
        high: sorted[hi],
    })
}

/// The interval of `qb - qa`, two quantiles with their own intervals: each side of the
/// difference widened by the two half-widths on that side, in quadrature.
pub fn difference_interval(
    qa: f64,
    ia: ConfidenceInterval,
    qb: f64,
    ib: ConfidenceInterval,
) -> ConfidenceInterval {
    let d = qb - qa;
    let below = ((qb - ib.low).powi(2) + (ia.high - qa).powi(2)).sqrt();
    let above = ((ib.high - qb).powi(2) + (qa - ia.low).powi(2)).sqrt();
    ConfidenceInterval {
        low: d - below,
        high: d + above,
    }
}

/// Mann-Whitney U test (normal approximation with the tie correction): the two-sided p
/// value that `a` and `b` come from the same distribution. `None` for fewer than 2 values.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<f64> {
    let (n1, n2) = (a.len(), b.len());
    if n1 < 2 || n2 < 2 {
        return None;
    }
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, false))
        .chain(b.iter().map(|&x| (x, true)))
        .collect();
    all.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len() as f64;
    let (mut rank_b, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let rank = (i + j) as f64 / 2.0 + 1.0;
        rank_b += rank * all[i..=j].iter().filter(|x| x.1).count() as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let (n1, n2) = (n1 as f64, n2 as f64);
    let u = rank_b - n2 * (n2 + 1.0) / 2.0;
    let mu = n1 * n2 / 2.0;
    let sigma = (n1 * n2 / 12.0 * ((n + 1.0) - ties / (n * (n - 1.0)))).sqrt();
    if sigma <= 0.0 {
        return Some(1.0);
    }
    // continuity correction
    let z = ((u - mu).abs() - 0.5).max(0.0) / sigma;
    Some((2.0 * normal_tail(z)).min(1.0))
}

/// `P(Z > z)` for a standard normal `Z` (Abramowitz & Stegun 7.1.26 on erfc, |error| < 1.5e-7).
pub fn normal_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    if x >= 0.0 {
        erfc / 2.0
    } else {
        1.0 - erfc / 2.0
    }
}

/// The Wilson score interval of `x` successes in `n`.
pub fn wilson(x: u64, n: u64) -> Option<ConfidenceInterval> {
    if n == 0 {
        return None;
    }
    let (nf, p) = (n as f64, x as f64 / n as f64);
    let z2 = Z95 * Z95;
    let centre = (p + z2 / (2.0 * nf)) / (1.0 + z2 / nf);
    let half = Z95 / (1.0 + z2 / nf) * (p * (1.0 - p) / nf + z2 / (4.0 * nf * nf)).sqrt();
    Some(ConfidenceInterval {
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    })
}

/// Newcombe's hybrid score interval for `pb - pa`, proportions `xa / na` and `xb / nb`.
pub fn proportion_difference(
    xa: u64,
    na: u64,
    xb: u64,
    nb: u64,
) -> Option<(f64, ConfidenceInterval)> {
    let (ia, ib) = (wilson(xa, na)?, wilson(xb, nb)?);
    let (pa, pb) = (xa as f64 / na as f64, xb as f64 / nb as f64);
    let d = pb - pa;
    Some((
        d,
        ConfidenceInterval {
            low: d - ((pb - ib.low).powi(2) + (ia.high - pa).powi(2)).sqrt(),
            high: d + ((ib.high - pb).powi(2) + (pa - ia.low).powi(2)).sqrt(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::Xoshiro256PlusPlus;
    use rand::{RngExt, SeedableRng};

    /// An AR(1) series around `level`: each value keeps `phi` of the last one's deviation.
    fn ar1(rng: &mut Xoshiro256PlusPlus, n: usize, level: f64, phi: f64, sd: f64) -> Vec<f64> {
        let mut e = 0.0;
        (0..n)
            .map(|_| {
                // a normal draw from two uniforms (Box-Muller)
                let (u1, u2): (f64, f64) =
                    (rng.random_range(1e-12..1.0), rng.random_range(0.0..1.0));
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                e = phi * e + sd * z;
                level + e
            })
            .collect()
    }

    /// The interval holds the true ratio in about 95 of 100 pairs of autocorrelated series,
    /// where treating the buckets as independent holds it far less often.
    #[test]
    fn intervals_cover_the_true_ratio() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let (mut covered, mut iid_covered, runs) = (0, 0, 400);
        for _ in 0..runs {
            let a = ar1(&mut rng, 60, 1000.0, 0.7, 40.0);
            let b = ar1(&mut rng, 60, 1100.0, 0.7, 40.0);
            let (r, ci) = ratio_interval(
                &Buckets { columns: vec![&a] },
                &Buckets { columns: vec![&b] },
                |m| m[0],
            )
            .unwrap();
            covered += usize::from(!ci.excludes(1.1));
            // the same with the buckets taken as independent
            let var = |v: &[f64]| {
                let m = mean(v);
                v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 59.0 / 60.0 / (m * m)
            };
            let half = Z95 * (var(&a) + var(&b)).sqrt();
            iid_covered += usize::from((r * (-half).exp()..=r * half.exp()).contains(&1.1));
        }
        let share = covered as f64 / runs as f64;
        let iid = iid_covered as f64 / runs as f64;
        assert!((0.90..=0.99).contains(&share), "coverage {share}");
        assert!(iid < share - 0.2, "i.i.d. coverage {iid} against {share}");
    }

    /// A ratio of two columns (tokens per running request) keeps their pairing.
    #[test]
    fn ratios_of_columns() {
        let gen = [100.0, 120.0, 80.0, 110.0, 90.0];
        let running = [10.0, 12.0, 8.0, 11.0, 9.0];
        let (r, ci) = ratio_interval(
            &Buckets {
                columns: vec![&gen, &running],
            },
            &Buckets {
                columns: vec![&gen.map(|x| x * 1.5), &running],
            },
            |m| m[0] / m[1],
        )
        .unwrap();
        // per request exactly 10 in every bucket of a, 15 in b: no uncertainty at all
        assert!((r - 1.5).abs() < 1e-9);
        assert!((ci.high - ci.low).abs() < 1e-6, "{ci:?}");
    }

    /// Long series with mild persistence: the interval is not much wider than it must be.
    #[test]
    fn block_bootstrap_covers_long_series_too() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let runs = 100;
        let mut covered = 0;
        for _ in 0..runs {
            let a = ar1(&mut rng, 240, 1000.0, 0.3, 40.0);
            let b = ar1(&mut rng, 240, 1000.0, 0.3, 40.0);
            let (_, ci) = ratio_interval(
                &Buckets { columns: vec![&a] },
                &Buckets { columns: vec![&b] },
                |m| m[0],
            )
            .unwrap();
            covered += usize::from(!ci.excludes(1.0));
            assert!(ci.high - ci.low < 0.04, "{ci:?}");
        }
        assert!((88..=100).contains(&covered), "{covered} of {runs}");
    }

    #[test]
    fn t_quantiles() {
        // scipy.stats.t.ppf(0.975, df) for df = 5, 10, 30
        for (df, t) in [(5.0, 2.5706), (10.0, 2.2281), (30.0, 2.0423)] {
            assert!((t95(df) - t).abs() / t < 0.01, "{df}: {}", t95(df));
        }
    }

    #[test]
    fn persistence_is_found() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let white = ar1(&mut rng, 2000, 0.0, 0.0, 1.0);
        let sticky = ar1(&mut rng, 2000, 0.0, 0.8, 1.0);
        assert!(persistence(&white) < 0.05, "{}", persistence(&white));
        assert!(
            (persistence(&sticky) - 0.8).abs() < 0.05,
            "{}",
            persistence(&sticky)
        );
        assert_eq!(persistence(&[1.0, 2.0]), 0.0);
    }

    #[test]
    fn quantile_intervals_hold_the_quantile() {
        let v: Vec<f64> = (1..=1000).map(f64::from).collect();
        let i = quantile_interval(&v, 0.5).unwrap();
        assert!(
            i.low < 500.5 && i.high > 500.5 && i.high - i.low < 80.0,
            "{i:?}"
        );
        let d = difference_interval(
            500.0,
            i,
            600.0,
            ConfidenceInterval {
                low: 570.0,
                high: 630.0,
            },
        );
        assert!(d.low > 0.0 && d.high > 100.0, "{d:?}");
    }

    #[test]
    fn mann_whitney_against_known_values() {
        // identical samples: no evidence of a shift
        let a: Vec<f64> = (0..50).map(f64::from).collect();
        assert!(mann_whitney(&a, &a).unwrap() > 0.9);
        // scipy.stats.mannwhitneyu(range(25), range(100, 125), method="asymptotic"): 1.4157e-9
        let b: Vec<f64> = (100..125).map(f64::from).collect();
        let p = mann_whitney(&a[..25], &b).unwrap();
        assert!((p - 1.4157e-9).abs() < 1e-11, "{p}");
        // scipy.stats.mannwhitneyu([1,2,3,4,5], [3,4,5,6,7], method="asymptotic"): 0.113846
        let p = mann_whitney(&[1.0, 2.0, 3.0, 4.0, 5.0], &[3.0, 4.0, 5.0, 6.0, 7.0]).unwrap();
        assert!((p - 0.113_846).abs() < 1e-6, "{p}");
    }

    #[test]
    fn proportions() {
        // Newcombe (1998), example (b): 56/70 vs 48/80 → -0.2 [-0.3339, -0.0524] for pb - pa
        let (d, i) = proportion_difference(56, 70, 48, 80).unwrap();
        assert!((d + 0.2).abs() < 1e-12);
        assert!(
            (i.low + 0.3339).abs() < 5e-4 && (i.high + 0.0524).abs() < 5e-4,
            "{i:?}"
        );
        // Wilson at 0 successes stays inside [0, 1]
        let w = wilson(0, 20).unwrap();
        assert_eq!(w.low, 0.0);
        assert!((w.high - 0.1611).abs() < 5e-4, "{w:?}");
        assert!(normal_tail(1.959_964) - 0.025 < 1e-6);
    }
}
