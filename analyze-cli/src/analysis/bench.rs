//! Benchmark runs: request latency percentiles (TTFT, TPOT, ITL, E2E) and goodput under
//! service-level objectives.

use super::quantile::Summary;
use serde::Serialize;
use tokstat_parsers::loadgen::{Request, Run, Stated};

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
    /// The load generator that wrote it ([`Tool::name`]) and its version where stamped.
    pub tool: &'static str,
    pub tool_version: Option<String>,
    pub model: Option<String>,
    pub endpoint: Option<String>,
    pub streaming: Option<bool>,
    /// The tool's name for the load (`concurrent`, `constant`, `sweep`, …).
    pub strategy: Option<String>,
    /// The client's settings, where the run states them: its request rate (infinite: all
    /// at once), its concurrency limit and the number of requests it was to send.
    pub request_rate: Option<f64>,
    pub max_concurrency: Option<f64>,
    pub num_prompts: Option<f64>,
    pub duration_s: Option<f64>,
    /// Successful requests and failed ones, as the file states them (else counted from its
    /// per-request rows).
    pub completed: Option<f64>,
    pub failed: Option<f64>,
    pub request_throughput: Option<f64>,
    pub output_throughput: Option<f64>,
    /// Per-request rows read (None when the file has none), the failed among them and the
    /// cancelled among those.
    pub requests: Option<usize>,
    pub errors: Option<usize>,
    pub cancelled: Option<usize>,
    /// The rows are a sample of the run's requests: their distributions are left out, the
    /// file's figures stand.
    pub requests_sampled: bool,
    /// Per-request distributions, in milliseconds (None when the file has no per-request rows).
    pub ttft_ms: Option<Summary>,
    pub tpot_ms: Option<Summary>,
    pub itl_ms: Option<Summary>,
    pub e2e_ms: Option<Summary>,
    /// The tool's own summary figures (ms): used where there are no per-request rows.
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
    /// tokstat's own throughput, recomputed from per-request rows with send and end times.
    pub recomputed: Option<Recomputed>,
    /// Where the tool's definitions differ from tokstat's.
    pub definitions: &'static [&'static str],
    /// Every figure as the tool wrote it (key, unit, value, and the figure it was put under).
    pub stated: Vec<Stated>,
    /// The server's side of the run, where the tool summarised it beside its results.
    pub server: Option<super::server_side::ServerSide>,
}

/// Throughput by tokstat's definitions, from per-request rows: over the span from the first
/// request sent to the last response, successful requests and their output tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Recomputed {
    pub span_s: f64,
    pub request_throughput: f64,
    pub output_throughput: Option<f64>,
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
    /// All requests of the run: the stated successful and failed, else the rows.
    pub fn total(&self) -> Option<f64> {
        match (self.completed, self.failed) {
            (Some(c), Some(f)) => Some(c + f),
            (Some(c), None) if self.errors.is_none() => Some(c),
            _ => self.requests.map(|n| n as f64),
        }
    }
    /// Failed requests: stated, else counted from the rows.
    pub fn failures(&self) -> Option<f64> {
        self.failed.or(self.errors.map(|e| e as f64))
    }
    /// The request rate shown: the tool's figure, else tokstat's recomputed one.
    pub fn req_per_s(&self) -> Option<f64> {
        self.request_throughput
            .or(self.recomputed.map(|r| r.request_throughput))
    }
    /// The client's figure under a server figure's name ([`super::server_side`]): from
    /// per-request rows first, else the file's own figures.
    pub fn figure(&self, name: &str, run: &Run) -> Option<f64> {
        let dist = |figure: &str| match figure {
            "ttft" => self.ttft_ms.as_ref(),
            "tpot" => self.tpot_ms.as_ref(),
            "itl" => self.itl_ms.as_ref(),
            "e2el" => self.e2e_ms.as_ref(),
            _ => None,
        };
        if let Some((stat, rest)) = name.split_once('_') {
            if let Some(figure) = rest.strip_suffix("_ms") {
                if let Some(s) = dist(figure) {
                    return match stat {
                        "mean" => Some(s.mean),
                        "median" => Some(s.p50),
                        "p90" => Some(s.p90),
                        "p99" => Some(s.p99),
                        _ => None,
                    };
                }
            }
        }
        match name {
            "window" => self.duration_s,
            "completed" => self.completed,
            "request_throughput" => self.req_per_s(),
            "output_throughput" => self.out_tok_per_s(),
            "median_e2el_ms" => self.median_e2e_ms,
            "p99_e2el_ms" => self.p99_e2e_ms,
            "total_output_tokens" | "mean_output_tokens" => {
                run.get(&[name]).or_else(|| per_request_tokens(run, name))
            }
            _ => run.get(&[name]),
        }
    }

    /// The output token rate shown: the tool's figure, else tokstat's recomputed one.
    pub fn out_tok_per_s(&self) -> Option<f64> {
        self.output_throughput
            .or(self.recomputed.and_then(|r| r.output_throughput))
    }
}

