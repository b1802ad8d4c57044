//! A Docker json-file row (`{"log":"…\\n","stream":"stderr","time":"…"}`, the daemon's own
//! layout) read at its fixed places, and the rows of a Docker file read in one pass each.

use super::time::rfc3339_shaped;
use super::{Piece, Stream, When, Who};
use crate::json::Str;
use std::borrow::Cow;

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
    docker_parts(raw)?.piece_in(scratch)
}

/// A Docker row read at its fixed places, its text not yet decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DockerRow<'a> {
    body: &'a [u8],
    /// Whether the text holds a quote or a backslash: it is checked and decoded at once
    /// ([`decode_checked`]); a text without either is borrowed.
    escaped: bool,
    newline: bool,
    stamp: &'a [u8],
    stream: Stream,
}

impl<'a> DockerRow<'a> {
    /// The row's piece, a text with escapes decoded into `scratch`; `None` where they are no
    /// valid JSON string.
    pub fn piece_in<'s>(self, scratch: &'s mut Vec<u8>) -> Option<Piece<'s>>
    where
        'a: 's,
    {
        if !self.escaped {
            return Some(self.piece(Cow::Borrowed(self.body)));
        }
        scratch.clear();
        decode_checked(self.body, scratch).then(|| self.piece(Cow::Borrowed(&scratch[..])))
    }

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
    let (body, newline) = split_newline(log);
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

/// A log string's text without its closing `\\n` escape, and whether it had one (`\\\\n` is an
/// escaped backslash and an `n`: no newline).
fn split_newline(log: &[u8]) -> (&[u8], bool) {
    match log.strip_suffix(b"\\n") {
        Some(b) if b.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0 => (b, true),
        _ => (log, false),
    }
}

/// Decodes a JSON string's text `raw` (valid UTF-8, no control bytes) into `out`, checking
/// it as it goes: `false` at a quote not escaped or an escape JSON has not. One search for
/// quotes and backslashes, the runs between copied whole.
pub(super) fn decode_checked(raw: &[u8], out: &mut Vec<u8>) -> bool {
    let hex = |r: Option<&[u8]>| r.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
    let mut i = 0;
    while let Some(k) = crate::scan::find2_short(b'"', b'\\', &raw[i..]) {
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

/// Rows read by one pass over their bytes up to this length; longer ones by [`docker_parts`].
const PASS_BYTES: usize = 1024;
/// Bytes that need a look ([`special`]) a row read in one pass holds at most: its layout's
/// 13, and a few escapes (an access line's quotes).
const PASS_SPECIALS: usize = 48;

/// The rows of a Docker file, each read in one pass where it can be (see [`rows`]).
#[derive(Debug, Clone)]
pub struct Rows<'a> {
    rest: &'a [u8],
}

/// The rows of `bytes` (without their `\n`), each with its record where one pass over the
/// row could read it: the newline and every byte that needs a look are found by one vector
/// pass, and the daemon's layout is then checked at the places those bytes give. `None` for
/// a row the pass cannot vouch for (a byte beyond ASCII or a control byte in its text, more
/// than a kilobyte, another layout): [`docker_in`] or the general reading then takes it.
/// (Searching for the newline, then for bytes in the text, then for the stamp's quote, was
/// a pass each, and three loop ends mispredicted a row.)
pub fn rows(bytes: &[u8]) -> Rows<'_> {
    Rows { rest: bytes }
}

impl<'a> Iterator for Rows<'a> {
    type Item = (&'a [u8], Option<DockerRow<'a>>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let mut at = [0u16; PASS_SPECIALS];
        let (end, n) = scan_row(self.rest, &mut at);
        let raw = &self.rest[..end];
        self.rest = self.rest.get(end + 1..).unwrap_or_default();
        Some((raw, n.and_then(|n| read_at(raw, &at[..n]))))
    }
}

