//! The concurrency-vs-throughput curve of one run, and its knee.
//!
//! Every stats line says how many requests were running and how fast the instance generated
//! over the interval it closes. Binned by `running`, those intervals trace the server's
//! throughput curve without a sweep: the ramp-up and the drain walk through the low
//! concurrencies, the plateau sits at the high ones. Per bin: the share of run time, the
//! median and p10 / p90 of the instance's tokens/s, and the median tokens/s per request.
//!
//! The knee is the lowest concurrency beyond which one more request adds less than
//! [`KNEE_MARGINAL`] of the average per-request rate there, to every higher bin observed:
//! past it, more concurrency buys (almost) no throughput. Bins need [`MIN_LINES`] lines to
//! take part, so a few stray lines do not make a knee.

use crate::analysis::quantile::quantiles;
use crate::analysis::timeline::Interval;
use rayon::prelude::*;

/// One more request must add at least this share of the per-request rate.
pub const KNEE_MARGINAL: f64 = 0.10;
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

/// Bins the intervals of all instances by `running`.
///
/// Two passes: the first counts the lines of each `running` value, which gives the bins and
/// their sizes; the second writes each line's rates into its bin's part of one array, sized
/// once (growing a vector per bin copied and faulted in twice the memory), and sums the
/// bins' times in line order. The bins' quantiles are then selected on all cores.
pub fn curve(intervals: impl Iterator<Item = Interval> + Clone) -> Vec<Bin> {
    let obs = intervals.filter(|i| i.running.is_finite() && i.running >= 1.0 && i.end > i.start);
    // lines per `running` value, up to `DENSE`; the highest value
    const DENSE: u32 = 1 << 16;
    let mut by_running: Vec<u32> = Vec::new();
    let mut max = 0u32;
    for i in obs.clone() {
        let r = i.running as u32;
        max = max.max(r);
        if r < DENSE {
            let r = r as usize;
            if r >= by_running.len() {
                by_running.resize(r + 1, 0);
            }
            by_running[r] += 1;
        }
    }
    if max == 0 {
        return Vec::new();
    }
    let w = width(max);
    let nb = max.div_ceil(w) as usize;
    let bin = |r: u32| ((r - 1) / w) as usize;
    // the bin of each `running` value below `DENSE`: no division per line
    let bins_of: Vec<u32> = (0..by_running.len() as u32)
        .map(|r| if r == 0 { 0 } else { bin(r) as u32 })
        .collect();
    let bin_of = |r: u32| match bins_of.get(r as usize) {
        Some(&b) => b as usize,
        None => bin(r),
    };
    let mut lines = vec![0usize; nb];
    if max < DENSE {
        for (r, &n) in by_running.iter().enumerate().skip(1) {
            lines[bin_of(r as u32)] += n as usize;
        }
    } else {
        for i in obs.clone() {
            lines[bin_of(i.running as u32)] += 1;
        }
    }
    let mut next: Vec<usize> = lines
        .iter()
        .scan(0, |at, &n| {
            let start = *at;
            *at += n;
            Some(start)
        })
        .collect();
    let all = lines.iter().sum();
    let mut tps = vec![0.0; all];
    let mut per = vec![0.0; all];
    let mut time = vec![0.0; nb];
    let mut rsum = vec![0.0; nb];
    let mut total = 0.0;
    for i in obs {
        let b = bin_of(i.running as u32);
        let at = next[b];
        next[b] += 1;
        tps[at] = i.gen_tps;
        per[at] = i.gen_tps / i.running;
        time[b] += i.secs();
        rsum[b] += i.secs() * i.running;
        total += i.secs();
    }
    // each bin's part of the two arrays
    let mut parts = Vec::with_capacity(nb);
    let (mut t_rest, mut p_rest) = (&mut tps[..], &mut per[..]);
    for &n in &lines {
        let (t, tr) = std::mem::take(&mut t_rest).split_at_mut(n);
        let (p, pr) = std::mem::take(&mut p_rest).split_at_mut(n);
        parts.push((t, p));
        (t_rest, p_rest) = (tr, pr);
    }
    // the selections of every bin (millions of lines on a long run) on all cores
    parts
        .into_par_iter()
        .enumerate()
        .filter(|(_, (t, _))| !t.is_empty())
        .map(|(b, (tps, per))| {
            let (t, per_req) = rayon::join(
                || quantiles(tps, &[0.1, 0.5, 0.9]),
                || quantiles(per, &[0.5])[0],
            );
            Bin {
                running_lo: b as u32 * w + 1,
                running_hi: (b as u32 + 1) * w,
                running: if time[b] > 0.0 {
                    rsum[b] / time[b]
                } else {
                    f64::from(b as u32 * w + 1)
                },
                lines: lines[b] as u64,
                time_share: if total > 0.0 { time[b] / total } else { 0.0 },
                tps_p10: t[0],
                tps_median: t[1],
                tps_p90: t[2],
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
    if b.len() < 3 {
        return None;
    }
    let last = b[b.len() - 1];
    for (i, at) in b.iter().enumerate().take(b.len() - 1) {
        let per_req = at.tps_median / at.running;
        let flat = b[i + 1..].iter().all(|later| {
            (later.tps_median - at.tps_median) / (later.running - at.running)
                < KNEE_MARGINAL * per_req
        });
        if flat {
            return Some(Knee {
                running: at.running,
                tps_median: at.tps_median,
                tps_at_max: last.tps_median,
                running_max: last.running,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let bins = curve(v.iter().copied());
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

    #[test]
    fn bins_and_knee_of_a_saturating_server() {
        // tps = r / (b + k r) with b = 0.008, k = 0.0009: per-request gain falls under 10%
        // past r = 9 b / k = 80
        let model = |r: f64| r / (0.008 + 0.0009 * r);
        let v: Vec<Interval> = (1..=160)
            .flat_map(|r| std::iter::repeat_n(iv(f64::from(r), model(f64::from(r))), 3))
            .collect();
        let bins = curve(v.iter().copied());
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
        assert_eq!(knee(&curve(lin.iter().copied())), None);
    }
}
