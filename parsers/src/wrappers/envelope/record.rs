//! One collector record into a [`Piece`]: a JSON object of any collector (its fields found by
//! name, nested metadata included), a CRI line, a `kubectl --prefix` line.
//!
//! The JSON fields, by the collectors that write them (quoted with versions in
//! `docs/formats.md`, "Log collectors"):
//!
//! | field | text | time | identity |
//! |---|---|---|---|
//! | Docker json-file | `log` (with its `\n`) | `time` | (the file) |
//! | journald `-o json` | `MESSAGE` (a string, or an array of bytes) | `__REALTIME_TIMESTAMP` (µs) | `_HOSTNAME`, `SYSLOG_IDENTIFIER` / `_SYSTEMD_UNIT` |
//! | Loki `logcli --output=jsonl` | `line` | `timestamp` | `labels` (`pod`, `container`, `instance`, `host`) |
//! | Fluent Bit, Vector, Filebeat | `log` / `message` | `time` / `timestamp` / `@timestamp` / `date` | `kubernetes` (`pod_name`, `container_name`, `pod.name`), `host` |
//! | CloudWatch events | `message` | `timestamp` (ms) | `logStreamName` |
//! | Cloud Logging | `textPayload` | `timestamp` | `resource.labels` (`pod_name`, `container_name`) |
//! | Elasticsearch hits | `_source.message` / `_source.log` | `_source.@timestamp` | as Filebeat's |

use super::docker::decode_checked;
use super::time::{epoch, rfc3339, rfc3339_shaped, UtcMs, When};
use super::{Piece, Stream, Who};
use crate::json::{JsonError, Scanner, Str};
use crate::scan::find_short;
use std::borrow::Cow;

/// Why a record could not be read (a malformed row's reason).
pub const BROKEN: &str = "a collector record that is not valid JSON";
pub const NOT_CRI: &str = "a CRI line without its stamp, stream and tag";

/// What a JSON record's walk collects.
#[derive(Default)]
struct Fields<'a> {
    /// The line's text, without its closing newline, and whether it had one.
    text: Option<(Cow<'a, [u8]>, bool)>,
    /// Which text field was found (a `log` wins over a `message`).
    text_rank: u8,
    time: Option<UtcMs>,
    time_rank: u8,
    stream: Stream,
    name: Option<Cow<'a, str>>,
    name_rank: u8,
    container: Option<Cow<'a, str>>,
    container_rank: u8,
}

impl<'a> Fields<'a> {
    fn set_name(&mut self, v: Cow<'a, str>, rank: u8) {
        if rank > self.name_rank && !v.is_empty() {
            self.name = Some(v);
            self.name_rank = rank;
        }
    }
    fn set_container(&mut self, v: Cow<'a, str>, rank: u8) {
        if rank > self.container_rank && !v.is_empty() {
            self.container = Some(v);
            self.container_rank = rank;
        }
    }
    fn set_time(&mut self, t: Option<UtcMs>, rank: u8) {
        if let Some(t) = t.filter(|_| rank > self.time_rank) {
            self.time = Some(t);
            self.time_rank = rank;
        }
    }
}

type R<T> = Result<T, JsonError>;

/// A string's text, decoded only when it holds escapes.
fn text(s: Str<'_>) -> Cow<'_, [u8]> {
    if s.escaped {
        Cow::Owned(decode(s.raw))
    } else {
        Cow::Borrowed(s.raw)
    }
}

/// The bytes of a string the scanner checked (valid UTF-8, valid escapes), its escapes
/// undone: the runs between backslashes copied whole (`Str::decode`, byte by byte and then
/// checked again as UTF-8, was a fifth of a Docker log's unwrapping).
fn decode(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    let checked = decode_checked(raw, &mut out);
    debug_assert!(checked, "a string the scanner checked");
    out
}

/// A line's text without its closing newline, and whether it had one. A string whose only
/// escape is that newline (nearly every Docker record: `"log":"…\n"`) is borrowed.
fn line_text(s: Str<'_>) -> (Cow<'_, [u8]>, bool) {
    if s.escaped {
        if let Some(body) = s.raw.strip_suffix(b"\\n") {
            if memchr::memchr(b'\\', body).is_none() {
                return (Cow::Borrowed(body), true);
            }
        }
    }
    strip_newline(text(s))
}

/// `t` without one closing `\n`, and whether it had it.
fn strip_newline(mut t: Cow<'_, [u8]>) -> (Cow<'_, [u8]>, bool) {
    if t.last() != Some(&b'\n') {
        return (t, false);
    }
    match &mut t {
        Cow::Borrowed(b) => *b = &b[..b.len() - 1],
        Cow::Owned(v) => {
            v.pop();
        }
    }
    (t, true)
}

/// A string value as text (identities: pod names hold no escapes).
fn string<'a>(sc: &mut Scanner<'a>) -> R<Option<Cow<'a, str>>> {
    Ok(sc.opt_string()?.map(|s| s.decode()))
}

