// The check of the `envelope` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use std::sync::Arc;
use tokstat_parsers::source::MadeLines;
use tokstat_parsers::wrappers::envelope::unwrap::{self, Plan, Shared, Unwrap};
use tokstat_parsers::wrappers::envelope::write::{wrap, Wrapping, ALL};
use tokstat_parsers::wrappers::envelope::{documents, row, sniff};

/// Any bytes as any collector's file: sniffing, opening rows and documents never panic;
/// unwrapping counts every row once (its parts on all cores cut where no line is under
/// way); and the text of the input, wrapped by the collector's writer, unwraps to itself.
pub fn check(data: &[u8]) {
    let Some((&k, rest)) = data.split_first() else {
        return;
    };
    let c = ALL[usize::from(k) % ALL.len()];
    let _ = sniff(rest);
    for raw in rest.split(|&b| b == b'\n') {
        let _ = row(c, raw);
    }
    let _ = documents::read(c, rest);
    let _ = unwrap::survey(c, rest);
    let plan = Plan {
        collector: c,
        who: None,
        offset_ms: 0,
        counts_unowned: true,
    };
    if c.per_line() {
        let bytes: Shared = Arc::new(rest.to_vec());
        let u = Unwrap::new(bytes, plan.clone());
        let _ = u.make_all();
        let n = u.counts();
        let rows = rest.split(|&b| b == b'\n').count() as u64 - u64::from(rest.ends_with(b"\n") || rest.is_empty());
        assert_eq!(n.rows, rows);
        assert!(n.joined + n.other + n.broken + n.foreign <= n.rows);
        let _ = unwrap::rows_of_lines(rest, &plan, &[1, 2, 3]);
    }
    // the round trip, for text without carriage returns
    if let Ok(text) = std::str::from_utf8(rest) {
        if text.contains('\r') || text.is_empty() {
            return;
        }
        let plain: String = text.lines().map(|l| format!("{}\n", l.trim_end())).collect();
        let w = Wrapping { piece: 1 + usize::from(k >> 4), ..Wrapping::default() };
        let file = wrap(c, &plain, &w);
        let out = if c.per_line() {
            let bytes: Shared = Arc::new(file.into_bytes());
            let u = Unwrap::new(bytes, plan);
            let out = String::from_utf8(u.make_all()).unwrap();
            assert_eq!(u.counts().broken, 0);
            out
        } else {
            let (pieces, _) = documents::read(c, file.as_bytes()).unwrap();
            String::from_utf8(unwrap::plain(pieces.into_iter(), &plan).0).unwrap()
        };
        let want: Vec<&str> = plain.lines().collect();
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(want.len(), got.len());
        for (a, b) in want.iter().zip(&got) {
            assert!(a == b || b.split_once("Z ").is_some_and(|(_, r)| r == *a), "{a:?} -> {b:?}");
        }
    }
}
