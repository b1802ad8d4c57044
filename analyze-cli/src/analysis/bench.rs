//! Benchmark runs: request latency percentiles (TTFT, TPOT, ITL, E2E) and goodput under
//! service-level objectives.

use super::quantile::Summary;
use serde::Serialize;
use tokstat_parsers::bench::{Request, Run};

/// Service-level objectives, in seconds (`--slo ttft=2s,tpot=50ms`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Slo {
    pub ttft_s: Option<f64>,
    pub tpot_s: Option<f64>,
    pub itl_s: Option<f64>,
    pub e2e_s: Option<f64>,
}

impl Slo {
    /// Parses `ttft=2s,tpot=50ms,e2e=30s` (units `ms`, `s`, `m`; bare numbers are seconds).
    pub fn parse(s: &str) -> Result<Slo, String> {
        let mut slo = Slo::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected NAME=DURATION, e.g. ttft=2s"))?;
            let secs = duration(v)
                .ok_or_else(|| format!("`{v}`: expected a duration such as 2s, 50ms, 1.5m"))?;
            match k.trim() {
                "ttft" => slo.ttft_s = Some(secs),
                "tpot" => slo.tpot_s = Some(secs),
                "itl" => slo.itl_s = Some(secs),
                "e2e" | "e2el" => slo.e2e_s = Some(secs),
                other => {
                    return Err(format!(
                        "`{other}`: unknown objective (ttft, tpot, itl, e2e)"
                    ))
                }
            }
        }
        Ok(slo)
    }

    fn met(&self, r: &Request) -> bool {
        let ok =
            |limit: Option<f64>, v: Option<f64>| limit.is_none_or(|l| v.is_some_and(|x| x <= l));
        !r.error
            && ok(self.ttft_s, r.ttft_s)
            && ok(self.tpot_s, r.tpot_s)
            && ok(self.itl_s, r.itl_mean_s)
            && ok(self.e2e_s, r.e2e_s)
    }

    pub fn is_set(&self) -> bool {
        *self != Slo::default()
    }
}

/// A duration as people write it, in seconds: humantime's forms (`2s`, `50ms`, `1h 30m`,
/// `2min`), a decimal with one unit (`1.5m`, `0.25s`: humantime reads whole numbers only), or
/// bare seconds (`3`).
pub fn duration(v: &str) -> Option<f64> {
    let v = v.trim();
    if let Ok(d) = humantime::parse_duration(v) {
        return Some(d.as_secs_f64());
    }
    let (num, unit) = v.split_at(v.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(v.len()));
    let scale = match unit {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return None,
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .map(|x| x * scale)
}

/// What a report shows of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunReport {
    pub name: String,
    /// The client's settings, where the run states them: its request rate (infinite: all
    /// at once) and its concurrency limit.
    pub request_rate: Option<f64>,
    pub max_concurrency: Option<f64>,
    pub duration_s: Option<f64>,
    pub completed: Option<f64>,
    pub request_throughput: Option<f64>,
    pub output_throughput: Option<f64>,
    pub requests: usize,
    pub errors: usize,
    /// Per-request distributions, in milliseconds (None when the file has no per-request lists).
    pub ttft_ms: Option<Summary>,
    pub tpot_ms: Option<Summary>,
    pub itl_ms: Option<Summary>,
    pub e2e_ms: Option<Summary>,
    /// The tool's own summary figures (ms): used where there are no per-request lists.
    pub median_ttft_ms: Option<f64>,
    pub median_tpot_ms: Option<f64>,
    pub median_itl_ms: Option<f64>,
    pub median_e2e_ms: Option<f64>,
    pub p99_ttft_ms: Option<f64>,
    pub p99_tpot_ms: Option<f64>,
    pub p99_itl_ms: Option<f64>,
    pub p99_e2e_ms: Option<f64>,
    /// Requests meeting every objective, per second of the run, and their share.
    pub goodput: Option<f64>,
    pub goodput_share: Option<f64>,
    /// The goodput the tool itself recorded (`request_goodput`, or vLLM ≤ 0.9.1's `request_goodput:`).
    pub recorded_goodput: Option<f64>,
}

