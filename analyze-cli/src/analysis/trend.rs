//! Whether a steady window is steady: a trend test of its bucket rates.
//!
//! The window's rates are fitted with a straight line by weighted least squares (each
//! bucket weighs the time it was served). Neighbouring buckets of a log are not independent —
//! a batch of long requests spans several — so the slope's standard error is widened by the
//! residuals' lag-1 autocorrelation ρ (bias-corrected, as `statistics` estimates it for the
//! comparisons' intervals): the effective number of buckets is
//! `n (1 − ρ) / (1 + ρ)` (an AR(1) model of the noise, as in Santer et al. 2000, "Statistical
//! significance of trends and trend differences in layer-average atmospheric temperature time
//! series"), and the interval takes Student's t on `n_eff − 2` degrees of freedom.
//!
//! The verdict: the window **drifts** when the slope's 95% interval excludes zero and the
//! fitted change over the window is beyond [`BOUND`] of its mean rate; a drifting window that
//! rises to the end of its segment is a run **still ramping** when the log (or segment)
//! ends; a change beyond the bound whose interval holds zero is **uncertain** (too noisy to
//! tell). Fewer than [`MIN_BUCKETS`] buckets, or fewer than [`MIN_EFFECTIVE`] effective ones,
//! are **too little data** to tell, and said so. Otherwise — a fitted change within the
//! bound — the window is **steady**.

use crate::analysis::statistics::{persistence, t95};
use serde::Serialize;

/// A change over the window beyond this share of its mean rate is a drift: the plateau's
/// own tolerance (a window holds the buckets from `PLATEAU_SHARE` (90%) of its level, so a change
/// within `1 − PLATEAU_SHARE` is inside its definition).
pub const BOUND: f64 = 0.1;
/// Buckets a window needs for the test.
pub const MIN_BUCKETS: usize = 10;
/// Effective (independent) buckets the test needs.
pub const MIN_EFFECTIVE: f64 = 5.0;

/// What the test finds of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// No drift beyond the bound: the window's mean is the steady rate.
    Steady,
    /// The rate rises or falls along the window beyond the bound.
    Drifting,
    /// The rate rises to the window's end, which is the segment's end: still ramping up.
    Ramping,
    /// The fitted change is beyond the bound but not significant: too noisy to tell a drift
    /// from a steady rate, so no steady rate either.
    Uncertain,
    /// Too few buckets to test.
    TooLittleData,
}

impl Verdict {
    /// Whether the window's mean stands as a steady rate: tested steady, or too short to
    /// test (and said so); not where it drifts, ramps, or changes beyond the bound too
    /// noisily to tell.
    pub fn steady(self) -> bool {
        matches!(self, Verdict::Steady | Verdict::TooLittleData)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Steady => "steady",
            Verdict::Drifting => "drifting",
            Verdict::Ramping => "ramping",
            Verdict::Uncertain => "uncertain",
            Verdict::TooLittleData => "too_little_data",
        }
    }
}

/// The trend of a window's rates.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    pub verdict: Verdict,
    /// The test's name (docs/report.md).
    pub test: &'static str,
    /// Buckets with a rate, and how many independent ones they count for.
    pub buckets: usize,
    pub effective_buckets: f64,
    /// Lag-1 autocorrelation of the residuals.
    pub autocorrelation: f64,
    /// The slope, relative to the window's mean rate, per hour, with its 95% interval
    /// (null where there are too few buckets to estimate it).
    pub slope_per_h: Option<f64>,
    pub slope_low_per_h: Option<f64>,
    pub slope_high_per_h: Option<f64>,
    /// The fitted change from the window's start to its end, relative to its mean.
    pub change: Option<f64>,
    /// The fitted line's rate at the window's start and end, tok/s.
    pub start_rate: Option<f64>,
    pub end_rate: Option<f64>,
    /// The window's length, seconds.
    pub span_s: f64,
    /// The change beyond which the window drifts (relative).
    pub bound: f64,
}

/// The name of the test, as JSON gives it.
pub const TEST: &str = "wls_slope_ar1_effective_n";

