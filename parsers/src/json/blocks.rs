//! A string body scanned 64 bytes at a time: bitmasks of quotes, backslashes, control
//! characters and escapes, on AVX2 where the CPU has it, else SSE2 (or `wide`'s scalar code
//! on other targets), with the UTF-8 check of the same blocks.

pub(super) const LO: u64 = 0x0101_0101_0101_0101;
pub(super) const HI: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `w` that is `"` or below 0x20 (a control character), in one
/// comparison: xor with 0x02 turns `"` (0x22) into 0x20 and keeps every control character
/// below 0x20, so both are the bytes below 0x21. Borrows can set false flags only above a
/// true one, so the lowest flag is exact.
#[inline]
pub(super) fn quote_or_control(w: u64) -> u64 {
    let t = w ^ (LO * 0x02);
    t.wrapping_sub(LO * 0x21) & !t & HI
}

/// High bit set in each byte of `w` equal to `c` (lowest flag exact, as above).
#[inline]
pub(super) fn has_byte(w: u64, c: u8) -> u64 {
    let x = w ^ (LO * u64::from(c));
    x.wrapping_sub(LO) & !x & HI
}

/// Escapes in a block, from its backslash mask `bs` and `carry` (1 when the block's first
/// byte is escaped by a backslash ending the block before): `(escaped, starts, carry out)`,
/// the bytes escaped by the byte before them, the backslashes that start an escape (every
/// other one of a run, from its first), and whether the block's last byte starts one.
/// simdjson's subtraction trick (`json_escape_scanner`): subtracting the backslashes from
/// their shifted mask with every odd bit set leaves the escaped bytes marked, with odd-aligned
/// runs inverted, which the xor with the odd bits puts right.
#[inline]
pub(super) fn escapes(bs: u64, carry: u64) -> (u64, u64, u64) {
    const ODD: u64 = 0xaaaa_aaaa_aaaa_aaaa;
    let potential = bs & !carry;
    let codes = (((potential << 1) | ODD).wrapping_sub(potential)) ^ ODD;
    let starts = codes & bs;
    (codes ^ (bs | carry), starts, starts >> 63)
}

/// Where the block scan of a string stopped. `unchecked` is where the string's UTF-8 is
/// still to be checked from (a character boundary: the string's start when the blocks did
/// not check it, the end when they checked all of it), `bad_utf8` whether the blocks
/// already found it invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Blocks {
    /// The closing quote is at `end`.
    Closed {
        end: usize,
        escaped: bool,
        unchecked: usize,
        bad_utf8: bool,
    },
    /// A raw control character ends the string at `at`, after valid escapes.
    Control { at: usize },
    /// An escape is bad: the caller reads the string again byte by byte from its start,
    /// which finds the first error and its byte (errors are rare; the blocks only tell that
    /// there is one).
    Rescan,
    /// Fewer than 64 bytes are left: the caller goes on byte by byte from `at`, an escape's
    /// backslash or the end of the blocks. Every escape before `at` was checked; one that
    /// starts after it may reach past the last block, and is checked again.
    Tail {
        at: usize,
        escaped: bool,
        unchecked: usize,
        bad_utf8: bool,
    },
}

/// The bytes of a block that may be digits of a `\uXXXX` escape, by class: `hex` the hex
/// digits, `d` the `d`s and `D`s (a surrogate's first digit), `high` the digits `8`-`b`
/// (a high surrogate's second, `\uD800`-`\uDBFF`), `low` the digits `c`-`f` (a low one's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hex {
    pub(super) hex: u64,
    pub(super) d: u64,
    pub(super) high: u64,
    pub(super) low: u64,
}

