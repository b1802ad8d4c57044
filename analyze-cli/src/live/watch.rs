//! `watch`: the running totals of a followed job, look after look ([`super::follow`]), and
//! the view drawn from them: progress, rates over the last 1, 5 and 15 minutes, the servers'
//! rate against the client's, running and queue, cap-hit and failure rates so far, and the
//! ETA ([`super::pulse::eta_of`]).

use super::follow::Look;
use super::pulse::{lengths, Eta, ServerRates};
use serde::Serialize;
use tokstat_parsers::completion::Finish;

/// What a look added, when.
#[derive(Debug, Clone, Copy)]
struct Added {
    /// Seconds since the watch began.
    at: f64,
    requests: u64,
    tokens: u64,
}

/// The job as watched so far.
#[derive(Debug, Default)]
pub struct Watch {
    steps: Vec<Added>,
    /// `(position, output tokens)` of every record read.
    lengths: Vec<(f64, f64)>,
    requests: u64,
    tokens: u64,
    failures: u64,
    cap_hits: u64,
    server: Option<ServerRates>,
    notes: Vec<String>,
    /// Notes the last look added.
    fresh: usize,
}

/// One drawing of the watch.
#[derive(Debug, Clone, Serialize)]
pub struct View {
    pub elapsed_s: f64,
    pub requests_done: u64,
    pub total: Option<u64>,
    /// `(window minutes, requests/s, output tokens/s)` over the last 1, 5 and 15 minutes (as
    /// much of each as the watch has seen).
    pub rates: Vec<(u32, f64, f64)>,
    pub server: Option<ServerRates>,
    pub failure_rate: Option<f64>,
    pub cap_hit_rate: Option<f64>,
    pub eta: Option<Eta>,
    /// The last scrape of `--metrics`: rates since the scrape before, gauges.
    pub metrics: Option<crate::analysis::metrics::ScrapePoint>,
    /// The last minute's token rate more than 10% off the last 15 minutes' (once the watch
    /// has seen 15 minutes).
    pub drift: Option<String>,
    /// Rotations, truncations, new files: the last few.
    pub notes: Vec<String>,
    /// Those of the last look.
    pub new_notes: Vec<String>,
}

impl Watch {
    /// Adds a look taken `at` seconds into the watch.
    pub fn add(&mut self, at: f64, look: Look) {
        self.fresh = look.notes.len();
        self.notes.extend(look.notes);
        let (mut requests, mut tokens) = (0, 0);
        if let Some(b) = &look.read {
            let rows = &b.read.completions;
            let base = self.requests as usize;
            self.lengths.extend(
                lengths(rows.iter())
                    .into_iter()
                    .map(|(i, t)| (i + base as f64, t)),
            );
            requests = rows.len() as u64;
            tokens = rows.iter().filter_map(|r| r.completion_tokens.get()).sum();
            self.failures += rows.iter().filter(|r| r.finish == Finish::Error).count() as u64;
            self.cap_hits += rows.iter().filter(|r| r.finish == Finish::Length).count() as u64;
            if let Some(s) = super::pulse::server(&b.report) {
                self.server = Some(s);
            }
        }
        self.requests += requests;
        self.tokens += tokens;
        self.steps.push(Added {
            at,
            requests,
            tokens,
        });
    }

    /// The view now, `at` seconds into the watch. The first look (everything already there)
    /// counts toward the job, not toward any rate.
    pub fn view(&self, at: f64, total: Option<u64>) -> View {
        let rates = [1u32, 5, 15]
            .iter()
            .map(|&m| {
                let since = at - f64::from(m) * 60.0;
                let steps: Vec<&Added> =
                    self.steps.iter().skip(1).filter(|s| s.at > since).collect();
                let start = self.steps.first().map_or(at, |s| s.at).max(since);
                let span = (at - start).max(1e-9);
                let r: u64 = steps.iter().map(|s| s.requests).sum();
                let t: u64 = steps.iter().map(|s| s.tokens).sum();
                (m, r as f64 / span, t as f64 / span)
            })
            .collect::<Vec<_>>();
        let n = self.requests as f64;
        let rate = rates.iter().find(|r| r.2 > 0.0).map(|r| r.2);
        // each look's rate, for the band
        let mut samples = Vec::new();
        for w in self.steps.windows(2).skip(1) {
            let dt = w[1].at - w[0].at;
            if dt > 0.0 {
                samples.push(w[1].tokens as f64 / dt);
            }
        }
        let eta = match (total, rate) {
            (Some(total), Some(rate)) => {
                super::pulse::eta_of(&self.lengths, self.requests, total, rate, &samples)
            }
            _ => None,
        };
        let drift = match (rates.first(), rates.last()) {
            (Some(&(_, _, now)), Some(&(_, _, long)))
                if at >= 15.0 * 60.0 && long > 0.0 && (now / long - 1.0).abs() > 0.10 =>
            {
                Some(format!(
                    "the last minute's {now:.0} tok/s is {:+.0}% off the last 15 minutes' {long:.0}",
                    (now / long - 1.0) * 100.0
                ))
            }
            _ => None,
        };
        View {
            metrics: None,
            drift,
            elapsed_s: at,
            requests_done: self.requests,
            total,
            rates,
            server: self.server.clone(),
            failure_rate: (n > 0.0).then(|| self.failures as f64 / n),
            cap_hit_rate: (n > 0.0).then(|| self.cap_hits as f64 / n),
            eta,
            notes: self.notes.iter().rev().take(3).rev().cloned().collect(),
            new_notes: self.notes[self.notes.len() - self.fresh..].to_vec(),
        }
    }
}