/// Output-token totals and means from per-request rows, where every successful row counts
/// its tokens.
fn per_request_tokens(run: &Run, name: &str) -> Option<f64> {
    let ok: Vec<_> = run.requests.iter().filter(|r| !r.error).collect();
    let total: Option<u64> = ok.iter().map(|r| r.output_len).sum();
    let total = total? as f64;
    match name {
        "total_output_tokens" => Some(total),
        _ => (!ok.is_empty()).then(|| total / ok.len() as f64),
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

/// tokstat's throughput from rows with times (see [`Recomputed`]).
fn recompute(rs: &[Request]) -> Option<Recomputed> {
    let first = rs.iter().filter_map(|r| r.start_s).min_by(f64::total_cmp)?;
    let last = rs.iter().filter_map(|r| r.end_s).max_by(f64::total_cmp)?;
    let span = last - first;
    if span.is_nan() || span <= 0.0 {
        return None;
    }
    let ok: Vec<&Request> = rs.iter().filter(|r| !r.error).collect();
    let out: Option<u64> = ok.iter().map(|r| r.output_len).sum();
    Some(Recomputed {
        span_s: span,
        request_throughput: ok.len() as f64 / span,
        output_throughput: out.map(|o| o as f64 / span),
    })
}

/// The runs a report covers: all, or the one `pick` names — its place from 1, or its name.
/// An unknown pick is an error listing the runs there are.
pub fn select<'a>(runs: &'a [Run], pick: Option<&str>) -> Result<Vec<&'a Run>, String> {
    let Some(pick) = pick else {
        return Ok(runs.iter().collect());
    };
    let found = match pick.parse::<usize>() {
        Ok(n) if n >= 1 => runs.get(n - 1),
        _ => runs.iter().find(|r| r.name == pick),
    };
    match found {
        Some(r) => Ok(vec![r]),
        None => {
            let names: Vec<String> = runs
                .iter()
                .enumerate()
                .map(|(i, r)| format!("{} {}", i + 1, r.name))
                .collect();
            Err(if names.is_empty() {
                format!("#{pick}: the inputs hold no benchmark run to pick from")
            } else {
                format!(
                    "#{pick}: no such benchmark; the inputs hold {} ({}): give its number or its name",
                    names.len(),
                    names.join(", ")
                )
            })
        }
    }
}

/// Summarises one run.
pub fn analyze(run: &Run, slo: &Slo) -> RunReport {
    let rs = &run.requests;
    let rows = !rs.is_empty();
    let recomputed = recompute(rs);
    let duration = run
        .get(&["duration", "benchmark_duration"])
        .or(recomputed.map(|r| r.span_s));
    let good = rs.iter().filter(|r| slo.met(r)).count();
    let (goodput, share) = if slo.is_set() && rows {
        (
            duration.filter(|d| *d > 0.0).map(|d| good as f64 / d),
            Some(good as f64 / rs.len() as f64),
        )
    } else {
        (None, None)
    };
    let errors = rs.iter().filter(|r| r.error).count();
    // distributions of a sample are not the run's
    let dist =
        |f: fn(&Request) -> Option<f64>| (!run.requests_sampled).then(|| ms(rs, f)).flatten();
    let mut report = RunReport {
        name: if run.name.is_empty() {
            "run".into()
        } else {
            run.name.clone()
        },
        tool: run.tool.name(),
        tool_version: run.setup.version.clone(),
        model: run.setup.model.clone(),
        endpoint: run.setup.endpoint.clone(),
        streaming: run.setup.streaming,
        strategy: run.setup.strategy.clone(),
        request_rate: run.get(&["request_rate"]),
        max_concurrency: run.get(&["max_concurrency"]),
        num_prompts: run.get(&["num_prompts"]),
        duration_s: duration,
        completed: run
            .get(&["completed"])
            .or((rows && !run.requests_sampled).then(|| (rs.len() - errors) as f64)),
        failed: run
            .get(&["failed"])
            .or((rows && !run.requests_sampled).then_some(errors as f64)),
        request_throughput: run.get(&["request_throughput"]),
        output_throughput: run.get(&["output_throughput", "output_token_throughput"]),
        requests: rows.then_some(rs.len()),
        errors: rows.then_some(errors),
        cancelled: rows.then(|| rs.iter().filter(|r| r.cancelled).count()),
        requests_sampled: run.requests_sampled,
        ttft_ms: dist(|r| r.ttft_s),
        tpot_ms: dist(|r| r.tpot_s),
        itl_ms: dist(|r| r.itl_mean_s),
        e2e_ms: dist(|r| r.e2e_s),
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
        recomputed,
        definitions: run.tool.definitions(),
        stated: run.stated.clone(),
        server: None,
    };
    report.server =
        super::server_side::analyze(run, &|name| report.figure(name, run), report.failures());
    report
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
