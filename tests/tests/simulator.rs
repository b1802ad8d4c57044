//! The engine simulator (`tests/loadgen/engine_sim.py`, issue 55's test bed) against a real
//! load generator: AIPerf 0.13.0 (PyPI) at concurrency 16 and 4 on a server of 8 running
//! slots (`fixtures/formats/loadgen/README.md`). The simulator's truth file holds each
//! request's queue wait, prefill and decode in true Unix seconds; what tokstat reads of
//! the server's log, of the scrapes AIPerf took and of its summary is checked against it.

use serde_json::Value;
use tokstat_tests::{fixture, tokstat};

/// The truth file's requests.
fn truth(run: &str) -> Vec<Value> {
    let path = fixture(&format!("formats/loadgen/sim/{run}/truth.jsonl.zst"));
    let bytes = zstd::decode_all(&std::fs::read(path).unwrap()[..]).unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn mean(v: &[Value], f: impl Fn(&Value) -> f64) -> f64 {
    v.iter().map(f).sum::<f64>() / v.len() as f64
}

/// `report --format json` of the run's server log and AIPerf folder.
fn report(run: &str) -> Value {
    let dir = fixture(&format!("formats/loadgen/sim/{run}"));
    let (code, out, err) = tokstat(&[
        "report",
        "--format",
        "json",
        &format!("{dir}/server.log"),
        &format!("{dir}/aiperf"),
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn server_figure(r: &Value, name: &str) -> Value {
    r["bench_runs"][0]["server"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == name)
        .unwrap_or_else(|| panic!("{name}"))
        .clone()
}

/// Past the running cap (16 clients, 8 slots): the server's side gives the truth's mean
/// queue wait and TTFT (its histograms' sums over counts), so the queueing share of TTFT is
/// the truth's and the client's path is what AIPerf saw beyond the server's TTFT; the log's
/// tokens are the truth's within 0.1% and its running requests top out at the cap.
#[test]
fn past_the_cap_the_server_side_is_the_truth() {
    let t = truth("c16-cap8");
    assert_eq!(t.len(), 400);
    let queue = mean(&t, |x| x["queue_s"].as_f64().unwrap()) * 1000.0;
    let ttft = mean(&t, |x| {
        x["first_token"].as_f64().unwrap() - x["arrival"].as_f64().unwrap()
    }) * 1000.0;
    let r = report("c16-cap8");
    let server_queue = server_figure(&r, "mean_queue_ms")["server"]
        .as_f64()
        .unwrap();
    let server_ttft = server_figure(&r, "mean_ttft_ms");
    let s_ttft = server_ttft["server"].as_f64().unwrap();
    // the histogram's sum is written to the microsecond
    assert!(
        (server_queue - queue).abs() < 0.01,
        "{server_queue} {queue}"
    );
    assert!((s_ttft - ttft).abs() < 0.01, "{s_ttft} {ttft}");
    let share = server_queue / s_ttft;
    let true_share = queue / ttft;
    assert!(true_share > 0.9, "{true_share}");
    assert!((share - true_share).abs() / true_share < 0.05);
    // the client's path: AIPerf's mean TTFT beyond the server's
    let client = r["bench_runs"][0]["ttft_ms"]["mean"].as_f64().unwrap();
    let path = server_ttft["client_path"].as_f64().unwrap();
    assert!((path - (client - s_ttft)).abs() < 1e-9);
    assert!(path > 0.0, "{path}");
    // both sides count every request and token
    let tokens: f64 = t.iter().map(|x| x["output_tokens"].as_f64().unwrap()).sum();
    assert_eq!(server_figure(&r, "total_output_tokens")["server"], tokens);
    assert_eq!(server_figure(&r, "total_output_tokens")["client"], tokens);
    assert!(r["bench_runs"][0]["server"]["disagreement"].is_null());
    let i = &r["instances"][0];
    let logged = i["gen_tokens"].as_f64().unwrap();
    assert!(
        (logged - tokens).abs() / tokens < 0.001,
        "{logged} of {tokens}"
    );
    assert_eq!(i["running_max"], 8.0);
    assert_eq!(r["metrics"]["running"]["max"], 8.0);
}

/// Below the cap (4 clients, 8 slots): requests barely wait, on both the truth's and the
/// server side's account.
#[test]
fn below_the_cap_requests_barely_wait() {
    let t = truth("c4-cap8");
    let queue = mean(&t, |x| x["queue_s"].as_f64().unwrap()) * 1000.0;
    let r = report("c4-cap8");
    let server_queue = server_figure(&r, "mean_queue_ms")["server"]
        .as_f64()
        .unwrap();
    assert!(
        (server_queue - queue).abs() < 0.01,
        "{server_queue} {queue}"
    );
    let s_ttft = server_figure(&r, "mean_ttft_ms")["server"]
        .as_f64()
        .unwrap();
    assert!(server_queue / s_ttft < 0.25, "{server_queue} of {s_ttft}");
    assert!(r["instances"][0]["running_max"].as_f64().unwrap() <= 4.0);
}
