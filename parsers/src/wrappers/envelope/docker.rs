//! A Docker json-file row (`{"log":"…\\n","stream":"stderr","time":"…"}`, the daemon's own
//! layout) read at its fixed places, and the rows of a Docker file read in one pass each.

use super::blocks::{special, tail_masks, Blocks, Sse2};
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
    /// The log string's text as the row holds it, without its closing `\\n`.
    pub(super) body: &'a [u8],
    /// Whether the text holds a quote or a backslash: it is checked and decoded at once
    /// ([`decode_checked`]); a text without either is borrowed.
    pub(super) escaped: bool,
    /// Whether the text ends its line (the closing `\\n`; Docker cuts longer ones in 16 KiB
    /// pieces without).
    pub(super) newline: bool,
    pub(super) stamp: &'a [u8],
    pub(super) stream: Stream,
    /// The row from the text's first byte to the stamp's closing quote: the text and the
    /// layout after it, which the vector decoding reads past the text's end.
    from_text: &'a [u8],
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

    /// The text with its escapes decoded, appended to `out`, and whether it held a newline
    /// (`None`, `out` as it was, where it is no valid JSON string's text): 16 bytes a step,
    /// each stored whole and the output moved on to the first escape among them (a search
    /// for each escape and a copy of each run between was a fifteenth of a Docker file's
    /// reading).
    pub(super) fn decode(&self, out: &mut Vec<u8>) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if self.from_text.len() >= self.body.len() + 16 {
            return decode_wide(self.from_text, self.body.len(), out);
        }
        decode_line(self.body, out)
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
    let inner = raw.strip_prefix(HEAD)?.strip_suffix(b"\"}")?;
    // (the stamp holds no quote: the last one opens it; a reverse substring search was a
    // quarter of the reading)
    let open = memchr::memrchr(b'"', inner)? + 1;
    let close = open.checked_sub(TAIL_STDERR.len())?;
    let stream = stream_of(&inner[close..open])?;
    let stamp = &inner[open..];
    // (printable ASCII without escapes: a valid JSON string whatever the reading finds)
    if !rfc3339_shaped(stamp) || any_special(stamp) {
        return None;
    }
    let log = &inner[..close];
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
        from_text: inner,
    })
}

/// A log string's text without its closing `\\n` escape, and whether it had one (`\\\\n` is an
/// escaped backslash and an `n`: no newline).
#[inline]
fn split_newline(log: &[u8]) -> (&[u8], bool) {
    match log.strip_suffix(b"\\n") {
        // (nearly always: no backslash before it)
        Some(b) if b.last() != Some(&b'\\') => (b, true),
        Some(b) if b.iter().rev().take_while(|&&c| c == b'\\').count() % 2 == 0 => (b, true),
        _ => (log, false),
    }
}

/// Decodes a JSON string's text `raw` (valid UTF-8, no control bytes) into `out`, checking
/// it as it goes: `false` at a quote not escaped or an escape JSON has not. One search for
/// quotes and backslashes, the runs between copied whole.
pub(super) fn decode_checked(raw: &[u8], out: &mut Vec<u8>) -> bool {
    decode_line(raw, out).is_some()
}

/// [`decode_checked`], saying whether the text held a `\\n` escape (a newline decoded):
/// `None` where it is no valid JSON string's text.
pub(super) fn decode_line(raw: &[u8], out: &mut Vec<u8>) -> Option<bool> {
    let mut newline = false;
    decode_into(raw, out, &mut newline).then_some(newline)
}

#[inline]
fn decode_into(raw: &[u8], out: &mut Vec<u8>, newline: &mut bool) -> bool {
    let mut i = 0;
    while let Some(k) = crate::scan::find2_short(b'"', b'\\', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + k]);
        i += k;
        let Some((decoded, end)) = unescape(raw, i) else {
            return false;
        };
        match decoded {
            Unescaped::Byte(c) => {
                *newline |= c == b'\n';
                out.push(c);
            }
            Unescaped::Text(t) => {
                // (`\u000a` is a newline too)
                *newline |= t.contains('\n');
                out.extend_from_slice(t.as_bytes());
            }
        }
        i = end;
    }
    out.extend_from_slice(&raw[i..]);
    true
}

