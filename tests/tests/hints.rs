//! End-to-end: each bottleneck hint from a small log written to show exactly that
//! bottleneck (and, beside it, that the hints it should not raise stay quiet).

use serde_json::Value;
use std::fmt::Write as _;

fn report(files: &[(&str, String)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let d = dir.path().display().to_string();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = [
        "tokstat", "report", "--format", "json", "-q", "--year", "2026", &d,
    ];
    let code = tokstat::run(argv, &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out).unwrap()
}

fn ids(v: &Value) -> Vec<String> {
    v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_string())
        .collect()
}

fn hint<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == id)
        .unwrap_or_else(|| panic!("no {id} in {:?}", ids(v)))
}

/// `HH:MM:SS` of second `i` of the run (which starts at 01:00:00).
fn hms(i: u32) -> String {
    let t = 3600 + i;
    format!("{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
}

/// An SGLang decode line at second `i`.
fn decode(i: u32, running: u32, usage: f64, gen: f64, queue: u32, extra: &str) -> String {
    format!(
        "[2026-05-10 {} TP0] Decode batch, #running-req: {running}, #token: 1000, token usage: {usage:.2}, {extra}cuda graph: True, gen throughput (token/s): {gen:.2}, #queue-req: {queue}\n",
        hms(i)
    )
}

fn start(max_running: u32) -> String {
    format!("[2026-05-10 01:00:00 TP0] max_total_num_tokens=100000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests={max_running}, context_len=32768, available_gpu_mem=8.90 GB\n")
}

#[test]
fn kv_bound_with_retractions() {
    let mut log = start(128);
    for i in 1..=600 {
        log.push_str(&decode(i, 90, 0.96, 2000.0, 40, ""));
        if i % 60 == 0 {
            writeln!(log, "[2026-05-10 {} TP0] KV cache pool is full. Retract requests. #retracted_reqs: 3, #new_token_ratio: 0.3312 -> 0.4718", hms(i)).unwrap();
        }
    }
    let v = report(&[("gpu0.log", log)]);
    let h = hint(&v, "kv_bound");
    assert_eq!(h["severity"], "critical");
    // retractions inside the steady window it reports (one a minute, at 01:01:00 … 01:10:00)
    let secs = |k: &str| {
        let t = h["evidence"][k].as_str().unwrap();
        let (m, s): (u32, u32) = (t[14..16].parse().unwrap(), t[17..19].parse().unwrap());
        m * 60 + s
    };
    let (from, to) = (secs("from"), secs("to"));
    let inside = (1..=10).filter(|k| k * 60 >= from && k * 60 < to).count();
    assert_eq!(h["evidence"]["retractions"], 3 * inside as u64);
    assert!(inside >= 9, "{from}..{to}");
    assert_eq!(h["evidence"]["kv_full_share"], 1.0);
    assert_eq!(
        hint(&v, "retractions")["evidence"]["retracted_requests"],
        30
    );
    // KV-bound, so not "raise max_running_requests"
    assert!(!ids(&v).contains(&"running_cap".to_string()));
}

#[test]
fn client_bound_when_the_server_has_room_and_no_queue() {
    let mut log = String::from("INFO 05-10 00:59:00 [cli_args.py:300] non-default args: {'model': 'Qwen/Qwen3-8B', 'max_num_seqs': 256}\n");
    for i in 1..=120 {
        writeln!(log, "INFO 05-10 {} [loggers.py:123] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 400.0 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 10.0%, Prefix cache hit rate: 0.0%", hms(i * 10)).unwrap();
    }
    let v = report(&[("vllm.log", log)]);
    let h = hint(&v, "client_bound");
    assert_eq!(h["evidence"]["running_mean"], 8.0);
    assert_eq!(h["evidence"]["cap"], 256.0);
    assert_eq!(ids(&v), vec!["client_bound"]);
}

#[test]
fn preemptions_from_v1_stats_lines() {
    let mut log = String::new();
    for i in 1..=60 {
        let pre = if i % 10 == 0 { "Preemptions: 4, " } else { "" };
        writeln!(log, "INFO 05-10 {} [loggers.py:123] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 900.0 tokens/s, Running: 64 reqs, Waiting: 0 reqs, {pre}GPU KV cache usage: 80.0%, Prefix cache hit rate: 0.0%", hms(i * 10)).unwrap();
    }
    let v = report(&[("vllm.log", log)]);
    assert_eq!(hint(&v, "preemptions")["evidence"]["preemptions"], 24);
}

#[test]
fn low_acceptance_of_speculative_decoding() {
    let mut log = start(64);
    for i in 1..=300 {
        log.push_str(&decode(i, 32, 0.3, 1500.0, 0, "accept len: 1.21, "));
    }
    let v = report(&[("gpu0.log", log)]);
    let h = hint(&v, "spec_low_accept");
    assert!((h["evidence"]["accept_len_mean"].as_f64().unwrap() - 1.21).abs() < 1e-6);
}

#[test]
fn throughput_decay_over_the_run() {
    let mut log = start(64);
    for i in 1..=1200 {
        // 2000 tok/s falling to 1400 at constant load
        let gen = 2000.0 - 600.0 * f64::from(i) / 1200.0;
        log.push_str(&decode(i, 64, 0.5, gen, 10, ""));
    }
    let v = report(&[("gpu0.log", log)]);
    let h = hint(&v, "throughput_decay");
    let (a, b) = (
        h["evidence"]["gen_tps_start"].as_f64().unwrap(),
        h["evidence"]["gen_tps_end"].as_f64().unwrap(),
    );
    assert!(a > 1900.0 && b < 1550.0, "{a} → {b}");
}

#[test]
fn prefill_batches_stall_decoding() {
    let mut log = start(64);
    for i in 1..=1200 {
        // every other minute carries heavy prefill, and decoding slows by a third then (a
        // line at second i reports the second before it)
        let heavy = ((i - 1) / 60) % 2 == 1;
        if heavy {
            writeln!(log, "[2026-05-10 {} TP0] Prefill batch, #new-seq: 4, #new-token: 8000, #cached-token: 0, token usage: 0.40, #running-req: 60, #queue-req: 10", hms(i)).unwrap();
        }
        log.push_str(&decode(
            i,
            64,
            0.4,
            if heavy { 1200.0 } else { 1800.0 },
            10,
            "",
        ));
    }
    let v = report(&[("gpu0.log", log)]);
    let h = hint(&v, "prefill_interference");
    assert_eq!(h["evidence"]["gen_tps_heavy_prefill"], 1200.0);
    assert_eq!(h["evidence"]["gen_tps_light_prefill"], 1800.0);
}

#[test]
fn client_receives_less_than_the_server_generates() {
    // the server generates 1000 tok/s for 20 minutes (logged in local time, two hours
    // ahead of UTC); the client's completions carry 400 tok/s of it
    let mut log = start(64);
    for i in 1..=1200 {
        log.push_str(&decode(i, 32, 0.3, 1000.0, 0, ""));
    }
    let utc0 = 1_778_371_200 + 3600 - 7200; // 01:00 local = 23:00 UTC the day before
    let mut jsonl = String::new();
    for k in 0..400 {
        let created = utc0 + 3 * k;
        writeln!(jsonl, r#"{{"id": "c{k}", "object": "chat.completion", "created": {created}, "model": "m", "choices": [{{"index": 0, "message": {{"role": "assistant", "content": "x"}}, "finish_reason": "stop"}}], "usage": {{"prompt_tokens": 10, "completion_tokens": 1200, "total_tokens": 1210}}}}"#).unwrap();
    }
    let v = report(&[("gpu0.log", log), ("out.jsonl", jsonl)]);
    let h = hint(&v, "client_overhead");
    assert_eq!(h["evidence"]["clock_shift_h"], 2.0);
    let (c, s) = (
        h["evidence"]["client_tps"].as_f64().unwrap(),
        h["evidence"]["server_tps"].as_f64().unwrap(),
    );
    assert!((s - 1000.0).abs() < 1.0, "{s}");
    assert!((c / 400.0 - 1.0).abs() < 0.02, "{c}");
}

#[test]
fn events_outside_the_stats_lines_are_kept_in_the_counts() {
    let mut log = String::from("[2026-05-10 00:59:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2, #new_token_ratio: 0.3312 -> 0.4718\n");
    for i in 1..=100 {
        log.push_str(&decode(i, 10, 0.3, 500.0, 0, ""));
    }
    writeln!(log, "[2026-05-10 02:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 5, #new_token_ratio: 0.3312 -> 0.4718").unwrap();
    let v = report(&[("gpu0.log", log)]);
    assert_eq!(hint(&v, "retractions")["evidence"]["retracted_requests"], 7);
    let in_timeline: f64 = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["events"].as_f64().unwrap())
        .sum();
    assert_eq!(in_timeline, 0.0);
}

/// Regression (issue 56, item 1): `running_cap` with no configured cap (no start-up line)
/// had `effect: null`: its effect is the running mean against the maximum observed, the cap
/// its rule held the batch at. Every fired hint has a number.
#[test]
fn running_cap_without_a_configured_cap_has_an_effect() {
    let mut log = String::new();
    for i in 1..=600 {
        log.push_str(&decode(i, 64, 0.40, 2000.0, 30, ""));
    }
    let v = report(&[("gpu0.log", log)]);
    let h = hint(&v, "running_cap");
    assert_eq!(h["evidence"]["cap"], Value::Null);
    assert_eq!(h["evidence"]["cap_observed"], 64.0);
    assert_eq!(h["evidence"]["strength"]["effect"], 1.0);
    for h in v["hints"].as_array().unwrap() {
        assert!(h["evidence"]["strength"]["effect"].is_number(), "{h}");
    }
}