/// Where the UTF-8 check goes on from when the blocks of a string starting at `start` stopped
/// at `end`: they checked every character before `end` except one the last block cut, which
/// is checked again from its first byte.
pub(super) fn char_boundary(b: &[u8], start: usize, end: usize) -> usize {
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
/// `"\/bfnrtu`) and of the `u`s; `hex_chars` into its [`Hex`] classes. `utf8`, when
/// `checks_utf8`, is handed every block in order with the mask of the bytes that belong to
/// the string (up to its closing quote) and tells whether they hold invalid UTF-8; checking
/// it here, on the block already in registers, saves a second pass over the text. Closures
/// rather than a trait, so that the AVX2 ones inherit their caller's target feature.
///
/// Escape-dense text (reasoning with quotes, `\n`, `\u00e9` every few words, Python's
/// `json.dumps` default) costs no branch per escape: every escape of a block is checked in
/// one set of bitmask operations, and a `\uXXXX` escape or surrogate pair that a block
/// boundary cuts is finished in the next block from a few carried bits:
/// - the bytes after the backslashes are escape characters;
/// - the four bytes after each `u` are hex digits (`digits`, carried: those past the block);
/// - surrogates are marked on their second digit (`\uD8..`-`\uDB..` high, `\uDC..`-`\uDF..`
///   low; carried: the last two `u`s and the last `d`), and each high mark has a low mark
///   six bytes on, and each low mark a high one six bytes before (carried: the high marks
///   whose low is due in the next block).
#[inline(always)]
pub(super) fn blocks_with(
    b: &[u8],
    start: usize,
    masks: impl Fn(&[u8; 64]) -> (u64, u64),
    escape_chars: impl Fn(&[u8; 64]) -> (u64, u64),
    hex_chars: impl Fn(&[u8; 64]) -> Hex,
    checks_utf8: bool,
    mut utf8: impl FnMut(&[u8; 64], u64) -> bool,
) -> Blocks {
    let mut escaped = false;
    let mut bad_utf8 = false;
    let mut i = start;
    // 1 when the block's first byte is escaped by a backslash ending the block before:
    // carried as a bit, so the next block's address never waits on this one's masks
    let mut carry = 0u64;
    let mut owed = Owed::default();
    // the last block's escape starts and low-surrogate marks (see `Blocks::Tail`)
    let (mut last_starts, mut last_lows) = (0u64, 0u64);
    while let Some(block) = b.get(i..i + 64) {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[0; 64]);
        let (bs, stops) = masks(block);
        let (escaped_bytes, escape_starts, carry_out) = escapes(bs, carry);
        // the first unescaped quote or control character ends the string, well or badly (an
        // escaped control character is a bad escape)
        let first = stops & !escaped_bytes;
        let first = first & first.wrapping_neg();
        let inside = first.wrapping_sub(1);
        if checks_utf8 {
            // the closing quote itself is where a character it cuts short shows
            bad_utf8 |= utf8(block, inside | first);
        }
        let follow = escaped_bytes & inside;
        last_starts = escape_starts & inside;
        // escapes, or a `\u` escape the block before cut: the branch's condition is only
        // this block's masks, known early; a cut escape before a block without any comes
        // second, the rare case
        last_lows = if (bs & inside) | carry != 0 {
            escaped = true;
            match owed.check(escape_chars(block), hex_chars(block), follow, first) {
                Some(lows) => lows,
                None => return Blocks::Rescan,
            }
        } else if owed.any() {
            cold();
            match owed.check(escape_chars(block), hex_chars(block), follow, first) {
                Some(lows) => lows,
                None => return Blocks::Rescan,
            }
        } else {
            0
        };
        if first != 0 {
            let end = i + first.trailing_zeros() as usize;
            if block[end - i] != b'"' {
                return Blocks::Control { at: end };
            }
            return Blocks::Closed {
                end,
                escaped,
                unchecked: if checks_utf8 { end } else { start },
                bad_utf8,
            };
        }
        carry = carry_out;
        i += 64;
    }
    // an escape from byte 48 on may end past the last block (a pair is 12 bytes), unless it
    // is the low half of a pair whose high half the block checked
    let open = last_starts & !(last_lows >> 3) & (u64::MAX << 48);
    Blocks::Tail {
        at: if open != 0 {
            i - 64 + open.trailing_zeros() as usize
        } else {
            i
        },
        escaped,
        unchecked: if checks_utf8 {
            char_boundary(b, start, i)
        } else {
            start
        },
        bad_utf8,
    }
}

/// What a block's `\u` escapes owe the next block, for [`blocks_with`]: hex digits (bits 0-3),
/// its `u`s at bits 62-63 and `d` at bit 63 (as bits 0-1 and 0: surrogate marks of the
/// next block's first two bytes), low-surrogate marks (bits 0-5).
#[derive(Debug, Default, Clone, Copy)]
struct Owed {
    digits: u64,
    u_top: u64,
    d_top: u64,
    lows: u64,
}

impl Owed {
    fn any(&self) -> bool {
        self.digits | self.u_top | self.lows != 0
    }