/// A time value: RFC 3339 text, an epoch as digits, or an epoch as a number.
fn time(sc: &mut Scanner<'_>) -> R<Option<UtcMs>> {
    match sc.peek() {
        Some(b'"') => {
            let s = sc.string()?;
            Ok(rfc3339(s.raw).map(|t| t.0).or_else(|| epoch(s.raw)))
        }
        Some(b'0'..=b'9') => Ok(epoch(sc.number()?)),
        _ => sc.skip().map(|_| None),
    }
}

/// journald's `MESSAGE`: a string, or (for any byte that is not printable: every ANSI
/// coloured line) an array of the bytes; an array of strings for a field set twice.
fn journal_message<'a>(sc: &mut Scanner<'a>) -> R<Option<Cow<'a, [u8]>>> {
    match sc.peek() {
        Some(b'"') => Ok(Some(text(sc.string()?))),
        Some(b'[') => {
            let mut bytes = Vec::new();
            let mut first: Option<Cow<'a, [u8]>> = None;
            sc.array(|sc, _| {
                match sc.peek() {
                    Some(b'"') if first.is_none() => first = Some(text(sc.string()?)),
                    Some(b'0'..=b'9') => {
                        let n = sc.number()?;
                        let v = std::str::from_utf8(n)
                            .ok()
                            .and_then(|t| t.parse::<u8>().ok());
                        bytes.push(v.unwrap_or(b'?'));
                    }
                    _ => sc.skip()?,
                }
                Ok(())
            })?;
            Ok(first.or(Some(Cow::Owned(bytes))))
        }
        _ => sc.skip().map(|_| None),
    }
}

/// The labels of a Loki stream (`pod`, `container`, `instance`, `host`, …), and Kubernetes
/// metadata (`pod_name`, `container_name`, `pod: {name}`, `host`).
fn labels<'a>(sc: &mut Scanner<'a>, f: &mut Fields<'a>) -> R<()> {
    if sc.peek() != Some(b'{') {
        return sc.skip();
    }
    sc.object(|sc, key| {
        let k = key.raw;
        match k {
            b"pod" | b"pod_name" => {
                if sc.peek() == Some(b'{') {
                    // Filebeat: `kubernetes.pod.name`
                    return sc.object(|sc, k| match k.raw {
                        b"name" => {
                            if let Some(v) = string(sc)? {
                                f.set_name(v, 5);
                            }
                            Ok(())
                        }
                        _ => sc.skip(),
                    });
                }
                if let Some(v) = string(sc)? {
                    f.set_name(v, 5);
                }
            }
            b"container" | b"container_name" => {
                if sc.peek() == Some(b'{') {
                    return sc.object(|sc, k| match k.raw {
                        b"name" => {
                            if let Some(v) = string(sc)? {
                                f.set_container(v, 3);
                            }
                            Ok(())
                        }
                        _ => sc.skip(),
                    });
                }
                if let Some(v) = string(sc)? {
                    f.set_container(v, 3);
                }
            }
            b"instance" | b"host" | b"hostname" | b"node_name" | b"instance_id" => {
                if let Some(v) = string(sc)? {
                    f.set_name(v, 2);
                }
            }
            b"job" | b"service_name" | b"app" => {
                if let Some(v) = string(sc)? {
                    f.set_container(v, 1);
                }
            }
            b"labels" => labels(sc, f)?,
            _ => sc.skip()?,
        }
        Ok(())
    })
}

