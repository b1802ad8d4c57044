//! End-to-end: `tokstat report` over completion records, against the simulator's truth
//! (`fixtures/runs/completions.truth.txt`) and an independent Python/json reading of the same
//! files (p50 1003, p90 3320, mean 1388.82…, 2,074,900 output tokens).

use serde_json::Value;
use std::path::Path;
use tokstat_tests::{fixture, tokstat};

fn report_json(args: &[&str]) -> Value {
    let mut a = vec!["report", "--format", "json"];
    a.extend_from_slice(args);
    let (code, out, err) = tokstat(&a);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn simulated_run_matches_the_truth() {
    let v = report_json(&[&fixture("runs/completions")]);
    // three 500-record batches (one zstd-compressed), one truncated last line
    assert_eq!(
        v["lines"],
        serde_json::json!({"total": 1501, "parsed": 1500, "other": 0, "malformed": 1, "partial": 0})
    );
    let f1 = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["source"].as_str().unwrap().ends_with("batch_001.jsonl"))
        .unwrap();
    assert_eq!(f1["malformed_samples"][0]["line"], 501);
    assert!(f1["malformed_samples"][0]["reason"]
        .as_str()
        .unwrap()
        .starts_with("truncated last line"));
    let c = &v["completions"];
    assert_eq!(c["count"], 1500);
    let o = &c["output_tokens"];
    assert_eq!(
        (
            o["count"].as_u64(),
            o["p50"].as_f64(),
            o["p95"].as_f64(),
            o["p99"].as_f64(),
            o["max"].as_f64()
        ),
        (
            Some(1494),
            Some(1003.0),
            Some(4096.0),
            Some(4096.0),
            Some(4096.0)
        )
    );
    assert!((o["p90"].as_f64().unwrap() - 3320.0).abs() < 1e-9);
    assert!((o["mean"].as_f64().unwrap() - 2_074_900.0 / 1494.0).abs() < 1e-9);
    // truth: 38 + 19 + 41 capped, 1 + 4 + 1 errors
    assert_eq!(
        c["finish_reasons"],
        serde_json::json!({"error": 6, "length": 98, "stop": 1396})
    );
    assert_eq!(c["cap"]["value"], 4096);
    assert_eq!(c["cap"]["source"], "records");
    assert_eq!(c["cap"]["hits"], 98);
    assert!((c["cap"]["hit_rate"].as_f64().unwrap() - 98.0 / 1500.0).abs() < 1e-12);
    assert_eq!(c["cap"]["tokens_on_capped"], 98 * 4096);
    assert_eq!(c["cap"]["censored"], true);
    assert!((c["failure_rate"].as_f64().unwrap() - 0.004).abs() < 1e-12);
    // the simulator rotates three shapes; its 6 failures are written as bare error objects
    assert_eq!(
        c["shapes"],
        serde_json::json!({"custom": 504, "openai_chat": 500, "sglang_generate": 496})
    );
    let table = tokstat(&["report", &fixture("runs/completions")]).1;
    assert!(
        table.contains("Cap: 4,096 tokens (records) · hit by 98 of 1,500 (6.5%)"),
        "{table}"
    );
    assert!(
        table.contains("the true tail is longer than shown"),
        "{table}"
    );
}

#[test]
fn cap_flag_and_pointers() {
    let v = report_json(&["--cap", "8192", &fixture("runs/completions")]);
    assert_eq!(v["completions"]["cap"]["value"], 8192);
    assert_eq!(v["completions"]["cap"]["source"], "flag");
    // finish reasons still decide the hits; the tail is no longer censored at the flag's cap
    assert_eq!(v["completions"]["cap"]["censored"], false);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("custom.jsonl");
    std::fs::write(&p, "{\"meta\":{\"ntok\":10},\"fr\":\"stop\"}\n{\"meta\":{\"ntok\":20},\"fr\":\"FINISH_LENGTH: 20\"}\n\n").unwrap();
    let v = report_json(&[
        "--tokens-path",
        "/meta/ntok",
        "--finish-path",
        "/fr",
        p.to_str().unwrap(),
    ]);
    let c = &v["completions"];
    assert_eq!(
        (
            c["count"].as_u64(),
            c["output_tokens"]["max"].as_f64(),
            c["cap"]["value"].as_u64()
        ),
        (Some(2), Some(20.0), Some(20))
    );
    assert_eq!(v["lines"]["other"], 1);
    assert_eq!(v["unknown_records"], 0);
    // without the pointers the two records are of no known shape, and the report says what
    // to do (the blank line is not one of them)
    let plain = p.to_str().unwrap();
    let v = tokstat(&["report", "--format", "json", plain]);
    let v: Value = serde_json::from_str(&v.1).unwrap();
    assert_eq!(
        (v["lines"]["other"].as_u64(), v["unknown_records"].as_u64()),
        (Some(3), Some(2))
    );
    let (code, out, _) = tokstat(&["report", plain]);
    assert_eq!(code, 1, "nothing was parsed");
    assert!(
        out.contains("Note: 2 JSON record(s) have no field tokstat reads"),
        "{out}"
    );
    assert!(out.contains("--tokens-path"), "{out}");
}

