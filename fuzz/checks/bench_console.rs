// The check of the `bench_console` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

/// The serving benchmarks' console summary: no panic; a block reads at most its lines
/// (header included) and `MAX_LINES` after it; every value read is a number from its line;
/// labels read from a line are slices of it.
pub fn check(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    use tokstat_parsers::bench_console::{block_line, is_footer, is_header, read_block, BlockLine, MAX_LINES};
    let lines: Vec<&str> = s.lines().collect();
    for l in &lines {
        let _ = (is_header(l), is_footer(l));
        if let BlockLine::Value(label, value) = block_line(l) {
            assert!(label.ends_with(':'), "{l:?}");
            assert!(l.contains(label) && l.contains(value), "{l:?}");
        }
    }
    let b = read_block(lines.iter().copied());
    assert!(b.lines <= lines.len().min(MAX_LINES) + 1, "{} of {}", b.lines, lines.len());
    assert!(b.run.scalars.len() < b.lines.max(1));
    for (k, v) in &b.run.scalars {
        assert!(!k.is_empty() && !v.is_nan(), "{k} {v}");
    }
}
