//! The concurrency-vs-throughput curve of one run, and its knee.
//!
//! Every stats line says how many requests were running and how fast the instance generated
//! over the interval it closes. Binned by `running`, those intervals trace the server's
//! throughput curve without a sweep: the ramp-up and the drain walk through the low
//! concurrencies, the plateau sits at the high ones. Per bin: the share of run time, the
//! median and p10 / p90 of the instance's tokens/s, and the median tokens/s per request.
//!
//! The knee is the lowest concurrency beyond which one more request adds less than
//! [`sweep::MARGINAL`] of the average per-request rate there, to every higher bin observed:
//! past it, more concurrency buys (almost) no throughput — the rule of a sweep's knee
//! ([`crate::analysis::sweep`]), the bins its points, with its interval from the bins'
//! medians' intervals. Bins need [`MIN_LINES`] lines to take part, so a few stray lines do
//! not make a knee.

use crate::analysis::quantile::counted_quantiles;
use crate::analysis::statistics::Z95;
use crate::analysis::sweep::{self, Point};
use crate::ingest::digest::load::Load;
use rayon::prelude::*;

/// Lines a bin needs to count for the knee.
pub const MIN_LINES: usize = 3;

/// One bin of the curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Bin {
    /// Lowest and highest `running` in the bin.
    pub running_lo: u32,
    pub running_hi: u32,
    /// Time-weighted mean of `running` in the bin.
    pub running: f64,
    pub lines: u64,
    pub time_share: f64,
    pub tps_p10: f64,
    pub tps_median: f64,
    pub tps_p90: f64,
    /// The median's distribution-free 95% interval (order statistics over the bin's lines,
    /// taken as independent).
    pub tps_median_low: f64,
    pub tps_median_high: f64,
    pub tps_per_req: f64,
}

/// Where more concurrency stops paying.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Knee {
    pub running: f64,
    pub tps_median: f64,
    /// The highest bin's median, to show how little the rest adds.
    pub tps_at_max: f64,
    pub running_max: f64,
    /// The knee's 95% interval, in running requests: a parametric bootstrap of the bins'
    /// medians from their intervals (`analysis::sweep::knee`); `running_high` null when some
    /// resamples find no knee within the concurrencies seen.
    pub running_low: f64,
    pub running_high: Option<f64>,
    /// The share of resamples with a knee within the concurrencies seen.
    pub found_share: f64,
}

/// A bin width giving at most 24 bins up to `max`.
fn width(max: u32) -> u32 {
    [
        1, 2, 4, 5, 8, 10, 16, 20, 25, 32, 40, 50, 64, 100, 128, 200, 256, 500,
    ]
    .into_iter()
    .find(|w| max.div_ceil(*w) <= 24)
    .unwrap_or(max.div_ceil(24).max(1))
}

/// Bins the intervals of all instances by `running`, from their counts ([`Load`]): per
/// bin the lines, the time and the time-weighted concurrency, and the quantiles of the
/// rates read off the counts of each distinct rate (the order statistics a sort of every
/// line's rate gives).
pub fn curve(load: &Load) -> Vec<Bin> {
    let max = load
        .levels()
        .filter(|(_, l)| l.lines > 0)
        .map(|(r, _)| r)
        .max()
        .unwrap_or(0);
    if max == 0 {
        return Vec::new();
    }
    let w = width(max);
    let nb = max.div_ceil(w) as usize;
    let bin = |r: u32| (r.max(1) - 1) as usize / w as usize;
    let mut lines = vec![0i64; nb];
    let mut ms = vec![0i128; nb];
    let mut running_ms = vec![0i128; nb];
    for (r, l) in load.levels() {
        let b = bin(r);
        lines[b] += l.lines;
        ms[b] += i128::from(l.ms);
        running_ms[b] = running_ms[b].saturating_add(l.running_ms);
    }
    // each bin's rates and rates per request, with how many lines logged them
    let mut tps: Vec<Vec<(f64, u64)>> = vec![Vec::new(); nb];
    let mut per: Vec<Vec<(f64, u64)>> = vec![Vec::new(); nb];
    for ((running, gen), n) in load.rates() {
        if n <= 0 {
            continue;
        }
        let b = bin(f64::from(running) as u32);
        tps[b].push((gen, n as u64));
        per[b].push((gen / f64::from(running), n as u64));
    }
    let total: i128 = ms.iter().sum();
    tps.into_par_iter()
        .zip(per)
        .enumerate()
        .filter(|(b, _)| lines[*b] > 0)
        .map(|(b, (mut tps, mut per))| {
            // (the median's interval: ranks n/2 ± z √n / 2)
            let n = lines[b].max(1) as f64;
            let half = Z95 * 0.5 / n.sqrt();
            let t = counted_quantiles(
                &mut tps,
                &[0.1, 0.5, 0.9, (0.5 - half).max(0.0), (0.5 + half).min(1.0)],
            );
            let per_req = counted_quantiles(&mut per, &[0.5])[0];
            Bin {
                running_lo: b as u32 * w + 1,
                // (the last bin of counts near the largest `u32` ends at it)
                running_hi: (b as u32 + 1).saturating_mul(w),
                running: if ms[b] > 0 {
                    running_ms[b] as f64 / ms[b] as f64
                } else {
                    f64::from(b as u32 * w + 1)
                },
                lines: lines[b] as u64,
                time_share: if total > 0 {
                    ms[b] as f64 / total as f64
                } else {
                    0.0
                },
                tps_p10: t[0],
                tps_median: t[1],
                tps_p90: t[2],
                tps_median_low: t[3],
                tps_median_high: t[4],
                tps_per_req: per_req,
            }
        })
        .collect()
}