/// Tests the rates of a window (`rates[k]` over bucket `k`, `bucket_s` seconds each,
/// weighed by `weights[k]`), `at_end` when the window ends where its segment does.
pub fn test(rates: &[f64], weights: &[f64], bucket_s: f64, at_end: bool) -> Trend {
    let pts: Vec<(f64, f64, f64)> = rates
        .iter()
        .zip(weights)
        .enumerate()
        .filter(|(_, (r, w))| r.is_finite() && w.is_finite() && **w > 0.0)
        .map(|(k, (&r, &w))| ((k as f64 + 0.5) * bucket_s, r, w))
        .collect();
    let span_s = rates.len() as f64 * bucket_s;
    let mut t = Trend {
        verdict: Verdict::TooLittleData,
        test: TEST,
        buckets: pts.len(),
        effective_buckets: pts.len() as f64,
        autocorrelation: 0.0,
        slope_per_h: None,
        slope_low_per_h: None,
        slope_high_per_h: None,
        change: None,
        start_rate: None,
        end_rate: None,
        span_s,
        bound: BOUND,
    };
    if pts.len() < 3 {
        return t;
    }
    let sw: f64 = pts.iter().map(|p| p.2).sum();
    let mt = pts.iter().map(|p| p.0 * p.2).sum::<f64>() / sw;
    let mr = pts.iter().map(|p| p.1 * p.2).sum::<f64>() / sw;
    let stt = pts.iter().map(|p| p.2 * (p.0 - mt).powi(2)).sum::<f64>() / sw;
    let str_ = pts
        .iter()
        .map(|p| p.2 * (p.0 - mt) * (p.1 - mr))
        .sum::<f64>()
        / sw;
    if stt <= 0.0 || mr <= 0.0 {
        return t;
    }
    let b = str_ / stt;
    let resid: Vec<f64> = pts.iter().map(|p| p.1 - (mr + b * (p.0 - mt))).collect();
    let see = pts
        .iter()
        .zip(&resid)
        .map(|(p, e)| p.2 * e * e)
        .sum::<f64>()
        / sw;
    let rho = persistence(&resid);
    let n = pts.len() as f64;
    let n_eff = n * (1.0 - rho) / (1.0 + rho);
    t.autocorrelation = rho;
    t.effective_buckets = n_eff;
    let per_h = 3600.0 / mr;
    t.slope_per_h = Some(b * per_h);
    t.change = Some(b * span_s / mr);
    t.start_rate = Some(mr - b * mt);
    t.end_rate = Some(mr + b * (span_s - mt));
    if pts.len() < MIN_BUCKETS || n_eff < MIN_EFFECTIVE {
        return t;
    }
    let se = (see / ((n_eff - 2.0) * stt)).sqrt();
    let half = t95(n_eff - 2.0) * se;
    let (lo, hi) = (b - half, b + half);
    t.slope_low_per_h = Some(lo * per_h);
    t.slope_high_per_h = Some(hi * per_h);
    let significant = lo > 0.0 || hi < 0.0;
    let beyond = (b * span_s / mr).abs() > BOUND;
    t.verdict = match (significant, beyond, b > 0.0 && at_end) {
        (_, false, _) => Verdict::Steady,
        (false, true, _) => Verdict::Uncertain,
        (true, true, true) => Verdict::Ramping,
        (true, true, false) => Verdict::Drifting,
    };
    t
}

impl Trend {
    /// The verdict in words: `throughput falls 10.2%/h [9.1%, 11.3%]`, or why there is none.
    pub fn describe(&self) -> String {
        let slope = self.slope().unwrap_or_default();
        match self.verdict {
            Verdict::Steady => format!(
                "steady: no drift beyond ±{:.0}% ({} over {})",
                self.bound * 100.0,
                signed_pct(self.change),
                duration(self.span_s)
            ),
            Verdict::Drifting => format!("no steady state: {slope}"),
            Verdict::Ramping => format!("no steady state: still ramping up at the end, {slope}"),
            Verdict::Uncertain => format!(
                "no steady state shown: the rate changes {} over {}, beyond ±{:.0}%, too noisily to tell a drift ({slope})",
                signed_pct(self.change),
                duration(self.span_s),
                self.bound * 100.0
            ),
            Verdict::TooLittleData => format!(
                "not tested: {} bucket(s) ({:.1} independent) are too few to tell a drift (the test needs {MIN_BUCKETS})",
                self.buckets, self.effective_buckets
            ),
        }
    }
}

