// The check of the `log_line` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use tokstat_parsers::record::Body;
use tokstat_parsers::Quick;

/// Any bytes through the whole line parser (normalisation, prefixes, SGLang and vLLM
/// messages, configuration pairs): no panic, and every record's text borrows valid UTF-8.
/// A UTF-8 line is also read the report's quick way, twice (the second time against the
/// layout the first left cached), then keeping no gauge: it must give what the general
/// reading gives (of the gauges it keeps, or the stamp of a line that holds no record).
pub fn check(data: &[u8]) {
    let mut scratch = String::new();
    let line = tokstat_parsers::parse_line(data, &mut scratch);
    if let Body::Config(c) = line.body {
        for (k, v) in c.pairs() {
            assert!(k.len() + v.len() <= data.len() * 4 + 8);
        }
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if text.contains('\n') {
        return;
    }
    // the pieces of a line that may hold glued records are its own text, in order
    let mut at = 0;
    for p in tokstat_parsers::wrappers::glued::pieces(text) {
        let off = p.as_ptr() as usize - text.as_ptr() as usize;
        assert!(off >= at && off + p.len() <= text.len());
        at = off + p.len();
    }
    // by their text: NaN is a value lines may carry
    let general = format!(
        "{:?}",
        tokstat_parsers::parse_str_line(text, &mut scratch, true)
    );
    use tokstat_parsers::record::GaugeSet;
    use tokstat_parsers::sglang::Keep;
    // every gauge (twice), then none: a line not kept whole is still checked whole
    let none = Keep::new(GaugeSet::NONE, GaugeSet::NONE);
    for keep in [Keep::ALL, Keep::ALL, none] {
        let mut scratch = String::new();
        tokstat_parsers::visit_quick_line(text, &mut scratch, keep, |q| match q {
            Quick::Line(l) => assert_eq!(format!("{l:?}"), general),
            Quick::Other(stamp) => {
                let mut scratch = String::new();
                let l = tokstat_parsers::parse_str_line(text, &mut scratch, true);
                assert!(matches!(l.body, Body::Other), "quick other for {general}");
                assert_eq!(stamp, l.prefix.stamp);
            }
            Quick::Stats(stamp, dp, kind, g) => {
                let mut scratch = String::new();
                let l = tokstat_parsers::parse_str_line(text, &mut scratch, true);
                let Body::Step(s) = l.body else {
                    panic!("quick stats for {general}")
                };
                let want = if keep == none {
                    tokstat_parsers::record::Gauges {
                        preemptions: s.gauges().preemptions,
                        ..Default::default()
                    }
                } else {
                    s.gauges()
                };
                assert_eq!(
                    format!("{:?}", (stamp, dp, Some(kind), *g)),
                    format!("{:?}", (l.prefix.stamp, l.prefix.ranks.dp, s.kind, want))
                );
            }
        });
    }
}
