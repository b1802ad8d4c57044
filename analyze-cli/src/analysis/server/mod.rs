//! The server-side analysis of a run's logs: timeline, steady state, segments, the
//! concurrency curve and per-instance throughput, from every instance's lines settled ([`crate::analysis::settle`]).
//! The report's sections it fills are in [`sections`].

pub mod sections;

use crate::analysis::curve::{self, Bin, Knee};
use crate::analysis::lifecycle::{self, Life};
use crate::analysis::segments::{self, Reason, SettingChange};
use crate::analysis::settle::{self, Settled};
use crate::analysis::steady::{self, Steady};
use crate::analysis::timeline::{self, Timeline};
use crate::analysis::trend::{self, Trend};
use crate::ingest::digest::grid::tokens_of;
use crate::ingest::digest::load::Load;
use crate::ingest::instance::Instance;
use anyhow::Result;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Where an instance's log is cut, and why.
type Cuts = Vec<(i64, Reason)>;

/// An instance's steady throughput this far from the median flags an imbalance.
pub const IMBALANCE: f64 = 0.15;

/// One segment of the run (see [`segments`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub index: usize,
    pub reason: Reason,
    /// First and last stamp inside, ms.
    pub start: i64,
    pub end: i64,
    /// Bucket range of the segment in the timeline.
    pub buckets: (usize, usize),
    pub gen_tokens: f64,
    /// Tokens over the time instances were working.
    pub gen_tps_mean: f64,
    /// Seconds its instances were serving (their stats lines' intervals), per instance.
    pub busy_s: f64,
    pub steady: Option<Steady>,
    /// Whether the steady window holds steady (see [`trend`]).
    pub trend: Option<Trend>,
    /// The stats lines of all instances within the steady window: the evidence the
    /// window's figures and hints stand on.
    pub window_lines: u64,
    /// Best one-minute window (or as long as the steady window, if that is shorter).
    pub peak_tps: Option<f64>,
    /// The buckets of that window.
    pub peak_window: usize,
    pub instances: usize,
    pub changes: Vec<SettingChange>,
    /// Settings of the segment, per key the distinct values (`max_running_requests` …).
    pub settings: BTreeMap<String, Vec<String>>,
}

impl Segment {
    /// The steady rate: the window's mean, unless its trend test finds a drift (or a ramp).
    pub fn steady_tps(&self) -> Option<f64> {
        let drifts = self.trend.is_some_and(|t| !t.verdict.steady());
        self.steady.filter(|_| !drifts).map(|s| s.rate)
    }

    /// The mean over the steady window, whatever its trend.
    pub fn window_tps(&self) -> Option<f64> {
        self.steady.map(|s| s.rate)
    }

    /// Its steady window as timeline buckets: the one definition of "in steady".
    pub fn steady_buckets(&self) -> Option<std::ops::Range<usize>> {
        self.steady
            .map(|st| self.buckets.0 + st.start..self.buckets.0 + st.end)
    }
}

/// One instance's throughput, for the per-instance table and imbalance.
#[derive(Debug, Clone, PartialEq)]
pub struct InstanceRow {
    pub name: String,
    /// Mean rate over the run's steady buckets.
    pub gen_tps: f64,
    pub gen_tokens: f64,
    /// Half the 95% interval of `gen_tps` (its steady buckets' effective sample size; 0
    /// below 3 buckets).
    pub gen_tps_half: f64,
    /// Relative difference from the median instance's steady rate.
    pub vs_median: f64,
    pub imbalanced: bool,
}

impl InstanceRow {
    /// `vs_median`'s interval from `gen_tps`'s (the median's own taken as it is).
    pub fn vs_median_interval(&self) -> (f64, f64) {
        let med = self.gen_tps / (1.0 + self.vs_median);
        if med.is_nan() || med <= 0.0 {
            return (self.vs_median, self.vs_median);
        }
        (
            (self.gen_tps - self.gen_tps_half) / med - 1.0,
            (self.gen_tps + self.gen_tps_half) / med - 1.0,
        )
    }

    /// Beyond [`IMBALANCE`] over all its interval (`Some(true)`), over part of it
    /// (`Some(false)`: borderline), or not at all (`None`).
    pub fn beyond_imbalance(&self) -> Option<bool> {
        let (lo, hi) = self.vs_median_interval();
        if lo > IMBALANCE || hi < -IMBALANCE {
            Some(true)
        } else if hi > IMBALANCE || lo < -IMBALANCE {
            Some(false)
        } else {
            None
        }
    }
}

