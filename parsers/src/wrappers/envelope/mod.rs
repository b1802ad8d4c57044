//! Log collectors' records around engine lines: what Docker, containerd, journald, Loki,
//! CloudWatch, Cloud Logging, Elasticsearch, Fluent Bit and `kubectl --prefix` hand over.
//!
//! A collector's file is recognised by content ([`sniff`]); each of its records is opened
//! into a [`Piece`]: the engine line (JSON escapes undone, borrowed where it had none), the
//! collector's time (UTC, with a date and sub-second digits), who wrote it (pod and
//! container, host and unit, log stream) and its stream. Pieces of one line that a collector
//! split (Docker's and containerd's 16 KiB pieces) are joined by [`unwrap`], which turns a
//! collector's file into the plain log the engines' parsers read, one identity at a time.
//! Files of one JSON document (an API response, a CLI's export) are read whole
//! ([`documents`]) and put in time order (Cloud Logging and Loki hand the newest first).

pub mod blocks;
pub mod docker;
pub mod documents;
pub mod record;
pub mod time;
pub mod unwrap;
pub mod write;

use crate::json::Scanner;
use std::borrow::Cow;
pub use time::{UtcMs, When};

/// A collector whose records a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Collector {
    /// Docker's json-file driver: `{"log":"…\n","stream":"stderr","time":"…"}` a line.
    DockerJson,
    /// The CRI log format of kubelet, containerd and CRI-O: `STAMP stream P|F text`.
    Cri,
    /// `journalctl -o json`: a journal entry a line.
    Journald,
    /// Loki's `logcli query --output=jsonl`: `{"labels":…,"line":…,"timestamp":…}`.
    LokiJsonl,
    /// A log shipper's records, a JSON object a line (Fluent Bit, Vector, Filebeat,
    /// Elasticsearch hits dumped a line each).
    Shipper,
    /// `kubectl logs --prefix`: `[pod/NAME/CONTAINER] line`.
    KubectlPrefix,
    /// `aws logs get-log-events` / `filter-log-events`: `{"events":[…]}`.
    CloudWatch,
    /// `gcloud logging read --format=json`: an array of log entries.
    CloudLogging,
    /// Loki's HTTP API (`/loki/api/v1/query_range`): `data.result[].values`.
    LokiApi,
    /// Elasticsearch or OpenSearch `_search`: `hits.hits[]._source`.
    Elasticsearch,
}

impl Collector {
    /// The name shown in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Collector::DockerJson => "Docker json-file",
            Collector::Cri => "CRI (kubelet, containerd, CRI-O)",
            Collector::Journald => "journald JSON",
            Collector::LokiJsonl => "Loki logcli jsonl",
            Collector::Shipper => "log shipper JSON (Fluent Bit, Vector, Filebeat)",
            Collector::KubectlPrefix => "kubectl logs --prefix",
            Collector::CloudWatch => "CloudWatch Logs events",
            Collector::CloudLogging => "Cloud Logging entries",
            Collector::LokiApi => "Loki API response",
            Collector::Elasticsearch => "Elasticsearch / OpenSearch hits",
        }
    }

    /// Whether the file is one record a line (read in parallel chunks), not one document.
    pub fn per_line(self) -> bool {
        !matches!(
            self,
            Collector::CloudWatch
                | Collector::CloudLogging
                | Collector::LokiApi
                | Collector::Elasticsearch
        )
    }
}

/// The stream a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Stream {
    #[default]
    Unknown,
    Stdout,
    Stderr,
}

impl Stream {
    fn index(self) -> usize {
        self as usize
    }
}

/// Who wrote a record, as the collector names it: a pod (or host, or log stream) and a
/// container (or unit, or job).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Who<'a> {
    pub name: Option<Cow<'a, str>>,
    pub container: Option<Cow<'a, str>>,
}

impl Who<'_> {
    /// The owned identity.
    pub fn owned(&self) -> Who<'static> {
        Who {
            name: self.name.as_deref().map(|s| Cow::Owned(s.to_string())),
            container: self.container.as_deref().map(|s| Cow::Owned(s.to_string())),
        }
    }

    /// `pod/container`, `pod`, or `container`; empty when the record named no one.
    pub fn label(&self) -> String {
        match (&self.name, &self.container) {
            (Some(n), Some(c)) => format!("{n}/{c}"),
            (Some(n), None) => n.to_string(),
            (None, Some(c)) => c.to_string(),
            (None, None) => String::new(),
        }
    }
}

