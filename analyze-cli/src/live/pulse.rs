//! `tokstat pulse`: a running job measured over a window. The inputs are read as they stand (the
//! whole job so far), then followed for the window in a few samples; what each sample
//! appended is read like any input (see [`window`]). From these come the window's rates on
//! the client side (completion records) and the server side (stats lines), the gap between
//! them, and, given the job's size, the work left and an ETA with its inputs shown.
//!
//! The ETA: remaining requests × projected output tokens per request ÷ the window's output
//! token rate. The projection follows the trend of output length along the job (a least-
//! squares line through every record's output tokens against its position, taken at the
//! middle of the requests left): later prompts may be longer. The 80% band comes from the
//! spread of the token rate between the window's samples (their 10th and 90th percentiles).

use super::scrape::Scraper;
use super::window::{Appended, Marks};
use crate::analysis::metrics::Metrics;
use crate::analysis::quantile::quantile;
use crate::ingest::completions::CompletionRow;
use crate::report::{self, Report};
use anyhow::Result;
use serde::Serialize;
use std::time::{Duration, Instant};

/// What to measure.
#[derive(Debug, Clone)]
pub struct Options {
    /// The report's options (inputs, dates, cap, …), used for every reading.
    pub report: report::Options,
    pub window: Duration,
    /// Readings within the window (at least 2), for the spread of the rates.
    pub samples: u32,
    /// Requests in the whole job.
    pub total: Option<u64>,
    /// A server's Prometheus endpoint, scraped at the window's start and at each sample.
    pub metrics: Option<String>,
    /// Where to append each scrape, stamped.
    pub save_scrapes: Option<std::path::PathBuf>,
    /// A Prometheus server read for the server's side of the window instead (its
    /// window is the pulse's own; the query's is replaced).
    pub prometheus: Option<crate::ingest::prometheus_server::Query>,
}

/// A pulse: the window's rates, the job so far, and the time left.
#[derive(Debug, Clone, Serialize)]
pub struct Pulse {
    pub window_s: f64,
    pub samples: u32,
    /// Bytes appended to the inputs in the window.
    pub bytes: u64,
    pub client: Option<Client>,
    pub server: Option<ServerRates>,
    /// The scrapes of `--metrics` over the window, read as `report` reads scrapes.
    pub metrics: Option<Metrics>,
    /// Client against server output, when both are known (the servers' stats lines, else
    /// the scrapes).
    pub gap: Option<Gap>,
    pub job: Job,
    pub eta: Option<Eta>,
    /// Where the window differs from the job so far by more than 10%: mean output length,
    /// and request rate where records carry their creation time.
    pub drift: Vec<String>,
}

/// Completion records written in the window.
#[derive(Debug, Clone, Serialize)]
pub struct Client {
    pub requests: u64,
    pub requests_per_s: f64,
    pub output_tokens: u64,
    pub output_tokens_per_s: f64,
    pub tokens_per_request_mean: Option<f64>,
    pub tokens_per_request_p50: Option<f64>,
    pub tokens_per_request_p90: Option<f64>,
    pub failures: u64,
    pub cap_hits: u64,
    /// Output tokens/s of each sample's stretch of the window.
    pub sample_tokens_per_s: Vec<f64>,
}

/// Stats lines the servers logged in the window.
#[derive(Debug, Clone, Serialize)]
pub struct ServerRates {
    pub instances: usize,
    pub stat_lines: u64,
    /// Generation tokens/s as logged, summed over instances.
    pub gen_tps: f64,
    pub running: f64,
    pub waiting: f64,
}

/// The client's output rate against the servers'.
#[derive(Debug, Clone, Serialize)]
pub struct Gap {
    /// Client tokens/s ÷ server tokens/s.
    pub ratio: f64,
    /// Where the server's rate comes from: `stats lines` or `metrics`.
    pub server_from: &'static str,
    pub explanation: String,
}