/// The whole analysis.
#[derive(Debug, Clone, Default)]
pub struct Server {
    pub timeline: Timeline,
    pub segments: Vec<Segment>,
    /// Steady rate over the segments' steady windows that hold steady (time-weighted).
    pub steady_tps: Option<f64>,
    /// The mean over all the segments' steady windows, whatever their trends.
    pub window_tps: Option<f64>,
    pub peak_tps: Option<f64>,
    pub gen_tokens: f64,
    pub curve: Vec<Bin>,
    pub knee: Option<Knee>,
    pub instances: Vec<InstanceRow>,
    /// Places where lines out of time order, or an edge between segments, could not be
    /// placed exactly (see [`crate::ingest::digest`]); 0 on logs read in time order.
    pub inexact: u64,
    /// Each instance's time: starting, serving, idle (by name, every instance with a stamp).
    pub lifecycle: Vec<(String, Life)>,
}

impl Server {
    /// Whether a timeline bucket lies in some segment's steady window.
    pub fn in_steady(&self, k: usize) -> bool {
        self.segments
            .iter()
            .any(|s| s.steady_buckets().is_some_and(|r| r.contains(&k)))
    }

    /// A segment's steady window in time, ms: from its first bucket's start to its last
    /// bucket's end.
    pub fn steady_span(&self, g: &Segment) -> Option<(i64, i64)> {
        let r = g.steady_buckets()?;
        let tl = &self.timeline;
        Some((tl.total[r.start].ts, tl.total[r.end - 1].ts + tl.bucket_ms))
    }
}

