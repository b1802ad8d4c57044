//! The SGLang and vLLM message parsers directly (no prefix in front), with every record's
//! lazily read parts walked: extra pairs and configuration pairs.
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
    walk(tokstat_parsers::sglang::parse(msg));
    walk(tokstat_parsers::vllm::parse(msg, Some(Level::Error)));
});
