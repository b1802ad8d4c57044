//! JSON strings as they appear in a line: compared and measured without decoding, and
//! their escapes read.

use std::borrow::Cow;

/// A string as it appears in the input: the bytes between the quotes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Str<'a> {
    pub raw: &'a [u8],
    /// Whether `raw` holds backslash escapes (then it must be decoded to compare).
    pub escaped: bool,
}

impl<'a> Str<'a> {
    /// Compares with `s` as serde_json would after decoding.
    pub fn is(&self, s: &str) -> bool {
        if self.escaped {
            self.decode() == s
        } else {
            self.raw == s.as_bytes()
        }
    }

    /// The decoded text (borrowed when there are no escapes). Lone surrogates become U+FFFD.
    pub fn decode(&self) -> Cow<'a, str> {
        if !self.escaped {
            return String::from_utf8_lossy(self.raw);
        }
        let mut out = Vec::with_capacity(self.raw.len());
        let b = self.raw;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'\\' {
                out.push(b[i]);
                i += 1;
                continue;
            }
            let c = b.get(i + 1).copied().unwrap_or(b'\\');
            i += 2;
            let ch = match c {
                b'n' => '\n',
                b't' => '\t',
                b'r' => '\r',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'u' => {
                    let hi = hex4(&b[i.min(b.len())..]).unwrap_or(0xFFFD);
                    i += 4;
                    if (0xD800..0xDC00).contains(&hi)
                        && b.get(i) == Some(&b'\\')
                        && b.get(i + 1) == Some(&b'u')
                    {
                        match hex4(&b[i + 2..]) {
                            Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                                i += 6;
                                char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                                    .unwrap_or('\u{FFFD}')
                            }
                            _ => '\u{FFFD}',
                        }
                    } else {
                        char::from_u32(hi).unwrap_or('\u{FFFD}')
                    }
                }
                other => other as char,
            };
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
        Cow::Owned(String::from_utf8_lossy(&out).into_owned())
    }

    /// Number of characters after decoding, counted without decoding: every byte that does
    /// not continue a UTF-8 sequence starts a character, every escape is one character, and
    /// a surrogate pair (`\uD83D\uDE00`) is one.
    pub fn char_count(&self) -> usize {
        let b = self.raw;
        let mut n = b.iter().filter(|&&c| (c as i8) >= -0x40).count();
        if self.escaped {
            let mut i = 0;
            while let Some(j) = memchr::memchr(b'\\', &b[i..]) {
                let at = i + j;
                // `\x` is two bytes for one char; `\uXXXX` six for one; a low surrogate
                // after a high one adds nothing
                let len = if b.get(at + 1) == Some(&b'u') { 6 } else { 2 };
                n -= len - 1;
                if len == 6 {
                    if let Some(v) = hex4(&b[(at + 2).min(b.len())..]) {
                        if (0xDC00..0xE000).contains(&v)
                            && at >= 6
                            && b[at - 6] == b'\\'
                            && b[at - 5] == b'u'
                        {
                            if let Some(h) = hex4(&b[at - 4..]) {
                                if (0xD800..0xDC00).contains(&h) {
                                    n -= 1;
                                }
                            }
                        }
                    }
                }
                i = at + len;
                if i >= b.len() {
                    break;
                }
            }
        }
        n
    }
}

pub(super) fn hex4(b: &[u8]) -> Option<u32> {
    let d = b.get(..4)?;
    let mut v = 0u32;
    for &c in d {
        let h = HEX[usize::from(c)];
        if h > 15 {
            return None;
        }
        v = v * 16 + u32::from(h);
    }
    Some(v)
}

/// The value of each hex digit; 0xff for other bytes.
pub(super) const HEX: [u8; 256] = {
    let mut t = [0xffu8; 256];
    let mut k = 0;
    while k < 10 {
        t[b'0' as usize + k] = k as u8;
        k += 1;
    }
    let mut k = 0;
    while k < 6 {
        t[b'a' as usize + k] = 10 + k as u8;
        t[b'A' as usize + k] = 10 + k as u8;
        k += 1;
    }
    t
};

/// Length of the escape `\\c` for each `c`: 2, 6 for `\\uXXXX`, 0 when not a JSON escape.
pub(super) const ESCAPE_LEN: [u8; 256] = {
    let mut t = [0u8; 256];
    let simple = *b"\"\\/bfnrt";
    let mut k = 0;
    while k < simple.len() {
        t[simple[k] as usize] = 2;
        k += 1;
    }
    t[b'u' as usize] = 6;
    t
};

/// The length of the escape whose backslash is `b[at]`, or `None` when it is not one
/// serde_json accepts: a `\u` high surrogate must be followed by a `\u` low surrogate
/// (the pair is one 12-byte escape), and a lone low surrogate is an error.
#[inline(always)]
pub(super) fn escape_len(b: &[u8], at: usize) -> Option<usize> {
    match ESCAPE_LEN[usize::from(*b.get(at + 1)?)] {
        0 => None,
        6 => match hex4(b.get(at + 2..)?)? {
            0xD800..=0xDBFF => {
                let lo = (b.get(at + 6..at + 8)? == b"\\u").then(|| hex4(&b[at + 8..]))??;
                (0xDC00..=0xDFFF).contains(&lo).then_some(12)
            }
            0xDC00..=0xDFFF => None,
            _ => Some(6),
        },
        n => Some(usize::from(n)),
    }
}
