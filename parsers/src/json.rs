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

use std::borrow::Cow;

/// Why a line is not JSON, and at which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{what} at byte {at}")]
pub struct JsonError {
    pub what: &'static str,
    pub at: usize,
}

type R<T> = Result<T, JsonError>;

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

fn hex4(b: &[u8]) -> Option<u32> {
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
const HEX: [u8; 256] = {
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
const ESCAPE_LEN: [u8; 256] = {
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
fn escape_len(b: &[u8], at: usize) -> Option<usize> {
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

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `w` that is `"` or below 0x20 (a control character), in one
/// comparison: xor with 0x02 turns `"` (0x22) into 0x20 and keeps every control character
/// below 0x20, so both are the bytes below 0x21. Borrows can set false flags only above a
/// true one, so the lowest flag is exact.
#[inline]
fn quote_or_control(w: u64) -> u64 {
    let t = w ^ (LO * 0x02);
    t.wrapping_sub(LO * 0x21) & !t & HI
}

/// High bit set in each byte of `w` equal to `c` (lowest flag exact, as above).
#[inline]
fn has_byte(w: u64, c: u8) -> u64 {
    let x = w ^ (LO * u64::from(c));
    x.wrapping_sub(LO) & !x & HI
}

/// Escapes in a block, from its backslash mask: `(escaped, starts)` — the bytes escaped by
/// the byte before them, and the backslashes that start an escape (every other one of a
/// run, from its first). simdjson's carry trick: adding a run's lowest bit clears the run
/// and carries past its end, so the end's parity against the start's gives the run's
/// length parity. A backslash run at the block's start must not include a backslash the
/// previous block escaped (the caller masks it out).
#[inline]
fn escapes(bs: u64) -> (u64, u64) {
    const EVEN: u64 = 0x5555_5555_5555_5555;
    const ODD: u64 = !EVEN;
    let start_edges = bs & !(bs << 1);
    let even_sum = bs.wrapping_add(start_edges & EVEN);
    let odd_sum = bs.wrapping_add(start_edges & ODD);
    let escaped = (even_sum & !bs & ODD) | (odd_sum & !bs & EVEN);
    let starts = (bs & !even_sum & EVEN) | (bs & !odd_sum & ODD);
    (escaped, starts)
}

/// Where the block scan of a string stopped. `unchecked` is where the string's UTF-8 is
/// still to be checked from (a character boundary: the string's start when the blocks did
/// not check it, the end when they checked all of it), `bad_utf8` whether the blocks
/// already found it invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocks {
    /// The closing quote is at `end`.
    Closed {
        end: usize,
        escaped: bool,
        unchecked: usize,
        bad_utf8: bool,
    },
    /// Invalid at `at`.
    Bad { at: usize, what: &'static str },
    /// Fewer than 64 bytes are left from `at`: the caller goes on bytewise. Escapes that
    /// start before `checked` were checked (a `\u` escape or surrogate pair may reach past
    /// the last block); `at` is on the backslash of an escape the blocks cut in two.
    Tail {
        at: usize,
        checked: usize,
        escaped: bool,
        unchecked: usize,
        bad_utf8: bool,
    },
}

/// Where the UTF-8 check goes on from when the blocks of a string starting at `start` stopped
/// at `end`: they checked every character before `end` except one the last block cut, which
/// is checked again from its first byte.
fn char_boundary(b: &[u8], start: usize, end: usize) -> usize {
    for k in 1..=3 {
        let Some(&c) = end
            .checked_sub(k)
            .filter(|&i| i >= start)
            .and_then(|i| b.get(i))
        else {
            break;
        };
        if c < 0xc0 {
            // ASCII ends the search; a continuation byte goes on to its lead
            if c < 0x80 {
                break;
            }
            continue;
        }
        let len = 2 + usize::from(c >= 0xe0) + usize::from(c >= 0xf0);
        return if len > k { end - k } else { end };
    }
    end
}

/// Scans a string's body from `start` (just past the opening quote) in whole 64-byte blocks.
/// `masks` turns a block into the bitmasks of its backslashes and of its quotes and control
/// characters; `escape_chars` into those of the bytes that may follow a backslash (one of
/// `"\/bfnrtu`) and of the `u`s; `hex_chars` into those of hex digits and of `d` / `D`.
/// Escape-dense text (reasoning with quotes, `\n`, `\u00e9` every few words) costs no branch
/// per escape. `utf8`, when `checks_utf8`, is handed every block in order with the mask of
/// the bytes that belong to the string (up to its closing quote) and tells whether they
/// hold invalid UTF-8; checking it here, on the block already in registers, saves a second
/// pass over the text. Closures rather than a trait, so that the AVX2 ones inherit their
/// caller's target feature.
#[inline(always)]
fn blocks_with(
    b: &[u8],
    start: usize,
    masks: impl Fn(&[u8; 64]) -> (u64, u64),
    escape_chars: impl Fn(&[u8; 64]) -> (u64, u64),
    hex_chars: impl Fn(&[u8; 64]) -> (u64, u64),
    checks_utf8: bool,
    mut utf8: impl FnMut(&[u8; 64], u64) -> bool,
) -> Blocks {
    let mut escaped = false;
    let mut bad_utf8 = false;
    let mut i = start;
    // escapes before this were checked (a surrogate pair is checked at its first half)
    let mut checked = 0usize;
    // 1 when the block's first byte is escaped by a backslash ending the block before:
    // carried as a bit, so the next block's address never waits on this one's masks
    let mut carry = 0u64;
    while let Some(block) = b.get(i..i + 64) {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
        let (bs, stops) = masks(block);
        let (esc, escape_starts) = escapes(bs & !carry);
        // the first unescaped quote or control character ends the string, well or badly (an
        // escaped control character is a bad escape)
        let first = stops & !(esc | carry);
        let first = first & first.wrapping_neg();
        let inside = first.wrapping_sub(1);
        if checks_utf8 {
            // the closing quote itself is where a character it cuts short shows
            bad_utf8 |= utf8(block, inside | first);
        }
        // every escape before it must be a valid one: the bytes after the backslashes in one vector
        // test; `\u` escapes one by one (hex digits, surrogate pairs — the second half of a
        // pair is checked with the first)
        let starts = escape_starts & inside;
        let follow = (starts << 1) | carry;
        if follow != 0 {
            escaped = true;
            let (valid, u) = escape_chars(block);
            let bad = follow & !valid;
            if bad != 0 {
                return Blocks::Bad {
                    at: (i + bad.trailing_zeros() as usize) - 1,
                    what: "bad escape",
                };
            }
            let mut us = follow & u;
            // `\uXXXX` escapes: the four hex digits of all of them in one vector test,
            // unless one may be a surrogate (first digit `d`: pairs are checked one by one),
            // reaches past the block, or is not valid (one by one, for the exact error).
            // Without a branch on whether the block has any: in text with `\u` escapes in
            // some blocks and not in others, that branch is a coin toss
            let (hex, d) = hex_chars(block);
            let need = (us << 1) | (us << 2) | (us << 3) | (us << 4);
            let one_by_one = (us >> 60 != 0) | (need & !hex != 0) | ((us << 1) & d != 0);
            if !one_by_one {
                us = 0;
            }
            while us != 0 {
                let at = (i + us.trailing_zeros() as usize) - 1;
                us &= us - 1;
                if at < checked {
                    continue;
                }
                match escape_len(b, at) {
                    Some(n) => checked = at + n,
                    None => {
                        return Blocks::Bad {
                            at,
                            what: "bad \\u escape",
                        }
                    }
                }
            }
        }
        if first != 0 {
            let end = i + first.trailing_zeros() as usize;
            // after the escapes: an escaped line end before a raw one is the first error
            if block[end - i] != b'"' {
                return Blocks::Bad {
                    at: end,
                    what: "control character in string",
                };
            }
            return Blocks::Closed {
                end,
                escaped,
                unchecked: if checks_utf8 { end } else { start },
                bad_utf8,
            };
        }
        carry = starts >> 63;
        i += 64;
    }
    Blocks::Tail {
        at: i - carry as usize,
        checked,
        escaped,
        unchecked: if checks_utf8 {
            char_boundary(b, start, i)
        } else {
            start
        },
        bad_utf8,
    }
}

/// [`blocks_with`] on the widest vectors the CPU has: AVX2 where present (checked once and
/// cached by std), else SSE2, which every x86-64 has (`wide` falls back to scalar code on
/// other targets).
fn string_blocks(b: &[u8], start: usize) -> Blocks {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the only requirement of a `target_feature` function is that the CPU has
        // the feature, checked on the line above.
        return unsafe { avx2::string_blocks(b, start) };
    }
    blocks_with(
        b,
        start,
        sse2::masks,
        sse2::escape_chars,
        sse2::hex_chars,
        false,
        |_, _| false,
    )
}

/// 16-byte vector compares through `wide`.
mod sse2 {
    #[inline(always)]
    pub(super) fn masks(block: &[u8; 64]) -> (u64, u64) {
        use wide::u8x16;
        let (bsl, quote, high3, zero) = (
            u8x16::splat(b'\\'),
            u8x16::splat(b'"'),
            u8x16::splat(0xe0),
            u8x16::splat(0),
        );
        let (mut bs, mut stops) = (0u64, 0u64);
        for (k, part) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(part.try_into().unwrap_or([0; 16]));
            let shift = 16 * k as u32;
            let mask = |m: u8x16| u64::from(m.move_mask() as u16) << shift;
            bs |= mask(v.cmp_eq(bsl));
            stops |= mask(v.cmp_eq(quote) | (v & high3).cmp_eq(zero));
        }
        (bs, stops)
    }

    #[inline(always)]
    pub(super) fn escape_chars(block: &[u8; 64]) -> (u64, u64) {
        use wide::u8x16;
        let (mut simple, mut u) = (0u64, 0u64);
        for (k, part) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(part.try_into().unwrap_or([0; 16]));
            let shift = 16 * k as u32;
            let is_u = v.cmp_eq(u8x16::splat(b'u'));
            let mut m = v.cmp_eq(u8x16::splat(b'"')) | is_u;
            for c in *b"\\/bfnrt" {
                m |= v.cmp_eq(u8x16::splat(c));
            }
            simple |= u64::from(m.move_mask() as u16) << shift;
            u |= u64::from(is_u.move_mask() as u16) << shift;
        }
        (simple, u)
    }

    /// Hex digits (`0-9a-fA-F`, by ranges: SSE2 has no byte shuffle) and `d` / `D`.
    #[inline(always)]
    pub(super) fn hex_chars(block: &[u8; 64]) -> (u64, u64) {
        use wide::u8x16;
        let within = |v: u8x16, lo: u8, hi: u8| {
            v.max(u8x16::splat(lo)).cmp_eq(v) & v.min(u8x16::splat(hi)).cmp_eq(v)
        };
        let (mut hex, mut d) = (0u64, 0u64);
        for (k, part) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(part.try_into().unwrap_or([0; 16]));
            let lower = v | u8x16::splat(0x20);
            let shift = 16 * k as u32;
            let h = within(v, b'0', b'9') | within(lower, b'a', b'f');
            hex |= u64::from(h.move_mask() as u16) << shift;
            d |= u64::from(lower.cmp_eq(u8x16::splat(b'd')).move_mask() as u16) << shift;
        }
        (hex, d)
    }
}