/// The job so far (everything read, the window included).
#[derive(Debug, Clone, Serialize)]
pub struct Job {
    pub requests_done: u64,
    pub tokens_per_request_mean: Option<f64>,
    /// Change of output tokens per request over 1,000 requests along the job.
    pub tokens_per_request_trend_per_1k: Option<f64>,
    pub failure_rate: Option<f64>,
    pub cap_hit_rate: Option<f64>,
}

/// The time left, and what it is computed from.
#[derive(Debug, Clone, Serialize)]
pub struct Eta {
    pub total: u64,
    pub done: u64,
    pub remaining: u64,
    pub projected_tokens_per_request: f64,
    pub tokens_per_s: f64,
    pub seconds: f64,
    /// 80% band.
    pub seconds_low: f64,
    pub seconds_high: f64,
}

/// Reads the inputs, follows them for the window, and measures.
pub fn measure(opts: &Options) -> Result<Pulse> {
    let inputs = if opts.report.inputs.is_empty() {
        Vec::new()
    } else {
        crate::ingest::inputs::expand(&opts.report.inputs)?.0
    };
    let samples = opts.samples.max(2);
    let mut scraper = match &opts.metrics {
        Some(url) => Some(Scraper::new(
            url,
            opts.save_scrapes.as_deref(),
            (opts.window / samples).clamp(Duration::from_secs(2), Duration::from_secs(30)),
            true,
        )?),
        None => None,
    };
    let start = Instant::now();
    let start_ms = super::prometheus::now_ms();
    if let Some(s) = &mut scraper {
        s.scrape()?;
    }
    // the server alone, from Prometheus: the window that just ended, read at once
    if let (true, None, Some(q)) = (inputs.is_empty(), &scraper, &opts.prometheus) {
        let window_ms = opts.window.as_millis() as i64;
        let mut p = compute(
            None,
            None,
            opts.window.as_secs_f64(),
            samples,
            0,
            Vec::new(),
            opts.total,
        );
        p.metrics = super::prometheus::metrics(q, start_ms - window_ms, start_ms)?;
        return Ok(p);
    }
    let mut marks = vec![Marks::now(&inputs)];
    // the job up to where the window starts: each growing file read up to its mark
    let limits = inputs
        .iter()
        .zip(&marks[0].0)
        .filter_map(|(i, m)| match (i, m) {
            (tokstat_parsers::source::Input::Path(p), Some(m)) => Some((p.clone(), *m)),
            _ => None,
        })
        .collect();
    let job_before = if inputs.is_empty() {
        None
    } else {
        Some(report::build_full(&report::Options {
            limits: Some(std::sync::Arc::new(limits)),
            ..opts.report.clone()
        })?)
    };
    for k in 1..=samples {
        let at = opts.window.mul_f64(f64::from(k) / f64::from(samples));
        if let Some(wait) = at.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
        marks.push(Marks::now(&inputs));
        if let Some(s) = &mut scraper {
            s.scrape()?;
        }
    }
    let window_s = start.elapsed().as_secs_f64().max(1e-3);
    let read = |from: &Marks, to: &Marks| -> Result<Option<report::Built>> {
        let appended = Appended::between(&inputs, from, to)?;
        if appended.files.is_empty() {
            return Ok(None);
        }
        let built = report::build_full(&report::Options {
            inputs: appended.files.clone(),
            progress: None,
            ..opts.report.clone()
        })?;
        Ok(Some(built))
    };
    let whole = read(&marks[0], &marks[samples as usize])?;
    let mut sample_rates = Vec::new();
    let step = window_s / f64::from(samples);
    for pair in marks.windows(2) {
        let tokens = read(&pair[0], &pair[1])?.map_or(0, |b| output_tokens(&b.read.completions));
        sample_rates.push(tokens as f64 / step);
    }
    let mut p = compute(
        job_before.as_ref(),
        whole.as_ref(),
        window_s,
        samples,
        marks[0].bytes_to(&marks[samples as usize]),
        sample_rates,
        opts.total,
    );
    p.metrics = match &opts.prometheus {
        Some(q) => super::prometheus::metrics(q, start_ms, super::prometheus::now_ms())?,
        None => scraper.and_then(|s| s.metrics()),
    };
    if p.gap.is_none() {
        p.gap = p
            .client
            .as_ref()
            .zip(p.metrics.as_ref())
            .and_then(|(c, m)| {
                let tps = m.gen_tps.filter(|t| *t > 0.0)?;
                let running = m.running.as_ref().map_or(0.0, |r| r.mean);
                Some(gap(c, tps, running, "metrics"))
            });
    }
    Ok(p)
}

