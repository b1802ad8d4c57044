//! The time-bucketed timeline, built from each instance's intervals
//! ([`crate::analysis::intervals`]) as its digest's cells hold them.
//!
//! Intervals are split across time buckets by overlap, so a bucket's `gen_tps` is exactly
//! the estimated tokens inside it divided by its length. Gauges (`running`, `waiting`,
//! `kv_usage`, `accept_len`) are means of the lines stamped inside the bucket. A bucket is
//! a whole number of an instance's cells ([`crate::ingest::digest::grid`]), and its sums
//! are theirs; the instances' rows then form a polars table that is grouped by bucket into the

use crate::analysis::finite;
use crate::analysis::settle::Settled;
use crate::ingest::digest::grid::{tokens_of, Gauge, FRACTION_SCALE};
use crate::ingest::responses::{add_counts, Counts, Responses};
use crate::ingest::series::EventPoint;
use anyhow::Result;
use polars::prelude::*;
use rayon::prelude::*;

pub use crate::ingest::digest::grid::auto_bucket;
pub use crate::ingest::digest::grid::MAX_BUCKETS;

/// One timeline row.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Bucket {
    /// Bucket start, ms.
    pub ts: i64,
    pub gen_tps: f64,
    pub prompt_tps: f64,
    /// Means of the lines inside the bucket; NaN when none.
    pub running: f64,
    pub waiting: f64,
    pub kv_usage: f64,
    pub accept_len: f64,
    /// Events (retractions count their requests).
    pub events: f64,
    /// HTTP access lines by status class (`[ok, 4xx, 5xx]`; see
    /// [`crate::ingest::responses`]).
    pub http: Counts,
    /// Milliseconds of the bucket the stats lines' intervals cover (an instance's; the
    /// most any instance covers in the total): the bucket's length but where the run
    /// starts, stops or falls silent inside it. See [`Timeline::serving_rates`].
    pub covered_ms: i64,
}

/// Per-instance and total timelines, dense (every bucket of the span present).
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    pub bucket_ms: i64,
    pub origin: i64,
    pub total: Vec<Bucket>,
    pub instances: Vec<(String, Vec<Bucket>)>,
    /// Tokens each instance generated (its intervals' sum).
    pub tokens: Vec<f64>,
}

impl Timeline {
    /// The buckets' length in seconds.
    pub fn bucket_s(&self) -> f64 {
        self.bucket_ms as f64 / 1000.0
    }
}

impl Bucket {
    /// Generated tokens over the time the intervals cover in the bucket, rather than over
    /// its length: a run (or a segment) that starts or stops inside a bucket served only
    /// part of it, and its tokens spread over the whole bucket read as a lower rate than the
    /// run ever had (8 s of lines at 500-1,450 tok/s read as 514 tok/s in a 15 s bucket);
    /// time an instance fell silent is idle, not slow. `None` where nothing is covered.
    pub fn serving_gen_tps(&self, bucket_ms: i64) -> Option<f64> {
        (self.covered_ms > 0)
            .then(|| self.gen_tps * bucket_ms as f64 / self.covered_ms.min(bucket_ms) as f64)
    }

    /// The covered time, seconds (at most the bucket's length).
    pub fn covered_s(&self, bucket_ms: i64) -> f64 {
        self.covered_ms.min(bucket_ms) as f64 / 1000.0
    }
}

impl Timeline {
    /// The total's [`Bucket::serving_gen_tps`] over `range` of buckets (NaN where nothing
    /// is covered): what the steady window and the peak are found in.
    pub fn serving_rates(&self, range: (usize, usize)) -> Vec<f64> {
        self.total_in(range)
            .iter()
            .map(|r| r.serving_gen_tps(self.bucket_ms).unwrap_or(f64::NAN))
            .collect()
    }

    /// The total's covered time over `range` of buckets, seconds: the weights of
    /// [`Timeline::serving_rates`].
    pub fn covered(&self, range: (usize, usize)) -> Vec<f64> {
        self.total_in(range)
            .iter()
            .map(|r| r.covered_s(self.bucket_ms))
            .collect()
    }

    fn total_in(&self, range: (usize, usize)) -> &[Bucket] {
        let to = range.1.min(self.total.len());
        &self.total[range.0.min(to)..to]
    }
}

/// What the timeline is built from: each instance's finished lines.
pub struct InstanceCells<'a> {
    pub name: &'a str,
    pub lines: &'a Settled,
    /// Its events, in time order.
    pub events: &'a [EventPoint],
    /// Its HTTP responses over time.
    pub responses: &'a Responses,
}

