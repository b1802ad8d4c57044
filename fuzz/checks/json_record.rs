// The check of the `json_record` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use tokstat_parsers::completion::{read_record, read_record_line, Paths, Record};
use tokstat_parsers::json::Scanner;

/// The lazy JSON scanner against serde_json: same verdict on validity for every input
/// (invalid UTF-8 included: the scanner checks the strings, JSON allows only ASCII outside
/// them), and the record reader never panics.
pub fn check(data: &[u8]) {
    let ours = {
        let mut sc = Scanner::new(data);
        sc.skip().and_then(|_| sc.end()).is_ok()
    };
    // NaN / Infinity are accepted on purpose (SGLang's bench_serving writes them)
    let lenient = data.windows(3).any(|w| w == b"NaN") || data.windows(8).any(|w| w == b"Infinity");
    if !lenient {
        assert_eq!(
            ours,
            serde_json::from_slice::<serde_json::Value>(data).is_ok()
        );
    }
    let _ = read_record(data, &Paths::default());
    // line mode (the parse finds the line's end): the first line reads as it does alone
    let first = data.split(|&c| c == b'\n').next().unwrap_or_default();
    let alone = read_record(first, &Paths::default()).is_ok();
    let mut rec = Record {
        rows: Vec::new(),
        dropped_choices: 0,
    };
    match read_record_line(data, &Paths::default(), &mut rec) {
        Ok(len) => {
            assert!(alone);
            assert_eq!(len, first.len());
        }
        Err(e) => {
            assert!(!alone);
            assert!(e.at <= first.len());
        }
    }
}