#[test]
fn records_without_token_counts_report_characters() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.jsonl");
    std::fs::write(&p, "{\"content\":\"héllo\",\"finish_reason\":\"stop\"}\n{\"content\":\"ab\",\"finish_reason\":\"length\"}\nnot json\n").unwrap();
    let v = report_json(&[p.to_str().unwrap()]);
    let c = &v["completions"];
    assert_eq!(c["token_counts_available"], false);
    assert_eq!(c["output_tokens"], Value::Null);
    assert_eq!(c["output_chars"]["max"], 5.0);
    assert_eq!(v["lines"]["malformed"], 1);
    let table = tokstat(&["report", p.to_str().unwrap()]).1;
    assert!(table.contains("Token counts are unavailable"), "{table}");
}

#[test]
fn every_sample_shape_is_read() {
    let v = report_json(&[&fixture("formats/completions")]);
    let c = &v["completions"];
    assert_eq!(c["shapes"]["sglang_generate"], 3);
    assert_eq!(c["shapes"]["openai_chat"], 3);
    assert_eq!(c["shapes"]["openai_completion"], 1);
    assert_eq!(c["shapes"]["vllm_batch"], 1);
    assert_eq!(c["count"], 8);
}

#[test]
fn benchmark_result_files_become_requests() {
    // vLLM bench serve 0.8: per-request lists in seconds; the file's own ms summaries agree
    let v = report_json(&[
        "--slo",
        "ttft=60ms",
        &fixture("formats/completions/vllm-bench-serve-result-v0.8.0-v0.8.5.json"),
    ]);
    let run = &v["bench_runs"][0];
    assert_eq!(run["requests"], 3);
    assert!((run["ttft_ms"]["p50"].as_f64().unwrap() - 53.0).abs() < 1e-9); // median_ttft_ms: 53.0
    assert!((run["ttft_ms"]["mean"].as_f64().unwrap() - 51.7667).abs() < 1e-3); // mean_ttft_ms: 51.77
                                                                                // two of three requests have TTFT ≤ 60 ms (41.2, 53.0, 61.1): goodput = 2 / 2.4123 s
    assert!((run["goodput_share"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-12);
    assert!((run["goodput"].as_f64().unwrap() - 2.0 / 2.4123).abs() < 1e-9);
    assert_eq!(run["recorded_goodput"], Value::Null); // the `"request_goodput:"` typo key is null here
                                                      // SGLang bench_serving JSONL with a literal `Infinity`: every run read, none malformed
    let v = report_json(&[&fixture(
        "formats/completions/sglang-bench-serving-v0.2.0-v0.4.1.jsonl",
    )]);
    assert_eq!(v["lines"]["malformed"], 0);
    let runs = v["bench_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["median_ttft_ms"], 12041.7); // 0.2.x short key `median_ttft`
    assert_eq!(runs[1]["duration_s"], 127.5);
    let v = report_json(&[&fixture(
        "formats/completions/sglang-bench-serving-v0.5.14-v0.5.23.jsonl",
    )]);
    let run = &v["bench_runs"][1];
    assert_eq!(run["requests"], 3);
    assert!((run["ttft_ms"]["p50"].as_f64().unwrap() - 101.7).abs() < 1e-9); // median_ttft_ms: 101.7
    let (code, _, err) = tokstat(&["report", "--slo", "ttft=fast", "x"]);
    assert_eq!(code, 2, "{err}");
}

/// Many small batch files are read side by side, yet the report is the one of their records
/// in file order: the same figures as one file holding them all, and every file accounted
/// for in the order given, logs among them (read in order, after the JSON files were read).
#[test]
fn a_folder_of_batches_reads_like_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let batch = std::fs::read_to_string(fixture("runs/completions/batch_000.jsonl")).unwrap();
    let lines: Vec<&str> = batch.lines().collect();
    let mut all = String::new();
    for (k, part) in lines.chunks(7).enumerate() {
        let text: String = part.iter().map(|l| format!("{l}\n")).collect();
        // the log sorts between the first half and the second
        let name = format!("{}{k:03}.jsonl", if k < 36 { 'a' } else { 'z' });
        std::fs::write(dir.path().join(name), &text).unwrap();
        all.push_str(&text);
    }
    let log = fixture("runs/demo/sglang_gpu0.log");
    std::fs::copy(&log, dir.path().join("sglang_gpu0.log")).unwrap();
    let other = tempfile::tempdir().unwrap();
    let one = other.path().join("all.jsonl");
    std::fs::write(&one, &all).unwrap();
    let folder = dir.path().display().to_string();
    let v = report_json(&[&folder]);
    let w = report_json(&[&one.display().to_string(), &log]);
    assert_eq!(v["completions"], w["completions"]);
    assert_eq!(v["completions"]["count"], 500);
    assert_eq!(v["instances"], w["instances"]);
    let sources: Vec<String> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = f["source"].as_str().unwrap();
            s.rsplit('/').next().unwrap().to_string()
        })
        .collect();
    let mut want: Vec<String> = (0..lines.len().div_ceil(7))
        .map(|k| format!("{}{k:03}.jsonl", if k < 36 { 'a' } else { 'z' }))
        .collect();
    want.insert(36, "sglang_gpu0.log".into());
    assert_eq!(sources, want);
}

