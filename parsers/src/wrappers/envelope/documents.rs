//! Collectors' files of one JSON document: an API response or a CLI's export, read whole
//! (they are pages of a query, not a server's whole log) and put in time order.
//!
//! - CloudWatch Logs, `aws logs get-log-events` / `filter-log-events`:
//!   `{"events": [{"logStreamName"?, "timestamp": ms, "message", "ingestionTime"}, …], …}`.
//! - Cloud Logging, `gcloud logging read --format=json`: `[{"textPayload", "timestamp",
//!   "resource": {"labels": {"pod_name", "container_name", …}}, …}, …]`, newest first.
//! - Loki, `/loki/api/v1/query_range` (and `query`): `{"status": "success", "data":
//!   {"resultType": "streams", "result": [{"stream": {labels}, "values": [["ns", "line"],
//!   …]}]}}`, each stream newest first unless `direction=forward`.
//! - Elasticsearch / OpenSearch `_search`: `{"took", "hits": {"hits": [{"_source": {…}}]}}`.

use super::record::{json_record, who_of_labels};
use super::time::epoch;
use super::{Collector, Piece, Stream, Who};
use crate::json::{JsonError, Scanner};
use std::borrow::Cow;

/// The document's first keys, white space outside strings removed (enough of the head to
/// tell the collectors' documents apart).
fn compact(head: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    let mut in_str = false;
    let mut esc = false;
    for &c in head.iter().take(16 * 1024) {
        if in_str {
            out.push(c);
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
        } else if !c.is_ascii_whitespace() {
            in_str = c == b'"';
            out.push(c);
        }
    }
    out
}

/// Recognises a collector's document from its head.
pub fn sniff(head: &[u8]) -> Option<Collector> {
    let c = compact(crate::text::without_bom(head));
    let has = |s: &[u8]| memchr::memmem::find(&c, s).is_some();
    if c.starts_with(b"{\"events\":[") && (has(b"\"message\":") || c.starts_with(b"{\"events\":[]"))
    {
        return Some(Collector::CloudWatch);
    }
    if c.starts_with(b"[{")
        && has(b"\"logName\":")
        && (has(b"\"textPayload\":") || has(b"\"jsonPayload\":") || has(b"\"resource\":"))
    {
        return Some(Collector::CloudLogging);
    }
    if c.starts_with(b"{\"status\":") && has(b"\"resultType\":\"streams\"") {
        return Some(Collector::LokiApi);
    }
    if c.starts_with(b"{") && has(b"\"hits\":{") && has(b"\"_source\":") {
        return Some(Collector::Elasticsearch);
    }
    None
}

/// Every record of a document, in time order (records without a time keep their place),
/// and the count of those that held no engine line.
pub fn read<'a>(c: Collector, doc: &'a [u8]) -> Result<(Vec<Piece<'a>>, u64), JsonError> {
    let doc = crate::text::without_bom(doc);
    let mut pieces: Vec<Piece<'a>> = Vec::new();
    let mut other = 0u64;
    let mut sc = Scanner::new(doc);
    let mut take = |p: Option<Piece<'a>>| match p {
        Some(p) => pieces.push(p),
        None => other += 1,
    };
    match c {
        Collector::CloudLogging => sc.array(|sc, _| json_record(sc, false).map(&mut take))?,
        Collector::CloudWatch => sc.object(|sc, k| match k.raw {
            b"events" => sc.array(|sc, _| json_record(sc, false).map(&mut take)),
            _ => sc.skip(),
        })?,
        Collector::Elasticsearch => sc.object(|sc, k| match k.raw {
            b"hits" => sc.object(|sc, k| match k.raw {
                b"hits" => sc.array(|sc, _| json_record(sc, false).map(&mut take)),
                _ => sc.skip(),
            }),
            _ => sc.skip(),
        })?,
        Collector::LokiApi => sc.object(|sc, k| match k.raw {
            b"data" => sc.object(|sc, k| match k.raw {
                b"result" => sc.array(|sc, _| loki_stream(sc, &mut take)),
                _ => sc.skip(),
            }),
            _ => sc.skip(),
        })?,
        _ => {
            return Err(JsonError {
                what: "not a collector's document",
                at: 0,
            })
        }
    }
    sc.end()?;
    // newest-first exports, streams one after the other: one time order (a stable sort
    // keeps lines of one stamp in the order given)
    if pieces.iter().all(|p| p.time.is_some()) {
        pieces.sort_by_key(|p| p.time.ms());
    }
    Ok((pieces, other))
}

/// A Loki stream: its labels, then its `[ns, line]` values.
fn loki_stream<'a>(
    sc: &mut Scanner<'a>,
    take: &mut impl FnMut(Option<Piece<'a>>),
) -> Result<(), JsonError> {
    let mut who = Who::default();
    let mut values: Vec<(Option<i64>, Cow<'a, [u8]>)> = Vec::new();
    sc.object(|sc, k| match k.raw {
        b"stream" | b"metric" => {
            who = who_of_labels(sc)?.owned();
            Ok(())
        }
        b"values" => sc.array(|sc, _| {
            let mut t = None;
            let mut line = None;
            sc.array(|sc, i| {
                match i {
                    0 => t = sc.opt_string()?.and_then(|s| epoch(s.raw)),
                    1 => {
                        line = sc.opt_string()?.map(|s| {
                            if s.escaped {
                                Cow::Owned(s.decode().into_owned().into_bytes())
                            } else {
                                Cow::Borrowed(s.raw)
                            }
                        })
                    }
                    _ => sc.skip()?,
                }
                Ok(())
            })?;
            if let Some(line) = line {
                values.push((t, line));
            }
            Ok(())
        }),
        _ => sc.skip(),
    })?;
    for (time, text) in values {
        let text = match text {
            Cow::Borrowed(b) => Cow::Borrowed(b.strip_suffix(b"\n").unwrap_or(b)),
            Cow::Owned(mut v) => {
                if v.last() == Some(&b'\n') {
                    v.pop();
                }
                Cow::Owned(v)
            }
        };
        take(Some(Piece {
            text,
            ends: true,
            time: time.into(),
            who: who.clone(),
            stream: Stream::Unknown,
        }));
    }
    Ok(())
}