/// The identity a label set names (a Loki stream's labels).
pub fn who_of_labels<'a>(sc: &mut Scanner<'a>) -> R<Who<'a>> {
    let mut f = Fields::default();
    labels(sc, &mut f)?;
    Ok(Who {
        name: f.name,
        container: f.container,
    })
}

/// The keys of one record object (and of `_source`, an Elasticsearch hit's record).
fn fields<'a>(sc: &mut Scanner<'a>, f: &mut Fields<'a>) -> R<()> {
    sc.object(|sc, key| {
        match key.raw {
            // text: Docker's and Fluent Bit's `log` first, then the others'
            b"log" if f.text_rank < 5 => {
                if let Some(s) = sc.opt_string()? {
                    f.text = Some(line_text(s));
                    f.text_rank = 5;
                }
            }
            b"MESSAGE" if f.text_rank < 4 => {
                f.text = journal_message(sc)?.map(strip_newline);
                f.text_rank = 4;
            }
            b"line" | b"message" | b"textPayload" | b"msg" if f.text_rank < 3 => {
                if let Some(s) = sc.opt_string()? {
                    f.text = Some(line_text(s));
                    f.text_rank = 3;
                }
            }
            b"time" => f.set_time(time(sc)?, 4),
            b"timestamp" | b"@timestamp" | b"__REALTIME_TIMESTAMP" => f.set_time(time(sc)?, 3),
            b"date" => f.set_time(time(sc)?, 2),
            b"stream" | b"_TRANSPORT" => {
                if let Some(s) = sc.opt_string()? {
                    f.stream = match s.raw {
                        b"stdout" => Stream::Stdout,
                        b"stderr" => Stream::Stderr,
                        _ => f.stream,
                    };
                }
            }
            b"_HOSTNAME" | b"logStreamName" => {
                if let Some(v) = string(sc)? {
                    f.set_name(v, 2);
                }
            }
            b"SYSLOG_IDENTIFIER" => {
                if let Some(v) = string(sc)? {
                    f.set_container(v, 2);
                }
            }
            b"_SYSTEMD_UNIT" => {
                if let Some(v) = string(sc)? {
                    f.set_container(v, 1);
                }
            }
            b"host" => {
                if sc.peek() == Some(b'{') {
                    sc.object(|sc, k| match k.raw {
                        b"name" | b"hostname" => {
                            if let Some(v) = string(sc)? {
                                f.set_name(v, 2);
                            }
                            Ok(())
                        }
                        _ => sc.skip(),
                    })?;
                } else if let Some(v) = string(sc)? {
                    f.set_name(v, 2);
                }
            }
            b"labels" | b"kubernetes" | b"resource" | b"container" => labels(sc, f)?,
            b"_source" if sc.peek() == Some(b'{') => fields(sc, f)?,
            _ => sc.skip()?,
        }
        Ok(())
    })
}

/// A JSON record as a piece. `docker`: a `log` without its closing `\n` is a piece of a
/// longer line (Docker cuts lines at 16 KiB); other collectors hand whole lines.
pub fn json_record<'a>(sc: &mut Scanner<'a>, docker: bool) -> R<Option<Piece<'a>>> {
    let mut f = Fields::default();
    fields(sc, &mut f)?;
    let Some((text, newline)) = f.text else {
        return Ok(None);
    };
    // (Docker's pieces of a longer line have no newline; other collectors hand whole lines)
    let ends = newline || !docker;
    Ok(Some(Piece {
        text,
        ends,
        time: f.time.into(),
        who: Who {
            name: f.name,
            container: f.container,
        },
        stream: f.stream,
    }))
}

