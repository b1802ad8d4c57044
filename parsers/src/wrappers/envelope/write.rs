//! The collectors' formats written: a plain log wrapped as each collector would hand it
//! over, for the tests (wrapping changes no figure) and the fixtures. Each writer follows
//! the collector's source as quoted in `docs/formats.md` ("Log collectors").

use super::Collector;
use crate::stamp::Ts;

/// Docker's and containerd's piece size: longer lines are cut into pieces this long.
pub const PIECE: usize = 16 * 1024;

/// Who a wrapped log is from, and when its lines were written.
#[derive(Debug, Clone)]
pub struct Wrapping<'a> {
    /// The pod (or host) and container named by collectors that name one.
    pub pod: &'a str,
    pub container: &'a str,
    /// The collector's time of the first line (UTC ms) and the step between lines.
    pub start_ms: i64,
    pub step_ms: i64,
    /// Pieces longer lines are cut into (Docker, CRI).
    pub piece: usize,
    /// When set, the server's clock less the collector's (ms): a line with an engine stamp
    /// is collected 3 ms after it (its stamp read with the year of `start_ms`), a line
    /// without one 1 ms after the line before it, as a real collector would time them.
    pub server_ahead_ms: Option<i64>,
}

impl Default for Wrapping<'_> {
    fn default() -> Self {
        Wrapping {
            pod: "vllm-0",
            container: "vllm",
            start_ms: 1_778_364_000_123,
            step_ms: 7,
            piece: PIECE,
            server_ahead_ms: None,
        }
    }
}

/// A JSON string's body (Go's encoder: `<`, `>`, `&` as `\u003c`…, control bytes as
/// `\u00XX`, `\n`, `\t`, `\r`).
pub fn json_escape(text: &str, out: &mut String) {
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' => out.push_str(&format!("\\u{:04x}", ch as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
}

/// RFC 3339 with nanoseconds, UTC (`time.RFC3339Nano`'s form, the trailing zeros kept).
fn rfc3339_nano(ms: i64) -> String {
    format!(
        "{}.{:03}000000Z",
        &Ts(ms - ms.rem_euclid(1000)).to_string(),
        ms.rem_euclid(1000)
    )
}

/// Pieces of at most `n` bytes (cut at character boundaries).
fn pieces(line: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.len() > n {
        let mut at = n;
        while !rest.is_char_boundary(at) {
            at -= 1;
        }
        out.push(&rest[..at]);
        rest = &rest[at..];
    }
    out.push(rest);
    out
}

/// Each line's collector time (see [`Wrapping::server_ahead_ms`]).
fn times(lines: &[&str], w: &Wrapping<'_>) -> Vec<i64> {
    let Some(ahead) = w.server_ahead_ms else {
        return (0..lines.len())
            .map(|i| w.start_ms + w.step_ms * i as i64)
            .collect();
    };
    let day = i64::from(crate::stamp::DAY_MS);
    let start_days = (w.start_ms + ahead).div_euclid(day) as i32;
    let mut cal =
        crate::stamp::Calendar::new(crate::stamp::civil_from_days(start_days).0, start_days);
    let mut scratch = String::new();
    let mut last = w.start_ms;
    lines
        .iter()
        .map(|l| {
            let stamp = crate::wrappers::prefix::stamp_of(l.as_bytes(), &mut scratch);
            last = match cal.resolve(stamp) {
                Some(t) => t.0 - ahead + 3,
                None => last + 1,
            };
            last
        })
        .collect()
}