/// One collector record opened: the engine line (or a piece of it) and what the collector
/// says about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece<'a> {
    /// The line's text, without the collector's closing newline.
    pub text: Cow<'a, [u8]>,
    /// Whether the line ends here (false: the next piece of its stream goes on with it).
    pub ends: bool,
    /// The collector's time of the record.
    pub time: When<'a>,
    pub who: Who<'a>,
    pub stream: Stream,
}

/// What a row of a collector's file is.
#[derive(Debug)]
pub enum Row<'a> {
    /// A record holding a line (or a piece of one).
    Piece(Piece<'a>),
    /// A record or row holding no engine line (a journal entry without `MESSAGE`, a
    /// structured payload, a blank row): counted as other.
    Other,
    /// A row that is no record of the collector: counted as malformed.
    Broken(&'static str),
}

/// [`row`], a Docker row's text with escapes decoded into `scratch` (no allocation a row).
pub fn row_in<'a>(c: Collector, raw: &'a [u8], scratch: &'a mut Vec<u8>) -> Row<'a> {
    if c == Collector::DockerJson {
        let raw = crate::wrappers::prefix::trim_cr(raw);
        if let Some(p) = docker::docker_in(raw, scratch) {
            return Row::Piece(p);
        }
    }
    row(c, raw)
}

/// Opens one row of a one-record-a-line collector's file.
pub fn row(c: Collector, raw: &[u8]) -> Row<'_> {
    let raw = crate::wrappers::prefix::trim_cr(raw);
    if raw.iter().all(u8::is_ascii_whitespace) {
        return Row::Other;
    }
    match c {
        Collector::Cri => match record::cri(raw) {
            Ok(p) => Row::Piece(p),
            Err(why) => Row::Broken(why),
        },
        Collector::KubectlPrefix => match record::kubectl(raw) {
            Some(p) => Row::Piece(p),
            // (kubectl's own messages, a line of a pod without the prefix)
            None => Row::Other,
        },
        // Docker's own layout at its fixed places, else the general reading
        Collector::DockerJson => docker::docker(raw).map_or_else(|| json_row(c, raw), Row::Piece),
        _ => json_row(c, raw),
    }
}

/// A JSON record a row, read by its keys.
fn json_row(c: Collector, raw: &[u8]) -> Row<'_> {
    let mut sc = Scanner::line(raw);
    match record::json_record(&mut sc, c == Collector::DockerJson)
        .and_then(|p| sc.end().map(|()| p))
    {
        Ok(Some(p)) => Row::Piece(p),
        Ok(None) => Row::Other,
        Err(_) => Row::Broken(record::BROKEN),
    }
}

/// Recognises a collector's file from its first bytes (a few KB).
pub fn sniff(head: &[u8]) -> Option<Collector> {
    let first = head
        .split(|&c| c == b'\n')
        .map(crate::wrappers::prefix::trim_cr)
        .find(|l| !l.trim_ascii().is_empty())?;
    let first_trimmed = first.trim_ascii();
    if record::is_cri(first) {
        return Some(Collector::Cri);
    }
    if first.starts_with(b"[pod/") && record::kubectl(first).is_some() {
        return Some(Collector::KubectlPrefix);
    }
    if first_trimmed.starts_with(b"{") || first_trimmed.starts_with(b"[") {
        if let Some(c) = documents::sniff(head) {
            return Some(c);
        }
    }
    if !first.starts_with(b"{") {
        return None;
    }
    // a record a line: its keys say whose
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut sc = Scanner::line(first);
    let walked = sc.object(|sc, k| {
        keys.push(k.raw);
        sc.skip()
    });
    // (a head cut inside its first line: the keys read so far)
    let _ = walked;
    let has = |k: &[u8]| keys.contains(&k);
    if has(b"MESSAGE") && (has(b"__REALTIME_TIMESTAMP") || has(b"__CURSOR")) {
        Some(Collector::Journald)
    } else if has(b"line") && has(b"timestamp") && (has(b"labels") || keys.len() == 2) {
        Some(Collector::LokiJsonl)
    } else if has(b"log") && has(b"stream") && has(b"time") && !has(b"kubernetes") {
        Some(Collector::DockerJson)
    } else if has(b"_source")
        || ((has(b"log") || has(b"message"))
            && (has(b"kubernetes")
                || has(b"@timestamp")
                || has(b"timestamp")
                || has(b"time")
                || has(b"date")))
    {
        Some(Collector::Shipper)
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
