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

use super::time::{epoch, rfc3339, rfc3339_shaped, UtcMs, When};
use super::{Piece, Stream, Who};
use crate::json::{JsonError, Scanner, Str};
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

/// A Docker json-file row as the daemon lays it out (`{"log":"…","stream":"…","time":"…"}`,
/// no `attrs`), read at its fixed places: the log string checked (no bare quote or control
/// byte, valid escapes, UTF-8) and decoded only if it holds escapes beyond its closing
/// `\n`; the time's shape checked, the time read only when asked ([`When`]). `None` for any
/// other layout, which the general reading then takes. The general reading walked every key
/// and value of every row: two thirds of a Docker log's reading.
pub fn docker(raw: &[u8]) -> Option<Piece<'_>> {
    let d = docker_parts(raw)?;
    if !d.escaped {
        return Some(d.piece(Cow::Borrowed(d.body)));
    }
    let mut out = Vec::with_capacity(d.body.len());
    decode_checked(d.body, &mut out).then(|| d.piece(Cow::Owned(out)))
}

/// [`docker`], a text with escapes decoded into `scratch` (where a row a time is read: no
/// allocation a line for the 40% of a server's lines that hold a quote).
pub fn docker_in<'a>(raw: &'a [u8], scratch: &'a mut Vec<u8>) -> Option<Piece<'a>> {
    let d = docker_parts(raw)?;
    if !d.escaped {
        return Some(d.piece(Cow::Borrowed(d.body)));
    }
    scratch.clear();
    decode_checked(d.body, scratch).then(|| d.piece(Cow::Borrowed(&scratch[..])))
}

/// A Docker row read at its fixed places, its text not yet decoded.
struct DockerRow<'a> {
    body: &'a [u8],
    /// Whether the text holds a quote or a backslash: it is checked and decoded at once
    /// ([`decode_checked`]); a text without either is borrowed.
    escaped: bool,
    newline: bool,
    stamp: &'a [u8],
    stream: Stream,
}

impl<'a> DockerRow<'a> {
    fn piece(&self, text: Cow<'a, [u8]>) -> Piece<'a> {
        Piece {
            text,
            ends: self.newline,
            time: When::Text(self.stamp),
            who: Who::default(),
            stream: self.stream,
        }
    }
}

fn docker_parts(raw: &[u8]) -> Option<DockerRow<'_>> {
    const TIME: &[u8] = b"\",\"time\":\"";
    let inner = raw.strip_prefix(b"{\"log\":\"")?.strip_suffix(b"\"}")?;
    // (the stamp holds no quote: the last one opens it; a reverse substring search was a
    // quarter of the reading)
    let open = memchr::memrchr(b'"', inner)? + 1;
    let t_at = open
        .checked_sub(TIME.len())
        .filter(|&at| &inner[at..open] == TIME)?;
    let stamp = &inner[open..];
    // (printable ASCII without escapes: a valid JSON string whatever the reading finds)
    if !rfc3339_shaped(stamp) || any_special(stamp) {
        return None;
    }
    let before = &inner[..t_at];
    let (stream, log) = if let Some(l) = before.strip_suffix(b"\",\"stream\":\"stderr") {
        (Stream::Stderr, l)
    } else if let Some(l) = before.strip_suffix(b"\",\"stream\":\"stdout") {
        (Stream::Stdout, l)
    } else {
        return None;
    };
    let (body, newline) = match log.strip_suffix(b"\\n") {
        // (`\\n` is an escaped backslash and an `n`: no newline)
        Some(b) if b.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0 => (b, true),
        _ => (log, false),
    };
    // one pass over the text for what needs a closer look (most lines have none: their text
    // is borrowed as it is), then, where something does, a fold for each kind: control bytes
    // (never in a JSON string), bytes beyond ASCII (checked as UTF-8), quotes and escapes
    // (checked as they are decoded). Folds of one comparison run on vectors; one of three
    // flags at once did not.
    let mut escaped = false;
    if any_special(body) {
        if body.iter().fold(false, |a, &c| a | (c < 0x20)) {
            return None;
        }
        if body.iter().fold(false, |a, &c| a | (c >= 0x80))
            && simdutf8::basic::from_utf8(body).is_err()
        {
            return None;
        }
        escaped = memchr::memchr2(b'"', b'\\', body).is_some();
    }
    Some(DockerRow {
        body,
        escaped,
        newline,
        stamp,
        stream,
    })
}

