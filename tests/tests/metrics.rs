//! End-to-end: Prometheus scrapes — single scrapes of every engine version, successive
//! scrapes timed by `# scrape` lines, by file names or by `--interval`, counter resets,
//! ranks and `_created` samples — through `tokstat report`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tokstat_tests::{fixture, hint_ids, tokstat};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn report(args: &[&str]) -> Value {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = ["tokstat", "report", "--format", "json", "-q"]
        .into_iter()
        .chain(args.iter().copied());
    let code = tokstat::run(argv, &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out).unwrap()
}

#[test]
fn one_scrape_of_each_engine_version() {
    // SGLang 0.4.10: scheduler gauges with tp/pp rank labels; histogram quantiles from buckets
    let v = report(&[&fixture("formats/prometheus/sglang-metrics-v0.4.10.prom")]);
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 1);
    assert_eq!(m["engine"], "sglang");
    assert_eq!(m["running"]["max"], 32.0);
    assert_eq!(m["kv_usage"]["max"], 0.11);
    assert_eq!(m["generation_tokens"], 812_345.0);
    assert_eq!(m["span_s"], Value::Null);
    // 4 observations: ≤0.1, ≤0.2, ≤0.4, ≤2.0 → the median is the 2nd, at the 0.2 bound
    assert_eq!(m["latency"]["ttft_s"]["count"], 4.0);
    assert_eq!(m["latency"]["ttft_s"]["p50"], 0.2);
    assert!((m["latency"]["ttft_s"]["mean"].as_f64().unwrap() - 0.47).abs() < 1e-12);
    assert_eq!(v["lines"]["malformed"], 0);
    assert_eq!(v["lines"]["total"], 114);

    // vLLM V0 (gpu_cache_usage_perc) and V1 0.33 (kv_cache_usage_perc, `_created`)
    for (file, kv) in [
        ("vllm-metrics-v0-v0.6.3.prom", 0.637),
        ("vllm-metrics-v1-v0.33.0.prom", 0.337),
        ("vllm-metrics-v1-v0.8.5.prom", 0.337),
    ] {
        let v = report(&[&fixture(&format!("formats/prometheus/{file}"))]);
        let m = &v["metrics"];
        assert_eq!(m["engine"], "vllm", "{file}");
        assert_eq!(m["kv_usage"]["max"], kv, "{file}");
        assert_eq!(m["finished"]["length"], 87.0, "{file}");
        assert_eq!(m["finished"]["stop"], 913.0, "{file}");
        assert_eq!(m["cap_hit_rate"], 0.087, "{file}");
        // `_created` is a timestamp, never a value
        assert_eq!(m["prompt_tokens"], 2_345_678.0, "{file}");
    }
}

#[test]
fn successive_scrapes_in_one_file_match_the_simulator() {
    // 15-second scrapes of the simulated vLLM server, with `# scrape <time>` lines
    let v = report(&["--year", "2026", &fixture("runs/vllm-c128")]);
    let m = &v["metrics"];
    let truth = std::fs::read_to_string(root().join("runs/vllm-c128.truth.txt")).unwrap();
    // counters are exact: the increase over the window is every token and request
    assert!(truth.contains("total tokens: 1502510"));
    assert!(truth.contains("finished: 2508 stop, 85 length"));
    assert_eq!(m["scrapes"], 109);
    assert_eq!(m["span_s"], 1620.0);
    assert!((m["gen_tps"].as_f64().unwrap() - 1_502_510.0 / 1620.0).abs() < 1e-6);
    assert_eq!(m["finished"]["stop"], 2508.0);
    assert_eq!(m["finished"]["length"], 85.0);
    assert!((m["cap_hit_rate"].as_f64().unwrap() - 85.0 / 2593.0).abs() < 1e-12);
    assert_eq!(m["running"]["max"], 128.0);
    // the log estimate and the counters agree
    let est = v["steady"]["gen_tokens"].as_f64().unwrap();
    assert!((est / 1_502_510.0 - 1.0).abs() < 0.01);
    // per-scrape rates
    let rows = m["timeline"].as_array().unwrap();
    assert_eq!(rows.len(), 109);
    assert_eq!(rows[0]["gen_tps"], Value::Null);
    let sum: f64 = rows[1..]
        .iter()
        .map(|r| r["gen_tps"].as_f64().unwrap() * 15.0)
        .sum();
    assert!((sum - 1_502_510.0).abs() < 1e-3, "{sum}");
}