/// What an escape decodes to: a byte, or the text of `\\u` escapes.
enum Unescaped<'a> {
    Byte(u8),
    Text(Cow<'a, str>),
}

/// The escape at `raw[i]`, a quote or a backslash, decoded, and where it ends: `None` for a
/// quote not escaped, or an escape JSON has not. (A surrogate pair is decoded whole: the
/// general decoder's rules.)
#[inline]
fn unescape(raw: &[u8], i: usize) -> Option<(Unescaped<'_>, usize)> {
    let hex = |r: Option<&[u8]>| r.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
    if raw[i] == b'"' {
        return None;
    }
    let c = match *raw.get(i + 1)? {
        b'u' => {
            if !hex(raw.get(i + 2..i + 6)) {
                return None;
            }
            let end = if raw.get(i + 6..i + 8) == Some(b"\\u") {
                if !hex(raw.get(i + 8..i + 12)) {
                    return None;
                }
                i + 12
            } else {
                i + 6
            };
            let s = Str {
                raw: &raw[i..end],
                escaped: true,
            };
            return Some((Unescaped::Text(s.decode()), end));
        }
        c @ (b'"' | b'\\' | b'/') => c,
        b'n' => b'\n',
        b't' => b'\t',
        b'r' => b'\r',
        b'b' => 8,
        b'f' => 12,
        _ => return None,
    };
    Some((Unescaped::Byte(c), i + 2))
}

/// [`decode_line`] of `text[..len]`, reading (never using) 16 bytes past it.
#[cfg(target_arch = "x86_64")]
fn decode_wide(text: &[u8], len: usize, out: &mut Vec<u8>) -> Option<bool> {
    use std::arch::x86_64::*;
    assert!(text.len() >= len + 16);
    let body = &text[..len];
    // (the decoded text is never longer than the raw one: each store of 16 bytes at `o`,
    // never beyond `i`, stays within `len + 16` bytes of room)
    out.reserve(len + 16);
    let base = out.len();
    let mut newline = false;
    let (mut i, mut o) = (0usize, 0usize);
    // SAFETY: SSE2 is part of x86_64; each load reads 16 bytes at `i < len`, inside `text`
    // (asserted above); each store writes 16 bytes at `o <= i` past `base`, inside the room
    // reserved; the length is set last, to the bytes written
    unsafe {
        let dst = out.as_mut_ptr().add(base);
        let (quote, slash) = (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
        while i < len {
            let v = _mm_loadu_si128(text.as_ptr().add(i).cast());
            _mm_storeu_si128(dst.add(o).cast(), v);
            let hit = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash));
            let mut m = _mm_movemask_epi8(hit) as u32;
            let left = len - i;
            if left < 16 {
                m &= (1u32 << left) - 1;
            }
            if m == 0 {
                let step = left.min(16);
                i += step;
                o += step;
                continue;
            }
            let k = m.trailing_zeros() as usize;
            i += k;
            o += k;
            let (decoded, end) = unescape(body, i)?;
            match decoded {
                Unescaped::Byte(c) => {
                    newline |= c == b'\n';
                    *dst.add(o) = c;
                    o += 1;
                }
                Unescaped::Text(t) => {
                    let d = t.as_bytes();
                    newline |= d.contains(&b'\n');
                    if d.len() > end - i {
                        // (never: the room would not hold it; the general reading then does)
                        return None;
                    }
                    std::ptr::copy_nonoverlapping(d.as_ptr(), dst.add(o), d.len());
                    o += d.len();
                }
            }
            i = end;
        }
        out.set_len(base + o);
    }
    Some(newline)
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

