//! Completion records: every sample shape read field by field, and the lazy scanner proven
//! equal to serde_json — on validity and on the values it extracts — over generated JSON.

use proptest::prelude::*;
use serde_json::Value;
use tokstat_parsers::completion::{read_record, Finish, Paths, Shape};
use tokstat_parsers::json::Scanner;

fn sample(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/formats/completions")
        .join(name);
    let v: Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    serde_json::to_vec(&v).unwrap() // one line, as a JSONL writer would store it
}

#[test]
fn every_sample_shape() {
    let none = Paths::default();
    // (file, shape, finish, prompt, completion, reasoning, cached, cap hint, output chars —
    // counted only where no token count exists)
    type Row = (
        &'static str,
        Shape,
        Finish,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        Option<u64>,
    );
    let rows: [Row; 7] = [
        (
            "sglang-generate-response-v0.3.4-v0.4.0.json",
            Shape::SglangGenerate,
            Finish::Stop,
            Some(9),
            Some(8),
            None,
            Some(0),
            None,
            None,
        ),
        (
            "sglang-generate-response-v0.4.1-v0.4.4.json",
            Shape::SglangGenerate,
            Finish::Stop,
            Some(9),
            Some(8),
            None,
            Some(0),
            None,
            None,
        ),
        (
            "sglang-generate-response-v0.5.10.json",
            Shape::SglangGenerate,
            Finish::Length,
            Some(9),
            Some(8),
            Some(0),
            Some(0),
            Some(8),
            None,
        ),
        (
            "sglang-openai-chat-completion-v0.5.23.json",
            Shape::OpenaiChat,
            Finish::Stop,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
        (
            "vllm-openai-chat-completion-v0.7.1-v0.8.5.json",
            Shape::OpenaiChat,
            Finish::Stop,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
        (
            "vllm-openai-chat-completion-v0.28-v0.32.json",
            Shape::OpenaiChat,
            Finish::Length,
            Some(14),
            Some(26),
            Some(20),
            None,
            None,
            None,
        ),
        (
            "vllm-openai-completion-v0.6.4-v0.8.5.json",
            Shape::OpenaiCompletion,
            Finish::Unknown,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
    ];
    for (file, shape, finish, prompt, completion, reasoning, cached, cap, chars) in rows {
        let bytes = sample(file);
        let rec = read_record(&bytes, &none).unwrap_or_else(|e| panic!("{file}: {e}"));
        let c = rec.rows()[0];
        // values cross-checked with serde_json below; here the shape-level facts
        assert_eq!(c.shape, shape, "{file}");
        let v: Value = serde_json::from_slice(&bytes).unwrap();
        let want = reference(&v);
        assert_eq!(c.finish, want.finish, "{file}");
        assert_eq!(c.completion_tokens, want.completion, "{file}");
        assert_eq!(c.prompt_tokens, want.prompt, "{file}");
        assert_eq!(
            c.output_chars,
            want.chars.filter(|_| want.completion.is_none()),
            "{file}"
        );
        // the hand-written expectations where this table gives them
        if completion.is_some() {
            assert_eq!(
                (
                    c.finish,
                    c.prompt_tokens,
                    c.completion_tokens,
                    c.reasoning_tokens,
                    c.cached_tokens,
                    c.cap_hint,
                    c.output_chars
                ),
                (finish, prompt, completion, reasoning, cached, cap, chars),
                "{file}"
            );
        }
    }
}

#[test]
fn run_batch_line_and_errors() {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/formats/completions/vllm-run-batch-output-v0.6.4-v0.6.6.jsonl");
    let text = std::fs::read(p).unwrap();
    let line = text.split(|&c| c == b'\n').next().unwrap();
    let rec = read_record(line, &Paths::default()).unwrap();
    let c = rec.rows()[0];
    assert_eq!(
        (
            c.shape,
            c.finish,
            c.prompt_tokens,
            c.completion_tokens,
            c.output_chars
        ),
        (Shape::VllmBatch, Finish::Stop, Some(12), Some(3), None)
    );
    let e =
        br#"{"id":"x","error":{"message":"context too long","type":"BadRequestError","code":400}}"#;
    let c = read_record(e, &Paths::default()).unwrap().rows()[0];
    assert_eq!(
        (c.finish, c.error.map(|s| s.decode().into_owned())),
        (Finish::Error, Some("context too long".to_string()))
    );
    let s = br#"{"idx":3,"reasoning":"r\u00e9","content":"ok","finish_reason":"length","usage":{"prompt_tokens":5,"completion_tokens":4096}}"#;
    let c = read_record(s, &Paths::default()).unwrap().rows()[0];
    assert_eq!(
        (c.shape, c.finish, c.completion_tokens, c.output_chars),
        (Shape::Custom, Finish::Length, Some(4096), None)
    );
    // without a token count, characters are the measure: "ré" + "ok"
    let s = br#"{"idx":3,"reasoning":"r\u00e9","content":"ok","finish_reason":"length"}"#;
    let c = read_record(s, &Paths::default()).unwrap().rows()[0];
    assert_eq!((c.completion_tokens, c.output_chars), (None, Some(4)));
    // n > 1 rows carry no token count, so their characters are counted: "abc"
    // n > 1: one row per choice, no per-choice token count made up from the summed usage
    let n2 = br#"{"choices":[{"index":0,"text":"ab","finish_reason":"stop"},{"index":1,"text":"abc","finish_reason":"length"}],"usage":{"prompt_tokens":3,"completion_tokens":9}}"#;
    let r = read_record(n2, &Paths::default()).unwrap();
    assert_eq!(r.rows().len(), 2);
    assert_eq!(r.rows()[1].output_chars, Some(3));
    assert_eq!(
        (
            r.rows()[1].choice,
            r.rows()[1].finish,
            r.rows()[1].completion_tokens,
            r.rows()[1].prompt_tokens
        ),
        (1, Finish::Length, None, Some(3))
    );
    // user pointers for an unknown shape
    let paths = Paths {
        tokens: Some(Paths::pointer("/meta/ntok")),
        finish: Some(Paths::pointer("/fr")),
    };
    let c = read_record(br#"{"meta":{"ntok":77},"fr":"FINISH_LENGTH: 77"}"#, &paths)
        .unwrap()
        .rows()[0];
    assert_eq!(
        (c.completion_tokens, c.finish, c.cap_hint),
        (Some(77), Finish::Length, Some(77))
    );
    // invalid records are errors, not guesses
    for bad in [
        &br#"{"usage":{"completion_tokens":1}"#[..],
        b"",
        b"[1,2]",
        br#"{"a":1} x"#,
    ] {
        assert!(
            read_record(bad, &Paths::default()).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
}

/// The same extraction, written over serde_json's `Value` (last duplicate key wins, as there).
struct Want {
    finish: Finish,
    prompt: Option<u64>,
    completion: Option<u64>,
    chars: Option<u64>,
}

fn finish_of(v: Option<&Value>) -> Finish {
    match v {
        Some(Value::String(s)) => Finish::from_text(s).0,
        Some(Value::Object(o)) => o
            .get("type")
            .and_then(Value::as_str)
            .map_or(Finish::Unknown, |s| Finish::from_text(s).0),
        _ => Finish::Unknown,
    }
}

fn chars(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_str).map(|s| s.chars().count() as u64)
}

fn add(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
    }
}

fn num(v: Option<&Value>) -> Option<u64> {
    v.and_then(Value::as_f64)
        .filter(|x| *x >= 0.0)
        .map(|x| x as u64)
}

fn reference(v: &Value) -> Want {
    let body = v
        .get("response")
        .and_then(|r| r.get("body"))
        .filter(|b| b.is_object())
        .unwrap_or(v);
    let meta = v.get("meta_info").filter(|m| m.is_object());
    let usage = body.get("usage").filter(|u| u.is_object());
    let (mut finish, mut chars_out) = (finish_of(v.get("finish_reason")), None);
    if let Some(m) = meta {
        finish = finish_of(m.get("finish_reason"));
    }
    for k in [
        "text",
        "content",
        "reasoning",
        "reasoning_content",
        "output",
    ] {
        chars_out = add(chars_out, chars(v.get(k)));
    }
    if let Some(Value::Array(choices)) = body.get("choices") {
        if let Some(c) = choices.first() {
            finish = finish_of(c.get("finish_reason"));
            chars_out = chars(c.get("text"));
            if let Some(m) = c.get("message") {
                chars_out = add(chars_out, chars(m.get("content")));
                let r = m
                    .get("reasoning")
                    .and_then(Value::as_str)
                    .or_else(|| m.get("reasoning_content").and_then(Value::as_str));
                chars_out = add(chars_out, r.map(|s| s.chars().count() as u64));
            }
        }
    }
    let pick = |k: &str| {
        meta.and_then(|m| num(m.get(k)))
            .or_else(|| usage.and_then(|u| num(u.get(k))))
    };
    Want {
        finish,
        prompt: pick("prompt_tokens"),
        completion: pick("completion_tokens"),
        chars: chars_out,
    }
}

fn arb_text() -> impl Strategy<Value = String> {
    proptest::string::string_regex("(?s)[a-z \"\\\\\n\té漢😀\u{1}/]{0,40}").unwrap()
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (0u64..100_000).prop_map(Value::from),
        (-1e6f64..1e6).prop_map(|f| serde_json::json!(f)),
        arb_text().prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            proptest::collection::vec(
                (
                    prop_oneof![
                        Just("usage".to_string()),
                        Just("text".to_string()),
                        Just("finish_reason".to_string()),
                        arb_text()
                    ],
                    inner
                ),
                0..5
            )
            .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A completion-like record with fields in any order, escapes and extra nesting.
fn arb_record() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("stop"), Just("length"), Just("FINISH_LENGTH: 64"), Just("abort")],
        0u64..9000,
        0u64..9000,
        arb_text(),
        arb_text(),
        arb_json(),
        0usize..3,
    )
        .prop_map(|(fr, p, c, text, reasoning, noise, form)| match form {
            0 => serde_json::json!({"noise": noise, "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "reasoning_content": reasoning}, "finish_reason": fr}], "usage": {"prompt_tokens": p, "completion_tokens": c}, "object": "chat.completion"}),
            1 => serde_json::json!({"text": text, "meta_info": {"finish_reason": {"type": if fr == "stop" {"stop"} else {"length"}, "length": c}, "prompt_tokens": p, "completion_tokens": c, "x": noise}}),
            _ => serde_json::json!({"usage": {"completion_tokens": c, "prompt_tokens": p}, "finish_reason": fr, "content": text, "reasoning": reasoning, "n": noise}),
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// Validity: the scanner accepts exactly what serde_json accepts (generated documents,
    /// and the same documents cut short or with one byte changed).
    #[test]
    fn validity_equals_serde(v in arb_json(), cut in any::<prop::sample::Index>(), flip in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let text = serde_json::to_vec(&v).unwrap();
        let mut variants = vec![text.clone(), text[..cut.index(text.len() + 1)].to_vec()];
        if !text.is_empty() {
            let mut t = text.clone();
            t[flip.index(text.len())] = byte;
            variants.push(t);
        }
        for t in variants {
            // UTF-8 is checked by the caller, once per chunk (see `tokstat report`)
            if std::str::from_utf8(&t).is_err() {
                prop_assert!(serde_json::from_slice::<Value>(&t).is_err());
                continue;
            }
            let ours = { let mut sc = Scanner::new(&t); sc.skip().and_then(|_| sc.end()).is_ok() };
            let theirs = serde_json::from_slice::<Value>(&t).is_ok();
            prop_assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(&t));
        }
    }

    /// Values: finish reason, token counts and output characters equal serde_json's reading,
    /// with keys in any order (serde_json's map sorts them) and pretty or compact layout.
    #[test]
    fn values_equal_serde(v in arb_record(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_vec_pretty(&v).unwrap() } else { serde_json::to_vec(&v).unwrap() };
        let rec = read_record(&text, &Paths::default()).unwrap();
        let c = rec.rows()[0];
        let want = reference(&v);
        prop_assert_eq!(c.finish, want.finish);
        prop_assert_eq!(c.prompt_tokens, want.prompt);
        prop_assert_eq!(c.completion_tokens, want.completion);
        prop_assert_eq!(c.output_chars, want.chars.filter(|_| want.completion.is_none()));
    }
}

#[test]
fn duplicate_keys_last_wins_like_serde() {
    let t = br#"{"usage":{"completion_tokens":1},"usage":{"completion_tokens":2},"finish_reason":"stop","finish_reason":"length"}"#;
    let c = read_record(t, &Paths::default()).unwrap().rows()[0];
    let v: Value = serde_json::from_slice(t).unwrap();
    assert_eq!(
        c.completion_tokens,
        num(v["usage"].get("completion_tokens"))
    );
    assert_eq!(c.finish, Finish::Length);
}

/// Raw string bodies around the scanner's 64-byte blocks: runs of backslashes, escaped and
/// bare quotes, `\u` escapes (valid and not), control characters and multi-byte text, at
/// every offset — validity, length and decoded text equal serde_json's.
fn arb_string_body() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            4 => Just("a".to_string()),
            2 => Just("yyyyyyyyyyyyy".to_string()),
            2 => Just("\\\\".to_string()),
            2 => Just("\\\"".to_string()),
            1 => Just("\\n".to_string()),
            1 => Just("\\u00e9".to_string()),
            1 => Just("\\ud83d\\ude00".to_string()),
            1 => Just("é推".to_string()),
            1 => Just("\\".to_string()),
            1 => Just("\"".to_string()),
            1 => Just("\u{1}".to_string()),
            1 => Just("\\x".to_string()),
            1 => Just("\\u12".to_string()),
        ],
        0..120,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]
    #[test]
    fn string_blocks_equal_serde(body in arb_string_body(), tail in 0usize..3) {
        let doc = format!("\"{body}\"{}", ["", " ", "\"x\""][tail]);
        let theirs = serde_json::from_str::<String>(&doc).ok();
        let mut sc = Scanner::new(doc.as_bytes());
        let ours = sc.string().and_then(|s| sc.end().map(|_| s));
        prop_assert_eq!(ours.is_ok(), theirs.is_some(), "{}", doc);
        if let (Ok(s), Some(t)) = (ours, theirs) {
            prop_assert_eq!(s.decode(), t);
        }
    }
}