fn output_tokens(rows: &[CompletionRow]) -> u64 {
    rows.iter().filter_map(|r| r.completion_tokens.get()).sum()
}

/// The pulse from the job as read before the window, the window's own reading, and the
/// samples' token rates.
pub fn compute(
    before: Option<&report::Built>,
    window: Option<&report::Built>,
    window_s: f64,
    samples: u32,
    bytes: u64,
    sample_tokens_per_s: Vec<f64>,
    total: Option<u64>,
) -> Pulse {
    let client = window.filter(|w| !w.read.completions.is_empty()).map(|w| {
        client(
            &w.report,
            &w.read.completions,
            window_s,
            sample_tokens_per_s,
        )
    });
    let server = window.and_then(|w| server(&w.report));
    // the job: every record before the window, then the window's
    let rows: Vec<&CompletionRow> = before
        .map_or(&[][..], |b| &b.read.completions[..])
        .iter()
        .chain(window.map_or(&[][..], |w| &w.read.completions[..]))
        .collect();
    let job = job(&rows);
    let gap = match (&client, &server) {
        (Some(c), Some(s)) if s.gen_tps > 0.0 => Some(gap(c, s.gen_tps, s.running, "stats lines")),
        _ => None,
    };
    let eta = match (&client, total) {
        (Some(c), Some(total)) if c.output_tokens_per_s > 0.0 => {
            eta(&rows, total, c.output_tokens_per_s, &c.sample_tokens_per_s)
        }
        _ => None,
    };
    let mut drift = Vec::new();
    if let (Some(w), Some(j)) = (
        client.as_ref().and_then(|c| c.tokens_per_request_mean),
        job.tokens_per_request_mean,
    ) {
        if j > 0.0 && (w / j - 1.0).abs() > 0.10 {
            drift.push(format!(
                "output length: the window's mean is {:.0} tokens per request, the job's {:.0} ({:+.0}%)",
                w,
                j,
                (w / j - 1.0) * 100.0
            ));
        }
    }
    // the job's request rate, where records carry their creation time
    if let (Some(c), Some(job_rate)) = (&client, job_rate(&rows)) {
        if job_rate > 0.0 && (c.requests_per_s / job_rate - 1.0).abs() > 0.10 {
            drift.push(format!(
                "request rate: the window's is {:.2} req/s, the job's {:.2} ({:+.0}%)",
                c.requests_per_s,
                job_rate,
                (c.requests_per_s / job_rate - 1.0) * 100.0
            ));
        }
    }
    Pulse {
        window_s,
        samples,
        bytes,
        client,
        server,
        metrics: None,
        gap,
        job,
        eta,
        drift,
    }
}

fn client(r: &Report, rows: &[CompletionRow], window_s: f64, rates: Vec<f64>) -> Client {
    let requests = rows.len() as u64;
    let output_tokens = output_tokens(rows);
    let figures = r.completions.as_ref().map(|c| &c.figures);
    let tokens = figures.and_then(|f| f.output_tokens.as_ref());
    Client {
        requests,
        requests_per_s: requests as f64 / window_s,
        output_tokens,
        output_tokens_per_s: output_tokens as f64 / window_s,
        tokens_per_request_mean: tokens.map(|s| s.mean),
        tokens_per_request_p50: tokens.map(|s| s.p50),
        tokens_per_request_p90: tokens.map(|s| s.p90),
        failures: rows
            .iter()
            .filter(|r| r.finish == tokstat_parsers::completion::Finish::Error)
            .count() as u64,
        cap_hits: figures.map_or(0, |f| f.cap.hits),
        sample_tokens_per_s: rates,
    }
}

