//! A window of a Prometheus server (or Thanos, Mimir, Cortex, VictoriaMetrics: the same
//! HTTP API) read as one input: the raw samples of the selected series, fetched with range
//! selectors over `/api/v1/query` (not resampled by `query_range` steps, so that counter
//! resets and scrape gaps are seen as in scrape files), in chunks of the window queried side
//! by side, a chunk halved whenever the server refuses it for its sample limit. The answers
//! become one API response in memory, read by the Prometheus scrapes' reader as a saved one
//! is (`ingest::scrapes::Scrapes::read_api`), named by the server, the window and the
//! selector: never by a secret.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use tokstat_parsers::prometheus_api::{self, Response};
use tokstat_parsers::source::Input;

/// Every series of vLLM and SGLang under the names Prometheus stores: `vllm:…` from the text
/// format, `vllm_…` from OpenMetrics (`prometheus_client` 0.2x escapes the colon), with
/// Ray's prefixes; `_created` series and the labels Prometheus adds come with them.
pub const DEFAULT_MATCH: &str = r#"{__name__=~"(ray_(serve_)?)?(vllm|sglang)[:_].+"}"#;

/// How to reach a server, as its users do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Access {
    /// A bearer token (from `--bearer-token-file` or `--bearer-token-env`).
    pub bearer: Option<String>,
    /// Extra headers, `Name: value` (a tenant: `X-Scope-OrgID: team-a`).
    pub headers: Vec<(String, String)>,
    /// PEM roots to trust beside the system's (a private CA, a self-signed server).
    pub ca_file: Option<std::path::PathBuf>,
    /// Each query's timeout.
    pub timeout: Duration,
}

/// A window of a server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Query {
    /// The server's URL as given (`https://user:pass@host:9090/prefix`).
    pub url: String,
    /// The window, ms since the epoch: samples in `(since, until]`.
    pub since_ms: i64,
    pub until_ms: i64,
    /// A series selector (`{job="vllm"}`, `vllm:generation_tokens_total`).
    pub selector: String,
    pub access: Access,
}

/// Queries in flight at once.
const PARALLEL: usize = 4;
/// The first chunk's length: an hour (a server's default sample limit, 50 million, is an
/// hour of 14,000 series scraped every second).
const CHUNK_MS: i64 = 3_600_000;
/// Halvings of a chunk refused for its sample limit before giving up.
const HALVINGS: u32 = 16;

/// A URL without its user information (`user:password@`), as it is shown.
pub fn shown(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_string(),
    }
}

/// The URL without user information, and `user:password` when it held one.
fn credentials(url: &str) -> (String, Option<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        return (url.to_string(), None);
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) => (format!("{scheme}://{host}{path}"), Some(user.to_string())),
        None => (url.to_string(), None),
    }
}

/// A time as `--since` / `--until` take it: RFC 3339 (`2026-05-10T00:00:00Z`), Unix
/// seconds, `now`, or a duration before `now` as `docker logs` and `journalctl` take it
/// (`90s`, `30m`, `2h`, `1d`, `1h30m`).
pub fn parse_time(s: &str, now_ms: i64) -> Result<i64> {
    let s = s.trim();
    if s == "now" {
        return Ok(now_ms);
    }
    if let Some((t, _)) = tokstat_parsers::wrappers::envelope::time::rfc3339(s.as_bytes()) {
        return Ok(t);
    }
    if let Ok(secs) = s.parse::<f64>() {
        return Ok((secs * 1000.0).round() as i64);
    }
    let ago = s.strip_suffix(" ago").unwrap_or(s);
    Ok(now_ms - parse_duration(ago).with_context(|| {
        format!("{s:?}: expected RFC 3339 (2026-05-10T00:00:00Z), Unix seconds, `now`, or a duration before now (2h, 30m, 1h30m)")
    })?)
}

