//! Blocks of 32 bytes looked at by one vector pass: which of their bytes need a closer look
//! in a JSON string (quotes and backslashes apart from the rest), and where their newlines
//! are. SSE2 on every x86_64 processor, AVX2 where it has it, bytes one by one elsewhere.

/// How the pass finds the bytes of a block of 32 that need a look ([`block_masks`]).
pub trait Blocks: Copy {
    /// The quotes and backslashes of `b`'s first 32 bytes, and their other bytes that need a
    /// look, as bit masks.
    fn masks(self, b: &[u8]) -> (u32, u32);

    /// The newlines of `b`'s first 32 bytes, as a bit mask.
    fn newlines(self, b: &[u8]) -> u32;

    /// Copies the 32 bytes at `src` to `dst`, and gives those of them that need a look
    /// ([`special`]: quotes and backslashes among them) as a bit mask: the pass that decodes
    /// a Docker text as it reads it ([`super::docker::fused_line`]).
    ///
    /// # Safety
    /// `src` must be readable and `dst` writable for 32 bytes.
    unsafe fn copy_block(self, src: *const u8, dst: *mut u8) -> u32;
}

/// The first line of `rest` (without its `\n`), `rest` moved on past it: 32 bytes a step
/// by `blocks`, the last ones by [`crate::scan::find_short`].
#[inline(always)]
pub fn next_line<'a, B: Blocks>(rest: &mut &'a [u8], blocks: B) -> Option<&'a [u8]> {
    if rest.is_empty() {
        return None;
    }
    let mut pos = 0;
    let end = loop {
        match rest.get(pos..pos + 32) {
            Some(block) => {
                let m = blocks.newlines(block);
                if m != 0 {
                    break pos + m.trailing_zeros() as usize;
                }
                pos += 32;
            }
            None => {
                break crate::scan::find_short(b'\n', &rest[pos..]).map_or(rest.len(), |k| pos + k)
            }
        }
    };
    let line = &rest[..end];
    *rest = rest.get(end + 1..).unwrap_or_default();
    Some(line)
}

/// Two SSE2 vectors a block: every x86_64 processor has them (bytes one by one elsewhere).
#[derive(Debug, Clone, Copy)]
pub struct Sse2;

impl Blocks for Sse2 {
    #[inline(always)]
    fn masks(self, b: &[u8]) -> (u32, u32) {
        block_masks(b)
    }

    #[inline(always)]
    unsafe fn copy_block(self, src: *const u8, dst: *mut u8) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // SAFETY: SSE2 is part of x86_64; the caller vouches for the 32 bytes
            unsafe {
                let half = |at: usize| {
                    let v = _mm_loadu_si128(src.add(at).cast());
                    _mm_storeu_si128(dst.add(at).cast(), v);
                    let hit = _mm_or_si128(
                        _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                        _mm_or_si128(
                            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                            _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                        ),
                    );
                    _mm_movemask_epi8(hit) as u32
                };
                half(0) | half(16) << 16
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let mut m = 0u32;
            for k in 0..32 {
                // SAFETY: the caller vouches for the 32 bytes
                let c = unsafe { *src.add(k) };
                unsafe { *dst.add(k) = c };
                m |= u32::from(special(c)) << k;
            }
            m
        }
    }

    #[inline(always)]
    fn newlines(self, b: &[u8]) -> u32 {
        debug_assert!(b.len() >= 32);
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::*;
            // SAFETY: SSE2 is part of x86_64; the loads read the 32 bytes of `b`
            unsafe {
                let nl = _mm_set1_epi8(b'\n' as i8);
                let lo = _mm_cmpeq_epi8(_mm_loadu_si128(b.as_ptr().cast()), nl);
                let hi = _mm_cmpeq_epi8(_mm_loadu_si128(b.as_ptr().add(16).cast()), nl);
                _mm_movemask_epi8(lo) as u32 | (_mm_movemask_epi8(hi) as u32) << 16
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            b[..32]
                .iter()
                .enumerate()
                .fold(0, |m, (k, &c)| m | u32::from(c == b'\n') << k)
        }
    }
}

/// One AVX2 vector a block, half the instructions of [`Sse2`]: only made where the processor
/// has AVX2 ([`Avx2::detect`]), and only fast where the pass runs in a function compiled
/// for it (see `unwrap`'s Docker reading).
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub struct Avx2(());

#[cfg(target_arch = "x86_64")]
impl Avx2 {
    /// `Some` where the processor has AVX2.
    pub fn detect() -> Option<Avx2> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

#[cfg(target_arch = "x86_64")]
impl Blocks for Avx2 {
    #[inline(always)]
    fn masks(self, b: &[u8]) -> (u32, u32) {
        // SAFETY: an `Avx2` is only made where the processor has AVX2
        unsafe { block_masks_avx2(b) }
    }

    #[inline(always)]
    fn newlines(self, b: &[u8]) -> u32 {
        // SAFETY: an `Avx2` is only made where the processor has AVX2
        unsafe { newlines_avx2(b) }
    }