    /// Checks a block's escapes from its escape characters `(valid, u)`, hex classes `h`,
    /// the bytes after its backslashes (`follow`) and its end (`first`): `None` if one is
    /// bad, else the block's low-surrogate marks.
    #[inline(always)]
    fn check(&mut self, (valid, u): (u64, u64), h: Hex, follow: u64, first: u64) -> Option<u64> {
        let us = follow & u;
        let two = (us << 1) | (us << 2);
        let digits = two | (two << 2) | self.digits;
        // surrogate marks, on the second digit
        let second = (us << 2) | self.u_top;
        let surrogate = second & ((h.d << 1) | self.d_top);
        let (high, low) = (surrogate & h.high, surrogate & h.low);
        let bad = (follow & !valid) | (digits & !h.hex) | (((high << 6) | self.lows) ^ low);
        let cut = us >> 60;
        let cut = cut | (cut >> 1);
        *self = Owed {
            digits: cut | (cut >> 2),
            u_top: us >> 62,
            d_top: h.d >> 63,
            lows: high >> 58,
        };
        // a block that ends the string owes nothing to the next
        if bad != 0 || (first != 0 && self.digits | self.lows != 0) {
            return None;
        }
        Some(low)
    }
}

/// Marks the branch that calls it as the unlikely one.
#[cold]
fn cold() {}

/// [`blocks_with`] on the widest vectors the CPU has: AVX2 where present (checked once and
/// cached by std), else SSE2, which every x86-64 has (`wide` falls back to scalar code on
/// other targets).
pub(super) fn string_blocks(b: &[u8], start: usize) -> Blocks {
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
pub(super) mod sse2 {
    #[inline(always)]
    pub(in crate::json) fn masks(block: &[u8; 64]) -> (u64, u64) {
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
    pub(in crate::json) fn escape_chars(block: &[u8; 64]) -> (u64, u64) {
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

    /// The [`Hex`] classes, by ranges (SSE2 has no byte shuffle).
    #[inline(always)]
    pub(in crate::json) fn hex_chars(block: &[u8; 64]) -> super::Hex {
        use wide::u8x16;
        let within = |v: u8x16, lo: u8, hi: u8| {
            v.max(u8x16::splat(lo)).cmp_eq(v) & v.min(u8x16::splat(hi)).cmp_eq(v)
        };
        let mut h = super::Hex {
            hex: 0,
            d: 0,
            high: 0,
            low: 0,
        };
        for (k, part) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(part.try_into().unwrap_or([0; 16]));
            let lower = v | u8x16::splat(0x20);
            let shift = 16 * k as u32;
            let mask = |m: u8x16| u64::from(m.move_mask() as u16) << shift;
            h.hex |= mask(within(v, b'0', b'9') | within(lower, b'a', b'f'));
            h.d |= mask(lower.cmp_eq(u8x16::splat(b'd')));
            h.high |= mask(within(v, b'8', b'9') | within(lower, b'a', b'b'));
            h.low |= mask(within(lower, b'c', b'f'));
        }
        h
    }
}

/// 32-byte vectors, and a nibble-table lookup (`vpshufb`) for the escape characters.
#[cfg(target_arch = "x86_64")]
pub(super) mod avx2 {
    use super::{blocks_with, Blocks};
    use std::arch::x86_64::*;

    /// [`blocks_with`] compiled for AVX2, with the UTF-8 check.
    #[target_feature(enable = "avx2")]
    pub(in crate::json) fn string_blocks(b: &[u8], start: usize) -> Blocks {
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
        pub(in crate::json) fn block(&mut self, block: &[u8; 64], upto: u64) -> bool {
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

    /// The [`Hex`](super::Hex) classes, in bits: 0 `0-9`, 1 `a-f` / `A-F` (hex is either),
    /// 2 `8-9`, 3 `a-b` / `A-B` (a high surrogate's second digit is either), 4 `c-f` /
    /// `C-F`, 7 `d` / `D`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn hex_chars(block: &[u8; 64]) -> super::Hex {
        const A_F: i8 = 2 | 8 | 16 | -128;
        const HI: [i8; 16] = [0, 0, 0, 1 | 4, A_F, 0, A_F, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        const LO: [i8; 16] = [
            1,
            1 | 2 | 8,
            1 | 2 | 8,
            1 | 2 | 16,
            1 | 2 | 16 | -128,
            1 | 2 | 16,
            1 | 2 | 16,
            1,
            1 | 4,
            1 | 4,
            0,
            0,
            0,
            0,
            0,
            0,
        ];
        let c = classes(block, HI, LO);
        let zero = _mm256_setzero_si256();
        // the bytes in any of the classes of `bits`
        let any = |bits: i8| {
            let m = _mm256_set1_epi8(bits);
            let none = |v| movemask(_mm256_cmpeq_epi8(_mm256_and_si256(v, m), zero));
            !(none(c[0]) | none(c[1]) << 32)
        };
        super::Hex {
            hex: any(1 | 2),
            d: movemask(c[0]) | movemask(c[1]) << 32,
            high: any(4 | 8),
            low: any(16),
        }
    }
}
