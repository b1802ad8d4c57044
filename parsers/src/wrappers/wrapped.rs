//! Records a terminal wrapped over several lines: a paste from a terminal 80 or 120 columns
//! wide breaks a stats line into rows, the first with the logger prefix, the others with
//! none. Readers hold a row that may be such a record's start (read as a record cut short,
//! as malformed, or as other though it holds a record's opening words) and join the rows
//! after it that have no prefix, until the record reads whole.

/// Terminal widths, in characters: a row exactly this long may be one a terminal wrapped
/// (its record going on in the next row), even when it reads as a whole record (a cut
/// number reads as a smaller one).
const WIDTHS: [usize; 14] = [
    80, 100, 120, 132, 140, 150, 160, 180, 200, 220, 240, 250, 256, 300,
];

/// Whether a row of `len` bytes may be a terminal's full row: the quick test, exact for
/// ASCII rows (engine rows are ASCII; a row with multi-byte characters or colour codes,
/// which take no width, is not recognised).
#[inline(always)]
pub fn may_be_full_row(len: usize) -> bool {
    // (one bit test: it is asked of every stats line read quickly)
    FULL_ROWS
        .get(len / 64)
        .is_some_and(|w| w >> (len % 64) & 1 == 1)
}

/// [`WIDTHS`] as bits.
const FULL_ROWS: [u64; 5] = {
    let mut m = [0u64; 5];
    let mut k = 0;
    while k < WIDTHS.len() {
        m[WIDTHS[k] / 64] |= 1 << (WIDTHS[k] % 64);
        k += 1;
    }
    m
};

/// Whether `row` is exactly as wide as a terminal (an ASCII row: see
/// [`may_be_full_row`]).
#[inline]
pub fn is_full_row(row: &str) -> bool {
    may_be_full_row(row.trim_end_matches('\r').len())
}

/// Whether a row's first bytes open a line of its own: an SGLang or docker stamp, a vLLM
/// level, a Ray actor's tag. The quick test before [`may_continue`] and the prefix.
#[inline]
pub fn opens_a_line(row: &[u8]) -> bool {
    match row.first() {
        Some(b'[' | b'(' | 0x1b) => true,
        Some(b'I' | b'W' | b'E' | b'D' | b'C') => ["INFO", "WARNING", "ERROR", "DEBUG", "CRITICAL"]
            .iter()
            .any(|w| row.starts_with(w.as_bytes())),
        Some(b'2') => row.get(4) == Some(&b'-'),
        _ => false,
    }
}

/// Whether `row` may go on a wrapped record: no logger prefix (the reader says so), and
/// no line of its own (uvicorn's `INFO:` access lines have no prefix either).
pub fn may_continue(row: &str) -> bool {
    ![
        "INFO:",
        "WARNING:",
        "ERROR:",
        "DEBUG:",
        "Traceback",
        "  File ",
    ]
    .iter()
    .any(|w| row.starts_with(w))
}

/// The words that open the records a row may hold the start of.
const OPENERS: [&str; 8] = [
    "Avg prompt throughput: ",
    "Engine ",
    "Decode batch",
    "Prefill batch",
    "SpecDecoding metrics: ",
    "Speculative metrics: ",
    "Prefix cache hit rate: ",
    "GPU KV cache size: ",
];

/// Whether a row read as no record may be the start of a wrapped record: it holds an
/// opener, or ends in the first characters of one (`… Engine 000: Avg prompt th`).
pub fn may_open_record(row: &str) -> bool {
    let row = row.trim_end_matches('\r');
    // (cut right after the prefix or a key)
    if row.ends_with("] ") || row.ends_with(": ") || OPENERS.iter().any(|o| row.contains(o)) {
        return true;
    }
    // the opener's start, after a space
    OPENERS.iter().any(|o| {
        (1..o.len())
            .any(|k| row.ends_with(&o[..k]) && row[..row.len() - k].ends_with([' ', ']', ':']))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_rows() {
        for len in 0..400 {
            assert_eq!(may_be_full_row(len), WIDTHS.contains(&len), "{len}");
        }
    }

    #[test]
    fn openers_whole_or_cut() {
        assert!(may_open_record(
            "(APIServer pid=1) INFO 05-12 07:51:39 [loggers.py:271] Engine 000: Avg prompt th"
        ));
        assert!(may_open_record(
            "(APIServer pid=1) INFO 05-12 07:51:39 [metrics.py:101] SpecDecoding metrics: Mea"
        ));
        assert!(may_open_record("[2026-05-09 22:29:22 TP0] Deco"));
        assert!(may_open_record("INFO 03-02 09:14:10 [loggers.py:116] "));
        assert!(!may_open_record(
            "INFO 03-02 09:14:10 [api_server.py:1] Started server process [31337]"
        ));
        assert!(!may_open_record(
            "INFO 03-02 09:14:10 [launcher.py:28] Route: /v1/models, Methods: GET"
        ));
    }
}