/// 32-byte vectors, and a nibble-table lookup (`vpshufb`) for the escape characters.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{blocks_with, Blocks};
    use std::arch::x86_64::*;

    /// [`blocks_with`] compiled for AVX2, with the UTF-8 check.
    #[target_feature(enable = "avx2")]
    pub(super) fn string_blocks(b: &[u8], start: usize) -> Blocks {
        let mut utf8 = Utf8 {
            prev: _mm256_setzero_si256(),
            wide: false,
        };
        blocks_with(
            b,
            start,
            |k| masks(k),
            |k| escape_chars(k),
            |k| hex_chars(k),
            true,
            |k, upto| utf8.block(k, upto),
        )
    }

    /// UTF-8 validation of consecutive blocks, by the lookup algorithm of simdjson and
    /// simdutf8 (Keiser and Lemire, "Validating UTF-8 in less than one instruction per
    /// byte"): three nibble tables classify each byte with the one before it, and the bytes
    /// two and three back tell where continuation bytes must be. An error shows at the byte
    /// that breaks a character, never before it, so masking the errors to the string's
    /// bytes and its closing quote is exact.
    pub(super) struct Utf8 {
        /// The second half of the block before (zero before the first).
        prev: __m256i,
        /// Whether that block had non-ASCII bytes (else it carries no character on).
        wide: bool,
    }

    impl Utf8 {
        /// Whether the bytes of `block` under `upto` hold invalid UTF-8.
        #[target_feature(enable = "avx2")]
        #[inline]
        pub(super) fn block(&mut self, block: &[u8; 64], upto: u64) -> bool {
            let [lo, hi] = halves(block);
            let wide = movemask(_mm256_or_si256(lo, hi)) != 0;
            let bad = (wide || self.wide) && {
                let (e_lo, e_hi) = (errors(lo, self.prev), errors(hi, lo));
                let e = _mm256_or_si256(e_lo, e_hi);
                _mm256_testz_si256(e, e) == 0 && {
                    let zero = _mm256_setzero_si256();
                    let at = |v| !movemask(_mm256_cmpeq_epi8(v, zero)) & 0xffff_ffff;
                    (at(e_lo) | at(e_hi) << 32) & upto != 0
                }
            };
            self.prev = hi;
            self.wide = wide;
            bad
        }
    }

    /// The error bytes of `input`, `prev` being the 32 bytes before it.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn errors(input: __m256i, prev: __m256i) -> __m256i {
        const TOO_SHORT: i8 = 1;
        const TOO_LONG: i8 = 1 << 1;
        const OVERLONG_3: i8 = 1 << 2;
        const TOO_LARGE: i8 = 1 << 3;
        const SURROGATE: i8 = 1 << 4;
        const OVERLONG_2: i8 = 1 << 5;
        const TOO_LARGE_1000: i8 = 1 << 6;
        const OVERLONG_4: i8 = 1 << 6;
        const TWO_CONTS: i8 = -128;
        const CARRY: i8 = TOO_SHORT | TOO_LONG | TWO_CONTS;
        const LARGE: i8 = CARRY | TOO_LARGE | TOO_LARGE_1000;
        // by the high nibble of the byte before
        const BYTE_1_HIGH: [i8; 16] = [
            TOO_LONG,
            TOO_LONG,
            TOO_LONG,
            TOO_LONG,
            TOO_LONG,
            TOO_LONG,
            TOO_LONG,
            TOO_LONG,
            TWO_CONTS,
            TWO_CONTS,
            TWO_CONTS,
            TWO_CONTS,
            TOO_SHORT | OVERLONG_2,
            TOO_SHORT,
            TOO_SHORT | OVERLONG_3 | SURROGATE,
            TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
        ];
        // by the low nibble of the byte before
        const BYTE_1_LOW: [i8; 16] = [
            CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,
            CARRY | OVERLONG_2,
            CARRY,
            CARRY,
            CARRY | TOO_LARGE,
            LARGE,
            LARGE,
            LARGE,
            LARGE,
            LARGE,
            LARGE,
            LARGE,
            LARGE,
            LARGE | SURROGATE,
            LARGE,
            LARGE,
        ];
        // by the high nibble of the byte itself
        const CONT: i8 = TOO_LONG | OVERLONG_2 | TWO_CONTS;
        const BYTE_2_HIGH: [i8; 16] = [
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            CONT | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
            CONT | OVERLONG_3 | TOO_LARGE,
            CONT | SURROGATE | TOO_LARGE,
            CONT | SURROGATE | TOO_LARGE,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
            TOO_SHORT,
        ];
        let table = |t: [i8; 16]| -> __m256i { _mm256_broadcastsi128_si256(bytemuck::cast(t)) };
        let nib = _mm256_set1_epi8(0x0f);
        let high = |v| _mm256_and_si256(_mm256_srli_epi16::<4>(v), nib);
        // the 32 bytes ending one, two and three bytes before each byte
        let joined = _mm256_permute2x128_si256::<0x21>(prev, input);
        let prev1 = _mm256_alignr_epi8::<15>(input, joined);
        let prev2 = _mm256_alignr_epi8::<14>(input, joined);
        let prev3 = _mm256_alignr_epi8::<13>(input, joined);
        let special = _mm256_and_si256(
            _mm256_and_si256(
                _mm256_shuffle_epi8(table(BYTE_1_HIGH), high(prev1)),
                _mm256_shuffle_epi8(table(BYTE_1_LOW), _mm256_and_si256(prev1, nib)),
            ),
            _mm256_shuffle_epi8(table(BYTE_2_HIGH), high(input)),
        );
        // a third or fourth byte of a character must be a continuation byte
        let third = _mm256_subs_epu8(prev2, _mm256_set1_epi8(0xdf_u8 as i8));
        let fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8(0xef_u8 as i8));
        let must = _mm256_cmpgt_epi8(_mm256_or_si256(third, fourth), _mm256_setzero_si256());
        _mm256_xor_si256(_mm256_and_si256(must, _mm256_set1_epi8(-128)), special)
    }

    #[inline(always)]
    fn halves(block: &[u8; 64]) -> [__m256i; 2] {
        [
            bytemuck::pod_read_unaligned(&block[..32]),
            bytemuck::pod_read_unaligned(&block[32..]),
        ]
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn movemask(v: __m256i) -> u64 {
        u64::from(_mm256_movemask_epi8(v) as u32)
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn masks(block: &[u8; 64]) -> (u64, u64) {
        let (bsl, two, c20) = (
            _mm256_set1_epi8(b'\\' as i8),
            _mm256_set1_epi8(0x02),
            _mm256_set1_epi8(0x20),
        );
        let [lo, hi] = halves(block);
        let eq = |v, c| movemask(_mm256_cmpeq_epi8(v, c));
        // xor 0x02 maps `"` to 0x20 and the control characters onto themselves: then both
        // are the bytes <= 0x20, that is max(v, 0x20) == 0x20
        let stop = |v| {
            let v = _mm256_xor_si256(v, two);
            eq(_mm256_max_epu8(v, c20), c20)
        };
        (eq(lo, bsl) | eq(hi, bsl) << 32, stop(lo) | stop(hi) << 32)
    }

    /// Looks up each byte's class in a pair of nibble tables: a byte is in a class when the
    /// bit its high nibble selects is set in its low nibble's entry.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn classes(block: &[u8; 64], hi_t: [i8; 16], lo_t: [i8; 16]) -> [__m256i; 2] {
        let table = |t: [i8; 16]| -> __m256i {
            let lane: __m128i = bytemuck::cast(t);
            _mm256_broadcastsi128_si256(lane)
        };
        let (hi_t, lo_t, nib) = (table(hi_t), table(lo_t), _mm256_set1_epi8(0x0f));
        let class = |v: __m256i| {
            let h = _mm256_and_si256(_mm256_srli_epi16::<4>(v), nib);
            let l = _mm256_and_si256(v, nib);
            _mm256_and_si256(_mm256_shuffle_epi8(hi_t, h), _mm256_shuffle_epi8(lo_t, l))
        };
        let [lo, hi] = halves(block);
        [class(lo), class(hi)]
    }

    /// Bytes that are not in any class, and those in the class of bit 7.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn none_and_bit7(c: [__m256i; 2]) -> (u64, u64) {
        let zero = _mm256_setzero_si256();
        let none = |v| movemask(_mm256_cmpeq_epi8(v, zero));
        (
            none(c[0]) | none(c[1]) << 32,
            movemask(c[0]) | movemask(c[1]) << 32,
        )
    }

    /// `"\/bfnrtu` (bits: high nibble 2, 5, 6, 7), with `u` alone in bit 7.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn escape_chars(block: &[u8; 64]) -> (u64, u64) {
        const HI: [i8; 16] = [0, 0, 1, 0, 0, 2, 4, 8 | -128, 0, 0, 0, 0, 0, 0, 0, 0];
        // 2: `"` `b` `r`; 4: `t`; 5: `u`; 6: `f`; C: `\`; E: `n`; F: `/`
        const LO: [i8; 16] = [0, 0, 1 | 4 | 8, 0, 8, -128, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1];
        let (none, u) = none_and_bit7(classes(block, HI, LO));
        (!none, u)
    }

    /// Hex digits (bits: high nibble 3 for `0-9`, 4 and 6 for `A-F` / `a-f`) and `d` / `D`
    /// (bit 7).
    #[target_feature(enable = "avx2")]
    #[inline]
    fn hex_chars(block: &[u8; 64]) -> (u64, u64) {
        const HI: [i8; 16] = [0, 0, 0, 1, 2 | -128, 0, 2 | -128, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        const LO: [i8; 16] = [1, 3, 3, 3, -128 | 3, 3, 3, 1, 1, 1, 0, 0, 0, 0, 0, 0];
        let c = classes(block, HI, LO);
        let bit7 = _mm256_set1_epi8(-128);
        let digit = |v| _mm256_andnot_si256(bit7, v);
        let (none, _) = none_and_bit7([digit(c[0]), digit(c[1])]);
        let (_, d) = none_and_bit7(c);
        (!none, d)
    }
}

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
        let (mut i, checked, mut escaped, unchecked, bad_utf8) = match string_blocks(b, start) {
            Blocks::Closed {
                end,
                escaped,
                unchecked,
                bad_utf8,
            } => return self.closed(start, end, escaped, unchecked, bad_utf8),
            Blocks::Bad { at, what } => {
                self.pos = at;
                return self.err(what);
            }
            Blocks::Tail {
                at,
                checked,
                escaped,
                unchecked,
                bad_utf8,
            } => (at, checked, escaped, unchecked, bad_utf8),
        };
        // the rest bytewise, from past a `\u` escape checked with the last block
        i = i.max(checked);
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
            Blocks::Tail { at, .. } => at,
            Blocks::Bad { .. } => return (r, true),
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
            Blocks::Tail {
                at,
                checked,
                escaped,
                ..
            } => Blocks::Tail {
                at,
                checked,
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
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
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