/// The daemon's layout around a row's text: its head, and what follows the text up to the
/// stamp, for each stream.
const HEAD: &[u8] = b"{\"log\":\"";
const TAIL_STDERR: &[u8] = b"\",\"stream\":\"stderr\",\"time\":\"";
const TAIL_STDOUT: &[u8] = b"\",\"stream\":\"stdout\",\"time\":\"";
/// The stream a row's layout after its text names ([`TAIL_STDERR`], [`TAIL_STDOUT`]).
#[inline]
fn stream_of(tail: &[u8]) -> Option<Stream> {
    if tail == TAIL_STDERR {
        Some(Stream::Stderr)
    } else if tail == TAIL_STDOUT {
        Some(Stream::Stdout)
    } else {
        None
    }
}

/// The quotes of [`HEAD`], as bits of a row's first block.
const HEAD_QUOTES: u32 = 1 << 1 | 1 << 5 | 1 << 7;
/// The longest stamp the one pass reads (the daemon's `RFC3339Nano` in UTC is at most 30
/// bytes): with it the text's end lies within the last three blocks of a row.
const PASS_STAMP: usize = 31;

/// The rows of a Docker file, each read in one pass where it can be (see [`rows`]).
#[derive(Debug, Clone)]
pub struct Rows<'a, B = Sse2> {
    rest: &'a [u8],
    blocks: B,
}

/// The rows of `bytes` (without their `\n`), each with its record where one pass over the
/// row could read it: one vector pass finds the newline, the quotes and backslashes, and any
/// other byte that needs a look, and the daemon's layout is then checked at the places the
/// last quotes give. `None` for a row the pass cannot vouch for (a byte beyond ASCII or a
/// control byte in its text, more than a kilobyte, another layout): [`docker_in`] or the
/// general reading then takes it. (Searching for the newline, then for bytes in the text,
/// then for the stamp's quote, was a pass each, and three loop ends mispredicted a row;
/// noting the place of every quote cost a quarter of the pass.)
pub fn rows(bytes: &[u8]) -> Rows<'_> {
    rows_by(bytes, Sse2)
}

/// [`rows`], the blocks' bytes looked at by `blocks`.
#[inline]
pub fn rows_by<B: Blocks>(bytes: &[u8], blocks: B) -> Rows<'_, B> {
    Rows {
        rest: bytes,
        blocks,
    }
}

impl<'a, B: Blocks> Iterator for Rows<'a, B> {
    type Item = (&'a [u8], Option<DockerRow<'a>>);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        next_row(&mut self.rest, self.blocks)
    }
}

/// The first row of `rest` and its record where the pass reads it (see [`rows`]), `rest`
/// moved on past it: for a loop that must be inlined whole (see `unwrap`'s Docker reading).
#[inline(always)]
pub fn next_row<'a, B: Blocks>(
    rest: &mut &'a [u8],
    blocks: B,
) -> Option<(&'a [u8], Option<DockerRow<'a>>)> {
    if rest.is_empty() {
        return None;
    }
    let (end, read) = scan_row(rest, blocks);
    let raw = &rest[..end];
    *rest = rest.get(end + 1..).unwrap_or_default();
    Some((raw, read))
}

/// The end of the first row of `rest` (its newline, or `rest.len()`), and its record where
/// the pass reads it. Of the quotes and backslashes the pass keeps those of the last three
/// blocks of 32 bytes as bits (`window`, the oldest block lowest) and whether any came
/// before (`older`, the head's own left out): the stamp's quotes and the text's end are
/// within the window.
#[inline(always)]
fn scan_row<B: Blocks>(rest: &[u8], blocks: B) -> (usize, Option<DockerRow<'_>>) {
    let mut pos = 0;
    let mut window = 0u128;
    let mut older = 0u32;
    let limit = PASS_BYTES.min(rest.len());
    while pos < limit {
        let (mut quotes, other) = match rest.get(pos..pos + 32) {
            Some(block) => blocks.masks(block),
            None => tail_masks(&rest[pos..]),
        };
        if pos == 0 {
            quotes &= !HEAD_QUOTES;
        }
        older |= window as u32;
        window = window >> 32 | u128::from(quotes) << 64;
        if other != 0 {
            let end = pos + other.trailing_zeros() as usize;
            if rest[end] != b'\n' {
                return (row_end(rest, end), None);
            }
            let raw = &rest[..end];
            return (end, read_row(raw, pos, window, older));
        }
        pos += 32;
    }
    if pos >= rest.len() {
        return (rest.len(), read_row(rest, pos - 32, window, older));
    }
    (row_end(rest, pos), None)
}