impl Trend {
    /// The fitted slope in words, with its interval: `throughput falls 8.9%/h [8.7%, 9.1%]
    /// (-17.8% over 2.0 h)`; none where there are too few buckets to estimate it.
    pub fn slope(&self) -> Option<String> {
        let (s, lo, hi) = (
            self.slope_per_h?,
            self.slope_low_per_h?,
            self.slope_high_per_h?,
        );
        let (a, b) = if s < 0.0 { (-hi, -lo) } else { (lo, hi) };
        Some(format!(
            "throughput {} {:.1}%/h [{:.1}%, {:.1}%] ({} over {})",
            if s < 0.0 { "falls" } else { "rises" },
            s.abs() * 100.0,
            a * 100.0,
            b * 100.0,
            signed_pct(self.change),
            duration(self.span_s)
        ))
    }
}

fn signed_pct(v: Option<f64>) -> String {
    v.map_or("–".to_string(), |v| format!("{:+.1}%", v * 100.0))
}

fn duration(s: f64) -> String {
    if s >= 5400.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 120.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{s:.0} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::steady::PLATEAU_SHARE;

    /// A flat, noisy window is steady; a 20% fall is a drift, with the true slope inside its
    /// interval; a rise to the end is a ramp; five buckets are too few.
    #[test]
    fn flat_falling_rising_and_short_windows() {
        // deterministic noise, correlated over neighbours
        let noise: Vec<f64> = (0..120)
            .map(|k| ((k as f64 * 1.7).sin() + (k as f64 * 0.31).cos()) * 20.0)
            .collect();
        let w = vec![60.0; 120];
        let flat: Vec<f64> = noise.iter().map(|e| 1000.0 + e).collect();
        let t = test(&flat, &w, 60.0, false);
        assert_eq!(t.verdict, Verdict::Steady, "{t:?}");
        // 3,000 → 2,400 tok/s over two hours
        let fall: Vec<f64> = (0..120)
            .map(|k| 3000.0 - 600.0 * (k as f64 + 0.5) / 120.0 + noise[k])
            .collect();
        let t = test(&fall, &w, 60.0, false);
        assert_eq!(t.verdict, Verdict::Drifting, "{t:?}");
        let truth = -300.0 / 2700.0; // per hour, relative to the mean
        let (lo, hi) = (t.slope_low_per_h.unwrap(), t.slope_high_per_h.unwrap());
        assert!(lo < truth && truth < hi, "{lo} {truth} {hi}");
        assert!(
            t.describe()
                .starts_with("no steady state: throughput falls 11."),
            "{}",
            t.describe()
        );
        let t = test(&fall, &w, 60.0, true);
        assert_eq!(t.verdict, Verdict::Drifting, "a fall is no ramp");
        let rise: Vec<f64> = fall.iter().rev().copied().collect();
        assert_eq!(test(&rise, &w, 60.0, true).verdict, Verdict::Ramping);
        assert_eq!(test(&rise, &w, 60.0, false).verdict, Verdict::Drifting);
        let t = test(&fall[..5], &w[..5], 60.0, false);
        assert_eq!(t.verdict, Verdict::TooLittleData);
        assert!(t.describe().contains("too few"), "{}", t.describe());
        // a flat window's mean is untouched by the test: only the verdict is added
        assert_eq!(
            test(&[1000.0; 30], &[1.0; 30], 1.0, false).verdict,
            Verdict::Steady
        );
        assert!((BOUND - (1.0 - PLATEAU_SHARE)).abs() < 1e-12);
        // a fall of about a quarter under noise of ±60%: beyond the bound, not significant
        let noisy: Vec<f64> = (0..12)
            .map(|k| 1000.0 * (1.0 - 0.25 * k as f64 / 12.0) * (1.0 + 0.6 * (k as f64 * 2.3).sin()))
            .collect();
        let t = test(&noisy, &[60.0; 12], 60.0, false);
        assert_eq!(t.verdict, Verdict::Uncertain, "{t:?}");
        assert!(
            !t.verdict.steady() && t.describe().starts_with("no steady state shown"),
            "{}",
            t.describe()
        );
    }
}
