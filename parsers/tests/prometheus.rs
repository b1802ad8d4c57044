//! Prometheus exposition: every sample file parses without a malformed line, with the
//! families and values the engines print; rendered samples parse back; any input is safe.

use proptest::prelude::*;
use tokstat_parsers::prometheus::{family, labels, parse_line, unescape, Line, MetricType};

fn fixture(name: &str) -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/formats/prometheus")
        .join(name);
    std::fs::read_to_string(p).unwrap()
}

/// (samples, TYPE lines, HELP lines, other) of a file; panics on a malformed line.
fn count(text: &str) -> (usize, usize, usize, usize) {
    let mut c = (0, 0, 0, 0);
    for (n, l) in text.lines().enumerate() {
        match parse_line(l).unwrap_or_else(|e| panic!("line {}: {e}: {l}", n + 1)) {
            Line::Sample(_) => c.0 += 1,
            Line::Type { .. } => c.1 += 1,
            Line::Help { .. } => c.2 += 1,
            _ => c.3 += 1,
        }
    }
    c
}

fn value_of(text: &str, name: &str, label: Option<(&str, &str)>) -> f64 {
    text.lines()
        .filter_map(|l| match parse_line(l) {
            Ok(Line::Sample(s)) if s.name == name => Some(s),
            _ => None,
        })
        .find(|s| label.is_none_or(|(k, v)| s.label(k).as_deref() == Some(v)))
        .unwrap_or_else(|| panic!("no {name}"))
        .value
}

#[test]
fn every_sample_file() {
    for (file, samples, types) in [
        ("sglang-metrics-v0.4.10.prom", 82, 16),
        ("sglang-metrics-v0.5.23.prom", 62, 17),
        ("vllm-metrics-v0-v0.6.3.prom", 61, 15),
        ("vllm-metrics-v1-v0.8.5.prom", 105, 29),
        ("vllm-metrics-v1-v0.33.0.prom", 103, 27),
    ] {
        let text = fixture(file);
        let (s, t, h, _) = count(&text);
        assert_eq!((s, t), (samples, types), "{file}");
        assert_eq!(h, t, "{file}: one HELP per TYPE");
    }
    let v1 = fixture("vllm-metrics-v1-v0.33.0.prom");
    // exponent form (prometheus_client from 1e6), `_created` timestamps
    assert_eq!(value_of(&v1, "vllm:prompt_tokens_total", None), 2_345_678.0);
    assert_eq!(
        value_of(&v1, "vllm:prompt_tokens_created", None),
        1.796_008_902_679_805_3e9
    );
    assert_eq!(
        value_of(
            &v1,
            "vllm:request_success_total",
            Some(("finished_reason", "length"))
        ),
        87.0
    );
    assert_eq!(value_of(&v1, "vllm:kv_cache_usage_perc", None), 0.337);
    let v0 = fixture("vllm-metrics-v0-v0.6.3.prom");
    assert_eq!(value_of(&v0, "vllm:gpu_cache_usage_perc", None), 0.637);
    // an untouched counter: HELP and TYPE only
    let sg = fixture("sglang-metrics-v0.4.10.prom");
    assert_eq!(
        value_of(
            &sg,
            "sglang:time_to_first_token_seconds_bucket",
            Some(("le", "+Inf"))
        ),
        4.0
    );
}

#[test]
fn families_of_series() {
    let types = |n: &str| match n {
        "x_seconds" => Some(MetricType::Histogram),
        "y_total" => Some(MetricType::Counter),
        _ => None,
    };
    assert_eq!(family("x_seconds_bucket", &types), ("x_seconds", "_bucket"));
    assert_eq!(family("x_seconds_sum", &types), ("x_seconds", "_sum"));
    assert_eq!(family("y_total", &types), ("y_total", ""));
    assert_eq!(family("z", &types), ("z", ""));
}

fn label_value() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just('a'),
            Just('"'),
            Just('\\'),
            Just('\n'),
            Just('}'),
            Just(','),
            Just('='),
            Just('é'),
            Just(' ')
        ],
        0..12,
    )
    .prop_map(|v| v.into_iter().collect())
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

proptest! {
    #[test]
    fn rendered_samples_parse_back(
        name in "[a-z_:][a-z0-9_:]{0,20}",
        // (a label set names each label once: a name twice is malformed)
        pairs in proptest::collection::btree_map("[a-z_][a-z0-9_]{0,8}", label_value(), 0..4)
            .prop_map(|m| m.into_iter().collect::<Vec<_>>()),
        value in prop_oneof![any::<f64>(), Just(f64::INFINITY), Just(f64::NEG_INFINITY), Just(f64::NAN), (0u64..1u64 << 40).prop_map(|v| v as f64)],
        ts in proptest::option::of(0i64..2_000_000_000_000),
    ) {
        let text_value = if value.is_nan() { "NaN".to_string() } else if value == f64::INFINITY { "+Inf".into() } else if value == f64::NEG_INFINITY { "-Inf".into() } else if value.abs() >= 1e6 { format!("{value:e}") } else { format!("{value:?}") };
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{}\"", escape(v))).collect();
        let line = format!(
            "{name}{} {text_value}{}",
            if pairs.is_empty() { String::new() } else { format!("{{{}}}", body.join(",")) },
            ts.map_or(String::new(), |t| format!(" {t}"))
        );
        let Ok(Line::Sample(s)) = parse_line(&line) else { panic!("{line}") };
        prop_assert_eq!(s.name, name.as_str());
        prop_assert!(s.value == value || (s.value.is_nan() && value.is_nan()), "{} vs {}", s.value, value);
        prop_assert_eq!(s.timestamp_ms, ts);
        let got: Vec<(String, String)> = labels(s.labels).map(|(k, v)| (k.to_string(), unescape(v).into_owned())).collect();
        prop_assert_eq!(got, pairs);
    }

    #[test]
    fn any_text_is_safe(s in "\\PC{0,80}") {
        let _ = parse_line(&s);
    }

    #[test]
    fn near_misses_are_safe(s in "[a-z{}=\",\\\\ .0-9eE+-]{0,40}") {
        if let Ok(Line::Sample(x)) = parse_line(&s) {
            for (k, v) in labels(x.labels) {
                let _ = (k, unescape(v));
            }
        }
    }
}