/// The first newline of `rest` at or after `from` (or `rest.len()`).
fn row_end(rest: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &rest[from..]).map_or(rest.len(), |i| from + i)
}

/// The row `raw`, holding no byte that needs a look but quotes and backslashes, read from
/// the pass's bits of them: `window` those of the three blocks up to the one at `last`
/// (bit `p + 64 - last` for the byte at `p`), `older` any before, the head's left out. Where
/// it has the daemon's layout, the same record [`docker_parts`] reads: the stamp's opening
/// quote is the last before its closing one, the text ends where the layout's tail before
/// that quote begins, and the text holds escapes if a bit falls in it.
#[inline(always)]
fn read_row(raw: &[u8], last: usize, window: u128, older: u32) -> Option<DockerRow<'_>> {
    let e = raw.len();
    if e < HEAD.len() + TAIL_STDERR.len() + 2 + 19
        || !raw.starts_with(HEAD)
        || !raw.ends_with(b"\"}")
    {
        return None;
    }
    // (every place below is at most 64 bytes before the last block: `+ 64` keeps it positive)
    let bit = |p: usize| p + 64 - last;
    let below = window & ((1u128 << bit(e - 2)) - 1);
    if below == 0 {
        return None;
    }
    let quote = (127 - below.leading_zeros() as usize + last).checked_sub(64)?;
    let close = quote.checked_sub(TAIL_STDERR.len() - 1)?;
    if close < HEAD.len() || e - 2 - (quote + 1) > PASS_STAMP {
        return None;
    }
    let stream = stream_of(&raw[close..=quote])?;
    let stamp = &raw[quote + 1..e - 2];
    if !rfc3339_shaped(stamp) {
        return None;
    }
    let (body, newline) = split_newline(&raw[HEAD.len()..close]);
    let end = HEAD.len() + body.len();
    let escaped = older != 0 || window & ((1u128 << bit(end)) - 1) != 0;
    Some(DockerRow {
        body,
        escaped,
        newline,
        stamp,
        stream,
        from_text: &raw[HEAD.len()..e - 2],
    })
}

/// Bytes a row must have after its start for [`fused_line`]: its loads never reach the end.
pub(super) const FUSED_ROOM: usize = HEAD.len() + PASS_BYTES + 128;