/// Per-bucket sums of one instance, from its cells.
struct Acc {
    gen: Vec<i128>,
    prompt: Vec<i128>,
    gauges: [Vec<Gauge>; 4],
    events: Vec<f64>,
    http: Vec<Counts>,
    covered: Vec<i64>,
}

impl Acc {
    fn new(nb: usize) -> Acc {
        Acc {
            gen: vec![0; nb],
            prompt: vec![0; nb],
            gauges: std::array::from_fn(|_| vec![Gauge::default(); nb]),
            events: vec![0.0; nb],
            http: vec![[0; 3]; nb],
            covered: vec![0; nb],
        }
    }

    fn rows(&self, origin: i64, b: i64) -> Vec<Bucket> {
        let secs = b as f64 / 1000.0;
        let mean = |g: usize, k: usize, scale: f64| {
            let Gauge { sum, n } = self.gauges[g][k];
            if n > 0 {
                sum as f64 / scale / n as f64
            } else {
                f64::NAN
            }
        };
        (0..self.gen.len())
            .map(|k| Bucket {
                ts: origin + k as i64 * b,
                gen_tps: tokens_of(self.gen[k]) / secs,
                prompt_tps: tokens_of(self.prompt[k]) / secs,
                running: mean(0, k, 1.0),
                waiting: mean(1, k, 1.0),
                kv_usage: mean(2, k, FRACTION_SCALE),
                accept_len: mean(3, k, FRACTION_SCALE),
                events: self.events[k],
                http: self.http[k],
                covered_ms: self.covered[k],
            })
            .collect()
    }
}

/// The run's total per bucket, in polars: rates and loads add up over instances, the
/// fractions are averaged; a gauge no instance reported stays empty.
fn totals(instances: &[(String, Vec<Bucket>)], nb: usize) -> PolarsResult<Vec<Bucket>> {
    let rows = instances.iter().flat_map(|(_, v)| v.iter());
    let values = |f: fn(&Bucket) -> f64| -> Vec<Option<f64>> {
        rows.clone().map(|b| finite(f(b))).collect()
    };
    let frame = DataFrame::new_infer_height(vec![
        Column::new(
            "ts".into(),
            rows.clone().map(|b| b.ts).collect::<Vec<i64>>(),
        ),
        Column::new("gen_tps".into(), values(|b| b.gen_tps)),
        Column::new("prompt_tps".into(), values(|b| b.prompt_tps)),
        Column::new("running".into(), values(|b| b.running)),
        Column::new("waiting".into(), values(|b| b.waiting)),
        Column::new("kv_usage".into(), values(|b| b.kv_usage)),
        Column::new("accept_len".into(), values(|b| b.accept_len)),
        Column::new("events".into(), values(|b| b.events)),
    ])?;
    // an empty sum is NaN, as an absent value reads below. Its count is aggregated beside
    // it and the two are put together here: polars builds (and leaks) an 8 MB block of
    // zeroes, 2,000 page faults and two thirds of a small report's time, the first time an
    // expression holds a null literal or compares with a scalar (`count() > 0`)
    let n = |c: &str| col(c).count().alias(format!("{c}_n"));
    let total = frame
        .lazy()
        .group_by([col("ts")])
        .agg([
            col("gen_tps").sum(),
            col("prompt_tps").sum(),
            col("running").sum(),
            n("running"),
            col("waiting").sum(),
            n("waiting"),
            col("kv_usage").mean(),
            col("accept_len").mean(),
            col("events").sum(),
        ])
        .sort(["ts"], Default::default())
        .collect()?;
    let get = |name: &str| -> PolarsResult<Vec<f64>> {
        Ok(total
            .column(name)?
            .f64()?
            .iter()
            .map(|v| v.unwrap_or(f64::NAN))
            .collect())
    };
    let sum = |name: &str| -> PolarsResult<Vec<f64>> {
        let counts = total.column(&format!("{name}_n"))?.idx()?;
        Ok(get(name)?
            .into_iter()
            .zip(counts.iter())
            .map(|(v, n)| if n.unwrap_or(0) > 0 { v } else { f64::NAN })
            .collect())
    };
    let ts: Vec<i64> = total.column("ts")?.i64()?.iter().flatten().collect();
    let c = [
        get("gen_tps")?,
        get("prompt_tps")?,
        sum("running")?,
        sum("waiting")?,
        get("kv_usage")?,
        get("accept_len")?,
        get("events")?,
    ];
    debug_assert_eq!(ts.len(), nb);
    Ok((0..ts.len())
        .map(|k| Bucket {
            ts: ts[k],
            gen_tps: c[0][k],
            prompt_tps: c[1][k],
            running: c[2][k],
            waiting: c[3][k],
            kv_usage: c[4][k],
            accept_len: c[5][k],
            events: c[6][k],
            // (counts: summed by position, every instance having every bucket)
            http: std::array::from_fn(|c| instances.iter().map(|(_, v)| v[k].http[c]).sum()),
            covered_ms: instances
                .iter()
                .map(|(_, v)| v[k].covered_ms)
                .max()
                .unwrap_or(0),
        })
        .collect())
}