    #[inline(always)]
    unsafe fn copy_block(self, src: *const u8, dst: *mut u8) -> u32 {
        // SAFETY: an `Avx2` is only made where the processor has AVX2; the caller vouches
        // for the bytes
        unsafe { copy_block_avx2(src, dst) }
    }
}

/// [`Blocks::copy_block`] by one AVX2 vector.
///
/// # Safety
/// The processor has AVX2; `src` is readable and `dst` writable for 32 bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn copy_block_avx2(src: *const u8, dst: *mut u8) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: the caller vouches for the 32 bytes
    let v = unsafe { _mm256_loadu_si256(src.cast()) };
    unsafe { _mm256_storeu_si256(dst.cast(), v) };
    let hit = _mm256_or_si256(
        _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v),
        _mm256_or_si256(
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)),
            _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)),
        ),
    );
    _mm256_movemask_epi8(hit) as u32
}

/// [`Blocks::newlines`] by one AVX2 vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn newlines_avx2(b: &[u8]) -> u32 {
    use std::arch::x86_64::*;
    assert!(b.len() >= 32);
    // SAFETY: the load reads the 32 bytes of `b` (asserted above)
    let v = unsafe { _mm256_loadu_si256(b.as_ptr().cast()) };
    _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\n' as i8))) as u32
}

/// [`block_masks`] by one AVX2 vector.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[inline]
fn block_masks_avx2(b: &[u8]) -> (u32, u32) {
    use std::arch::x86_64::*;
    assert!(b.len() >= 32);
    // SAFETY: the load reads the 32 bytes of `b` (asserted above)
    let v = unsafe { _mm256_loadu_si256(b.as_ptr().cast()) };
    let quotes = _mm256_or_si256(
        _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)),
        _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)),
    );
    // (a signed "below 0x20" holds the bytes beyond ASCII too)
    let other = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v);
    (
        _mm256_movemask_epi8(quotes) as u32,
        _mm256_movemask_epi8(other) as u32,
    )
}

/// Whether a byte of a JSON string's text needs a closer look: a control byte, a quote, a
/// backslash, a byte beyond ASCII. (Written without branches, so that a fold of it over a
/// line runs on vectors.)
#[inline(always)]
pub(super) fn special(c: u8) -> bool {
    (c.wrapping_sub(0x20) >= 0x60) | (c == b'"') | (c == b'\\')
}

/// The quotes and backslashes of 32 bytes, and their other bytes that need a look
/// ([`special`]: control bytes, the newline among them, and bytes beyond ASCII), as bit
/// masks.
#[inline(always)]
pub(super) fn block_masks(b: &[u8]) -> (u32, u32) {
    debug_assert!(b.len() >= 32);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the loads read the 32 bytes of `b`
        unsafe {
            let half = |v: __m128i| {
                let quotes = _mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                );
                // (a signed "below 0x20" holds the bytes beyond ASCII too)
                let other = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
                (
                    _mm_movemask_epi8(quotes) as u32,
                    _mm_movemask_epi8(other) as u32,
                )
            };
            let (q0, o0) = half(_mm_loadu_si128(b.as_ptr().cast()));
            let (q1, o1) = half(_mm_loadu_si128(b.as_ptr().add(16).cast()));
            (q0 | q1 << 16, o0 | o1 << 16)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let (mut quotes, mut other) = (0u32, 0u32);
        for (k, &c) in b[..32].iter().enumerate() {
            let q = c == b'"' || c == b'\\';
            quotes |= u32::from(q) << k;
            other |= u32::from(special(c) && !q) << k;
        }
        (quotes, other)
    }
}

/// [`block_masks`] of the last bytes of an input (fewer than 32), padded with bytes that
/// need no look. Apart, and never inlined: where the two shared a body, the compiler built
/// every block's vectors byte by byte in a padded copy, a third of a Docker file's reading.
#[cold]
#[inline(never)]
pub(super) fn tail_masks(tail: &[u8]) -> (u32, u32) {
    let mut pad = [b'a'; 32];
    let n = tail.len().min(32);
    pad[..n].copy_from_slice(&tail[..n]);
    block_masks(&pad)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of `bytes` by `blocks`.
    fn lines_by<B: Blocks>(bytes: &[u8], blocks: B) -> Vec<&[u8]> {
        let mut rest = bytes;
        std::iter::from_fn(|| next_line(&mut rest, blocks)).collect()
    }

    proptest::proptest! {
        /// Lines found 32 bytes a step are the file's lines, by either kind of vector, at any
        /// length and place of the newlines.
        #[test]
        fn lines_by_blocks_are_the_lines(
            lens in proptest::collection::vec(0usize..100, 0..12),
            last_newline in proptest::bool::ANY,
        ) {
            let mut file = Vec::new();
            for (k, n) in lens.iter().enumerate() {
                file.extend(std::iter::repeat_n(b'a' + (k % 26) as u8, *n));
                file.push(b'\n');
            }
            if !last_newline {
                file.pop();
            }
            let want: Vec<&[u8]> = crate::scan::lines(&file).collect();
            proptest::prop_assert_eq!(&lines_by(&file, Sse2), &want);
            #[cfg(target_arch = "x86_64")]
            if let Some(avx2) = Avx2::detect() {
                proptest::prop_assert_eq!(&lines_by(&file, avx2), &want);
            }
        }
    }
}
