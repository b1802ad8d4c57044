//! Public parser test suites through `tokstat report` (issue 40, item 8). nst/JSONTestSuite
//! (vendored under `fixtures/suites/JSONTestSuite`): every valid value (`y_`) embedded in a
//! completion record of each shape is read, every record's tokens counted exactly; every
//! invalid one-line value (`n_`) as a line between two records is reported malformed with its
//! line number, and the records around it are read.

use serde_json::Value;
use std::path::PathBuf;

fn suite(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/suites/JSONTestSuite/test_parsing");
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// A record of each shape with `value` as an extra top-level field and `n` output tokens.
fn records(value: &str, n: usize) -> [String; 4] {
    let chat = format!(
        r#"{{"object":"chat.completion","choices":[{{"index":0,"message":{{"role":"assistant","content":"ok"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":5,"completion_tokens":{n}}},"case":{value}}}"#
    );
    [
        chat.clone(),
        format!(
            r#"{{"object":"text_completion","choices":[{{"index":0,"text":"ok","finish_reason":"length"}}],"usage":{{"prompt_tokens":5,"completion_tokens":{n}}},"case":{value}}}"#
        ),
        format!(
            r#"{{"text":"ok","meta_info":{{"prompt_tokens":5,"completion_tokens":{n},"finish_reason":{{"type":"stop"}}}},"case":{value}}}"#
        ),
        format!(
            r#"{{"id":"b","custom_id":"r","response":{{"status_code":200,"body":{chat}}},"error":null}}"#
        ),
    ]
}

fn report(path: &std::path::Path) -> Value {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = [
        "tokstat",
        "report",
        "--format",
        "json",
        "-q",
        path.to_str().unwrap(),
    ];
    let code = tokstat::run(argv, &mut out, &mut err);
    assert!(code == 0 || code == 1, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&err)))
}

#[test]
fn every_valid_json_value_inside_records_of_each_shape() {
    let cases = suite("y_");
    assert_eq!(cases.len(), 95);
    let dir = tempfile::tempdir().unwrap();
    for shape in 0..4 {
        let f = dir.path().join(format!("shape{shape}.jsonl"));
        let mut text = String::new();
        let mut tokens = 0;
        for (k, (_, value)) in cases.iter().enumerate() {
            // a record is one line: the value's blanks between tokens become spaces
            let value = std::str::from_utf8(value)
                .unwrap()
                .replace(['\n', '\r'], " ");
            text.push_str(&records(&value, k + 1)[shape]);
            text.push('\n');
            tokens += k + 1;
        }
        std::fs::write(&f, &text).unwrap();
        let v = report(&f);
        assert_eq!(
            v["lines"]["malformed"], 0,
            "shape {shape}: {}",
            v["files"][0]
        );
        assert_eq!(v["lines"]["parsed"], 95, "shape {shape}");
        let c = &v["completions"];
        assert_eq!(c["count"], 95, "shape {shape}");
        let mean = c["output_tokens"]["mean"].as_f64().unwrap();
        assert!(
            (mean * 95.0 - tokens as f64).abs() < 1e-6,
            "shape {shape}: {mean}"
        );
        assert_eq!(c["output_tokens"]["max"], 95.0, "shape {shape}");
    }
}

#[test]
fn every_invalid_json_line_between_records_is_reported() {
    let cases: Vec<(String, Vec<u8>)> = suite("n_")
        .into_iter()
        .map(|(n, mut t)| {
            while t.last().is_some_and(|c| *c == b'\n' || *c == b'\r') {
                t.pop();
            }
            (n, t)
        })
        .filter(|(_, t)| !t.contains(&b'\n') && !t.contains(&b'\r'))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (mut reported, mut blank) = (0, 0);
    let mut wrong = Vec::new();
    for (name, bad) in &cases {
        let f = dir.path().join("case.jsonl");
        let [good, ..] = records("1", 7);
        let mut text = format!("{good}\n").into_bytes();
        text.extend_from_slice(bad);
        text.extend_from_slice(format!("\n{good}\n").as_bytes());
        std::fs::write(&f, text).unwrap();
        let v = report(&f);
        let file = &v["files"][0];
        let text = String::from_utf8_lossy(bad);
        if text.trim_start_matches('\u{feff}').trim().is_empty() {
            // a blank line (or a byte order mark alone) is no record: counted, nothing lost
            blank += 1;
            if v["lines"]["parsed"] != 2 || v["lines"]["malformed"] != 0 || v["lines"]["total"] != 3
            {
                wrong.push(format!("{name}: {}", v["lines"]));
            }
            continue;
        }
        reported += 1;
        let ok = v["lines"]["parsed"] == 2
            && v["lines"]["malformed"] == 1
            && file["malformed_samples"][0]["line"] == 2
            && v["completions"]["count"] == 2;
        if !ok {
            wrong.push(format!("{name}: {} {file}", v["lines"]));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
    assert_eq!((reported, blank, cases.len()), (182, 3, 185));
}
