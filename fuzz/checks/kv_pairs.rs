// The check of the `kv_pairs` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

/// The `key: value` splitter and the repr splitter: no panic; pairs are slices of the input.
pub fn check(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let range = s.as_ptr() as usize..=s.as_ptr() as usize + s.len();
    for (k, v) in tokstat_parsers::kv::pairs(s) {
        assert!(range.contains(&(k.as_ptr() as usize)) || k.is_empty());
        assert!(range.contains(&(v.as_ptr() as usize)) || v.is_empty());
    }
    for item in tokstat_parsers::kv::repr_items(s) {
        let _ = tokstat_parsers::kv::repr_pair(item);
    }
}
