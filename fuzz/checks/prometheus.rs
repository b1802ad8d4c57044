// The check of the `prometheus` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use tokstat_parsers::prometheus::{labels, parse_line, scrape_time, unescape, Line};

/// Prometheus lines, saved API answers and AIPerf's scrape records: no panic; names and
/// label pairs are slices of the input.
pub fn check(data: &[u8]) {
    let _ = tokstat_parsers::prometheus_api::read(data);
    let _ = tokstat_parsers::loadgen::aiperf_scrapes::record(data);
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let range = s.as_ptr() as usize..=s.as_ptr() as usize + s.len();
    if let Ok(Line::Sample(x)) = parse_line(s) {
        assert!(range.contains(&(x.name.as_ptr() as usize)));
        for (k, v) in labels(x.labels) {
            assert!(range.contains(&(k.as_ptr() as usize)) || k.is_empty());
            let _ = unescape(v);
        }
    }
    let _ = scrape_time(s);
}