/// Builds the timeline with buckets of `bucket_ms` (or [`auto_bucket`]), from each
/// instance's cells: a bucket is a whole number of cells (see
/// [`crate::ingest::digest::grid`]), and its sums are theirs.
pub fn build(inputs: &[InstanceCells<'_>], bucket_ms: Option<i64>) -> Result<Timeline> {
    let first = inputs
        .iter()
        .flat_map(|i| {
            i.lines
                .first_start
                .into_iter()
                .chain(i.lines.span().map(|s| s.0))
        })
        .min();
    let last = inputs
        .iter()
        .flat_map(|i| i.lines.span().map(|s| s.1))
        .max();
    let (Some(first), Some(last)) = (first, last) else {
        return Ok(Timeline::default());
    };
    let b = bucket_ms
        .unwrap_or_else(|| auto_bucket(last - first))
        .max(1);
    let origin = first.div_euclid(b) * b;
    let idx = |t: i64| (t - origin).div_euclid(b);
    if idx(last) >= MAX_BUCKETS {
        anyhow::bail!(
            "--bucket {} s over a run of {:.0} days makes {} buckets (at most {MAX_BUCKETS}): \
             choose a longer bucket, or leave it out",
            b as f64 / 1000.0,
            (last - first) as f64 / 86_400_000.0,
            idx(last) + 1
        );
    }
    let nb = (idx(last) + 1) as usize;
    let (instances, tokens): (Vec<(String, Vec<Bucket>)>, Vec<f64>) = inputs
        .par_iter()
        .map(|input| {
            let mut acc = Acc::new(nb);
            let grid = &input.lines.run.grid;
            debug_assert_eq!(
                b % grid.len,
                0,
                "cells of {} ms in buckets of {b}",
                grid.len
            );
            for (start, c) in grid.iter() {
                // cells outside the span of the stats lines have no bucket
                let Some(k) = usize::try_from(idx(start)).ok().filter(|&k| k < nb) else {
                    continue;
                };
                acc.gen[k] += c.gen;
                acc.prompt[k] += c.prompt;
                acc.covered[k] += c.covered;
                for (g, v) in [c.running, c.waiting, c.kv_usage, c.accept_len]
                    .into_iter()
                    .enumerate()
                {
                    acc.gauges[g][k].sum += v.sum;
                    acc.gauges[g][k].n += v.n;
                }
            }
            // events outside the span of the stats lines have no bucket
            for ev in input.events {
                if let Some(e) = usize::try_from(idx(ev.ts))
                    .ok()
                    .and_then(|k| acc.events.get_mut(k))
                {
                    *e += ev.count as f64;
                }
            }
            // and so are responses outside it
            for &(t, counts) in input.responses.slots() {
                if let Some(h) = usize::try_from(idx(t))
                    .ok()
                    .and_then(|k| acc.http.get_mut(k))
                {
                    add_counts(h, &counts);
                }
            }
            let tokens = tokens_of(input.lines.run.totals.tokens);
            ((input.name.to_string(), acc.rows(origin, b)), tokens)
        })
        .unzip();
    let total = totals(&instances, nb)?;
    Ok(Timeline {
        bucket_ms: b,
        origin,
        total,
        instances,
        tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::*;
    use crate::ingest::digest::Digest;
    use crate::ingest::series::{Point, PointKind, Series};

    /// Every bucket length the timeline may choose for a span at least this long is a whole
    /// number of cells, and each cell length divides the next.
    #[test]
    fn cells_divide_every_later_bucket() {
        let mut last = 1;
        for span in (0..200).map(|k| (k as i64).pow(4) * 997) {
            let base = crate::ingest::digest::grid::base_for(span);
            assert_eq!(base % last, 0, "{span}");
            last = base;
            for later in [span, span + 1, span * 2, span * 7 + 12345, span * 1000] {
                assert_eq!(auto_bucket(later) % base, 0, "{span} {later}");
            }
        }
    }

    /// Counting gives exactly the middle order statistic a sort gives, with differences
    /// below and above the counted range, repeated and non-positive ones.
    #[test]
    fn typical_gap_is_the_median_difference() {
        let mut rng = crate::testing::Lcg(11);
        for len in [0usize, 1, 2, 3, 10, 1000, 5001] {
            let mut t = 0i64;
            let ts: Vec<i64> = (0..len)
                .map(|_| {
                    let seed = rng.next_u64();
                    t += match (seed >> 40) % 4 {
                        0 => 0,
                        1 => 1000,
                        2 => ((seed >> 20) % 70_000) as i64,
                        _ => 200_000 + ((seed >> 10) % 9) as i64,
                    };
                    t
                })
                .collect();
            let mut d: Vec<i64> = ts
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|&d| d > 0)
                .collect();
            d.sort_unstable();
            assert_eq!(typical_gap(&ts), d.get(d.len() / 2).copied(), "{len}");
            // and the pairs further apart than a bound, in order, from the same pass
            for longer in [0, 999, 60_000, 200_000] {
                let (typical, long) = typical_gap_and_longer(ts.iter().copied(), longer);
                assert_eq!(typical, typical_gap(&ts));
                let want: Vec<(i64, i64)> = ts
                    .windows(2)
                    .map(|w| (w[0], w[1]))
                    .filter(|(a, b)| b - a > longer)
                    .collect();
                assert_eq!(long, want, "{len} {longer}");
            }
        }
    }

    /// The run's total adds rates and loads over instances and averages fractions; a gauge
    /// no instance reported in a bucket stays empty (NaN), one reported by some is theirs.
    #[test]
    fn totals_add_what_instances_report() {
        let row = |ts: i64, running: f64, kv: f64| Bucket {
            ts,
            gen_tps: 10.0,
            prompt_tps: 0.0,
            running,
            waiting: f64::NAN,
            kv_usage: kv,
            accept_len: f64::NAN,
            events: 0.0,
            http: [1, 0, 2],
            covered_ms: ts / 2,
        };
        let mut instances = vec![
            (
                "a".to_string(),
                vec![row(0, 4.0, 0.2), row(1000, f64::NAN, 0.4)],
            ),
            (
                "b".to_string(),
                vec![row(0, 6.0, 0.6), row(1000, f64::NAN, f64::NAN)],
            ),
        ];
        instances[1].1[1].covered_ms = 900;
        let t = totals(&instances, 2).unwrap();
        let got: Vec<String> = t
            .iter()
            .map(|b| {
                format!(
                    "{} {} {} {} {} {}",
                    b.ts, b.gen_tps, b.running, b.waiting, b.kv_usage, b.accept_len
                )
            })
            .collect();
        assert_eq!(got, ["0 20 10 NaN 0.4 NaN", "1000 20 NaN NaN 0.4 NaN"]);
        // responses add up by class
        assert_eq!(t[0].http, [2, 0, 4]);
        // the covered time is the most any instance covers
        assert_eq!([t[0].covered_ms, t[1].covered_ms], [0, 900]);
    }

    #[test]
    fn shared_stamps_spread_over_their_second() {
        assert_eq!(
            spread(&[0, 1000, 1000, 1000, 2000, 2000, 2300]),
            vec![0, 1000, 1333, 1666, 2000, 2150, 2300]
        );
        // the last group: one second
        assert_eq!(spread(&[5000, 5000]), vec![5000, 5500]);
    }

    fn stats(ts: i64, rate: f64) -> Point {
        Point {
            ts,
            gen_tps: rate,
            running: 10.0,
            waiting: 0.0,
            kv_usage: 0.5,
            accept_len: f32::NAN,
        }
    }

    /// A series of stats points.
    fn series(points: Vec<Point>) -> Series {
        Series {
            points,
            ..Series::default()
        }
    }

    #[test]
    fn gaps_and_restarts_are_cut_to_the_typical_interval() {
        // lines every 2 s at 100 tok/s; a 60 s silence; a restart at 100 s
        let pts = series(
            [0, 2000, 4000, 6000, 66_000, 68_000, 101_000, 103_000]
                .iter()
                .map(|&t| stats(t, 100.0))
                .collect(),
        );
        let iv = intervals(&pts, &[100_000]);
        let spans: Vec<(i64, i64)> = iv.iter().map(|i| (i.start, i.end)).collect();
        assert_eq!(iv.ending_in(2000, 66_000).count(), 3);
        assert_eq!(
            spans,
            vec![
                (-2000, 0),
                (0, 2000),
                (2000, 4000),
                (4000, 6000),
                (64_000, 66_000),
                (66_000, 68_000),
                (100_000, 101_000),
                (101_000, 103_000)
            ]
        );
        assert_eq!(iv.iter().map(|i| i.tokens()).sum::<f64>(), 100.0 * 15.0);
    }

    /// Points that are no stats line with a rate (speculative metrics, a line without a
    /// rate) take no interval, first or among the others: each interval is its own line's,
    /// and starts where the stats line before it ended (the typical length first, after a
    /// restart, and after a gap).
    #[test]
    fn intervals_are_the_stats_lines_with_a_rate() {
        for skip_first in [false, true] {
            let mut pts = Series::default();
            let mut kinds = Vec::new();
            for k in 0..40i64 {
                let mut p = stats(k * 1000 + if k > 30 { 60_000 } else { 0 }, k as f64);
                let kind = if (skip_first && k == 0) || k % 7 == 3 {
                    PointKind::Spec
                } else {
                    PointKind::Stats
                };
                if k % 11 == 5 {
                    p.gen_tps = f64::NAN;
                }
                pts.push(p, kind, f64::NAN);
                kinds.push(kind);
            }
            let iv = intervals(&pts, &[20_500]);
            let lines: Vec<&Point> = pts
                .points
                .iter()
                .zip(&kinds)
                .filter(|(p, k)| **k == PointKind::Stats && p.gen_tps.is_finite())
                .map(|(p, _)| p)
                .collect();
            assert_eq!(iv.len(), lines.len());
            let typical = typical_gap(&lines.iter().map(|p| p.ts).collect::<Vec<_>>()).unwrap();
            for (i, p) in lines.iter().enumerate() {
                let got = iv.get(i);
                assert_eq!((got.end, got.gen_tps), (p.ts, p.gen_tps), "{i}");
                let prev = i.checked_sub(1).map(|j| lines[j].ts);
                let start = match prev {
                    Some(s) if !(s < 20_500 && p.ts >= 20_500) && p.ts - s <= typical * 4 => s,
                    _ if p.ts >= 20_500 && prev.is_some_and(|s| s < 20_500) => {
                        (p.ts - typical).max(20_500)
                    }
                    _ => p.ts - typical,
                };
                assert_eq!(got.start, start, "{skip_first} {i}");
            }
        }
    }

    /// Regression: a vLLM log whose month-day stamps step back every few lines (read out of
    /// order) spans centuries, one year per step; buckets were capped at a day, and 2 MB of
    /// such lines made 161,104 buckets and 17 s of work. The automatic bucket now grows in
    /// whole days, and a `--bucket` too short for the span is refused with a message.
    #[test]
    fn centuries_get_few_buckets() {
        const DAY: i64 = 86_400_000;
        for span in [
            0,
            1_000,
            3_600_000,
            30 * DAY,
            31 * DAY,
            400 * DAY,
            800 * 365 * DAY,
        ] {
            let b = auto_bucket(span);
            assert!(span / b <= 120, "{span}: {b}");
            assert!(
                b < 21_600_000 || b % DAY == 0 || b == 21_600_000,
                "{span}: {b}"
            );
        }
        let series = Series {
            points: vec![stats(0, 1.0), stats(800 * 365 * DAY, 1.0)],
            ..Series::default()
        };
        let d = Digest::of(&series);
        let lines = crate::analysis::settle::settle(&d);
        let input = [InstanceCells {
            name: "a",
            lines: &lines,
            events: &[],
            responses: &Responses::default(),
        }];
        let t = build(&input, None).unwrap();
        assert!(t.total.len() <= 121, "{}", t.total.len());
        let e = build(&input, Some(1000)).unwrap_err().to_string();
        assert!(e.contains("choose a longer bucket"), "{e}");
    }

    #[test]
    fn buckets_split_intervals_by_overlap() {
        // the first line's interval is the typical one (15 s), at no rate
        let series = Series {
            points: vec![stats(0, 0.0), stats(10_000, 100.0), stats(25_000, 40.0)],
            ..Series::default()
        };
        let d = Digest::of(&series);
        let lines = crate::analysis::settle::settle(&d);
        let t = build(
            &[InstanceCells {
                name: "a",
                lines: &lines,
                events: &[],
                responses: &Responses::default(),
            }],
            Some(20_000),
        )
        .unwrap();
        assert_eq!(t.total.len(), 3);
        assert_eq!(t.total[0].gen_tps, 0.0);
        // bucket 1: 10 s at 100 + 10 s at 40 over 20 s; bucket 2: 5 s at 40
        assert_eq!(t.total[1].gen_tps, (1000.0 + 400.0) / 20.0);
        assert_eq!(t.total[2].gen_tps, 200.0 / 20.0);
        assert_eq!(t.total[1].running, 10.0);
    }
}
