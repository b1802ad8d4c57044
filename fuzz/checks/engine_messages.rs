// The check of the `engine_messages` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use tokstat_parsers::wrappers::prefix::Level;
use tokstat_parsers::record::Body;

fn walk(b: Option<Body<'_>>) {
    match b {
        Some(Body::Step(s)) => {
            for (k, v) in s.extra.iter() {
                std::hint::black_box((k, v));
            }
        }
        Some(Body::Config(c)) => {
            let _ = c.pairs().count();
        }
        _ => {}
    }
}

/// The SGLang and vLLM message parsers directly (no prefix in front), with every record's
/// lazily read parts walked: extra pairs and configuration pairs. An SGLang stats body is
/// read twice, by the general reading and then against the layout it left cached: both
/// must give the same record; and the report's quick reading of its gauges, when it answers,
/// must give that record's kind and gauges.
pub fn check(data: &[u8]) {
    let Ok(msg) = std::str::from_utf8(data) else {
        return;
    };
    use tokstat_parsers::sglang::parse;
    // other layouts first, so that the next reading of `msg` is the general one
    let _ = parse("Decode batch, #running-req: 1");
    let _ = parse("Prefill batch, #new-seq: 1");
    let general = parse(msg);
    let cached = parse(msg);
    // by their text: NaN is a value lines may carry, and NaN != NaN (a finding of this
    // target: `full token usage: NAN` read the same twice, yet compared unequal)
    assert_eq!(format!("{general:?}"), format!("{cached:?}"));
    let mut g = tokstat_parsers::record::Gauges::default();
    if let Some(kind) = tokstat_parsers::sglang::quick_gauges(msg, &mut g) {
        let Some(Body::Step(s)) = &general else {
            panic!("quick reading answered {kind:?} for {general:?}")
        };
        assert_eq!(s.kind, Some(kind));
        // NaN is no plain number: the quick reading never gives one
        assert_eq!(s.gauges(), g);
    }
    walk(general);
    walk(tokstat_parsers::vllm::parse(msg, Some(Level::Error)));
}
