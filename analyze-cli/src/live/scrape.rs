//! Prometheus live: a server's `/metrics` scraped at each look with a small blocking HTTP
//! client (ureq), each scrape stamped with the time it was taken (`# scrape <unix seconds>`)
//! and read like a file of scrapes; the rates come from the counters' increase since the
//! previous scrape, the gauges from the last one (`analysis::metrics`, vLLM and SGLang names).
//! With a file to save to, each stamped scrape is appended to it, for `report` and `compare`.

use crate::analysis::metrics::{self, ScrapePoint};
use crate::ingest::scrapes::Scrapes;
use anyhow::{Context, Result};
use std::io::Write;
use std::time::{Duration, SystemTime};

/// A server scraped look after look.
pub struct Scraper {
    url: String,
    agent: ureq::Agent,
    save: Option<std::fs::File>,
    /// The last two scrapes (enough for the rates since the previous one), or every one.
    scrapes: Scrapes,
    keep_all: bool,
}

impl Scraper {
    /// Scrapes `url`, appending each scrape to `save` when given; keeps every scrape for
    /// [`Scraper::metrics`] when `keep_all` (a window of a few), else the last two.
    pub fn new(
        url: &str,
        save: Option<&std::path::Path>,
        timeout: Duration,
        keep_all: bool,
    ) -> Result<Scraper> {
        let save = match save {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .with_context(|| format!("--save-scrapes {}: cannot open", p.display()))?,
            ),
            None => None,
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .build()
            .into();
        Ok(Scraper {
            url: url.to_string(),
            agent,
            save,
            scrapes: Scrapes::default(),
            keep_all,
        })
    }

    /// One scrape now: the rates since the previous one (none at the first) and the gauges.
    pub fn scrape(&mut self) -> Result<Option<ScrapePoint>> {
        let body = self
            .agent
            .get(&self.url)
            .call()
            .and_then(|mut r| r.body_mut().read_to_string())
            .with_context(|| format!("--metrics {}: cannot scrape", self.url))?;
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let mut text = format!("# scrape {now:.3}\n{body}");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        if let Some(f) = &mut self.save {
            f.write_all(text.as_bytes())
                .context("--save-scrapes: cannot write")?;
        }
        self.scrapes.read(&self.url, "live", &text);
        if !self.keep_all {
            let keep = self.scrapes.scrapes.len().saturating_sub(2);
            self.scrapes.scrapes.drain(..keep);
        }
        self.scrapes.place(None);
        Ok(metrics::analyze(&self.scrapes).and_then(|m| m.timeline.last().copied()))
    }

    /// What the scrapes kept say, as `report` reads a file of scrapes.
    pub fn metrics(&self) -> Option<metrics::Metrics> {
        metrics::analyze(&self.scrapes)
    }
}
