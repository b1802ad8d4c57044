//! The server's side of `pulse` and `watch` read from a Prometheus server instead of
//! scraping `/metrics`: the raw samples of a window (`ingest::prometheus_server`), read as
//! `report --prometheus` reads them. Prometheus has kept what it scraped before the look,
//! so a pulse of the server alone needs no waiting: it reads the window that just ended.

use crate::analysis::metrics::{self, Metrics, ScrapePoint};
use crate::ingest::prometheus_server::{self, Query};
use crate::ingest::scrapes::Scrapes;
use anyhow::Result;
use tokstat_parsers::source::Input;

/// How far back a look of `watch` reads: enough for two scrapes at any usual interval
/// (Prometheus' default is 1 minute, Kubernetes' monitors 15 to 30 s).
pub const LOOKBACK_MS: i64 = 5 * 60 * 1000;

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// What the server holds of `(since, until]` under `q`'s selector and access, read as
/// `report` reads a window: an error (named by the server) when nothing is there.
pub fn metrics(q: &Query, since_ms: i64, until_ms: i64) -> Result<Option<Metrics>> {
    let q = Query {
        since_ms,
        until_ms,
        ..q.clone()
    };
    let (input, fetched) = prometheus_server::fetch(&q, false)?;
    let Input::Bytes(named) = &input else {
        return Ok(None);
    };
    let mut s = Scrapes::default();
    s.read_api(&input.display(), &named.bytes)?;
    s.notes.extend(fetched.warnings);
    s.place(None);
    Ok(metrics::analyze(&s))
}

/// The last look of a window ending now: the rates between the server's last two scrapes,
/// the gauges of the last.
pub fn last_point(q: &Query) -> Result<Option<ScrapePoint>> {
    let now = now_ms();
    Ok(metrics(q, now - LOOKBACK_MS, now)?.and_then(|m| m.timeline.last().copied()))
}