/// A CRI line (`2026-05-09T22:00:00.123456789Z stderr F text`, kubelet's and containerd's
/// format): `P` marks a piece of a longer line (containerd cuts at 16 KiB), `F` its end.
/// The stamp's shape is checked, its time read only when asked ([`When`]).
pub fn cri(row: &[u8]) -> Result<Piece<'_>, &'static str> {
    let r = cri_row(row)?;
    Ok(Piece {
        text: Cow::Borrowed(r.text),
        ends: r.ends,
        time: When::Text(r.stamp),
        who: Who::default(),
        stream: r.stream,
    })
}

/// A CRI line's parts, as [`cri`] reads them: where a whole line is written at once, no
/// piece is built (a tenth of a CRI row's reading).
#[derive(Debug, Clone, Copy)]
pub struct CriRow<'a> {
    pub stamp: &'a [u8],
    pub stream: Stream,
    /// Whether the text ends its line (`F`; `P` marks a piece).
    pub ends: bool,
    pub text: &'a [u8],
}

/// [`cri`]'s reading, its parts apart.
#[inline(always)]
pub fn cri_row(row: &[u8]) -> Result<CriRow<'_>, &'static str> {
    if !rfc3339_shaped(row) {
        return Err(NOT_CRI);
    }
    // (the spaces are a few bytes on: a `memchr` call set up for long searches cost half of
    // the row's reading)
    let n = 19 + find_short(b' ', &row[19..]).ok_or(NOT_CRI)?;
    let stamp = &row[..n];
    let rest = &row[n + 1..];
    let sp = find_short(b' ', rest).ok_or(NOT_CRI)?;
    let stream = match &rest[..sp] {
        b"stdout" => Stream::Stdout,
        b"stderr" => Stream::Stderr,
        _ => return Err(NOT_CRI),
    };
    let rest = &rest[sp + 1..];
    let (ends, text) = match rest {
        [b'F', b' ', text @ ..] => (true, text),
        [b'P', b' ', text @ ..] => (false, text),
        [b'F'] => (true, &rest[1..]),
        [b'P'] => (false, &rest[1..]),
        _ => {
            // (CRI-O before 1.16 had no tag; the tags list may grow: `F:x`)
            let tag_end = memchr::memchr(b' ', rest).unwrap_or(rest.len());
            let tags = &rest[..tag_end];
            if tags.is_empty() || !tags.iter().all(|c| c.is_ascii_alphabetic() || *c == b':') {
                return Err(NOT_CRI);
            }
            (
                !tags.split(|&c| c == b':').any(|t| t == b"P"),
                rest.get(tag_end + 1..).unwrap_or_default(),
            )
        }
    };
    Ok(CriRow {
        stamp,
        stream,
        ends,
        text,
    })
}

/// Whether a row starts like a CRI line: a stamp (read whole) and a stream.
pub fn is_cri(row: &[u8]) -> bool {
    cri(row).is_ok_and(|p| p.time.ms().is_some())
}

/// A `kubectl logs --prefix` line: `[pod/vllm-0/vllm] text`, and with `--timestamps`
/// `[pod/vllm-0/vllm] 2026-05-09T22:00:00.123456789Z text`. `None` for a row without the
/// prefix (a line of its own: counted as other).
pub fn kubectl(row: &[u8]) -> Option<Piece<'_>> {
    let rest = row.strip_prefix(b"[")?;
    let close = memchr::memchr(b']', rest)?;
    let tag = std::str::from_utf8(&rest[..close]).ok()?;
    let mut parts = tag.splitn(3, '/');
    let (kind, pod, container) = (parts.next()?, parts.next()?, parts.next());
    if kind.is_empty() || pod.is_empty() || !kind.bytes().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    let mut text = rest.get(close + 1..)?;
    text = text.strip_prefix(b" ").unwrap_or(text);
    let time = rfc3339(text).and_then(|(t, n)| {
        let after = text.get(n..)?;
        let after = after
            .strip_prefix(b" ")
            .or(after.is_empty().then_some(after))?;
        text = after;
        Some(t)
    });
    Some(Piece {
        text: Cow::Borrowed(text),
        ends: true,
        time: time.into(),
        who: Who {
            name: Some(Cow::Borrowed(pod)),
            container: container.map(Cow::Borrowed),
        },
        stream: Stream::Unknown,
    })
}