/// The end of the first row of `rest` (its newline, or `rest.len()`), and the number of
/// bytes before it that need a look, their places put in `at`; `None` when the row is
/// longer than [`PASS_BYTES`] or holds more than [`PASS_SPECIALS`] of them.
#[inline]
fn scan_row(rest: &[u8], at: &mut [u16; PASS_SPECIALS]) -> (usize, Option<usize>) {
    let mut n = 0;
    let mut pos = 0;
    let limit = PASS_BYTES.min(rest.len());
    while pos < limit {
        let (newline, mut look) = match rest.get(pos..pos + 32) {
            Some(block) => block_masks(block),
            None => tail_masks(&rest[pos..]),
        };
        if newline != 0 {
            let k = newline.trailing_zeros() as usize;
            look &= (1u32 << k).wrapping_sub(1);
            n = mark(look, pos, at, n);
            return (pos + k, (n <= PASS_SPECIALS).then_some(n));
        }
        n = mark(look, pos, at, n);
        pos += 32;
    }
    if pos >= rest.len() {
        return (rest.len(), (n <= PASS_SPECIALS).then_some(n));
    }
    (row_end(rest, pos), None)
}

/// Puts the places of the bits of `look` (bytes from `pos`) in `at` after its first `n`,
/// and gives the new count (more than `at` holds once it is full).
#[inline(always)]
fn mark(mut look: u32, pos: usize, at: &mut [u16; PASS_SPECIALS], mut n: usize) -> usize {
    while look != 0 {
        if let Some(slot) = at.get_mut(n) {
            *slot = (pos + look.trailing_zeros() as usize) as u16;
        }
        n += 1;
        look &= look - 1;
    }
    n
}

/// [`block_masks`] of the last bytes of an input (fewer than 32), padded with bytes that
/// need no look. Apart, and never inlined: where the two shared a body, the compiler built
/// every block's vectors byte by byte in a padded copy, a third of a Docker file's reading.
#[cold]
#[inline(never)]
fn tail_masks(tail: &[u8]) -> (u32, u32) {
    let mut pad = [b'a'; 32];
    let n = tail.len().min(32);
    pad[..n].copy_from_slice(&tail[..n]);
    block_masks(&pad)
}

/// The first newline of `rest` at or after `from` (or `rest.len()`).
fn row_end(rest: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &rest[from..]).map_or(rest.len(), |i| from + i)
}

/// The newlines of 32 bytes, and the bytes among them that need a look ([`special`]), as
/// bit masks.
#[inline(always)]
fn block_masks(b: &[u8]) -> (u32, u32) {
    debug_assert!(b.len() >= 32);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the loads read the 32 bytes of `b`
        unsafe {
            let half = |v: __m128i| {
                let newline = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8));
                // (a signed "below 0x20" holds the bytes beyond ASCII too)
                let look = _mm_or_si128(
                    _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                    _mm_or_si128(
                        _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                        _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                    ),
                );
                (
                    _mm_movemask_epi8(newline) as u32,
                    _mm_movemask_epi8(look) as u32,
                )
            };
            let (n0, l0) = half(_mm_loadu_si128(b.as_ptr().cast()));
            let (n1, l1) = half(_mm_loadu_si128(b.as_ptr().add(16).cast()));
            (n0 | n1 << 16, l0 | l1 << 16)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (mut newline, mut look) = (0u32, 0u32);
        for (k, &c) in b[..32].iter().enumerate() {
            newline |= u32::from(c == b'\n') << k;
            look |= u32::from(special(c)) << k;
        }
        (newline, look)
    }
}

