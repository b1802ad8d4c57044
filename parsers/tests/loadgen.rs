//! Property tests of the load generators' readers: the whole-document JSON reader reads
//! back any tree serde_json writes, exactly; a unit converted and back is the value; a
//! GuideLLM benchmark built from random figures states each of them under its key, and
//! tokstat's rate is the totals over the duration.

use proptest::prelude::*;
use serde_json::{json, Value};
use tokstat_parsers::loadgen::{self, Unit};

fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|i| json!(i)),
        (-1e12f64..1e12).prop_map(|f| json!(f)),
        "[a-zé\"\\\\\\n ]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn the_document_reader_reads_back_what_serde_json_writes(v in tree(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) }.unwrap();
        let ours = tokstat_parsers::json::value::parse(text.as_bytes()).unwrap();
        prop_assert_eq!(ours, v);
    }

    #[test]
    fn units_convert_and_back(v in 0.0f64..1e9, from in prop::sample::select(vec!["ns", "us", "ms", "s", "sec", "min"]),
                              to in prop::sample::select(vec!["ns", "us", "ms", "s", "min"])) {
        let there = Unit::parse(from).unwrap().convert(v, to).unwrap();
        let back = Unit::parse(to).unwrap().convert(there, from).unwrap();
        prop_assert!((back - v).abs() <= 1e-9 * v.max(1.0));
    }

    #[test]
    fn a_guidellm_benchmark_states_its_figures(ok in 1u32..10_000, errored in 0u32..100, incomplete in 0u32..10,
                                                duration in 0.5f64..1e4, p50 in 1.0f64..1e4, out in 1.0f64..1e8) {
        let doc = json!({"benchmarks": [{
            "type_": "generative_benchmark",
            "config": {"strategy": {"type_": "constant", "rate": 5.0}},
            "duration": duration,
            "metrics": {
                "request_totals": {"successful": ok, "errored": errored, "incomplete": incomplete, "total": ok + errored + incomplete},
                "time_to_first_token_ms": {"successful": {"mean": p50, "median": p50, "percentiles": {"p90": p50 * 2.0, "p99": p50 * 3.0}}},
                "output_token_count": {"successful": {"mean": out / f64::from(ok), "total_sum": out}}
            }
        }]});
        let runs = loadgen::guidellm::report(&doc).unwrap();
        let run = &runs[0];
        prop_assert_eq!(&run.name, "constant@5.00");
        prop_assert_eq!(run.get(&["completed"]), Some(f64::from(ok)));
        prop_assert_eq!(run.get(&["failed"]), Some(f64::from(errored + incomplete)));
        prop_assert_eq!(run.get(&["median_ttft_ms"]), Some(p50));
        prop_assert_eq!(run.get(&["p99_ttft_ms"]), Some(p50 * 3.0));
        prop_assert_eq!(run.get(&["duration"]), Some(duration));
        prop_assert_eq!(run.get(&["request_throughput"]), Some(f64::from(ok) / duration));
        prop_assert_eq!(run.get(&["output_throughput"]), Some(out / duration));
        prop_assert_eq!(run.get(&["request_rate"]), Some(5.0));
    }
}
