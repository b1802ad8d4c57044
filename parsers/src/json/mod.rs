//! A lazy, zero-copy JSON scanner for one record per line.
//!
//! A completion record is mostly text (reasoning, content) and a few small fields (usage,
//! finish reason). The scanner walks the record's structure, hands the caller the keys it
//! meets, and skips every value the caller does not ask for: a string by turning 64-byte
//! blocks into bitmasks of quotes, backslashes and control characters (AVX2 or SSE2), a
//! nested object or array by counting brackets without recursion. It still checks the
//! grammar of everything it passes (UTF-8 and control characters in strings, escapes,
//! numbers, literals, commas and colons), so a line it accepts is a line serde_json accepts — except for `NaN` / `Infinity` / `-Infinity`, which SGLang's
//! benchmark writes and which are read as numbers on purpose.

/// Why a line is not JSON, and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{what} at byte {at}")]
pub struct JsonError {
    pub what: &'static str,
    pub at: usize,
}

type R<T> = Result<T, JsonError>;

mod blocks;
mod string;
pub mod value;

use blocks::*;
pub use string::Str;
use string::*;

/// A cursor over one JSON document.
#[derive(Debug, Clone)]
pub struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
    /// A document ends at its line's `\n` (see [`Scanner::line`]).
    line: bool,
}

impl<'a> Scanner<'a> {
    pub fn new(b: &'a [u8]) -> Scanner<'a> {
        Scanner {
            b,
            pos: 0,
            line: false,
        }
    }

    /// A scanner for the document on the first line of `b` (the rest of a chunk, say): white
    /// space never runs past a `\n`, and [`Scanner::end`] accepts the line's end. A string
    /// cannot hold a raw `\n` either, so the parse itself finds where the line ends and no
    /// separate search for the newline is needed; on an error, no `\n` lies before the error's
    /// position.
    pub fn line(b: &'a [u8]) -> Scanner<'a> {
        Scanner {
            b,
            pos: 0,
            line: true,
        }
    }

    /// Byte offset of the cursor.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// The bytes read so far.
    pub fn taken(&self) -> &'a [u8] {
        &self.b[..self.pos]
    }

    fn err<T>(&self, what: &'static str) -> R<T> {
        Err(JsonError { what, at: self.pos })
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if matches!(c, b' ' | b'\t' | b'\r') || (c == b'\n' && !self.line) {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// The next non-space byte, without consuming it.
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.pos).copied()
    }

    /// Checks that only white space remains (of the line, for a [`Scanner::line`]).
    pub fn end(&mut self) -> R<()> {
        self.ws();
        if self.pos == self.b.len() || (self.line && self.b[self.pos] == b'\n') {
            Ok(())
        } else {
            self.err("trailing characters")
        }
    }

    fn expect(&mut self, c: u8, what: &'static str) -> R<()> {
        self.ws();
        if self.b.get(self.pos) == Some(&c) {
            self.pos += 1;
            Ok(())
        } else {
            self.err(what)
        }
    }

    /// Reads a string (the cursor on its opening quote).
    ///
    /// Whole 64-byte blocks first (`string_blocks`), then the rest eight bytes at a time:
    /// the three searches (quote, backslash, control character) are word-wide comparisons
    /// whose lowest flagged byte is always a true match.
    pub fn string(&mut self) -> R<Str<'a>> {
        self.expect(b'"', "expected a string")?;
        let b = self.b;
        let start = self.pos;
        // keys and short values (`"usage"`, `"stop"`) are plain ASCII: found a word at a time,
        // they skip the block machinery, whose set-up costs more than they do
        let mut i = start;
        while let Some(w) = b.get(i..i + 8) {
            let w = u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
            let m = quote_or_control(w) | has_byte(w, b'\\') | (w & HI);
            if m == 0 {
                i += 8;
                if i - start < 32 {
                    continue;
                }
            } else {
                let at = i + (m.trailing_zeros() / 8) as usize;
                if b[at] == b'"' {
                    self.pos = at + 1;
                    return Ok(Str {
                        raw: &b[start..at],
                        escaped: false,
                    });
                }
            }
            break;
        }
        let (mut i, mut escaped, unchecked, bad_utf8) = match string_blocks(b, start) {
            Blocks::Closed {
                end,
                escaped,
                unchecked,
                bad_utf8,
            } => return self.closed(start, end, escaped, unchecked, bad_utf8),
            Blocks::Control { at } => {
                self.pos = at;
                return self.err("control character in string");
            }
            // the first bad escape, found byte by byte
            Blocks::Rescan => (start, false, start, false),
            Blocks::Tail {
                at,
                escaped,
                unchecked,
                bad_utf8,
            } => (at, escaped, unchecked, bad_utf8),
        };
        // the rest byte by byte
        loop {
            while i + 8 <= b.len() {
                let w = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
                let m = quote_or_control(w) | has_byte(w, b'\\');
                if m != 0 {
                    i += (m.trailing_zeros() / 8) as usize;
                    break;
                }
                i += 8;
            }
            while i < b.len() && b[i] != b'"' && b[i] != b'\\' && b[i] >= 0x20 {
                i += 1;
            }
            match b.get(i) {
                Some(b'\\') => {
                    escaped = true;
                    match escape_len(b, i) {
                        Some(n) => i += n,
                        None => {
                            self.pos = i;
                            return self.err(if b.get(i + 1) == Some(&b'u') {
                                "bad \\u escape"
                            } else {
                                "bad escape"
                            });
                        }
                    }
                }
                Some(b'"') => return self.closed(start, i, escaped, unchecked, bad_utf8),
                Some(_) => {
                    self.pos = i;
                    return self.err("control character in string");
                }
                None => {
                    self.pos = b.len();
                    return self.err("unterminated string");
                }
            }
        }
    }