#[test]
fn scrapes_timed_by_file_names() {
    let v = report(&["--year", "2026", &fixture("runs/vllm-c200")]);
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 29);
    assert_eq!(m["from"], "2026-05-10T00:00:00");
    assert_eq!(m["to"], "2026-05-10T00:28:00");
    assert!((m["gen_tps"].as_f64().unwrap() - 1_560_282.0 / 1680.0).abs() < 1e-6);
    assert_eq!(m["finished"]["length"], 87.0);
}

fn scrape(gen: &str, running: [f64; 2], reasons: (u64, u64)) -> String {
    format!(
        "# HELP vllm:generation_tokens_total Number of generation tokens processed.
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {gen}
vllm:generation_tokens_total{{engine=\"1\",model_name=\"m\"}} 100.0
# TYPE vllm:generation_tokens_created gauge
vllm:generation_tokens_created{{engine=\"0\",model_name=\"m\"}} 1.7960089026798053e+09
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} {}
vllm:num_requests_running{{engine=\"1\",model_name=\"m\"}} {}
# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.
# TYPE vllm:num_preemptions_total counter
# TYPE vllm:request_success_total counter
vllm:request_success_total{{engine=\"0\",finished_reason=\"length\",model_name=\"m\"}} {}
vllm:request_success_total{{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"}} {}
",
        running[0], running[1], reasons.0, reasons.1
    )
}

#[test]
fn interval_resets_and_engines() {
    let dir = tempfile::tempdir().unwrap();
    // three scrapes without times; engine 0 restarts between the second and third
    std::fs::write(
        dir.path().join("a.prom"),
        scrape("1.0e+06", [10.0, 6.0], (10, 90)),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("b.prom"),
        scrape("1.6e+06", [12.0, 6.0], (30, 170)),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("c.prom"),
        scrape("200000.0", [2.0, 6.0], (5, 15)),
    )
    .unwrap();
    let d = dir.path().display().to_string();
    // without --interval: no rates, but counters and gauges
    let v = report(&[&d]);
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 3);
    assert_eq!(m["gen_tps"], Value::Null);
    assert_eq!(m["running"]["max"], 18.0, "engines add up");
    // with it: 600k, then a reset to 200k: 800k tokens in 20 s
    let v = report(&["--interval", "10s", &d]);
    let m = &v["metrics"];
    assert_eq!(m["span_s"], 20.0);
    assert_eq!(m["gen_tps"], 40_000.0);
    assert_eq!(m["finished"]["length"], 20.0 + 5.0);
    assert_eq!(m["finished"]["stop"], 80.0 + 15.0);
    assert_eq!(m["preemptions"], Value::Null);
    assert_eq!(m["timeline"][2]["gen_tps"], 20_000.0);
    // 25 of 120 requests hit the cap: a hint, from the counters
    assert_eq!(v["hints"][0]["id"], "cap_hit_high");
}

#[test]
fn scrape_marks_and_malformed_lines() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("metrics.prom");
    let text = "# scrape 2026-05-10T00:00:00Z\nsglang:num_running_reqs{tp_rank=\"0\",dp_rank=\"0\"} 8\nsglang:num_running_reqs{tp_rank=\"1\",dp_rank=\"0\"} 8\nsglang:num_running_reqs{tp_rank=\"0\",dp_rank=\"1\"} 7\nsglang:generation_tokens_total 100\n# scrape 2026-05-10T00:01:00Z\nsglang:num_running_reqs{tp_rank=\"0\",dp_rank=\"0\"} 4\nsglang:generation_tokens_total 6100\nsglang:broken{a=\"1\" 3\n";
    std::fs::write(&p, text).unwrap();
    let v = report(&[p.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 2);
    assert_eq!(m["gen_tps"], 100.0);
    // tensor ranks of one DP rank count once; DP ranks add up
    assert_eq!(m["timeline"][0]["running"], 15.0);
    assert_eq!(v["lines"]["malformed"], 1);
    assert_eq!(v["files"][0]["malformed_samples"][0]["line"], 9);
}

#[test]
fn parse_writes_the_metrics_table() {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let f = fixture("formats/prometheus/vllm-metrics-v1-v0.33.0.prom");
    let code = tokstat::run(["tokstat", "parse", &f], &mut out, &mut err);
    assert_eq!(code, 0);
    let rows: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 103);
    let len = rows
        .iter()
        .find(|r| {
            r["name"] == "vllm:request_success_total"
                && r["labels"] == "engine=0,finished_reason=length,model_name=Qwen/Qwen3-8B"
        })
        .unwrap();
    assert_eq!(len["table"], "metrics");
    assert_eq!(len["value"], 87);
    assert_eq!(len["type"], "counter");
    let bucket = rows
        .iter()
        .find(|r| r["name"] == "vllm:e2e_request_latency_seconds_bucket")
        .unwrap();
    assert_eq!(bucket["type"], "histogram");
    assert!(String::from_utf8(err)
        .unwrap()
        .contains("157 lines: 103 parsed, 54 other, 0 malformed"));
}

/// A scrape pasted without its `# HELP` / `# TYPE` lines, in a file named like anything, is
/// read as Prometheus by its content, with the same figures as the whole scrape (it was read
/// as a log: every line `other`, no metrics).
#[test]
fn scrape_excerpts_without_comments_read_like_the_scrape() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "sglang-metrics-v0.4.10",
        "sglang-metrics-v0.5.23",
        "vllm-metrics-v0-v0.6.3",
        "vllm-metrics-v1-v0.8.5",
        "vllm-metrics-v1-v0.33.0",
    ] {
        let whole = fixture(&format!("formats/prometheus/{name}.prom"));
        let text = std::fs::read_to_string(&whole).unwrap();
        let excerpt: String = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .map(|l| format!("{l}\n"))
            .collect();
        let path = dir.path().join(format!("{name}-pasted.txt"));
        std::fs::write(&path, &excerpt).unwrap();
        let (a, b) = (report(&[&whole]), report(&[path.to_str().unwrap()]));
        assert_eq!(a["metrics"], b["metrics"], "{name}");
        assert_eq!(b["files"][0]["kind"], "prometheus", "{name}");
        let samples = excerpt.lines().filter(|l| !l.trim().is_empty()).count();
        assert_eq!(b["lines"]["parsed"], samples as u64, "{name}");
    }
}

/// Regression (issue 40, item 3): a scrape whose first line is a plain comment was read as
/// a log (0 parsed, exit 1), and a byte order mark before a scrape made line 1 malformed and
/// lost the first `# scrape` time.
#[test]
fn a_comment_or_a_byte_order_mark_before_a_scrape() {
    let dir = tempfile::tempdir().unwrap();
    let body = "# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{model_name=\"m\"} ";
    let commented = dir.path().join("commented.prom");
    std::fs::write(
        &commented,
        format!(
            "# A normal comment.\n# scrape 1778371200\n{body}100\n# scrape 1778371210\n{body}600\n"
        ),
    )
    .unwrap();
    let bom = dir.path().join("bom.prom");
    std::fs::write(
        &bom,
        format!("\u{feff}# scrape 1778371200\n{body}100\n# scrape 1778371210\n{body}600\n"),
    )
    .unwrap();
    for f in [&commented, &bom] {
        let v = report(&[f.to_str().unwrap()]);
        assert_eq!(v["files"][0]["kind"], "prometheus", "{}", f.display());
        assert_eq!(v["lines"]["malformed"], 0, "{}", f.display());
        let m = &v["metrics"];
        assert_eq!(m["scrapes"], 2, "{}", f.display());
        assert_eq!(m["from"], "2026-05-10T00:00:00", "{}", f.display());
        assert_eq!(m["gen_tps"], 50.0, "{}", f.display());
    }
}

/// Regression (issue 40, item 2): a finish reason met in several series (data-parallel
/// engines) was summed once per series: `stop 40 · cap-hit rate 11.1% of 45` where the
/// truth is stop 20, length 5, cap-hit 20%.
#[test]
fn data_parallel_series_count_once() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dp.prom");
    std::fs::write(
        &f,
        "# TYPE vllm:request_success_total counter\n\
         vllm:request_success_total{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"} 10\n\
         vllm:request_success_total{engine=\"1\",finished_reason=\"stop\",model_name=\"m\"} 10\n\
         vllm:request_success_total{engine=\"0\",finished_reason=\"length\",model_name=\"m\"} 5\n",
    )
    .unwrap();
    let v = report(&[f.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["finished"]["stop"], 20.0);
    assert_eq!(m["finished"]["length"], 5.0);
    assert_eq!(m["cap_hit_rate"], 0.2);
    let hints = hint_ids(&v);
    assert!(hints.contains(&"cap_hit_high"), "{hints:?}");
}

/// Issue 40, item 2: engines (vLLM `engine`) and data-parallel ranks (SGLang `dp_rank`)
/// side by side, each series once, tensor-parallel ranks of one engine once; a starved rank
/// raises `rank_imbalance`.
#[test]
fn engines_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("dp.prom");
    let at = |t: &str, e0: u64, e1: u64, s0: u64, s1: u64, l0: u64, r: [u64; 2]| {
        format!(
            "# scrape {t}\n\
             vllm:request_success_total{{engine=\"0\",finished_reason=\"stop\",model_name=\"m\"}} {s0}\n\
             vllm:request_success_total{{engine=\"1\",finished_reason=\"stop\",model_name=\"m\"}} {s1}\n\
             vllm:request_success_total{{engine=\"0\",finished_reason=\"length\",model_name=\"m\"}} {l0}\n\
             vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {e0}\n\
             vllm:generation_tokens_total{{engine=\"1\",model_name=\"m\"}} {e1}\n\
             vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} {}\n\
             vllm:num_requests_running{{engine=\"1\",model_name=\"m\"}} {}\n",
            r[0], r[1]
        )
    };
    let text = at("2026-01-01T00:00:00Z", 0, 0, 0, 0, 0, [30, 4])
        + &at("2026-01-01T00:01:40Z", 100_000, 20_000, 10, 10, 5, [32, 2]);
    std::fs::write(&f, text).unwrap();
    let v = report(&[f.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["gen_tps"], 1200.0);
    let ranks = m["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    let r0 = &ranks[0];
    assert_eq!(r0["rank"], "engine=\"0\"");
    assert_eq!(r0["gen_tps"], 1000.0);
    assert_eq!(r0["generation_tokens"], 100_000.0);
    assert_eq!(r0["finished"], 15.0);
    assert_eq!(r0["cap_hit_rate"], 5.0 / 15.0);
    assert_eq!(r0["running"], 31.0);
    let r1 = &ranks[1];
    assert_eq!(r1["rank"], "engine=\"1\"");
    assert_eq!(r1["gen_tps"], 200.0);
    assert_eq!(r1["share"], 20_000.0 / 120_000.0);
    assert_eq!(r1["vs_median"], 20_000.0 / 60_000.0 - 1.0);
    assert_eq!(r1["finished"], 10.0);
    assert_eq!(r1["cap_hit_rate"], 0.0);
    assert_eq!(r1["running"], 3.0);
    let hints = hint_ids(&v);
    assert!(hints.contains(&"rank_imbalance"), "{hints:?}");

    // SGLang: dp_rank names the engine; its tensor-parallel ranks report one scheduler
    let g = dir.path().join("sglang.prom");
    let mut text = String::new();
    for (t, tokens) in [
        ("2026-01-01T00:00:00Z", [0, 0]),
        ("2026-01-01T00:00:10Z", [5000, 5200]),
    ] {
        text += &format!("# scrape {t}\n");
        for (dp, tokens) in tokens.iter().enumerate() {
            text += &format!(
                "sglang:generation_tokens_total{{dp_rank=\"{dp}\",model_name=\"m\"}} {tokens}\n"
            );
            for tp in 0..2 {
                text += &format!(
                    "sglang:num_running_reqs{{dp_rank=\"{dp}\",model_name=\"m\",tp_rank=\"{tp}\"}} {}\n",
                    8 + dp
                );
            }
        }
    }
    std::fs::write(&g, text).unwrap();
    let v = report(&[g.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["running"]["mean"], 17.0);
    let ranks = m["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    assert_eq!(ranks[0]["rank"], "dp_rank=\"0\"");
    assert_eq!(ranks[0]["gen_tps"], 500.0);
    assert_eq!(ranks[0]["running"], 8.0);
    assert_eq!(ranks[1]["gen_tps"], 520.0);
    assert_eq!(ranks[1]["running"], 9.0);
    // 10,200 tokens is too little for a share to say anything
    assert!(!hint_ids(&v).contains(&"rank_imbalance"));
}

/// Issue 53: what Prometheus stored of two pods, each with its own `engine="0"`: two
/// engines side by side, each pod's own figures, never one engine of both.
#[test]
fn pods_of_one_prometheus_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("query.json");
    let series = |name: &str, pod: &str, extra: &str, v: [f64; 2]| {
        format!(
            r#"{{"metric":{{"__name__":"{name}","engine":"0","instance":"10.0.0.{}:8000","job":"vllm","namespace":"llm","pod":"{pod}"{extra}}},"values":[[1778371200,"{}"],[1778371260,"{}"]]}}"#,
            if pod.ends_with('0') { 1 } else { 2 },
            v[0],
            v[1]
        )
    };
    let result = [
        series(
            "vllm_generation_tokens_total",
            "vllm-0",
            "",
            [0.0, 60_000.0],
        ),
        series(
            "vllm_generation_tokens_total",
            "vllm-1",
            "",
            [0.0, 30_000.0],
        ),
        series(
            "vllm_request_success_total",
            "vllm-0",
            r#","finished_reason":"length""#,
            [0.0, 20.0],
        ),
        series(
            "vllm_request_success_total",
            "vllm-1",
            r#","finished_reason":"stop""#,
            [0.0, 40.0],
        ),
        series("vllm_num_requests_running", "vllm-0", "", [64.0, 64.0]),
        series("vllm_num_requests_running", "vllm-1", "", [16.0, 16.0]),
    ]
    .join(",");
    std::fs::write(
        &f,
        format!(r#"{{"status":"success","data":{{"resultType":"matrix","result":[{result}]}}}}"#),
    )
    .unwrap();
    let v = report(&[f.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["gen_tps"], 1500.0);
    let ranks = m["ranks"].as_array().unwrap();
    let named: Vec<&str> = ranks.iter().map(|r| r["rank"].as_str().unwrap()).collect();
    assert_eq!(
        named,
        ["pod=\"vllm-0\" engine=\"0\"", "pod=\"vllm-1\" engine=\"0\""]
    );
    assert_eq!(ranks[0]["gen_tps"], 1000.0);
    assert_eq!(ranks[0]["cap_hit_rate"], 1.0);
    assert_eq!(ranks[0]["running"], 64.0);
    assert_eq!(ranks[1]["gen_tps"], 500.0);
    assert_eq!(ranks[1]["cap_hit_rate"], 0.0);
    assert_eq!(ranks[1]["running"], 16.0);
}

/// Issue 53: llm-d-benchmark's `metrics/raw/<pod>_<epoch>_metrics.log`, one pod's scrape a
/// file under the header `collect_metrics.sh` writes (`# Timestamp:`, `# Pod:`, `# PodIP:`,
/// `# Source:`, commit 8bc9f1d). Regression: the pods' files were one stream of scrapes, each
/// pod's counter read as the other's reset (2939 tok/s for 1500) and gauges of one pod a
/// scrape (running 40 for 80). Each pod is now its own engine, the files rounds of the pods,
/// and a pod's failed scrape neither a reset nor a new series.
#[test]
fn llm_d_benchmark_raw_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("metrics/raw");
    std::fs::create_dir_all(&raw).unwrap();
    for k in 0..5u64 {
        let t = 1_778_371_200 + 10 * k;
        for (pod, rate, running) in [("vllm-decode-0", 1000, 64), ("vllm-decode-1", 500, 16)] {
            let stamp = format!("2026-05-10T00:00:{:02}+0000", 10 * k);
            let mut text = format!(
                "# Timestamp: {stamp}\n# Pod: {pod}\n# PodIP: 10.0.0.1\n# Source: prometheus_metrics\n\n"
            );
            if pod.ends_with('1') && k == 2 {
                text +=
                    &format!("# Warning: Failed to collect metrics from pod {pod} (10.0.0.1)\n\n");
            } else {
                text += &format!(
                    "# TYPE vllm:generation_tokens_total counter\n\
                     vllm:generation_tokens_total{{engine=\"0\",model_name=\"m\"}} {}\n\
                     vllm:num_requests_running{{engine=\"0\",model_name=\"m\"}} {running}\n\n",
                    rate * 10 * k
                );
            }
            std::fs::write(raw.join(format!("{pod}_{t}_metrics.log")), text).unwrap();
        }
    }
    let v = report(&[raw.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["gen_tps"], 1500.0);
    assert_eq!(m["span_s"], 40.0);
    let ranks = m["ranks"].as_array().unwrap();
    assert_eq!(ranks[0]["rank"], "pod=\"vllm-decode-0\" engine=\"0\"");
    assert_eq!(ranks[0]["gen_tps"], 1000.0);
    assert_eq!(ranks[1]["gen_tps"], 500.0);
    // the round without pod 1 holds pod 0's 64 alone
    assert_eq!(m["running"]["max"], 80.0);
    assert_eq!(m["running"]["mean"], (80.0 * 4.0 + 64.0) / 5.0);
    assert_eq!(v["lines"]["malformed"], 0);
    // a hint from the scrapes alone counts its evidence in scrapes (was "0 stats lines")
    let h = v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == "rank_imbalance")
        .expect("the pods' 1000 and 500 tok/s");
    let s = &h["evidence"]["strength"];
    assert_eq!(
        (&s["lines"], &s["of"]),
        (&m["scrapes"], &Value::from("scrapes"))
    );
}

/// Regression (issue 40, item 4): a histogram series with a bucket whose `le` is not a
/// number was silently dropped bucket by bucket (the others kept, the quantiles moved), and
/// negative bucket counts were summed. Such a series is malformed: named, and left out of
/// the quantiles and the mean whole.
#[test]
fn a_malformed_histogram_series_is_named_and_kept_out() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("h.prom");
    std::fs::write(
        &f,
        "# TYPE vllm:e2e_request_latency_seconds histogram\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"1.0\"} 2\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"2.0\"} 4\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"0\",le=\"+Inf\"} 4\n\
         vllm:e2e_request_latency_seconds_sum{engine=\"0\"} 5.0\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"1.0\"} 3\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"two\"} 3\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"1\",le=\"+Inf\"} 3\n\
         vllm:e2e_request_latency_seconds_sum{engine=\"1\"} 1.0\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"2\",le=\"1.0\"} -1\n\
         vllm:e2e_request_latency_seconds_bucket{engine=\"2\",le=\"+Inf\"} 5\n\
         vllm:e2e_request_latency_seconds_sum{engine=\"2\"} 9.0\n",
    )
    .unwrap();
    let v = report(&[f.to_str().unwrap()]);
    let m = &v["metrics"];
    let e2e = &m["latency"]["e2e_s"];
    assert_eq!(e2e["count"], 4.0);
    assert_eq!(e2e["p50"], 1.0);
    assert_eq!(e2e["mean"], 1.25);
    assert_eq!(
        m["malformed_series"],
        serde_json::json!([
            "vllm:e2e_request_latency_seconds_bucket{engine=1}: le=\"two\" is not a number",
            "vllm:e2e_request_latency_seconds_bucket{engine=2}: a bucket count of -1"
        ])
    );
}

/// Issue 40, item 4: the forms prometheus/common's text parser and OpenMetrics accept — a
/// blank before the brace, blanks around `=`, quoted UTF-8 names, `inf` / `nan` spellings,
/// float-second timestamps, exemplars, `# EOF` — are read, none of them malformed.
#[test]
fn the_reference_parsers_forms_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("om.prom");
    std::fs::write(
        &f,
        "# TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running {engine = \"0\", model_name=\"m\"} 7 1778371200.5\n\
         # TYPE vllm:generation_tokens counter\n\
         vllm:generation_tokens_total{engine=\"0\"} 1000 # {trace_id=\"KOO5S4vxi0o\"} 1.0 1778371200.1\n\
         # TYPE \"my.metric\" gauge\n\
         {\"my.metric\", \"gpu.id\"=\"0\"} +Infinity\n\
         vllm:gpu_cache_usage_perc{engine=\"0\"} nan\n\
         # EOF\n",
    )
    .unwrap();
    let v = report(&[f.to_str().unwrap()]);
    assert_eq!(v["lines"]["malformed"], 0);
    let m = &v["metrics"];
    assert_eq!(m["samples"], 4);
    assert_eq!(m["running"]["max"], 7.0);
    assert_eq!(m["generation_tokens"], 1000.0);
}

/// Issue 40, item 7: the engines' metrics renamed on the way — `:` rewritten to `_` by an
/// exporter (`sglang_num_running_reqs`), Ray's `ray_` in front (`ray_vllm:…`,
/// `ray_vllm_…`, `ray_serve_sglang_…`) — read as the engines wrote them: every figure of the
/// renamed scrape equals the original's.
#[test]
fn renamed_engine_metrics_read_as_the_engines_wrote_them() {
    let dir = tempfile::tempdir().unwrap();
    for (fixture_name, engine, prefixes) in [
        (
            "sglang-metrics-v0.5.23.prom",
            "sglang:",
            &["sglang_", "ray_serve_sglang_", "ray_sglang:"][..],
        ),
        (
            "vllm-metrics-v1-v0.33.0.prom",
            "vllm:",
            &["vllm_", "ray_vllm:", "ray_vllm_"][..],
        ),
    ] {
        let original = fixture(&format!("formats/prometheus/{fixture_name}"));
        let mut want = report(&[&original]);
        let text = std::fs::read_to_string(&original).unwrap();
        for prefix in prefixes {
            let f = dir
                .path()
                .join(format!("{}-{fixture_name}", prefix.replace(':', "")));
            std::fs::write(&f, text.replace(engine, prefix)).unwrap();
            let mut got = report(&[f.to_str().unwrap()]);
            for v in [&mut got, &mut want] {
                v["files"] = Value::Null;
                v["inputs"] = Value::Null;
            }
            assert_eq!(got["metrics"], want["metrics"], "{prefix}");
            assert_eq!(got["lines"], want["lines"], "{prefix}");
            assert!(
                want["metrics"]["running"]["max"].is_number(),
                "{fixture_name}"
            );
        }
    }
}

/// The scrapes AIPerf 0.13.0 took of `tests/loadgen/mock_server.py`'s `/metrics` during a
/// run (`fixtures/formats/loadgen/README.md`): the server generated 32 tokens for each of
/// the 36 requests that succeeded, 1152 in all, every one finished by `length`.
fn aiperf_server() -> PathBuf {
    root().join("formats/loadgen/aiperf/0.13.0-c4-server-metrics")
}

/// AIPerf's raw scrapes (`server_metrics_export.jsonl`): the families without `_total`
/// read as the engine's counters, each record a scrape at its `timestamp_ns`, the baseline
/// scrape before the run read and said so.
#[test]
fn aiperf_server_metrics_jsonl() {
    let f = aiperf_server().join("server_metrics_export.jsonl");
    let v = report(&[f.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 10);
    let span = m["span_s"].as_f64().unwrap();
    assert_eq!(span, 7.314);
    let generated = m["gen_tps"].as_f64().unwrap() * span;
    assert!((generated - 1152.0).abs() < 1e-6, "{generated}");
    assert_eq!(m["generation_tokens"], 1152.0);
    assert_eq!(m["prompt_tokens"], 4812.0);
    assert_eq!(m["finished"]["length"], 36.0);
    assert_eq!(m["cap_hit_rate"], 1.0);
    assert_eq!(m["running"]["max"], 4.0);
    assert_eq!(m["latency"]["ttft_s"]["count"], 36.0);
    assert_eq!(m["latency"]["ttft_s"]["mean"], 0.04);
    assert_eq!(v["lines"]["parsed"], 10);
    let w = v["warnings"].to_string();
    assert!(
        w.contains("1 of AIPerf's scrapes were taken outside its phases"),
        "{w}"
    );
}

/// AIPerf's Parquet (`server_metrics_export.parquet`): its profiling window, counters as
/// increases from the window's start, said so; beside the JSONL of the same run, read
/// once (never the one's absolute counters against the other's relative ones).
#[test]
fn aiperf_server_metrics_parquet() {
    let f = aiperf_server().join("server_metrics_export.parquet");
    let v = report(&[f.to_str().unwrap()]);
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 10);
    let span = m["span_s"].as_f64().unwrap();
    assert_eq!(span, 2.939);
    let generated = m["gen_tps"].as_f64().unwrap() * span;
    assert!((generated - 1152.0).abs() < 1e-6, "{generated}");
    assert_eq!(m["finished"]["length"], 36.0);
    assert_eq!(m["latency"]["ttft_s"]["count"], 36.0);
    assert_eq!(v["lines"]["parsed"], 100);
    assert!(v["warnings"]
        .to_string()
        .contains("as increases from the window's start"));

    let both = report(&[aiperf_server().to_str().unwrap()]);
    assert_eq!(both["metrics"]["scrapes"], 10);
    assert_eq!(both["metrics"]["span_s"], 7.314);
    assert_eq!(both["metrics"]["finished"]["length"], 36.0);
    assert!(both["warnings"]
        .to_string()
        .contains("read once, from the raw"));
    // the client's side of the same run beside it
    assert_eq!(both["bench_runs"].as_array().unwrap().len(), 1);
}

/// AIPerf's summary of the server's metrics holds no scrapes: its `.json` is read as the
/// server's side of the run (alone, no client run beside it), its `.csv` (the same figures,
/// rounded) refused with what to read instead; a Parquet file that is no whole file is
/// named as such.
#[test]
fn aiperf_server_metrics_summary_refused() {
    let f = aiperf_server().join("server_metrics_export.json");
    let (code, out, err) = tokstat(&["report", "-q", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("the server's side: AIPerf's summary of its scrapes"),
        "{out}"
    );
    assert!(out.contains("no client result read beside"), "{out}");
    assert!(!out.contains("Prometheus:"), "{out}");
    let f = aiperf_server().join("server_metrics_export.csv");
    let (code, out, err) = tokstat(&["report", "-q", f.to_str().unwrap()]);
    let all = out + &err;
    assert_eq!(code, 1, "{all}");
    assert!(
        all.contains("AIPerf's server-metrics summary as CSV"),
        "{all}"
    );
    assert!(
        all.contains("read server_metrics_export.json beside it"),
        "{all}"
    );
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("server_metrics_export.parquet");
    let whole = std::fs::read(aiperf_server().join("server_metrics_export.parquet")).unwrap();
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    let (code, out, err) = tokstat(&["report", "-q", cut.to_str().unwrap()]);
    let all = out + &err;
    assert_ne!(code, 0);
    assert!(all.contains("not a whole Parquet file"), "{all}");
}