pub(super) fn server(r: &Report) -> Option<ServerRates> {
    let live: Vec<_> = r.instances.iter().filter(|i| i.stat_lines > 0).collect();
    if live.is_empty() {
        return None;
    }
    let sum = |f: fn(&crate::report::InstanceReport) -> Option<f64>| -> f64 {
        live.iter().filter_map(|i| f(i)).sum()
    };
    Some(ServerRates {
        instances: live.len(),
        stat_lines: live.iter().map(|i| i.stat_lines).sum(),
        gen_tps: sum(|i| i.gen_tps_mean),
        running: sum(|i| i.running_mean),
        waiting: sum(|i| i.waiting_mean),
    })
}

/// The client's output rate against a server rate of `server_tps` with `running` requests
/// running on average, from `server_from`.
fn gap(c: &Client, server_tps: f64, running: f64, server_from: &'static str) -> Gap {
    let ratio = c.output_tokens_per_s / server_tps;
    let explanation = if (ratio - 1.0).abs() <= 0.10 {
        "the client writes what the servers generate (within 10%)".to_string()
    } else if ratio < 1.0 {
        format!(
            "the client wrote {:.0}% fewer tokens than the servers generated: requests still \
             running ({:.0} on average) finish after the window, failed requests retried, or \
             other clients share the servers",
            (1.0 - ratio) * 100.0,
            running
        )
    } else {
        format!(
            "the client wrote {:.0}% more tokens than the servers logged: requests that ran \
             before the window ended in it, or servers whose logs were not given",
            (ratio - 1.0) * 100.0
        )
    };
    Gap {
        ratio,
        server_from,
        explanation,
    }
}

fn job(rows: &[&CompletionRow]) -> Job {
    let tokens: Vec<(f64, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.completion_tokens.get().map(|t| (i as f64, t as f64)))
        .collect();
    let n = rows.len() as f64;
    let (mean, slope) = fit(&tokens).map_or((None, None), |(m, _, b)| (Some(m), Some(b)));
    Job {
        requests_done: rows.len() as u64,
        tokens_per_request_mean: mean,
        tokens_per_request_trend_per_1k: slope.map(|b| b * 1000.0),
        failure_rate: (n > 0.0).then(|| {
            rows.iter()
                .filter(|r| r.finish == tokstat_parsers::completion::Finish::Error)
                .count() as f64
                / n
        }),
        cap_hit_rate: (n > 0.0).then(|| {
            rows.iter()
                .filter(|r| r.finish == tokstat_parsers::completion::Finish::Length)
                .count() as f64
                / n
        }),
    }
}

/// Requests per second over the job, from the records' creation times (`created` of OpenAI
/// responses): `None` without them, or over less than a minute.
fn job_rate(rows: &[&CompletionRow]) -> Option<f64> {
    let (mut lo, mut hi, mut n) = (u64::MAX, 0, 0u64);
    for c in rows.iter().filter_map(|r| r.created()) {
        lo = lo.min(c);
        hi = hi.max(c);
        n += 1;
    }
    (n > 1 && hi >= lo + 60).then(|| n as f64 / (hi - lo) as f64)
}

/// Least squares of `y` on `x`: (mean of y, intercept, slope).
fn fit(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len() as f64;
    if points.is_empty() {
        return None;
    }
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    Some((my, my - slope * mx, slope))
}

/// `(position in the job, output tokens)` of every record that states its tokens.
pub fn lengths<'a>(rows: impl Iterator<Item = &'a CompletionRow>) -> Vec<(f64, f64)> {
    rows.enumerate()
        .filter_map(|(i, r)| r.completion_tokens.get().map(|t| (i as f64, t as f64)))
        .collect()
}

