// The check of the `numbers` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

/// The fast decimal parser agrees with the standard library on every plain decimal.
pub fn check(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let fast = tokstat_parsers::num::float(s);
    let plain = !s.is_empty()
        && s.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        && s.bytes().filter(|&c| c == b'.').count() <= 1
        && s.bytes().any(|c| c.is_ascii_digit());
    if plain {
        let std = s.parse::<f64>().ok();
        assert_eq!(fast, std, "{s}");
    }
    let _ = tokstat_parsers::num::uint(s);
    let _ = tokstat_parsers::num::percent_as_fraction(s);
}