/// The row `raw` read at the places of the bytes in it that need a look (`at`, ascending),
/// where it has the daemon's layout and its text only quotes and escapes among them: the
/// same record [`docker_parts`] reads. The layout's own are the three quotes of
/// `{"log":"` and the nine of `","stream":"stderr","time":"…"}` after the text.
fn read_at<'a>(raw: &'a [u8], at: &[u16]) -> Option<DockerRow<'a>> {
    const HEAD: &[u8] = b"{\"log\":\"";
    const STDERR: &[u8] = b"\",\"stream\":\"stderr\",\"time\":\"";
    const STDOUT: &[u8] = b"\",\"stream\":\"stdout\",\"time\":\"";
    let n = at.len();
    if n < 12 || at[..3] != [1, 5, 7] || !raw.starts_with(HEAD) || raw.last() != Some(&b'}') {
        return None;
    }
    // the text's closing quote, the ninth from the end; nothing that needs a look between
    // the layout's quotes after it (the stamp holds none)
    let close = usize::from(at[n - 9]);
    let tail = raw.get(close..close + STDERR.len())?;
    let stream = if tail == STDERR {
        Stream::Stderr
    } else if tail == STDOUT {
        Stream::Stdout
    } else {
        return None;
    };
    let open = close + STDERR.len();
    if usize::from(at[n - 2]) + 1 != open || usize::from(at[n - 1]) + 2 != raw.len() {
        return None;
    }
    let stamp = raw.get(open..raw.len() - 2)?;
    if !rfc3339_shaped(stamp) {
        return None;
    }
    let log = &raw[HEAD.len()..close];
    let (body, newline) = split_newline(log);
    let end = HEAD.len() + body.len();
    let mut escaped = false;
    for &k in &at[3..n - 9] {
        let k = usize::from(k);
        if k >= end {
            break;
        }
        if !matches!(raw[k], b'"' | b'\\') {
            return None;
        }
        escaped = true;
    }
    Some(DockerRow {
        body,
        escaped,
        newline,
        stamp,
        stream,
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

        /// The one pass reads what the reading at fixed places reads, row by row, whatever
        /// the rows hold (the layout broken anywhere, escapes, bytes beyond ASCII, control
        /// bytes, rows longer than the pass takes); the rows are the file's lines.
        #[test]
        fn one_pass_reads_what_fixed_places_read(
            made in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        proptest::sample::select(vec![
                            "a", "[2026-05-09 22:00:00] Decode", " ", "\\\"", "\\\\", "\\n",
                            "\\u00e9", "é", "\u{1}", "\"", "\\", "x".repeat(300).leak(),
                        ]),
                        0..8,
                    ),
                    proptest::sample::select(vec!["stderr", "stdout", "stdin"]),
                    proptest::sample::select(vec![
                        "2026-05-09T22:00:00.123456789Z", "2026-05-09T22:00:00Z", "2026-05-09",
                        "2026-05-09T22:00:00\"Z",
                    ]),
                    proptest::sample::select(vec![0usize, 1, 2, 7, 30, 1000]),
                    proptest::bool::ANY,
                ),
                1..6,
            ),
        ) {
            let mut file = Vec::new();
            for (text, stream, stamp, cut, newline) in &made {
                let nl = if *newline { "\\n" } else { "" };
                let row = format!(
                    "{{\"log\":\"{}{nl}\",\"stream\":\"{stream}\",\"time\":\"{stamp}\"}}",
                    text.concat()
                );
                let row = row.as_bytes();
                file.extend_from_slice(&row[..row.len().saturating_sub(*cut)]);
                file.push(b'\n');
            }
            let lines: Vec<&[u8]> = crate::scan::lines(&file).collect();
            let read: Vec<_> = rows(&file).collect();
            proptest::prop_assert_eq!(read.len(), lines.len());
            for ((raw, fast), line) in read.into_iter().zip(lines) {
                proptest::prop_assert_eq!(raw, line);
                if let Some(d) = fast {
                    proptest::prop_assert_eq!(Some(d), docker_parts(raw));
                }
            }
        }
    }

    /// The daemon's rows of an engine's lines are read by the one pass: the stats lines
    /// and the access lines with their escaped quotes.
    #[test]
    fn engine_rows_are_read_in_one_pass() {
        let file = concat!(
            r#"{"log":"[2026-05-10 00:00:00 TP0] Decode batch, #running-req: 64, #token: 94511, token usage: 0.09, gen throughput (token/s): 2795.52, #queue-req: 0\n","stream":"stderr","time":"2026-05-10T00:00:00.003000000Z"}"#,
            "\n",
            r#"{"log":"INFO:     127.0.0.1:45678 - \"POST /generate HTTP/1.1\" 200 OK\n","stream":"stdout","time":"2026-05-10T00:00:00.004123456Z"}"#,
            "\n",
        );
        let read: Vec<_> = rows(file.as_bytes()).collect();
        assert_eq!(read.len(), 2);
        let d: Vec<DockerRow<'_>> = read.into_iter().map(|r| r.1.unwrap()).collect();
        assert!(!d[0].escaped && d[0].newline && d[0].stream == Stream::Stderr);
        assert!(d[1].escaped && d[1].stream == Stream::Stdout);
        assert_eq!(d[1].stamp, b"2026-05-10T00:00:00.004123456Z");
        let mut scratch = Vec::new();
        let p = d[1].clone().piece_in(&mut scratch).unwrap();
        assert_eq!(
            &*p.text,
            &br#"INFO:     127.0.0.1:45678 - "POST /generate HTTP/1.1" 200 OK"#[..]
        );
    }
}