/// The first row of `rest` (of at least [`FUSED_ROOM`] bytes) read and written in one pass,
/// where it is one whole line in the daemon's layout: its text decoded into `out` as the
/// pass reads it, 32 bytes a step, each stored whole and the output moved on to the first
/// byte that needs a look, then a newline; and the row's end (its newline), its stream and
/// stamp. `None`, `out` as it was, for any other row (a piece without its newline, a text
/// of several lines, a byte beyond ASCII or a control byte, more than [`PASS_BYTES`] of
/// text, another layout): the reading in two passes ([`next_row`]) then takes it. (The
/// pass that only found the row's places, and the copy and decoding after it, read every
/// byte three times: a fifth of a Docker file's reading.)
#[inline(always)]
pub(super) fn fused_line<'a, B: Blocks>(
    rest: &'a [u8],
    blocks: B,
    out: &mut Vec<u8>,
) -> Option<(usize, Stream, &'a [u8])> {
    assert!(rest.len() >= FUSED_ROOM);
    if !rest.starts_with(HEAD) {
        return None;
    }
    let src = &rest[HEAD.len()..];
    // (the text's stores reach at most 32 bytes past the `PASS_BYTES + 32` read, and the
    // decoded text is never longer than the raw one)
    out.reserve(PASS_BYTES + 128);
    let base = out.len();
    let (mut i, mut o) = (0usize, 0usize);
    // SAFETY: each block is read at `i < PASS_BYTES`, within `src` (`FUSED_ROOM` asserted);
    // each is stored at `o <= i` past `base`, within the room reserved; the length is set
    // last, to the bytes written
    unsafe {
        let dst = out.as_mut_ptr().add(base);
        loop {
            if i >= PASS_BYTES {
                return None;
            }
            let m = blocks.copy_block(src.as_ptr().add(i), dst.add(o));
            if m == 0 {
                i += 32;
                o += 32;
                continue;
            }
            let k = m.trailing_zeros() as usize;
            i += k;
            o += k;
            // (a quote not escaped ends the text without its newline: a piece)
            if src[i] != b'\\' {
                return None;
            }
            let c = match src[i + 1] {
                b'n' if src[i + 2] == b'"' => {
                    i += 2;
                    break;
                }
                c @ (b'"' | b'\\' | b'/') => c,
                b't' => b'\t',
                b'r' => b'\r',
                b'b' => 8,
                b'f' => 12,
                b'u' => {
                    let (Unescaped::Text(t), end) = unescape(src, i)? else {
                        return None;
                    };
                    let d = t.as_bytes();
                    if d.len() > end - i || d.contains(&b'\n') {
                        return None;
                    }
                    std::ptr::copy_nonoverlapping(d.as_ptr(), dst.add(o), d.len());
                    o += d.len();
                    i = end;
                    continue;
                }
                // (a newline within the text, or an escape JSON has not)
                _ => return None,
            };
            *dst.add(o) = c;
            o += 1;
            i += 2;
        }
        // `i`: the text's closing quote, where the layout's tail begins
        let stream = stream_of(&src[i..i + TAIL_STDERR.len()])?;
        let s = i + TAIL_STDERR.len();
        let (quotes, other) = blocks.masks(&src[s..s + 32]);
        let t = (quotes | other).trailing_zeros() as usize;
        if t >= 32 || &src[s + t..s + t + 3] != b"\"}\n" {
            return None;
        }
        let stamp = &src[s..s + t];
        if !rfc3339_shaped(stamp) {
            return None;
        }
        *dst.add(o) = b'\n';
        out.set_len(base + o + 1);
        Some((HEAD.len() + s + t + 2, stream, stamp))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made row of the tests: its text's pieces, stream, stamp, bytes cut off its end, and
    /// whether its text ends with a newline.
    type MadeRow = (Vec<&'static str>, &'static str, &'static str, usize, bool);

    /// A Docker file of made rows, in the daemon's layout but for what the rows break.
    fn docker_file(made: &[MadeRow]) -> Vec<u8> {
        let mut file = Vec::new();
        for (text, stream, stamp, cut, newline) in made {
            let nl = if *newline { "\\n" } else { "" };
            let row = format!(
                "{{\"log\":\"{}{nl}\",\"stream\":\"{stream}\",\"time\":\"{stamp}\"}}",
                text.concat()
            );
            let row = row.as_bytes();
            file.extend_from_slice(&row[..row.len().saturating_sub(*cut)]);
            file.push(b'\n');
        }
        file
    }

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
                            "\\ud83d\\ude00", "\\ud83d", "\\t", "\\/", "\\x", "\\u12",
                            "0123456789abcdef",
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
            let file = docker_file(&made);
            let lines: Vec<&[u8]> = crate::scan::lines(&file).collect();
            let read: Vec<_> = rows(&file).collect();
            // the AVX2 blocks find what the SSE2 ones find
            #[cfg(target_arch = "x86_64")]
            if let Some(avx2) = super::super::blocks::Avx2::detect() {
                let by_avx2: Vec<_> = rows_by(&file, avx2).collect();
                proptest::prop_assert_eq!(&by_avx2, &read);
            }
            proptest::prop_assert_eq!(read.len(), lines.len());
            for ((raw, fast), line) in read.into_iter().zip(lines) {
                proptest::prop_assert_eq!(raw, line);
                let fixed = docker_parts(raw);
                // (the rows it leaves are those it cannot vouch for: bytes beyond printable
                // ASCII, or too long)
                let plain = raw.len() + 1 < PASS_BYTES && raw.iter().all(|c| (0x20..0x7f).contains(c));
                match fast {
                    Some(d) => {
                        // the vector decoding gives what the search for each escape gives
                        let (mut wide, mut each) = (b"kept".to_vec(), b"kept".to_vec());
                        let got = d.decode(&mut wide);
                        let want = decode_line(d.body, &mut each);
                        proptest::prop_assert_eq!(got, want);
                        if want.is_some() {
                            proptest::prop_assert_eq!(&wide, &each);
                        } else {
                            proptest::prop_assert_eq!(&wide[..], b"kept");
                        }
                        proptest::prop_assert_eq!(Some(d), fixed);
                    }
                    None => proptest::prop_assert!(fixed.is_none() || !plain),
                }
            }
        }
    }

    proptest::proptest! {
        /// The pass that decodes as it reads gives what the reading in two passes gives, row
        /// by row: the same end, stream, stamp and decoded text, for every row it takes; and
        /// it takes every whole line of plain ASCII the two passes read, whatever escapes it
        /// holds.
        #[test]
        fn fused_line_writes_what_two_passes_write(
            made in proptest::collection::vec(
                (
                    proptest::collection::vec(
                        proptest::sample::select(vec![
                            "a", "[2026-05-09 22:00:00] Decode", " ", "\\\"", "\\\\", "\\n",
                            "\\u00e9", "\\u003e", "\\u000a", "é", "\u{1}", "\"", "\\",
                            "x".repeat(300).leak(), "\\ud83d\\ude00", "\\ud83d", "\\t", "\\/",
                            "\\x", "\\u12", "0123456789abcdef",
                        ]),
                        0..8,
                    ),
                    proptest::sample::select(vec!["stderr", "stdout", "stdin"]),
                    proptest::sample::select(vec![
                        "2026-05-09T22:00:00.123456789Z", "2026-05-09T22:00:00Z", "2026-05-09",
                        "2026-05-09T22:00:00\"Z", "2026-05-09T22:00:00.1234567891234Z",
                    ]),
                    proptest::sample::select(vec![0usize, 1, 2, 7, 30]),
                    proptest::bool::ANY,
                ),
                1..6,
            ),
        ) {
            let mut file = docker_file(&made);
            let rows_end = file.len();
            file.resize(rows_end + FUSED_ROOM, b'.');
            let mut rest = &file[..];
            while rest.len() >= FUSED_ROOM {
                let mut fused = b"kept".to_vec();
                let got = fused_line(rest, Sse2, &mut fused);
                #[cfg(target_arch = "x86_64")]
                if let Some(avx2) = super::super::blocks::Avx2::detect() {
                    let mut by_avx2 = b"kept".to_vec();
                    proptest::prop_assert_eq!(fused_line(rest, avx2, &mut by_avx2), got);
                    proptest::prop_assert_eq!(&by_avx2, &fused);
                }
                let mut after = rest;
                let (raw, read) = next_row(&mut after, Sse2).unwrap();
                let mut two = b"kept".to_vec();
                let whole = read.as_ref().filter(|d| d.newline && d.decode(&mut two) == Some(false));
                match got {
                    Some((end, stream, stamp)) => {
                        let d = whole.unwrap();
                        proptest::prop_assert_eq!(end, raw.len());
                        proptest::prop_assert_eq!((stream, stamp), (d.stream, d.stamp));
                        two.push(b'\n');
                        proptest::prop_assert_eq!(&fused, &two);
                    }
                    None => {
                        proptest::prop_assert_eq!(&fused[..], b"kept");
                        let ascii = raw.iter().all(|c| (0x20..0x7f).contains(c));
                        proptest::prop_assert!(whole.is_none() || !ascii || raw.len() > PASS_BYTES);
                    }
                }
                rest = after;
            }
        }
    }

    /// Regression: a `\u000a` escape was decoded to a newline without saying so, and the
    /// text written as one line holding two.
    #[test]
    fn an_escaped_newline_by_its_code_is_a_newline() {
        let mut out = Vec::new();
        assert_eq!(decode_line(br"a\u000ab", &mut out), Some(true));
        assert_eq!(out, b"a\nb");
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