/// The knee of a curve (see the module docs), or `None` when throughput still grows at the
/// highest concurrency observed or too few bins were seen.
pub fn knee(bins: &[Bin]) -> Option<Knee> {
    let b: Vec<&Bin> = bins
        .iter()
        .filter(|b| b.lines as usize >= MIN_LINES)
        .collect();
    // (the rule of a sweep's knee, the bins its points)
    let points: Vec<Point> = b
        .iter()
        .map(|b| Point {
            load: b.running,
            tps: b.tps_median,
            tps_ci: Some((b.tps_median_low, b.tps_median_high)),
            latency: None,
        })
        .collect();
    let k = sweep::knee(&points)?;
    let last = b[b.len() - 1];
    Some(Knee {
        running: b[k.at].running,
        tps_median: b[k.at].tps_median,
        tps_at_max: last.tps_median,
        running_max: last.running,
        running_low: b[k.low].running,
        running_high: k.high.map(|h| b[h].running),
        found_share: k.found_share,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::Interval;

    /// Whether an interval takes part: a known concurrency of at least one, and some length.
    fn observed(i: &Interval) -> bool {
        i.running.is_finite() && i.running >= 1.0 && i.end > i.start
    }

    /// The curve of intervals, counted as a digest counts them.
    fn curve_of(sources: &[&[Interval]]) -> Vec<Bin> {
        let mut load = Load::default();
        for i in sources.iter().copied().flatten() {
            load.add(i.running as f32, i.gen_tps, i.end - i.start, 1);
        }
        curve(&load)
    }

    fn iv(running: f64, tps: f64) -> Interval {
        Interval {
            start: 0,
            end: 1000,
            gen_tps: tps,
            prompt_tps: 0.0,
            running,
        }
    }

    /// Lines keep their bins, counts and shares whatever the highest concurrency (beyond
    /// the dense count of `running` values too).
    #[test]
    fn bins_of_sparse_and_huge_concurrencies() {
        for top in [100.0, 100_000.0] {
            let v = [
                iv(1.0, 10.0),
                iv(top, 30.0),
                iv(1.0, 20.0),
                iv(top, 50.0),
                iv(2.0, 4.0),
            ];
            let bins = curve_of(&[&v[..]]);
            let last = bins.last().unwrap();
            assert_eq!(bins.iter().map(|b| b.lines).sum::<u64>(), 5);
            assert_eq!(
                (last.lines, last.tps_median, last.time_share),
                (2, 40.0, 0.4)
            );
            assert_eq!(
                (bins[0].lines, bins[0].tps_p10, bins[0].tps_p90),
                (3, 5.2, 18.0)
            );
            assert!(last.running_hi >= top as u32 && last.running_lo <= top as u32);
        }
    }

    /// Rows of several instances, many pieces each, read on all cores, give the bins a
    /// plain reading gives: each bin's lines, sorted quantiles, time share and mean
    /// concurrency; rows with no concurrency, or no length, take no part.
    #[test]
    fn pieces_read_on_all_cores_bin_like_one_pass() {
        use crate::analysis::quantile::quantile;
        let mut rng = crate::testing::Lcg(3);
        let mut next = |n: u64| rng.below(n);
        for top in [90u64, 200_000] {
            let sources: Vec<Vec<Interval>> = [70_000usize, 5, 41_000]
                .iter()
                .map(|&n| {
                    let mut t = 0i64;
                    (0..n)
                        .map(|_| {
                            let start = t;
                            t += next(3000) as i64;
                            let running = match next(50) {
                                0 => f64::NAN,
                                1 => 0.0,
                                2 => top as f64,
                                _ => (1 + next(90)) as f64,
                            };
                            Interval {
                                start,
                                end: t,
                                gen_tps: next(100_000) as f64 / 7.0,
                                prompt_tps: 0.0,
                                running,
                            }
                        })
                        .collect()
                })
                .collect();
            let refs: Vec<&[Interval]> = sources.iter().map(|v| &v[..]).collect();
            let bins = curve_of(&refs);
            // the plain reading
            let all: Vec<&Interval> = sources.iter().flatten().filter(|i| observed(i)).collect();
            let w = width(top as u32);
            let half = |n: usize| Z95 * 0.5 / (n as f64).sqrt();
            let mut want = Vec::new();
            let total: i64 = all.iter().map(|i| i.end - i.start).sum();
            for b in 0..(top as u32).div_ceil(w) {
                let (lo, hi) = (b * w + 1, (b + 1) * w);
                let inside: Vec<&&Interval> = all
                    .iter()
                    .filter(|i| (lo..=hi).contains(&(i.running as u32)))
                    .collect();
                if inside.is_empty() {
                    continue;
                }
                let mut tps: Vec<f64> = inside.iter().map(|i| i.gen_tps).collect();
                let mut per: Vec<f64> = inside.iter().map(|i| i.gen_tps / i.running).collect();
                tps.sort_unstable_by(f64::total_cmp);
                per.sort_unstable_by(f64::total_cmp);
                let ms: i64 = inside.iter().map(|i| i.end - i.start).sum();
                let rms: i64 = inside
                    .iter()
                    .map(|i| (i.end - i.start) * i.running as i64)
                    .sum();
                want.push(Bin {
                    running_lo: lo,
                    running_hi: hi,
                    running: if ms > 0 {
                        rms as f64 / ms as f64
                    } else {
                        f64::from(lo)
                    },
                    lines: inside.len() as u64,
                    time_share: ms as f64 / total as f64,
                    tps_p10: quantile(&tps, 0.1),
                    tps_median: quantile(&tps, 0.5),
                    tps_p90: quantile(&tps, 0.9),
                    tps_median_low: quantile(&tps, 0.5 - half(inside.len())),
                    tps_median_high: quantile(&tps, 0.5 + half(inside.len())),
                    tps_per_req: quantile(&per, 0.5),
                });
            }
            assert!(all.len() > 100_000 && want.len() >= 2, "{}", want.len());
            assert_eq!(bins, want, "{top}");
        }
    }

    /// Regression: a concurrency beyond reason (the largest an `f32` holds) over a long
    /// interval overflowed the bin's upper bound (and would the time-weighted sum): it makes
    /// a bin, and saturates.
    #[test]
    fn absurd_concurrency_saturates() {
        let v = [Interval {
            start: 0,
            end: 1 << 50,
            gen_tps: 5.0,
            prompt_tps: 0.0,
            running: f64::from(f32::MAX),
        }];
        let bins = curve_of(&[&v[..]]);
        assert_eq!(bins.len(), 1);
        assert_eq!((bins[0].lines, bins[0].tps_median), (1, 5.0));
        assert!(
            bins[0].running.is_finite() && bins[0].running > 1e20,
            "{:?}",
            bins[0]
        );
        assert_eq!(bins[0].running_hi, u32::MAX);
    }

    #[test]
    fn bins_and_knee_of_a_saturating_server() {
        // tps = r / (b + k r) with b = 0.008, k = 0.0009: per-request gain falls under 10%
        // past r = 9 b / k = 80
        let model = |r: f64| r / (0.008 + 0.0009 * r);
        let v: Vec<Interval> = (1..=160)
            .flat_map(|r| std::iter::repeat_n(iv(f64::from(r), model(f64::from(r))), 3))
            .collect();
        let bins = curve_of(&[&v[..]]);
        assert_eq!(bins.len(), 20);
        assert_eq!((bins[0].running_lo, bins[0].running_hi), (1, 8));
        assert_eq!(bins[0].lines, 24);
        assert!((bins[0].time_share - 0.05).abs() < 1e-12);
        let k = knee(&bins).unwrap();
        assert!(k.running > 70.0 && k.running < 90.0, "{k:?}");
        // still rising everywhere: no knee
        let lin: Vec<Interval> = (1..=64)
            .flat_map(|r| std::iter::repeat_n(iv(f64::from(r), 40.0 * f64::from(r)), 3))
            .collect();
        assert_eq!(knee(&curve_of(&[&lin[..]])), None);
    }
}