/// Regression: a named pipe given as a path (`<(zcat …)`, a FIFO) was refused ("Illegal
/// seek": its first bytes were read with `pread`), and, once readable, it must not be opened
/// twice (the side-by-side reading of small JSON files looks at regular files only).
#[cfg(unix)]
#[test]
fn a_named_pipe_is_read_once_and_whole() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("records.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let text = std::fs::read(fixture("runs/completions/batch_000.jsonl")).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, text).unwrap())
    };
    // a pipe opened twice would leave the second open waiting for a writer: fail, not hang
    let (tx, rx) = std::sync::mpsc::channel();
    let path = fifo.display().to_string();
    std::thread::spawn(move || tx.send(report_json(&[&path])));
    let v = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the report on a named pipe did not end");
    assert_eq!(v["lines"]["total"], 500);
    assert_eq!(v["completions"]["count"], 500);
    // joined only once the pipe was read: a writer nobody reads from would wait forever
    writer.join().unwrap();
}

/// Regression: a file starting with a UTF-8 byte order mark (Windows tools, Python's
/// `utf-8-sig`) was sniffed as JSON but read as one broken document: every line malformed.
/// Every completion and benchmark fixture reads the same with one.
#[test]
fn a_byte_order_mark_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let folder = fixture("formats/completions");
    let mut names: Vec<_> = std::fs::read_dir(&folder)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.push("../../runs/completions/batch_000.jsonl".into());
    for name in names {
        let plain = Path::new(&folder).join(&name);
        let marked = dir.path().join("marked");
        let mut bytes = b"\xef\xbb\xbf".to_vec();
        bytes.extend(std::fs::read(&plain).unwrap());
        std::fs::write(&marked, bytes).unwrap();
        let mut a = report_json(&[&plain.display().to_string()]);
        let mut b = report_json(&[&marked.display().to_string()]);
        assert_eq!(b["lines"]["malformed"], a["lines"]["malformed"], "{name:?}");
        for v in [&mut a, &mut b] {
            v.as_object_mut().unwrap().remove("files");
        }
        assert_eq!(a, b, "{name:?}");
    }
}

/// A whole job saved as one pretty-printed JSON array (`json.dump(records, f, indent=2)`)
/// reads like the same records one per line: its records are read in groups on all cores
/// and put back in order (the drift figures would show an out-of-order merge).
#[test]
fn an_array_document_reads_like_jsonl() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = fixture("runs/completions/batch_000.jsonl");
    let records: Vec<Value> = std::fs::read_to_string(&jsonl)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let array = dir.path().join("all.json");
    std::fs::write(&array, serde_json::to_string_pretty(&records).unwrap()).unwrap();
    let a = report_json(&[&jsonl]);
    let b = report_json(&[&array.display().to_string()]);
    assert_eq!(a["completions"], b["completions"]);
    assert_eq!(b["completions"]["count"], 500);
    assert_eq!(b["lines"]["malformed"], 0);
}

/// Regression (issue 40, item 1): a first record longer than the 64 KiB detection reads made
/// the file one JSON document (`0 parsed · 2 malformed`, exit 1); a file cut at the front
/// (`tail -c`) was read as a log, or every line malformed.
#[test]
fn a_long_first_record_or_a_file_cut_at_the_front() {
    let record = |n: usize, text: &str| {
        serde_json::json!({"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": n}}).to_string()
    };
    let dir = tempfile::tempdir().unwrap();
    let long = dir.path().join("long.jsonl");
    std::fs::write(
        &long,
        format!("{}\n{}\n", record(1, &"x".repeat(70_000)), record(2, "ok")),
    )
    .unwrap();
    let v = report_json(&[long.to_str().unwrap()]);
    assert_eq!(v["lines"]["parsed"], 2);
    assert_eq!(v["lines"]["malformed"], 0);
    assert_eq!(v["completions"]["output_tokens"]["max"], 2.0);
    let whole: String = (1..=10).map(|n| record(n, "some text") + "\n").collect();
    for cut in [5, 60] {
        let f = dir.path().join(format!("cut{cut}.jsonl"));
        std::fs::write(&f, &whole[cut..]).unwrap();
        let v = report_json(&[f.to_str().unwrap()]);
        assert_eq!(v["files"][0]["kind"], "json", "cut {cut}");
        assert_eq!(v["lines"]["parsed"], 9, "cut {cut}");
        assert_eq!(v["lines"]["malformed"], 1, "cut {cut}");
        assert_eq!(
            v["files"][0]["malformed_samples"][0]["line"], 1,
            "cut {cut}"
        );
        assert_eq!(v["completions"]["count"], 9, "cut {cut}");
    }
}