/// Decodes a JSON string's text `raw` (valid UTF-8, no control bytes) into `out`, checking
/// it as it goes: `false` at a quote not escaped or an escape JSON has not. One search for
/// quotes and backslashes, the runs between copied whole.
fn decode_checked(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let hex = |r: Option<&[u8]>| r.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
    let mut i = 0;
    while let Some(k) = memchr::memchr2(b'"', b'\\', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + k]);
        i += k;
        if raw[i] == b'"' {
            return false;
        }
        match raw.get(i + 1) {
            Some(b'u') => {
                if !hex(raw.get(i + 2..i + 6)) {
                    return false;
                }
                // (a surrogate pair is decoded whole: the general decoder's rules)
                let end = if raw.get(i + 6..i + 8) == Some(b"\\u") {
                    if !hex(raw.get(i + 8..i + 12)) {
                        return false;
                    }
                    i + 12
                } else {
                    i + 6
                };
                let s = Str {
                    raw: &raw[i..end],
                    escaped: true,
                };
                out.extend_from_slice(s.decode().as_bytes());
                i = end;
            }
            Some(&c) => {
                out.push(match c {
                    b'"' | b'\\' | b'/' => c,
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'b' => 8,
                    b'f' => 12,
                    _ => return false,
                });
                i += 2;
            }
            None => return false,
        }
    }
    out.extend_from_slice(&raw[i..]);
    true
}

/// Whether a byte of a JSON string's text needs a closer look: a control byte, a quote, a
/// backslash, a byte beyond ASCII. (Written without branches, so that a fold of it over a
/// line runs on vectors.)
#[inline(always)]
fn special(c: u8) -> bool {
    (c.wrapping_sub(0x20) >= 0x60) | (c == b'"') | (c == b'\\')
}

/// Whether any byte of `b` is [`special`]: 32 bytes a step, three compares each (a signed
/// "below 0x20" holds the bytes beyond ASCII too), stopping at the first step that finds
/// one. The compiler's fold of [`special`] widened the bytes to 32-bit lanes, four bytes a
/// step: a sixth of a Docker file's reading.
#[inline]
fn any_special(b: &[u8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut at = 0;
        // SAFETY: SSE2 is part of x86_64; each load reads 16 bytes inside `b`
        unsafe {
            let (below, quote, slash) = (
                _mm_set1_epi8(0x20),
                _mm_set1_epi8(b'"' as i8),
                _mm_set1_epi8(b'\\' as i8),
            );
            let hit = |v: __m128i| {
                _mm_or_si128(
                    _mm_cmplt_epi8(v, below),
                    _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
                )
            };
            while at + 32 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(at).cast());
                let w = _mm_loadu_si128(b.as_ptr().add(at + 16).cast());
                if _mm_movemask_epi8(_mm_or_si128(hit(v), hit(w))) != 0 {
                    return true;
                }
                at += 32;
            }
            if at + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(at).cast());
                if _mm_movemask_epi8(hit(v)) != 0 {
                    return true;
                }
                at += 16;
            }
            // the last bytes: the text's last 16, whose first ones were looked at already
            if at < b.len() && b.len() >= 16 {
                let v = _mm_loadu_si128(b.as_ptr().add(b.len() - 16).cast());
                return _mm_movemask_epi8(hit(v)) != 0;
            }
        }
        b[at..].iter().fold(false, |a, &c| a | special(c))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        b.iter().fold(false, |a, &c| a | special(c))
    }
}

/// A CRI line (`2026-05-09T22:00:00.123456789Z stderr F text`, kubelet's and containerd's
/// format): `P` marks a piece of a longer line (containerd cuts at 16 KiB), `F` its end.
/// The stamp's shape is checked, its time read only when asked ([`When`]).
pub fn cri(row: &[u8]) -> Result<Piece<'_>, &'static str> {
    if !rfc3339_shaped(row) {
        return Err(NOT_CRI);
    }
    let n = 19 + memchr::memchr(b' ', &row[19..]).ok_or(NOT_CRI)?;
    let stamp = &row[..n];
    let rest = &row[n + 1..];
    let sp = memchr::memchr(b' ', rest).ok_or(NOT_CRI)?;
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
    Ok(Piece {
        text: Cow::Borrowed(text),
        ends,
        time: When::Text(stamp),
        who: Who::default(),
        stream,
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

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The vector search finds what the byte-by-byte test finds, at any length and place,
        /// for every kind of byte that needs a look.
        #[test]
        fn any_special_is_the_bytes_test(
            len in 0usize..90,
            at in proptest::option::of(0usize..90),
            fill in proptest::sample::select(vec![b'a', b' ', b'~', 0x7f]),
            odd in proptest::sample::select(vec![0u8, 0x1f, b'"', b'\\', 0x80, 0xff, b'!', b'#']),
        ) {
            let mut b = vec![fill; len];
            if let Some(at) = at.filter(|&a| a < len) {
                b[at] = odd;
            }
            let want = b.iter().fold(false, |a, &c| a | special(c));
            proptest::prop_assert_eq!(any_special(&b), want);
        }
    }
}