/// A duration: `90s`, `30m`, `2h`, `1d`, `1w`, `500ms`, or several (`1h30m`).
pub fn parse_duration(s: &str) -> Result<i64> {
    let mut total = 0i64;
    let mut rest = s;
    if rest.is_empty() {
        bail!("empty duration");
    }
    while !rest.is_empty() {
        let n = rest
            .bytes()
            .take_while(|c| c.is_ascii_digit() || *c == b'.')
            .count();
        let (num, after) = rest.split_at(n);
        let v: f64 = num
            .parse()
            .with_context(|| format!("{s:?}: not a duration"))?;
        let u = after.bytes().take_while(u8::is_ascii_alphabetic).count();
        let (unit, after) = after.split_at(u);
        let ms = match unit {
            "ms" => 1.0,
            "s" => 1e3,
            "m" => 60e3,
            "h" => 3_600e3,
            "d" => 86_400e3,
            "w" => 604_800e3,
            _ => bail!("{s:?}: unit {unit:?} (ms, s, m, h, d, w)"),
        };
        total += (v * ms).round() as i64;
        rest = after;
    }
    Ok(total)
}

/// The client, with the system's roots (and the `--ca-file` ones) trusted.
fn agent(access: &Access) -> Result<ureq::Agent> {
    use ureq::tls::{Certificate, RootCerts, TlsConfig};
    let mut roots: Vec<Certificate<'static>> = rustls_native_certs::load_native_certs()
        .certs
        .into_iter()
        .map(|c| Certificate::from_der(c.as_ref()).to_owned())
        .collect();
    if let Some(path) = &access.ca_file {
        let pem = std::fs::read(path)
            .with_context(|| format!("--ca-file {}: cannot read", path.display()))?;
        let before = roots.len();
        for item in ureq::tls::parse_pem(&pem) {
            if let Ok(ureq::tls::PemItem::Certificate(c)) = item {
                roots.push(c);
            }
        }
        if roots.len() == before {
            bail!("--ca-file {}: no PEM certificate in it", path.display());
        }
    }
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::Specific(std::sync::Arc::new(roots)))
        .build();
    Ok(ureq::Agent::config_builder()
        .timeout_global(Some(access.timeout))
        .http_status_as_error(false)
        .tls_config(tls)
        .build()
        .into())
}

/// A query of a chunk `(end - len, end]`: its answer, or `Refused` when the server's sample
/// limit refused it (to be halved).
enum Answer {
    Body(Vec<u8>),
    Refused,
}

struct Client {
    agent: ureq::Agent,
    base: String,
    shown: String,
    auth: Option<String>,
    headers: Vec<(String, String)>,
    timeout: Duration,
}

impl Client {
    fn query(&self, selector: &str, end_ms: i64, len_ms: i64) -> Result<Answer> {
        let q = format!("{selector}[{len_ms}ms]");
        let url = format!("{}/api/v1/query", self.base.trim_end_matches('/'));
        let mut req = self
            .agent
            .get(&url)
            .query("query", &q)
            .query("time", format!("{:.3}", end_ms as f64 / 1000.0));
        if let Some(a) = &self.auth {
            req = req.header("Authorization", a);
        }
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let mut resp = req.call().map_err(|e| self.failed(e))?;
        let status = resp.status().as_u16();
        let body = resp
            .body_mut()
            .with_config()
            .limit(1 << 34)
            .read_to_vec()
            .map_err(|e| self.failed(e))?;
        let said = prometheus_api::read(&body).ok();
        let error = said.as_ref().and_then(|r| r.error.clone());
        if error
            .as_deref()
            .is_some_and(|e| e.contains("too many samples"))
        {
            return Ok(Answer::Refused);
        }
        match status {
            200..=299 if said.is_some() => Ok(Answer::Body(body)),
            200..=299 => bail!(
                "{}: the answer to {q:?} is not a Prometheus API response (is this the server's address, not its UI's or an exporter's?)",
                self.shown
            ),
            401 | 403 => bail!(
                "{} refused the request (HTTP {status}{}): give a token with --bearer-token-file or --bearer-token-env, or user:password in the URL",
                self.shown,
                error.map_or(String::new(), |e| format!(": {e}"))
            ),
            _ => bail!(
                "{} answered HTTP {status} to {q:?}{}",
                self.shown,
                match (said.and_then(|r| r.error_type), error) {
                    (t, Some(e)) => format!(": {}{e}", t.map_or(String::new(), |t| format!("{t}: "))),
                    _ => format!(": {}", String::from_utf8_lossy(&body[..body.len().min(200)]).trim()),
                }
            ),
        }
    }