/// A latency's median for display: the p50 of the per-request values, else the median the
/// file states.
fn p50(per_request: &Option<Summary>, stated: Option<f64>) -> Option<f64> {
    per_request.as_ref().map(|s| s.p50).or(stated)
}

impl RunReport {
    /// TTFT's median, ms (see [`p50`]).
    pub fn ttft_p50_ms(&self) -> Option<f64> {
        p50(&self.ttft_ms, self.median_ttft_ms)
    }
    /// TPOT's median, ms.
    pub fn tpot_p50_ms(&self) -> Option<f64> {
        p50(&self.tpot_ms, self.median_tpot_ms)
    }
    /// End-to-end latency's median, ms.
    pub fn e2e_p50_ms(&self) -> Option<f64> {
        p50(&self.e2e_ms, self.median_e2e_ms)
    }
}

fn ms(rs: &[Request], f: impl Fn(&Request) -> Option<f64>) -> Option<Summary> {
    let mut v: Vec<f64> = rs
        .iter()
        .filter_map(f)
        .filter(|x| x.is_finite())
        .map(|x| x * 1000.0)
        .collect();
    Summary::of(&mut v)
}

/// Summarises one run.
pub fn analyze(run: &Run, slo: &Slo) -> RunReport {
    let rs = &run.requests;
    let duration = run.get(&["duration", "benchmark_duration"]);
    let good = rs.iter().filter(|r| slo.met(r)).count();
    let (goodput, share) = if slo.is_set() && !rs.is_empty() {
        (
            duration.filter(|d| *d > 0.0).map(|d| good as f64 / d),
            Some(good as f64 / rs.len() as f64),
        )
    } else {
        (None, None)
    };
    RunReport {
        name: if run.name.is_empty() {
            "run".into()
        } else {
            run.name.clone()
        },
        request_rate: run.get(&["request_rate"]),
        max_concurrency: run.get(&["max_concurrency"]),
        duration_s: duration,
        completed: run.get(&["completed"]),
        request_throughput: run.get(&["request_throughput"]),
        output_throughput: run.get(&["output_throughput", "output_token_throughput"]),
        requests: rs.len(),
        errors: rs.iter().filter(|r| r.error).count(),
        ttft_ms: ms(rs, |r| r.ttft_s),
        tpot_ms: ms(rs, |r| r.tpot_s),
        itl_ms: ms(rs, |r| r.itl_mean_s),
        e2e_ms: ms(rs, |r| r.e2e_s),
        median_ttft_ms: run.get(&["median_ttft_ms", "median_ttft"]),
        median_tpot_ms: run.get(&["median_tpot_ms"]),
        median_itl_ms: run.get(&["median_itl_ms", "median_itl"]),
        median_e2e_ms: run.get(&[
            "median_e2e_latency_ms",
            "median_e2e_latency",
            "median_e2el_ms",
        ]),
        p99_ttft_ms: run.get(&["p99_ttft_ms"]),
        p99_tpot_ms: run.get(&["p99_tpot_ms"]),
        p99_itl_ms: run.get(&["p99_itl_ms"]),
        p99_e2e_ms: run.get(&["p99_e2e_latency_ms", "p99_e2el_ms"]),
        goodput,
        goodput_share: share,
        recorded_goodput: run.get(&["request_goodput", "request_goodput:"]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        for (text, secs) in [
            ("2s", 2.0),
            ("50ms", 0.05),
            ("1.5m", 90.0),
            ("1h 30m", 5400.0),
            ("2min", 120.0),
            ("3", 3.0),
            (" 0.25s ", 0.25),
            ("1h", 3600.0),
        ] {
            assert_eq!(duration(text), Some(secs), "{text}");
        }
        for bad in ["fast", "-1s", "1.5x", "", "NaNs"] {
            assert_eq!(duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn slo_parsing() {
        let s = Slo::parse("ttft=2s, tpot=50ms,e2e=1.5m").unwrap();
        assert_eq!(
            (s.ttft_s, s.tpot_s, s.e2e_s, s.itl_s),
            (Some(2.0), Some(0.05), Some(90.0), None)
        );
        assert!(Slo::parse("ttft").is_err());
        assert!(Slo::parse("foo=1s").is_err());
        assert!(Slo::parse("ttft=fast").is_err());
    }
}
