//! UTF-8 validation of whole chunks.
//!
//! The standard library's validator is fast on ASCII but slows to a few hundred MB/s on
//! text dense in accents, CJK and emoji — exactly what reasoning outputs hold. simdutf8
//! validates with SIMD at several GB/s either way, so a chunk is checked once, at near memory
//! speed, and lines are only checked one by one when the chunk holds invalid bytes.

/// The UTF-8 byte order mark that Windows tools (and Python's `utf-8-sig`) write at the
/// start of a text file.
pub const BOM: &[u8] = b"\xef\xbb\xbf";

/// `b` without a leading byte order mark.
pub fn without_bom(b: &[u8]) -> &[u8] {
    b.strip_prefix(BOM).unwrap_or(b)
}

/// The chunk as text, if it is valid UTF-8.
#[inline]
pub fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn agrees_with_std() {
        for s in [
            &b"abc"[..],
            "héllo 世界 😀".as_bytes(),
            b"\xff",
            b"a\xc3",
            b"",
        ] {
            assert_eq!(super::utf8(s).is_some(), std::str::from_utf8(s).is_ok());
        }
    }
}