/// Runs the analysis over the instances of a log summary.
pub fn analyze(instances: &BTreeMap<String, Instance>, bucket_ms: Option<i64>) -> Result<Server> {
    let settled: Vec<Settled> = instances
        .par_iter()
        .map(|(_, i)| settle::settle(&i.digest))
        .collect();
    let lifecycle: Vec<(String, Life)> = instances
        .iter()
        .zip(&settled)
        .filter_map(|((n, i), l)| {
            let span = (i.first?.0, i.last?.0);
            let serving: i64 = l.run.load.levels().map(|(_, v)| v.ms).sum();
            let d = &i.digest;
            let life = lifecycle::life(
                span,
                l.span().map(|s| s.0),
                d.settings(),
                d.events(),
                serving,
            );
            Some((n.clone(), life))
        })
        .collect();
    let named: Vec<(&str, &Settled, &Instance)> = instances
        .iter()
        .zip(&settled)
        .map(|((n, i), l)| (n.as_str(), l, i))
        .filter(|(_, l, _)| l.span().is_some())
        .collect();
    if named.is_empty() {
        return Ok(Server {
            lifecycle,
            ..Server::default()
        });
    }
    let own_cuts: Vec<&Cuts> = named.iter().map(|(_, l, _)| &l.cuts).collect();
    let inputs: Vec<timeline::InstanceCells<'_>> = named
        .iter()
        .map(|(n, l, i)| timeline::InstanceCells {
            name: n,
            lines: l,
            events: i.digest.events(),
            responses: &i.census.responses,
        })
        .collect();
    // run-wide segments
    let run_cuts = segments::cluster(own_cuts.iter().copied().flatten().copied().collect());
    let first = named
        .iter()
        .filter_map(|(_, l, _)| l.span())
        .map(|s| s.0)
        .min()
        .unwrap_or(0);
    let first_start = named
        .iter()
        .filter_map(|(_, l, _)| l.first_start)
        .min()
        .unwrap_or(first);
    let mut bounds: Vec<(i64, Reason)> = vec![(i64::MIN, Reason::Begin)];
    bounds.extend(run_cuts);
    // each instance's own edges for the run's segments: its own cut where it has one in
    // the cluster, else the run's
    let edges: Vec<Vec<i64>> = own_cuts
        .iter()
        .map(|own| {
            bounds
                .iter()
                .map(|&(t, _)| {
                    own.iter()
                        .map(|c| c.0)
                        .find(|&c| t != i64::MIN && (c - t).abs() <= segments::CLUSTER_MS)
                        .unwrap_or(t)
                })
                .collect()
        })
        .collect();
    let range = |e: &[i64], k: usize| (e[k], e.get(k + 1).copied().unwrap_or(i64::MAX));
    let mut load = Load::default();
    for (_, l, _) in &named {
        load.merge(l.run.load.clone());
    }
    let (tl, bins) = rayon::join(
        || timeline::build(&inputs, bucket_ms),
        || curve::curve(&load),
    );
    // each instance's tokens and busy time per segment: the intervals ending before each
    // edge, and whether an edge fell where that could not be told exactly
    let mut inexact: u64 = named.iter().map(|(_, l, _)| l.inexact).sum();
    let parts: Vec<Vec<(f64, f64, bool)>> = named
        .iter()
        .zip(&edges)
        .map(|((_, l, _), e)| {
            (0..bounds.len())
                .map(|k| {
                    let (from, to) = range(e, k);
                    let ((a, x), (b, y)) = (l.before(from), l.before(to));
                    inexact += u64::from(!x) + u64::from(!y);
                    let mut t = b;
                    t.sub(a);
                    (tokens_of(t.tokens), t.ms as f64 / 1000.0, t.count > 0)
                })
                .collect()
        })
        .collect();
    let tl = tl?;
    let b = tl.bucket_ms;
    let bucket_of =
        |t: i64| ((t - tl.origin).div_euclid(b)).clamp(0, tl.total.len() as i64) as usize;
    let rates: Vec<f64> = tl.total.iter().map(|r| r.gen_tps).collect();
    let peak_w = (steady::PEAK_WINDOW_MS / b).max(1) as usize;
    let mut segs = Vec::new();
    let mut prev_settings: Vec<BTreeMap<&str, &str>> = Vec::new();
    for (k, &(_, reason)) in bounds.iter().enumerate() {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        let mut tokens = 0.0;
        let mut busy = 0.0;
        let mut active = 0;
        let mut settings_now: Vec<BTreeMap<&str, &str>> = Vec::new();
        for ((part, (_, l, d)), e) in parts.iter().zip(&named).zip(&edges) {
            let (from, to) = range(e, k);
            let (t, secs, mut any) = part[k];
            tokens += t;
            busy += secs;
            let (span, exact) = l.span_in(from, to);
            inexact += u64::from(!exact);
            if let Some((a, z)) = span {
                lo = lo.min(a);
                hi = hi.max(z);
                any = true;
            }
            active += usize::from(any);
            // settings: from the segment's start-up lines (a restart cut is the first of them)
            settings_now.push(segments::settings_in(d.digest.settings(), from, to));
        }
        if lo > hi {
            continue;
        }
        let lo = lo.max(first);
        // the first segment's buckets begin with its first interval, which ends at the
        // first stats line (its tokens are in the mean while serving)
        let from = if segs.is_empty() {
            lo.min(first_start)
        } else {
            lo
        };
        let buckets = (bucket_of(from), (bucket_of(hi) + 1).min(rates.len()));
        let slice = tl.serving_rates(buckets);
        let weights = tl.covered(buckets);
        let steady = steady::find(&slice, &weights);
        let trend = steady.map(|st| {
            let w = st.start..st.end;
            trend::test(
                &slice[w.clone()],
                &weights[w],
                b as f64 / 1000.0,
                st.end == slice.len(),
            )
        });
        let window_lines = steady.map_or(0, |st| {
            let t0 = tl.origin + (buckets.0 + st.start) as i64 * b;
            let t1 = tl.origin + (buckets.0 + st.end) as i64 * b;
            named
                .iter()
                .map(|(_, l, _)| {
                    let (mut t, _) = l.before(t1);
                    t.sub(l.before(t0).0);
                    t.count.max(0) as u64
                })
                .sum()
        });
        // a steady window shorter than the peak's window shrinks it: the best window is then
        // no longer than the steady one, which is among the candidates (peak ≥ steady); a
        // short excerpt's minute would otherwise average its few seconds with silence
        let peak_window = steady.map_or(peak_w, |st| peak_w.min(st.end - st.start));
        let peak_tps = steady::peak(&slice, &weights, peak_window).map(|p| p.1);
        let changes = if prev_settings.is_empty() {
            Vec::new()
        } else {
            segments::changes(
                prev_settings
                    .iter()
                    .cloned()
                    .zip(settings_now.iter().cloned()),
            )
        };
        let mut settings: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for m in &settings_now {
            for (k, v) in m {
                let e = settings.entry(k.to_string()).or_default();
                if !e.iter().any(|x| x == v) {
                    e.push(v.to_string());
                }
            }
        }
        prev_settings = settings_now;
        let busy_s = busy / active.max(1) as f64;
        segs.push(Segment {
            index: segs.len(),
            reason,
            start: lo,
            end: hi,
            buckets,
            gen_tokens: tokens,
            gen_tps_mean: if busy > 0.0 { tokens / busy_s } else { 0.0 },
            busy_s,
            steady,
            trend,
            window_lines,
            peak_tps,
            peak_window,
            instances: active,
            changes,
            settings,
        });
    }

    // the steady rate over the windows that hold steady; the mean over all of them beside
    let mean_over = |steady_only: bool| {
        let (mut tokens, mut secs) = (0.0, 0.0);
        for g in &segs {
            if let (Some(st), Some(rate)) = (
                g.steady,
                if steady_only {
                    g.steady_tps()
                } else {
                    g.window_tps()
                },
            ) {
                tokens += rate * st.weight;
                secs += st.weight;
            }
        }
        (secs > 0.0).then(|| tokens / secs)
    };
    let steady_tps = mean_over(true);
    let window_tps = mean_over(false);
    let peak_tps = segs
        .iter()
        .filter_map(|s| s.peak_tps)
        .max_by(f64::total_cmp);
    // (from 0, not the -0 of an empty float `sum`)
    let gen_tokens = tl.tokens.iter().fold(0.0, |a, b| a + b);
    let knee = curve::knee(&bins);

    let mut server = Server {
        timeline: tl,
        segments: segs,
        steady_tps,
        window_tps,
        peak_tps,
        gen_tokens,
        curve: bins,
        knee,
        instances: Vec::new(),
        inexact,
        lifecycle,
    };
    server.instances = instance_rows(&server);
    Ok(server)
}

