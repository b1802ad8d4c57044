//! The SGLang and vLLM message parsers directly (no prefix in front), with every record's
//! lazily read parts walked: extra pairs and configuration pairs. An SGLang stats body is
//! read twice, by the general reading and then against the layout it left cached: both
//! must give the same record.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokstat_parsers::prefix::Level;
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

fuzz_target!(|data: &[u8]| {
    let Ok(msg) = std::str::from_utf8(data) else { return };
    use tokstat_parsers::sglang::parse;
    // other layouts first, so that the next reading of `msg` is the general one
    let _ = parse("Decode batch, #running-req: 1");
    let _ = parse("Prefill batch, #new-seq: 1");
    let general = parse(msg);
    let cached = parse(msg);
    assert_eq!(general, cached);
    walk(general);
    walk(tokstat_parsers::vllm::parse(msg, Some(Level::Error)));
});
