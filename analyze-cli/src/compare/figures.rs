//! The key figures of each run, and each one's change against the first run with its
//! interval and verdict.

use super::unit::Unit;
use super::{BetterWhen, FigureRow, Method, Verdict};
use crate::analysis::statistics::{self, Buckets, ConfidenceInterval};
use crate::report::TimelineRow;

/// A run's figure and its own interval, where it has one.
type WithIntervalOf = fn(&Unit<'_>) -> Option<(f64, Option<ConfidenceInterval>)>;

/// What a figure is computed from.
enum Source {
    /// A statistic of means of steady-bucket columns.
    Buckets {
        columns: Vec<fn(&TimelineRow) -> Option<f64>>,
        stat: fn(&[f64]) -> f64,
        /// Divided by the run's instance count (per-instance figures).
        per_instance: bool,
        /// The figure as the run's analysis states it, where it has one (the steady rate,
        /// weighted by the time each bucket was served): the value shown, while the
        /// buckets give the interval.
        stated: Option<ValueOf>,
    },
    /// A quantile of per-request values.
    Quantile {
        values: ValuesOf,
        q: f64,
        /// The run's own figure where it has no per-request values (a benchmark summary).
        point: ValueOf,
    },
    /// A proportion: `(successes, trials)`.
    Proportion(fn(&Unit<'_>) -> Option<(u64, u64)>),
    /// A figure with an interval of its own in each run (the knee's bootstrap).
    Interval(WithIntervalOf),
    /// A figure with no samples behind it.
    Point(ValueOf),
}

struct Compared {
    name: &'static str,
    unit: &'static str,
    better_when: BetterWhen,
    source: Source,
}

/// A steady bucket's rate as the steady window was found in: over the time it was served
/// (see `TimelineRow::serving_gen_tps`).
pub(super) fn gen(r: &TimelineRow) -> Option<f64> {
    r.serving_gen_tps
}
fn running(r: &TimelineRow) -> Option<f64> {
    r.running
}
fn waiting(r: &TimelineRow) -> Option<f64> {
    r.waiting
}
fn kv(r: &TimelineRow) -> Option<f64> {
    r.kv_usage
}
fn accept(r: &TimelineRow) -> Option<f64> {
    r.accept_len
}
fn first(m: &[f64]) -> f64 {
    m[0]
}
fn per(m: &[f64]) -> f64 {
    m[0] / m[1]
}

fn output_tokens(u: &Unit<'_>) -> Vec<f64> {
    u.samples.map_or_else(Vec::new, |s| s.output_tokens.clone())
}

/// Milliseconds of one latency of every benchmark request that has it.
fn latency(u: &Unit<'_>, f: fn(&tokstat_parsers::loadgen::Request) -> Option<f64>) -> Vec<f64> {
    u.samples.map_or_else(Vec::new, |s| {
        s.requests
            .iter()
            .filter(|r| !r.error)
            .filter_map(f)
            .map(|v| v * 1000.0)
            .collect()
    })
}

type ValuesOf = fn(&Unit<'_>) -> Vec<f64>;
type ValueOf = fn(&Unit<'_>) -> Option<f64>;

fn none(_: &Unit<'_>) -> Option<f64> {
    None
}

fn ttft(u: &Unit<'_>) -> Vec<f64> {
    latency(u, |r| r.ttft_s)
}
fn tpot(u: &Unit<'_>) -> Vec<f64> {
    latency(u, |r| r.tpot_s)
}
fn itl(u: &Unit<'_>) -> Vec<f64> {
    latency(u, |r| r.itl_mean_s)
}
fn e2e(u: &Unit<'_>) -> Vec<f64> {
    latency(u, |r| r.e2e_s)
}

/// The mean of a benchmark figure over a run's result files.
pub(super) fn bench_point(
    u: &Unit<'_>,
    f: fn(&crate::analysis::bench::RunReport) -> Option<f64>,
) -> Option<f64> {
    let v: Vec<f64> = u.report.bench_runs.iter().filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The latency figures: their p50 and p99 names, their per-request values, and the result
/// file's (or console summary's) own median and p99 where there are no per-request lists.
pub(super) const LATENCIES: [(&str, &str, ValuesOf, ValueOf, ValueOf); 4] = [
    (
        "TTFT p50",
        "TTFT p99",
        ttft,
        |u| bench_point(u, |b| b.median_ttft_ms),
        |u| bench_point(u, |b| b.p99_ttft_ms),
    ),
    (
        "TPOT p50",
        "TPOT p99",
        tpot,
        |u| bench_point(u, |b| b.median_tpot_ms),
        |u| bench_point(u, |b| b.p99_tpot_ms),
    ),
    (
        "ITL p50",
        "ITL p99",
        itl,
        |u| bench_point(u, |b| b.median_itl_ms),
        |u| bench_point(u, |b| b.p99_itl_ms),
    ),
    (
        "E2E p50",
        "E2E p99",
        e2e,
        |u| bench_point(u, |b| b.median_e2e_ms),
        |u| bench_point(u, |b| b.p99_e2e_ms),
    ),
];

fn figures() -> Vec<Compared> {
    use BetterWhen::*;
    let buckets =
        |columns: Vec<fn(&TimelineRow) -> Option<f64>>, stat: fn(&[f64]) -> f64| Source::Buckets {
            columns,
            stat,
            per_instance: false,
            stated: None,
        };
    let steady = |per_instance: bool| Source::Buckets {
        columns: vec![gen],
        stat: first,
        per_instance,
        stated: Some(|u: &Unit<'_>| u.steady_gen_tps),
    };
    let mut v = vec![
        Compared {
            name: "steady gen tok/s",
            unit: "tok/s",
            better_when: Higher,
            source: steady(false),
        },
        Compared {
            name: "steady gen tok/s per instance",
            unit: "tok/s",
            better_when: Higher,
            source: steady(true),
        },
        Compared {
            name: "tok/s per running request",
            unit: "tok/s",
            better_when: Higher,
            source: buckets(vec![gen, running], per),
        },
        Compared {
            name: "mean running",
            unit: "requests",
            better_when: Neither,
            source: buckets(vec![running], first),
        },
        Compared {
            name: "mean waiting",
            unit: "requests",
            better_when: Neither,
            source: buckets(vec![waiting], first),
        },
        Compared {
            name: "KV cache usage",
            unit: "share",
            better_when: Neither,
            source: buckets(vec![kv], first),
        },
        Compared {
            name: "accept length",
            unit: "tokens",
            better_when: Higher,
            source: buckets(vec![accept], first),
        },
        Compared {
            name: "knee",
            unit: "running",
            better_when: Higher,
            source: Source::Interval(|u| Some((u.knee?, u.knee_interval))),
        },
    ];
    for (name, q) in [
        ("output tokens p50", 0.5),
        ("output tokens p90", 0.9),
        ("output tokens p99", 0.99),
    ] {
        v.push(Compared {
            name,
            unit: "tokens",
            better_when: Neither,
            source: Source::Quantile {
                values: output_tokens,
                q,
                point: none,
            },
        });
    }
    v.push(Compared {
        name: "cap-hit rate",
        unit: "share",
        better_when: Lower,
        source: Source::Proportion(|u| {
            let c = &u.report.completions.as_ref()?.figures;
            c.cap.value?;
            Some((c.cap.hits, c.count))
        }),
    });
    v.push(Compared {
        name: "failure rate",
        unit: "share",
        better_when: Lower,
        source: Source::Proportion(|u| {
            let c = &u.report.completions.as_ref()?.figures;
            Some((c.finish_reasons.get("error").copied().unwrap_or(0), c.count))
        }),
    });
    v.push(Compared {
        name: "request failure rate",
        unit: "share",
        better_when: Lower,
        source: Source::Proportion(|u| {
            let runs = &u.report.bench_runs;
            let failed: Option<f64> = runs.iter().map(|b| b.failures()).sum();
            let total: Option<f64> = runs.iter().map(|b| b.total()).sum();
            Some((failed?.round() as u64, total?.round() as u64))
        }),
    });
    // per-request latencies, each with the result file's (or console summary's) own median
    // and p99 where there are no per-request lists
    for (p50, p99, values, point50, point99) in LATENCIES {
        for (name, q, point) in [(p50, 0.5, point50), (p99, 0.99, point99)] {
            v.push(Compared {
                name,
                unit: "ms",
                better_when: Lower,
                source: Source::Quantile { values, q, point },
            });
        }
    }
    v.push(Compared {
        name: "request throughput",
        unit: "req/s",
        better_when: Higher,
        source: Source::Point(|u| bench_point(u, |b| b.req_per_s())),
    });
    v.push(Compared {
        name: "output token throughput",
        unit: "tok/s",
        better_when: Higher,
        source: Source::Point(|u| bench_point(u, |b| b.out_tok_per_s())),
    });
    v.push(Compared {
        name: "goodput",
        unit: "req/s",
        better_when: Higher,
        source: Source::Point(|u| bench_point(u, |b| b.goodput)),
    });
    v.push(Compared {
        name: "scraped gen tok/s",
        unit: "tok/s",
        better_when: Higher,
        source: Source::Point(|u| u.report.metrics.as_ref()?.gen_tps),
    });
    // the run and its server on one clock: both sides' figures and the client's path
    let clock: [(&str, &str, BetterWhen, ValueOf); 7] = [
        ("clock offset (server − client)", "s", Neither, |u| {
            Some(one_clock(u, false)?.alignment.offset()?.offset_s)
        }),
        ("client requests in flight", "requests", Neither, |u| {
            Some(one_clock(u, false)?.little?.client_in_flight)
        }),
        ("server running + waiting", "requests", Neither, |u| {
            Some(one_clock(u, false)?.little?.server_in_flight)
        }),
        ("Little's law (server ÷ λW)", "ratio", Neither, |u| {
            Some(one_clock(u, false)?.little?.ratio)
        }),
        ("queue share of client TTFT", "share", Lower, |u| {
            Some(one_clock(u, true)?.queue_share?.share)
        }),
        ("server TTFT mean", "ms", Lower, |u| {
            Some(path_mean(one_clock(u, true)?)?.server_ms)
        }),
        ("client path (TTFT mean)", "ms", Lower, |u| {
            Some(path_mean(one_clock(u, true)?)?.path_ms)
        }),
    ];
    for (name, unit, better_when, of) in clock {
        v.push(Compared {
            name,
            unit,
            better_when,
            source: Source::Point(of),
        });
    }
    v
}

/// The run's first benchmark run on one clock with its server: beside the scrapes first
/// where `histograms` (their TTFT and queue histograms are exact means), else beside
/// whichever was aligned first.
fn one_clock<'a>(
    u: &Unit<'a>,
    histograms: bool,
) -> Option<&'a crate::analysis::one_clock::OneClock> {
    let aligned = || {
        u.report
            .one_clock
            .iter()
            .filter(|c| c.alignment.offset().is_some())
    };
    let scrapes = aligned().find(|c| c.server == "scrapes");
    if histograms {
        scrapes.or_else(|| aligned().next())
    } else {
        aligned().next()
    }
}

/// The client's mean TTFT against the server's, where the scrapes have the histogram.
fn path_mean(
    c: &crate::analysis::one_clock::OneClock,
) -> Option<&crate::analysis::one_clock::PathAt> {
    c.ttft_path.iter().find(|p| p.at == "mean")
}

/// The steady rows of a run where every column has a value, as columns.
fn columns(u: &Unit<'_>, cols: &[fn(&TimelineRow) -> Option<f64>]) -> Vec<Vec<f64>> {
    let mut out = vec![Vec::new(); cols.len()];
    for r in &u.steady {
        let vals: Option<Vec<f64>> = cols.iter().map(|c| c(r)).collect();
        if let Some(vals) = vals {
            for (o, v) in out.iter_mut().zip(vals) {
                o.push(v);
            }
        }
    }
    out
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// One figure's values and, where its samples allow, the interval of the change.
struct Estimate {
    values: [Option<f64>; 2],
    ci: Option<ConfidenceInterval>,
    p_value: Option<f64>,
    method: Method,
}

fn change(f: &Compared, a: &Unit<'_>, b: &Unit<'_>) -> Estimate {
    match &f.source {
        Source::Buckets {
            columns: cols,
            stat,
            per_instance,
            stated,
        } => {
            let (ca, cb) = (columns(a, cols), columns(b, cols));
            let scale = |u: &Unit<'_>| {
                if *per_instance {
                    u.instances.max(1) as f64
                } else {
                    1.0
                }
            };
            let value = |c: &[Vec<f64>], u: &Unit<'_>| {
                (!c[0].is_empty())
                    .then(|| stat(&c.iter().map(|v| mean(v)).collect::<Vec<_>>()) / scale(u))
            };
            let values = match stated {
                Some(of) => [of(a).map(|v| v / scale(a)), of(b).map(|v| v / scale(b))],
                None => [value(&ca, a), value(&cb, b)],
            };
            let ci = statistics::ratio_interval(
                &Buckets {
                    columns: ca.iter().map(Vec::as_slice).collect(),
                },
                &Buckets {
                    columns: cb.iter().map(Vec::as_slice).collect(),
                },
                stat,
            )
            .and_then(|(_, r)| {
                // the ratio's interval as one of the difference, from the first run's value
                let va = values[0]?;
                let k = scale(a) / scale(b);
                Some(ConfidenceInterval {
                    low: va * (r.low * k - 1.0),
                    high: va * (r.high * k - 1.0),
                })
            });
            Estimate {
                values,
                ci,
                p_value: None,
                method: Method::EffectiveSampleSize,
            }
        }
        Source::Quantile { values, q, point } => {
            let (va, vb) = (sorted(values(a)), sorted(values(b)));
            if va.len() >= 2 && vb.len() >= 2 {
                let (qa, qb) = (
                    crate::analysis::quantile::quantile(&va, *q),
                    crate::analysis::quantile::quantile(&vb, *q),
                );
                let ci = statistics::quantile_interval(&va, *q)
                    .zip(statistics::quantile_interval(&vb, *q))
                    .map(|(ia, ib)| statistics::difference_interval(qa, ia, qb, ib));
                Estimate {
                    values: [Some(qa), Some(qb)],
                    ci,
                    p_value: statistics::mann_whitney(&va, &vb),
                    method: Method::OrderStatistics,
                }
            } else {
                Estimate {
                    values: [point(a), point(b)],
                    ci: None,
                    p_value: None,
                    method: Method::Point,
                }
            }
        }
        Source::Proportion(of) => match (of(a), of(b)) {
            (Some((xa, na)), Some((xb, nb))) if na > 0 && nb > 0 => Estimate {
                values: [Some(xa as f64 / na as f64), Some(xb as f64 / nb as f64)],
                ci: statistics::proportion_difference(xa, na, xb, nb).map(|(_, i)| i),
                p_value: None,
                method: Method::Newcombe,
            },
            (pa, pb) => Estimate {
                values: [
                    pa.filter(|p| p.1 > 0).map(|(x, n)| x as f64 / n as f64),
                    pb.filter(|p| p.1 > 0).map(|(x, n)| x as f64 / n as f64),
                ],
                ci: None,
                p_value: None,
                method: Method::Newcombe,
            },
        },
        Source::Interval(of) => {
            let (ka, kb) = (of(a), of(b));
            let ci = match (ka, kb) {
                (Some((qa, Some(ia))), Some((qb, Some(ib)))) => {
                    Some(statistics::difference_interval(qa, ia, qb, ib))
                }
                _ => None,
            };
            Estimate {
                values: [ka.map(|k| k.0), kb.map(|k| k.0)],
                ci,
                p_value: None,
                method: Method::Bootstrap,
            }
        }
        Source::Point(of) => Estimate {
            values: [of(a), of(b)],
            ci: None,
            p_value: None,
            method: Method::Point,
        },
    }
}

/// The verdict on a change: significant (its interval excludes zero, or a point figure) and
/// at least `threshold` of the first value (any change of a zero), read in the figure's
/// preferred direction.
fn verdict(
    better_when: BetterWhen,
    values: [Option<f64>; 2],
    ci: Option<ConfidenceInterval>,
    method: Method,
    threshold: f64,
) -> (Option<bool>, Verdict) {
    let (Some(a), Some(b)) = (values[0], values[1]) else {
        return (None, Verdict::Missing);
    };
    let significant = match (ci, method) {
        (Some(i), _) => Some(i.excludes(0.0)),
        (None, Method::Point) => None,
        // too few samples for an interval
        (None, _) => Some(false),
    };
    let practical = if a != 0.0 {
        ((b - a) / a).abs() >= threshold
    } else {
        b != 0.0
    };
    if significant == Some(false) || !practical {
        return (significant, Verdict::Same);
    }
    let up = b > a;
    let v = match better_when {
        BetterWhen::Higher if up => Verdict::Better,
        BetterWhen::Higher => Verdict::Worse,
        BetterWhen::Lower if up => Verdict::Worse,
        BetterWhen::Lower => Verdict::Better,
        BetterWhen::Neither if up => Verdict::Higher,
        BetterWhen::Neither => Verdict::Lower,
    };
    (significant, v)
}

/// Every figure that some run has, for each later run against the first.
pub fn rows(units: &[Unit<'_>], threshold: f64) -> Vec<FigureRow> {
    let base = &units[0];
    let mut out = Vec::new();
    for f in figures() {
        for u in &units[1..] {
            let c = change(&f, base, u);
            if c.values.iter().all(Option::is_none) {
                continue;
            }
            let (significant, verdict) =
                verdict(f.better_when, c.values, c.ci, c.method, threshold);
            let (delta, ratio) = match c.values {
                [Some(a), Some(b)] => (Some(b - a), (a != 0.0).then(|| b / a)),
                _ => (None, None),
            };
            out.push(FigureRow {
                name: f.name.to_string(),
                unit: f.unit,
                better_when: f.better_when,
                base: base.label.clone(),
                run: u.label.clone(),
                values: c.values,
                delta,
                ratio,
                ci_low: c.ci.map(|i| i.low),
                ci_high: c.ci.map(|i| i.high),
                p_value: c.p_value,
                significant,
                verdict,
                method: c.method,
            });
        }
    }
    out
}
