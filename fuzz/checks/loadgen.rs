// The check of the `loadgen` fuzz target, kept apart so that `cargo test` replays its
// corpus too (parsers/tests/fuzz_corpus.rs). Included, not a module: no inner attributes.

use tokstat_parsers::loadgen::{self, Layout};

/// The whole-document JSON reader agrees with serde_json on what is JSON (NaN and Infinity
/// aside, taken on purpose), and no reader of a load generator's files panics on any
/// input, whatever layout it is read as (JSON, YAML, one AIPerf record per line).
pub fn check(data: &[u8]) {
    let ours = tokstat_parsers::json::value::parse(data);
    let lenient = data.windows(3).any(|w| w == b"NaN") || data.windows(8).any(|w| w == b"Infinity");
    if !lenient {
        assert_eq!(
            ours.is_ok(),
            serde_json::from_slice::<serde_json::Value>(data).is_ok()
        );
    }
    let _ = loadgen::sniff(data);
    let _ = loadgen::yaml::sniff(data);
    for layout in [
        Layout::Vllm,
        Layout::ProfileExport,
        Layout::GuideLlm,
        Layout::InferencePerfSummary,
        Layout::InferencePerfRequests,
        Layout::LlmPerfSummary,
        Layout::LlmPerfResponses,
        Layout::GenaiBench,
    ] {
        let _ = loadgen::read(layout, data, "fuzz");
        if let Ok(v) = &ours {
            let _ = loadgen::read_value(layout, v, "fuzz");
        }
    }
    if let Ok(v) = &ours {
        let _ = loadgen::aiperf::record(v, 0);
    }
    if let Ok(v) = loadgen::yaml::parse(data) {
        let _ = loadgen::read_value(Layout::GuideLlm, &v, "fuzz");
    }
}
