//! Any bytes through the whole line parser (normalisation, prefixes, SGLang and vLLM
//! messages, configuration pairs): no panic, and every record's text borrows valid UTF-8.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokstat_parsers::record::Body;

fuzz_target!(|data: &[u8]| {
    let mut scratch = String::new();
    let line = tokstat_parsers::parse_line(data, &mut scratch);
    if let Body::Config(c) = line.body {
        for (k, v) in c.pairs() {
            assert!(k.len() + v.len() <= data.len() * 4 + 8);
        }
    }
});
