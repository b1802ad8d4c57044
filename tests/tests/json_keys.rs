//! `docs/json.md` names every key the report's JSON writes: the reports of every fixture run,
//! of every format fixture's folder, and of an export read back are walked to every object
//! key, and each must be named on the page (as `` `key` ``, or `` `key[]` `` for a list). Keys that are data (a setting's
//! name, a finish reason, a hint's figure) are left out where the page says so.

use serde_json::Value;
use std::collections::BTreeSet;
use tokstat_tests::{fixture, fixtures, tokstat};

/// Objects whose keys are data, not schema: named on the page as maps.
const MAPS: [&str; 8] = [
    "settings",
    "finish_reasons",
    "by_finish",
    "by_instance",
    "finished",
    "evidence",
    "shapes",
    "latency",
];

fn keys(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                out.insert(k.clone());
                if !MAPS.contains(&k.as_str()) {
                    keys(x, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| keys(x, out)),
        _ => {}
    }
}

#[test]
fn every_key_of_the_json_is_documented() {
    let page = std::fs::read_to_string(fixtures().join("../docs/json.md")).unwrap();
    let mut inputs: Vec<String> = [
        "demo",
        "fleet",
        "completions",
        "sglang-mrr",
        "vllm-c128",
        "vllm-c200",
    ]
    .iter()
    .map(|r| fixture(&format!("runs/{r}")))
    .collect();
    for d in std::fs::read_dir(fixtures().join("formats")).unwrap() {
        let p = d.unwrap().path();
        if p.is_dir() {
            inputs.push(p.display().to_string());
        }
    }
    let mut found = BTreeSet::new();
    for input in &inputs {
        let (_, out, err) = tokstat(&["report", "--format", "json", "--year", "2026", input]);
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{input}: {e}: {err}"));
        keys(&v, &mut found);
    }
    assert!(found.len() > 150, "{} keys", found.len());
    let missing: Vec<&String> = found
        .iter()
        .filter(|k| !page.contains(&format!("`{k}`")) && !page.contains(&format!("`{k}[]`")))
        .collect();
    assert!(
        missing.is_empty(),
        "keys the JSON writes and docs/json.md does not name: {missing:?}"
    );
}