    /// The string `start..end` (its closing quote at `end`), once its bytes are checked to be
    /// UTF-8: the blocks checked them up to `unchecked` (all of them on AVX2, see
    /// [`blocks_with`]), the rest is checked here, while still in the nearest cache. Bytes
    /// outside strings need no check: the grammar allows only ASCII there.
    #[inline]
    fn closed(
        &mut self,
        start: usize,
        end: usize,
        escaped: bool,
        unchecked: usize,
        bad_utf8: bool,
    ) -> R<Str<'a>> {
        let raw = &self.b[start..end];
        if bad_utf8
            || (unchecked < end && simdutf8::basic::from_utf8(&self.b[unchecked..end]).is_err())
        {
            self.pos = start;
            return self.err("invalid UTF-8 in string");
        }
        self.pos = end + 1;
        Ok(Str { raw, escaped })
    }

    /// Reads a number's text (also `NaN`, `Infinity`, `-Infinity`).
    pub fn number(&mut self) -> R<&'a [u8]> {
        self.ws();
        let b = self.b;
        let start = self.pos;
        if matches!(b.get(start), Some(b'N' | b'I' | b'-')) {
            for lit in [&b"NaN"[..], b"Infinity", b"-Infinity"] {
                if b[start..].starts_with(lit) {
                    self.pos += lit.len();
                    return Ok(lit);
                }
            }
        }
        let mut i = start;
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return self.err("expected a value"),
        }
        if b.get(i) == Some(&b'.') {
            i = self.digits(i + 1)?;
        }
        let int_digits = i - start;
        let mut exp = false;
        if matches!(b.get(i), Some(b'e' | b'E')) {
            exp = true;
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            i = self.digits(i)?;
        }
        self.pos = i;
        // like serde_json, a number too large for an f64 is an error, not infinity
        if exp || int_digits > 300 {
            let text = std::str::from_utf8(&b[start..i]).unwrap_or("0");
            if text.parse::<f64>().map_or(true, |v| !v.is_finite()) {
                self.pos = start;
                return self.err("number out of range");
            }
        }
        Ok(&b[start..i])
    }

    /// One or more digits from `i` (a fraction or an exponent); returns where they end.
    fn digits(&mut self, i: usize) -> R<usize> {
        let n = self.b[i.min(self.b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 {
            self.pos = i;
            return self.err("bad number");
        }
        Ok(i + n)
    }

    fn literal(&mut self, lit: &'static [u8]) -> R<()> {
        if self.b[self.pos..].starts_with(lit) {
            self.pos += lit.len();
            Ok(())
        } else {
            self.err("expected a value")
        }
    }

    /// Skips one value of any kind, checking its grammar. Nesting costs no call stack: open
    /// containers are bits of a `u64` (1 = object), spilling to a vector only beyond 64 levels.
    pub fn skip(&mut self) -> R<()> {
        let mut bits: u64 = 0;
        let mut depth: usize = 0;
        let mut spill: Vec<u64> = Vec::new();
        let push = |bits: &mut u64, depth: &mut usize, spill: &mut Vec<u64>, obj: bool| {
            if *depth > 0 && (*depth).is_multiple_of(64) {
                spill.push(*bits);
                *bits = 0;
            }
            *bits = (*bits << 1) | u64::from(obj);
            *depth += 1;
        };
        loop {
            // a value
            match self.peek() {
                Some(b'{') => {
                    self.pos += 1;
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                    } else {
                        push(&mut bits, &mut depth, &mut spill, true);
                        self.string()?;
                        self.expect(b':', "expected `:`")?;
                        continue;
                    }
                }
                Some(b'[') => {
                    self.pos += 1;
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                    } else {
                        push(&mut bits, &mut depth, &mut spill, false);
                        continue;
                    }
                }
                Some(b'"') => {
                    self.string()?;
                }
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'n') => self.literal(b"null")?,
                Some(_) => {
                    self.number()?;
                }
                None => return self.err("unexpected end"),
            }
            // after a value: `,` continues the innermost container, a closer ends it
            loop {
                if depth == 0 {
                    return Ok(());
                }
                let is_obj = bits & 1 == 1;
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if is_obj {
                            self.string()?;
                            self.expect(b':', "expected `:`")?;
                        }
                        break;
                    }
                    Some(b'}') if is_obj => self.pos += 1,
                    Some(b']') if !is_obj => self.pos += 1,
                    _ => return self.err("expected `,` or a closing bracket"),
                }
                bits >>= 1;
                depth -= 1;
                if depth > 0 && depth.is_multiple_of(64) {
                    bits = spill.pop().unwrap_or(0);
                }
            }
        }
    }

    /// Walks an object: `f` is called with each key and must consume its value (with
    /// [`Scanner::skip`] or a reader). Duplicate keys are all visited, in order.
    pub fn object(&mut self, mut f: impl FnMut(&mut Scanner<'a>, Str<'a>) -> R<()>) -> R<()> {
        self.expect(b'{', "expected an object")?;
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(());
        }
        loop {
            let key = self.string()?;
            self.expect(b':', "expected `:`")?;
            f(self, key)?;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return self.err("expected `,` or `}`"),
            }
        }
    }

    /// Walks an array: `f` is called with each index and must consume the element.
    pub fn array(&mut self, mut f: impl FnMut(&mut Scanner<'a>, usize) -> R<()>) -> R<()> {
        self.expect(b'[', "expected an array")?;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        let mut i = 0;
        loop {
            f(self, i)?;
            i += 1;
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => return self.err("expected `,` or `]`"),
            }
        }
    }

    /// Reads a scalar: a number (as f64), or `null` (None). Anything else is skipped and
    /// gives None.
    pub fn opt_number(&mut self) -> R<Option<f64>> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9' | b'N' | b'I') => {
                let t = self.number()?;
                // token counts are small integers: summed digit by digit, exactly (2^53 is
                // 16 digits), without the general float reader
                if t.len() <= 15 && t.iter().all(u8::is_ascii_digit) {
                    return Ok(Some(
                        t.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')) as f64,
                    ));
                }
                Ok(std::str::from_utf8(t).ok().and_then(crate::num::float))
            }
            _ => self.skip().map(|_| None),
        }
    }

    /// Reads a string, or gives None (and skips) for anything else.
    pub fn opt_string(&mut self) -> R<Option<Str<'a>>> {
        if self.peek() == Some(b'"') {
            self.string().map(Some)
        } else {
            self.skip().map(|_| None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(s: &str) -> bool {
        let mut sc = Scanner::new(s.as_bytes());
        sc.skip().and_then(|_| sc.end()).is_ok()
    }

    #[test]
    fn strings_must_be_utf8() {
        let ok = |b: &[u8]| {
            let mut sc = Scanner::new(b);
            sc.skip().and_then(|_| sc.end()).is_ok()
        };
        assert!(ok("\"é模😀\"".as_bytes()));
        assert!(!ok(b"\"\xff\""));
        // a sequence cut by the closing quote, and one cut in a long string's blocks
        assert!(!ok(b"\"\xe6\xa8\""));
        let mut long = b"{\"k\": \"".to_vec();
        long.extend(std::iter::repeat_n(b'a', 100));
        long.extend(b"\xf0\x9f\x98 \"}");
        assert!(!ok(&long));
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&long).is_ok(),
            ok(&long)
        );
    }

    /// A block scan's result with its UTF-8 part replaced by the verdict it leads to, and
    /// checked to be consistent: the bytes before `unchecked` are valid unless `bad_utf8`,
    /// which only a real error (not a character cut by the end) may set.
    fn utf8_verdict(b: &[u8], start: usize, r: Blocks) -> (Blocks, bool) {
        let cut_at = match r {
            Blocks::Closed { end, .. } => end,
            // the blocks read up to where the UTF-8 is left unchecked, past `at` perhaps
            Blocks::Tail { at, unchecked, .. } => at.max(unchecked),
            Blocks::Control { .. } | Blocks::Rescan => return (r, true),
        };
        let (Blocks::Closed {
            unchecked,
            bad_utf8,
            ..
        }
        | Blocks::Tail {
            unchecked,
            bad_utf8,
            ..
        }) = r
        else {
            unreachable!()
        };
        let text = &b[start..cut_at];
        let real_error = std::str::from_utf8(text).is_err_and(|e| e.error_len().is_some());
        if bad_utf8 {
            assert!(real_error, "{r:?}");
        } else {
            assert!(
                std::str::from_utf8(&b[start..unchecked.min(cut_at)]).is_ok(),
                "{r:?}"
            );
        }
        // a tail may end on the backslash of an escape the blocks cut, past which they read
        let ok = !bad_utf8 && std::str::from_utf8(&b[unchecked.min(cut_at)..cut_at]).is_ok();
        let r = match r {
            Blocks::Closed { end, escaped, .. } => Blocks::Closed {
                end,
                escaped,
                unchecked: 0,
                bad_utf8: false,
            },
            Blocks::Tail { at, escaped, .. } => Blocks::Tail {
                at,
                escaped,
                unchecked: 0,
                bad_utf8: false,
            },
            bad => bad,
        };
        // a tail's verdict is only known once the rest is read (the asserts above hold for
        // the part before it)
        (r, ok || matches!(r, Blocks::Tail { .. }))
    }

    /// A repeatable stream of numbers below `n` (xorshift64), for the randomised tests.
    fn xorshift(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        }
    }

    /// The escape masks of a block against a byte-by-byte reading of its backslashes, for
    /// random masks of every density, with and without an escape carried in.
    #[test]
    fn escape_masks_read_like_byte_by_byte() {
        let mut next = xorshift(0x0bad_5eed_1234_5678u64);
        for _ in 0..100_000 {
            let density = next(65);
            let bs = (0..64).fold(0u64, |m, k| m | (u64::from(next(64) < density) << k));
            let carry = next(2) as u64;
            let (mut escaped, mut starts, mut open) = (0u64, 0u64, carry);
            for k in 0..64 {
                if open == 1 {
                    escaped |= 1 << k;
                    open = 0;
                } else if bs >> k & 1 == 1 {
                    starts |= 1 << k;
                    open = 1;
                }
            }
            assert_eq!(
                escapes(bs, carry),
                (escaped, starts, open),
                "{bs:064b} {carry}"
            );
        }
    }

    /// Every vector width finds the same end, error or tail as the SSE2 blocks, and the same
    /// UTF-8 verdict, on string bodies dense in what the masks look for, at every alignment
    /// to the 64-byte blocks (on a CPU without AVX2 this compares SSE2 with itself).
    #[test]
    fn vector_widths_agree() {
        const PIECES: [&[u8]; 27] = [
            br"\\",
            br"\\\",
            br"\\\\\",
            br#"\\\""#,
            br"\n",
            br"\u00e9",
            br"\ud83d\ude00",
            br"\ud83d",
            br"\ude00",
            br"\uZZ",
            br"\x",
            b"\x01",
            "é模😀".as_bytes(),
            br#"""#,
            b"plain text ",
            br"\/",
            br"\uABCD",
            br"\u12G4",
            br"\uDbFf\uDc00",
            br"\uD7ff",
            br"\u00",
            // invalid UTF-8: a stray byte, a cut character, a surrogate, overlong and too
            // large forms, a lone continuation byte
            b"\xff",
            b"\xe6\xa8",
            b"\xed\xa0\x80",
            b"\xc0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80",
        ];
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15u64);
        let mut compared = 0;
        for _ in 0..3000 {
            let mut body = vec![b'"'];
            body.extend(std::iter::repeat_n(b'a', next(70)));
            for _ in 0..next(40) {
                // quotes and control characters end the scan: keep them rare
                let k = next(PIECES.len() * 4) % PIECES.len();
                let k = if (k == 11 || k == 13 || k >= 21) && next(8) != 0 {
                    14
                } else {
                    k
                };
                body.extend_from_slice(PIECES[k]);
                // and a backslash before any printable byte: every escape, valid or not
                if next(3) == 0 {
                    body.extend([b'\\', 0x20 + next(0x5f) as u8]);
                }
            }
            body.extend_from_slice(br#""}"#);
            for cut in [body.len(), body.len().saturating_sub(next(20))] {
                let b = &body[..cut.max(1)];
                let sse2 = blocks_with(
                    b,
                    1,
                    sse2::masks,
                    sse2::escape_chars,
                    sse2::hex_chars,
                    false,
                    |_, _| false,
                );
                assert_eq!(
                    utf8_verdict(b, 1, string_blocks(b, 1)),
                    utf8_verdict(b, 1, sse2),
                    "{:?}",
                    String::from_utf8_lossy(b)
                );
                compared += 1;
            }
        }
        assert_eq!(compared, 6000);
    }

    #[test]
    fn validity_matches_the_grammar() {
        for ok in [
            r#"{}"#,
            r#"[]"#,
            r#"{"a":[1,2.5e-3,{"b":null}],"c":"x\u00e9\"\\"}"#,
            "  -0 ",
            r#""\ud83d\ude00""#,
            "[[[[[[]]]]]]",
            "NaN",
        ] {
            assert!(valid(ok), "{ok}");
        }
        for bad in [
            r#"{"a":}"#,
            r#"{"a" 1}"#,
            "[1,]",
            "[1 2]",
            "01",
            "1.",
            "-",
            r#""a"#,
            "\"a\u{1}\"",
            r#""\x""#,
            "tru",
            "{\"a\":1}}",
            "[}",
            "{]",
        ] {
            assert!(!valid(bad), "{bad}");
        }
    }

    /// Regression (found by the `json_record` fuzz target): serde_json rejects numbers that
    /// overflow an f64; the scanner accepted them.
    #[test]
    fn out_of_range_numbers_are_invalid() {
        assert!(!valid("-3E3333333333336666"));
        assert!(!valid(&format!("1{}", "0".repeat(400))));
        assert!(valid("1e308") && valid("-2.5E-400"));
    }

    /// Strings of every length around the word-at-a-time path (up to 32 plain ASCII bytes),
    /// with a quote, escape, control or non-ASCII byte at every position, read as serde_json
    /// reads them.
    #[test]
    fn short_strings_read_like_serde() {
        for n in 0..48 {
            for at in 0..=n {
                for odd in [&b"\\n"[..], b"\\\"", "é".as_bytes(), b"\x01", b"\xff"] {
                    let mut doc = b"[\"".to_vec();
                    doc.extend(std::iter::repeat_n(b'k', at));
                    if at < n {
                        doc.extend_from_slice(odd);
                        doc.extend(std::iter::repeat_n(b'v', n - at - 1));
                    }
                    doc.extend_from_slice(b"\", 1]");
                    let mut sc = Scanner::new(&doc);
                    let ours = sc.array(|sc, i| {
                        if i == 0 {
                            let s = sc.string()?;
                            assert_eq!(s.escaped, s.raw.contains(&b'\\'));
                            Ok(())
                        } else {
                            sc.skip()
                        }
                    });
                    let theirs = serde_json::from_slice::<serde_json::Value>(&doc);
                    assert_eq!(ours.is_ok(), theirs.is_ok(), "{doc:?}");
                    if let Ok(v) = theirs {
                        let mut sc = Scanner::new(&doc[1..]);
                        assert_eq!(sc.string().unwrap().decode(), v[0].as_str().unwrap());
                    }
                }
            }
        }
    }

    /// Regression (found by the `json_record` fuzz target): with quotes and control
    /// characters in one mask, an escaped line end was skipped and the next one reported, so
    /// a line-mode error fell past the line's end. The bad escape is the first error.
    #[test]
    fn an_escaped_line_end_is_a_bad_escape_on_its_line() {
        let mut doc = b"{\"t\\".to_vec();
        doc.extend([b'\n'; 56]);
        doc.extend(b"        ttt\":");
        let mut sc = Scanner::line(&doc);
        let e = sc.skip().and_then(|_| sc.end()).unwrap_err();
        assert_eq!((e.what, e.at), ("bad escape", 3));
        let mut sc = Scanner::new(&doc);
        assert_eq!(sc.skip().unwrap_err().at, 3);
    }

    /// Token counts take the integer path; everything else the float reader. Both give the
    /// correctly rounded value (std's reader; serde_json's default one is off by a unit in
    /// the last place for the 21-digit case).
    #[test]
    fn numbers_read_like_serde() {
        for t in [
            "0",
            "7",
            "4096",
            "999999999999999",
            "9007199254740993",
            "123456789012345678901",
            "-5",
            "1.5",
            "1e3",
            "2E-2",
            "-0",
        ] {
            let want: f64 = t.parse().unwrap();
            assert_eq!(
                Scanner::new(t.as_bytes()).opt_number(),
                Ok(Some(want)),
                "{t}"
            );
        }
    }

    #[test]
    fn strings_decode_and_count() {
        let mut sc = Scanner::new(br#""a\n\u00e9\ud83d\ude00b\"""#);
        let s = sc.string().unwrap();
        assert_eq!(s.decode(), "a\né😀b\"");
        assert_eq!(s.char_count(), 6);
        assert!(s.is("a\né😀b\""));
        let mut sc = Scanner::new("\"héllo 世界\"".as_bytes());
        assert_eq!(sc.string().unwrap().char_count(), 8);
    }

    /// `\u` escapes at every offset around the 64-byte blocks of the vector scan (one in a
    /// block's last four bytes has digits in the next block, or past the last one): valid
    /// ones, surrogate pairs, and invalid ones, which are reported at their backslash as
    /// serde_json rejects them.
    #[test]
    fn escapes_across_blocks_read_like_serde() {
        let escapes: [(&str, bool); 7] = [
            (r"\u00e9", true),
            (r"\ud83d\ude00", true),
            (r"\u4e2D", true),
            (r"\ud83d", false),
            (r"\ude00", false),
            (r"\u12G4", false),
            (r"\u12", false),
        ];
        let mut checked = 0;
        for k in 0..200 {
            for (esc, ok) in escapes {
                for tail in [0, 2, 3, 70] {
                    let mut doc = b"\"".to_vec();
                    doc.extend(std::iter::repeat_n(b'a', k));
                    doc.extend_from_slice(esc.as_bytes());
                    doc.extend(std::iter::repeat_n(b'x', tail));
                    doc.push(b'"');
                    let theirs = serde_json::from_slice::<String>(&doc);
                    assert_eq!(theirs.is_ok(), ok, "{esc} {k} {tail}");
                    let ours = Scanner::new(&doc).string();
                    match (ours, theirs) {
                        (Ok(s), Ok(t)) => assert_eq!(s.decode(), t, "{esc} {k} {tail}"),
                        (Err(e), Err(_)) => assert_eq!(e.at, 1 + k, "{esc} {k} {tail}"),
                        (o, t) => panic!("{esc} {k} {tail}: {o:?} vs {t:?}"),
                    }
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 200 * 7 * 4);
    }

    /// The vector checks of `\u` escapes (digits, surrogate pairs, pairs across blocks)
    /// against a byte-by-byte reading of the same text: escape-dense bodies of valid and
    /// broken pairs, halves, bad digits and bad escapes, at every alignment to the blocks;
    /// the same verdict, the same error at the same byte, the same decoded text.
    #[test]
    fn dense_escapes_read_like_byte_by_byte() {
        /// The string at `b[0]` read one byte at a time: its end, or its first error.
        fn bytewise(b: &[u8]) -> Result<usize, usize> {
            let mut i = 1;
            loop {
                match b.get(i) {
                    Some(b'"') => return Ok(i),
                    Some(b'\\') => i += escape_len(b, i).ok_or(i)?,
                    Some(&c) if c < 0x20 => return Err(i),
                    Some(_) => i += 1,
                    None => return Err(i),
                }
            }
        }
        const PIECES: [&str; 14] = [
            r"\ud83d\ude00",
            r"\uDBFF\uDFFF",
            r"\u00e9",
            r"\u4e2d",
            r"\ud83d",
            r"\ude00",
            r"\ud7ff",
            r"\ue000",
            r"\u12G4",
            r"\u1",
            r"\x",
            r"\n",
            "a",
            "é",
        ];
        let mut next = xorshift(0x2545_f491_4f6c_dd1du64);
        let (mut good, mut bad) = (0, 0);
        for _ in 0..20_000 {
            let mut doc = String::from("\"");
            doc.extend(std::iter::repeat_n('a', next(64)));
            // mostly valid escapes, so that an error falls anywhere in a long body
            let broken = next(3) == 0;
            for _ in 0..next(60) {
                let k = next(PIECES.len());
                let k = if (4..=10).contains(&k) && !(broken && next(20) == 0) {
                    k % 4
                } else {
                    k
                };
                doc.push_str(PIECES[k]);
            }
            doc.push('"');
            let b = doc.as_bytes();
            let ours = Scanner::new(b).string();
            // the blocks ask for a rescan only where there is an error
            if string_blocks(b, 1) == Blocks::Rescan {
                assert!(bytewise(b).is_err(), "{doc}");
            }
            match (bytewise(b), ours) {
                (Ok(end), Ok(s)) => {
                    assert_eq!(s.raw.len(), end - 1, "{doc}");
                    assert_eq!(
                        Ok(s.decode().into_owned()),
                        serde_json::from_str::<String>(&doc).map_err(|_| ()),
                        "{doc}"
                    );
                    good += 1;
                }
                (Err(at), Err(e)) => {
                    assert_eq!(e.at, at, "{doc}");
                    assert!(serde_json::from_str::<String>(&doc).is_err(), "{doc}");
                    bad += 1;
                }
                (r, o) => panic!("{doc}: {r:?} vs {o:?}"),
            }
        }
        assert!(good > 10_000 && bad > 2_000, "{good} {bad}");
    }

    #[test]
    fn surrogates_pair_up_like_serde() {
        // found by the string differential test: lone surrogates are errors in serde_json
        for (text, ok) in [
            (r#""\ud83d\ude00""#, true),
            (r#""\ude00""#, false),
            (r#""\ud83d""#, false),
            (r#""\ud83dx""#, false),
            (r#""\ud83d\u0041""#, false),
            (r#""\\ude00""#, true),
        ] {
            let mut sc = Scanner::new(text.as_bytes());
            assert_eq!(sc.string().is_ok(), ok, "{text}");
            assert_eq!(serde_json::from_str::<String>(text).is_ok(), ok, "{text}");
        }
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let s = "[".repeat(100_000) + &"]".repeat(100_000);
        assert!(valid(&s));
    }
}