    fn failed(&self, e: ureq::Error) -> anyhow::Error {
        match e {
            ureq::Error::Timeout(_) => anyhow::anyhow!(
                "{}: no answer within {:.0} s (--query-timeout)",
                self.shown,
                self.timeout.as_secs_f64()
            ),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                anyhow::anyhow!(
                    "{}: connection refused (is Prometheus running there?)",
                    self.shown
                )
            }
            e if e.to_string().contains("certificate") => anyhow::anyhow!(
                "{}: cannot query: {e} (a server whose certificate the system's roots do not vouch for: give its CA with --ca-file)",
                self.shown
            ),
            e => anyhow::anyhow!("{}: cannot query: {e}", self.shown),
        }
    }
}

/// What a window's reading gave, beside its input.
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    pub queries: usize,
    pub series: usize,
    pub samples: usize,
    pub bytes: usize,
    pub warnings: Vec<String>,
}

/// Reads a window into one input (an API response holding every chunk's series), named by
/// the server (without user information), the window and the selector. `progress`: chunk
/// counts on stderr as they come.
pub fn fetch(q: &Query, progress: bool) -> Result<(Input, Fetched)> {
    if q.until_ms <= q.since_ms {
        bail!("--since must be before --until");
    }
    let (base, user) = credentials(&q.url);
    let auth = match (&q.access.bearer, user) {
        (Some(t), _) => Some(format!("Bearer {}", t.trim())),
        (None, Some(u)) => {
            use base64::Engine;
            Some(format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(u)
            ))
        }
        (None, None) => None,
    };
    let client = Client {
        agent: agent(&q.access)?,
        base,
        shown: shown(&q.url),
        auth,
        headers: q.access.headers.clone(),
        timeout: q.access.timeout,
    };
    // chunks ending at `since + k * CHUNK`, the last at `until`
    let mut todo: Vec<(i64, i64, u32)> = Vec::new();
    let mut end = q.until_ms;
    while end > q.since_ms {
        let len = (end - q.since_ms).min(CHUNK_MS);
        todo.push((end, len, 0));
        end -= len;
    }
    todo.reverse();
    let queue = Mutex::new(todo);
    let done: Mutex<Vec<(i64, i64, Vec<u8>)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let queries = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let lock = |m: &Mutex<Vec<(i64, i64, u32)>>| m.lock().unwrap_or_else(|p| p.into_inner()).pop();
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| {
                while let Some((end, len, halved)) = lock(&queue) {
                    if failure.lock().map_or(true, |f| f.is_some()) {
                        return;
                    }
                    queries.fetch_add(1, Ordering::Relaxed);
                    match client.query(&q.selector, end, len) {
                        Ok(Answer::Body(b)) => {
                            if let Ok(mut d) = done.lock() {
                                d.push((end, len, b));
                            }
                            let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                            if progress {
                                let _ = write!(std::io::stderr(), "\rprometheus: {n} chunk(s) read");
                            }
                        }
                        Ok(Answer::Refused) if halved < HALVINGS && len > 1 => {
                            if let Ok(mut t) = queue.lock() {
                                t.push((end, len / 2, halved + 1));
                                t.push((end - len / 2, len - len / 2, halved + 1));
                            }
                        }
                        Ok(Answer::Refused) => {
                            if let Ok(mut f) = failure.lock() {
                                *f = Some(anyhow::anyhow!(
                                    "{}: even {len} ms of {} hold more samples than the server's limit (--query.max-samples): narrow --match",
                                    client.shown,
                                    q.selector
                                ));
                            }
                        }
                        Err(e) => {
                            if let Ok(mut f) = failure.lock() {
                                f.get_or_insert(e);
                            }
                        }
                    }
                }
            });
        }
    });
    if progress {
        let _ = writeln!(std::io::stderr());
    }
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_by_key(|d| d.0);
    let mut f = Fetched {
        queries: queries.into_inner(),
        ..Fetched::default()
    };
    let mut doc = Vec::new();
    doc.extend_from_slice(br#"{"status":"success","data":{"resultType":"matrix","result":["#);
    let mut first = true;
    for (end, len, body) in &done {
        let r: Response<'_> = prometheus_api::read(body)
            .map_err(|e| anyhow::anyhow!("{}: an answer that is not whole: {e}", client.shown))?;
        f.bytes += body.len();
        f.warnings.extend(r.warnings.iter().cloned());
        for s in &r.series {
            // a range selector holds both its ends before Prometheus 3.0: a sample at a
            // chunk's start belongs to the chunk before (the window is `(since, until]`)
            let mut s = s.clone();
            s.points.retain(|p| p.0 > end - len);
            if s.points.is_empty() {
                continue;
            }
            f.series += 1;
            f.samples += s.points.len();
            if !first {
                doc.push(b',');
            }
            first = false;
            write_series(&mut doc, &s);
        }
    }
    doc.extend_from_slice(b"]}");
    if !f.warnings.is_empty() {
        doc.extend_from_slice(br#","warnings":["#);
        for (i, w) in f.warnings.iter().enumerate() {
            if i > 0 {
                doc.push(b',');
            }
            json_string(&mut doc, w);
        }
        doc.push(b']');
    }
    doc.push(b'}');
    if f.samples == 0 {
        bail!(
            "{}: no sample of {} in ({}, {}]: is the window right, and the selector? (`--match` takes any series selector)",
            client.shown,
            q.selector,
            tokstat_parsers::stamp::Ts(q.since_ms),
            tokstat_parsers::stamp::Ts(q.until_ms)
        );
    }
    let name = format!(
        "{} ({}Z, {}Z] {}",
        client.shown,
        tokstat_parsers::stamp::Ts(q.since_ms),
        tokstat_parsers::stamp::Ts(q.until_ms),
        q.selector
    );
    Ok((Input::bytes(name, doc), f))
}

fn json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes())
            }
            c => {
                let mut b = [0; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// One series as the API writes it.
fn write_series(out: &mut Vec<u8>, s: &prometheus_api::Series<'_>) {
    out.extend_from_slice(br#"{"metric":{"#);
    let mut first = true;
    if let Some(n) = &s.name {
        out.extend_from_slice(br#""__name__":"#);
        json_string(out, n);
        first = false;
    }
    for (k, v) in &s.labels {
        if !first {
            out.push(b',');
        }
        first = false;
        json_string(out, k);
        out.push(b':');
        json_string(out, v);
    }
    out.extend_from_slice(br#"},"values":["#);
    for (i, (t, v)) in s.points.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let v = if v.is_nan() {
            "NaN".to_string()
        } else if v.is_infinite() {
            if *v > 0.0 { "+Inf" } else { "-Inf" }.to_string()
        } else {
            format!("{v}")
        };
        out.extend_from_slice(
            format!("[{}.{:03},\"{v}\"]", t.div_euclid(1000), t.rem_euclid(1000)).as_bytes(),
        );
    }
    out.extend_from_slice(b"]}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations() {
        let now = 1_778_371_200_000;
        assert_eq!(parse_time("2h", now).unwrap(), now - 7_200_000);
        assert_eq!(parse_time("1h30m", now).unwrap(), now - 5_400_000);
        assert_eq!(parse_time("now", now).unwrap(), now);
        assert_eq!(parse_time("2026-05-10T00:00:00Z", 0).unwrap(), now);
        assert_eq!(parse_time("1778371200", 0).unwrap(), now);
        assert!(parse_time("yesterday", now).is_err());
    }

    #[test]
    fn secrets_are_never_shown() {
        assert_eq!(shown("https://u:p@h:9090/prom"), "https://h:9090/prom");
        assert_eq!(credentials("http://u:p@h:9090").1.as_deref(), Some("u:p"));
        assert_eq!(shown("http://h:9090"), "http://h:9090");
    }
}