fn eta(rows: &[&CompletionRow], total: u64, rate: f64, sample_rates: &[f64]) -> Option<Eta> {
    let points = lengths(rows.iter().copied());
    eta_of(&points, rows.len() as u64, total, rate, sample_rates)
}

/// The ETA of a job of `total` requests with `done` done, whose records' lengths are
/// `points` ([`lengths`]), at `rate` output tokens/s, the band from `sample_rates`.
pub fn eta_of(
    points: &[(f64, f64)],
    done: u64,
    total: u64,
    rate: f64,
    sample_rates: &[f64],
) -> Option<Eta> {
    let remaining = total.saturating_sub(done);
    let (mean, a, b) = fit(points)?;
    // the line at the middle of the requests left; never below a token, nor a trend taken
    // far past the data as a fall to nothing
    let middle = (done + total) as f64 / 2.0;
    let projected = (a + b * middle).max(mean * 0.5).max(1.0);
    let work = remaining as f64 * projected;
    let mut rates: Vec<f64> = sample_rates.iter().copied().filter(|r| *r > 0.0).collect();
    rates.sort_by(f64::total_cmp);
    let (slow, fast) = if rates.len() >= 2 {
        (quantile(&rates, 0.10), quantile(&rates, 0.90))
    } else {
        (rate, rate)
    };
    Some(Eta {
        total,
        done,
        remaining,
        projected_tokens_per_request: projected,
        tokens_per_s: rate,
        seconds: work / rate,
        seconds_low: work / fast.max(rate),
        seconds_high: work / slow.min(rate).max(f64::MIN_POSITIVE),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::completions::Count;
    use tokstat_parsers::completion::{Finish, Shape};

    fn row(tokens: u64, created: Option<u64>) -> CompletionRow {
        CompletionRow {
            shape: Shape::OpenaiChat,
            finish: Finish::Stop,
            prompt_tokens: Count::NONE,
            completion_tokens: Count::new(Some(tokens)),
            reasoning_tokens: Count::NONE,
            output_chars: Count::NONE,
            cap_hint: Count::NONE,
            latency_s: f32::NAN,
            created: Count::new(created),
        }
    }

    /// The job's request rate comes from creation times spread over a minute or more.
    #[test]
    fn job_rate_from_creation_times() {
        let rows: Vec<CompletionRow> = (0..=120).map(|i| row(10, Some(1_000 + i))).collect();
        let refs: Vec<&CompletionRow> = rows.iter().collect();
        assert_eq!(job_rate(&refs), Some(121.0 / 120.0));
        assert_eq!(job_rate(&refs[..30]), None, "under a minute");
        let bare: Vec<CompletionRow> = (0..10).map(|_| row(10, None)).collect();
        assert_eq!(job_rate(&bare.iter().collect::<Vec<_>>()), None);
    }

    /// The ETA: remaining × the fitted length at the middle of what is left ÷ the rate; the
    /// band from the samples' rates.
    #[test]
    fn eta_follows_the_trend_of_lengths() {
        // lengths grow by one token per request: 100, 101, …, 199
        let points: Vec<(f64, f64)> = (0..100).map(|i| (i as f64, 100.0 + i as f64)).collect();
        let e = eta_of(&points, 100, 300, 50.0, &[40.0, 50.0, 60.0]).unwrap();
        assert_eq!(e.remaining, 200);
        // at the middle of requests 100..300: position 200, length 300
        assert!((e.projected_tokens_per_request - 300.0).abs() < 1e-9);
        assert!((e.seconds - 200.0 * 300.0 / 50.0).abs() < 1e-6);
        assert!(e.seconds_low < e.seconds && e.seconds < e.seconds_high);
        assert!(
            (e.seconds_high - 200.0 * 300.0 / 42.0).abs() < 1e-6,
            "{e:?}"
        );
    }
}
