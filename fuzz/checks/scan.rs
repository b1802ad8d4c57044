// The check of the `scan` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use tokstat_parsers::scan::{lines, scan, text_lines, Mode};
use tokstat_parsers::source::Data;
use tokstat_parsers::stamp::Calendar;

/// The parallel chunked scan over any bytes sees every line exactly once, in order: the
/// chunks join up to the input, end on newlines, and their line counts add up — in the log
/// mode (pre-scanned stamps, absolute line numbers) and in the record mode (chunks cut by the
/// workers themselves), from memory or from a stream (chunks read into recycled buffers), at
/// any chunk size. Each chunk's lines checked one by one as UTF-8 (`text_lines`) are its
/// lines, each text exactly when it is UTF-8.
pub fn check(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let mode = if k & 0x80 == 0 {
        Mode::LOG
    } else {
        Mode::RECORDS
    };
    let mode = Mode {
        chunk: usize::from(k & 0x3f) + 1,
        ..mode
    };
    let input = if k & 0x40 == 0 {
        Data::Owned(rest.to_vec())
    } else {
        Data::Stream(Box::new(std::io::Cursor::new(rest.to_vec())))
    };
    let mut joined = Vec::new();
    let mut got = 0u64;
    let n = scan(
        input,
        Calendar::new(2026, 0),
        mode,
        |c| {
            let mut scratch = String::new();
            let mut cal = c.calendar;
            for l in lines(c.bytes) {
                let line = tokstat_parsers::parse_line(l, &mut scratch);
                cal.resolve(line.prefix.stamp);
            }
            let want = lines(c.bytes).map(|l| std::str::from_utf8(l).map_err(|_| l));
            assert!(text_lines(c.bytes).eq(want));
            ((c.bytes.to_vec(), lines(c.bytes).count() as u64), cal)
        },
        |(bytes, n)| {
            assert!(!bytes.is_empty());
            assert!(joined.is_empty() || joined.ends_with(b"\n"));
            joined.extend_from_slice(&bytes);
            got += n;
        },
    )
    .unwrap();
    assert_eq!(joined, rest);
    assert_eq!(got, lines(rest).count() as u64);
    if mode.count {
        assert_eq!(n, got);
    }
}