/// `plain` (a log's text) as `c` hands it over. Document collectors give one document.
pub fn wrap(c: Collector, plain: &str, w: &Wrapping<'_>) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = plain.lines().collect();
    let times = times(&lines, w);
    let time = |i: usize| times[i];
    let esc = |s: &str| {
        let mut e = String::new();
        json_escape(s, &mut e);
        e
    };
    let mut docs: Vec<String> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = time(i);
        let ts = rfc3339_nano(t);
        match c {
            Collector::DockerJson => {
                let parts = pieces(line, w.piece);
                for (k, p) in parts.iter().enumerate() {
                    let nl = if k + 1 == parts.len() { "\\n" } else { "" };
                    out.push_str(&format!(
                        "{{\"log\":\"{}{nl}\",\"stream\":\"stderr\",\"time\":\"{ts}\"}}\n",
                        esc(p)
                    ));
                }
            }
            Collector::Cri => {
                let parts = pieces(line, w.piece);
                for (k, p) in parts.iter().enumerate() {
                    let tag = if k + 1 == parts.len() { 'F' } else { 'P' };
                    out.push_str(&format!("{ts} stderr {tag} {p}\n"));
                }
            }
            Collector::Journald => {
                let us = t * 1000;
                let message = if line.bytes().any(|b| b < 0x20 && b != b'\t') {
                    let bytes: Vec<String> = line.bytes().map(|b| b.to_string()).collect();
                    format!("[{}]", bytes.join(","))
                } else {
                    format!("\"{}\"", esc(line))
                };
                out.push_str(&format!(
                    "{{\"__CURSOR\":\"s=1;i={i:x}\",\"__REALTIME_TIMESTAMP\":\"{us}\",\"__MONOTONIC_TIMESTAMP\":\"{}\",\"_HOSTNAME\":\"{}\",\"SYSLOG_IDENTIFIER\":\"{}\",\"_PID\":\"4242\",\"_TRANSPORT\":\"stdout\",\"PRIORITY\":\"6\",\"MESSAGE\":{message}}}\n",
                    us - 1_700_000_000_000_000, w.pod, w.container
                ));
            }
            Collector::LokiJsonl => out.push_str(&format!(
                "{{\"labels\":{{\"container\":\"{}\",\"namespace\":\"llm\",\"pod\":\"{}\",\"stream\":\"stderr\"}},\"line\":\"{}\",\"timestamp\":\"{ts}\"}}\n",
                w.container, w.pod, esc(line)
            )),
            Collector::Shipper => out.push_str(&format!(
                "{{\"date\":{}.{:03},\"time\":\"{ts}\",\"stream\":\"stderr\",\"_p\":\"F\",\"log\":\"{}\",\"kubernetes\":{{\"pod_name\":\"{}\",\"namespace_name\":\"llm\",\"container_name\":\"{}\",\"host\":\"node-1\"}}}}\n",
                t.div_euclid(1000), t.rem_euclid(1000), esc(line), w.pod, w.container
            )),
            Collector::KubectlPrefix => {
                out.push_str(&format!("[pod/{}/{}] {ts} {line}\n", w.pod, w.container))
            }
            Collector::CloudWatch => docs.push(format!(
                "{{\"logStreamName\":\"{}\",\"timestamp\":{t},\"message\":\"{}\",\"ingestionTime\":{},\"eventId\":\"{i}\"}}",
                w.pod, esc(line), t + 900
            )),
            Collector::CloudLogging => docs.push(format!(
                "  {{\n    \"insertId\": \"{i:x}\",\n    \"logName\": \"projects/p/logs/stderr\",\n    \"receiveTimestamp\": \"{}\",\n    \"resource\": {{\n      \"labels\": {{\n        \"cluster_name\": \"c\",\n        \"container_name\": \"{}\",\n        \"namespace_name\": \"llm\",\n        \"pod_name\": \"{}\"\n      }},\n      \"type\": \"k8s_container\"\n    }},\n    \"severity\": \"ERROR\",\n    \"textPayload\": \"{}\",\n    \"timestamp\": \"{ts}\"\n  }}",
                rfc3339_nano(t + 900), w.container, w.pod, esc(line)
            )),
            Collector::LokiApi => docs.push(format!("[\"{}\",\"{}\"]", t * 1_000_000, esc(line))),
            Collector::Elasticsearch => docs.push(format!(
                "{{\"_index\":\"logs\",\"_id\":\"{i}\",\"_score\":null,\"_source\":{{\"@timestamp\":\"{ts}\",\"message\":\"{}\",\"kubernetes\":{{\"pod\":{{\"name\":\"{}\"}},\"container\":{{\"name\":\"{}\"}}}}}},\"sort\":[{t}]}}",
                esc(line), w.pod, w.container
            )),
        }
    }
    match c {
        Collector::CloudWatch => format!(
            "{{\n    \"events\": [{}],\n    \"nextForwardToken\": \"f/1\",\n    \"nextBackwardToken\": \"b/1\"\n}}\n",
            docs.join(",\n")
        ),
        // newest first, as `gcloud logging read` orders by default
        Collector::CloudLogging => {
            docs.reverse();
            format!("[\n{}\n]\n", docs.join(",\n"))
        }
        // newest first, as the API's default `direction=backward`
        Collector::LokiApi => {
            docs.reverse();
            format!(
                "{{\"status\":\"success\",\"data\":{{\"resultType\":\"streams\",\"result\":[{{\"stream\":{{\"container\":\"{}\",\"pod\":\"{}\"}},\"values\":[{}]}}],\"stats\":{{}}}}}}\n",
                w.container, w.pod, docs.join(",")
            )
        }
        Collector::Elasticsearch => format!(
            "{{\"took\":3,\"timed_out\":false,\"_shards\":{{\"total\":1,\"successful\":1,\"skipped\":0,\"failed\":0}},\"hits\":{{\"total\":{{\"value\":{},\"relation\":\"eq\"}},\"max_score\":null,\"hits\":[{}]}}}}\n",
            docs.len(),
            docs.join(",")
        ),
        _ => out,
    }
}

/// Every collector, in the order of [`Collector`].
pub const ALL: [Collector; 10] = [
    Collector::DockerJson,
    Collector::Cri,
    Collector::Journald,
    Collector::LokiJsonl,
    Collector::Shipper,
    Collector::KubectlPrefix,
    Collector::CloudWatch,
    Collector::CloudLogging,
    Collector::LokiApi,
    Collector::Elasticsearch,
];