/// Per-instance steady throughput over the run's steady buckets, and imbalance.
fn instance_rows(s: &Server) -> Vec<InstanceRow> {
    let steady: Vec<usize> = (0..s.timeline.total.len())
        .filter(|&k| s.in_steady(k))
        .collect();
    let mut rows: Vec<InstanceRow> = s
        .timeline
        .instances
        .iter()
        .zip(&s.timeline.tokens)
        .map(|((name, rows), &tokens)| {
            // (weighted by the time each bucket was served, as the run's steady rate)
            let b = s.timeline.bucket_ms;
            let rates: Vec<f64> = steady
                .iter()
                .map(|&k| rows[k].serving_gen_tps(b).unwrap_or(f64::NAN))
                .collect();
            let weights: Vec<f64> = steady.iter().map(|&k| rows[k].covered_s(b)).collect();
            let finite: Vec<f64> = rates.iter().copied().filter(|r| r.is_finite()).collect();
            InstanceRow {
                name: name.clone(),
                gen_tps: steady::weighted(&rates, &weights),
                gen_tps_half: crate::analysis::statistics::mean_half_width(&finite).unwrap_or(0.0),
                gen_tokens: tokens,
                vs_median: 0.0,
                imbalanced: false,
            }
        })
        .collect();
    let mut g: Vec<f64> = rows
        .iter()
        .map(|r| r.gen_tps)
        .filter(|g| *g > 0.0)
        .collect();
    if g.len() >= 2 {
        g.sort_unstable_by(f64::total_cmp);
        let med = crate::analysis::quantile::quantile(&g, 0.5);
        for r in &mut rows {
            r.vs_median = r.gen_tps / med - 1.0;
            r.imbalanced = r.vs_median.abs() > IMBALANCE;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::digest::Digest;
    use crate::ingest::series::{Prefill, Series};

    /// Regression: a log of prefill batches only (no rate logged) reported `-0.0` generated
    /// tokens in JSON and "-0 tok/s" in the table: an empty `sum` of floats is -0.
    #[test]
    fn no_rates_make_zero_tokens_not_minus_zero() {
        let mut m = BTreeMap::new();
        let series = Series {
            prefill: (0..5)
                .map(|k| Prefill {
                    ts: k * 1000,
                    new_tokens: 100,
                    at: 0,
                })
                .collect(),
            ..Series::default()
        };
        m.insert(
            "gpu0".to_string(),
            Instance {
                digest: Digest::of(&series),
                ..Instance::default()
            },
        );
        let s = analyze(&m, None).unwrap();
        assert_eq!(s.timeline.tokens.len(), 1);
        assert!(s.gen_tokens == 0.0 && s.gen_tokens.is_sign_positive());
        assert!(s.timeline.tokens[0].is_sign_positive());
        assert!(s.segments.iter().all(|g| g.gen_tps_mean.is_sign_positive()));
        // the prompt tokens still make the timeline
        let prompt: f64 = s.timeline.total.iter().map(|b| b.prompt_tps).sum();
        assert!(prompt > 0.0);
    }
}
