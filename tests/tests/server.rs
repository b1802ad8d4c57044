//! End-to-end: the server-side analysis (timeline, steady state, curve and knee, segments,
//! instances, hints) on the simulated runs under `fixtures/runs/`, asserted against the
//! simulator's truth files (`cargo run -p xtask -- runs` writes both).

use serde_json::Value;
use std::path::{Path, PathBuf};
use tokstat_tests::hint_ids;

fn runs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs")
}

fn report(run: &str) -> Value {
    let dir = runs().join(run).display().to_string();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = [
        "tokstat", "report", "--format", "json", "-q", "--year", "2026", &dir,
    ];
    let code = tokstat::run(argv, &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out).unwrap()
}

/// The truth file's numbers: `name: N tokens` per GPU, `total tokens: N`, and the
/// completions line.
struct Truth {
    gpus: Vec<(String, f64)>,
    total: f64,
    completions: Option<(u64, u64, u64)>,
}

fn truth(run: &str) -> Truth {
    let text = std::fs::read_to_string(runs().join(format!("{run}.truth.txt"))).unwrap();
    let mut t = Truth {
        gpus: Vec::new(),
        total: 0.0,
        completions: None,
    };
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, rest) = line.split_once(": ").unwrap();
        let first = |s: &str| s.split_whitespace().next().unwrap().parse::<f64>().unwrap();
        match name {
            "total tokens" => t.total = first(rest),
            "finished" => {}
            "completions" => {
                let n: Vec<u64> = rest
                    .split(|c: char| !c.is_ascii_digit())
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse().unwrap())
                    .collect();
                t.completions = Some((n[0], n[1], n[2]));
            }
            _ => t.gpus.push((name.to_string(), first(rest))),
        }
    }
    t
}

fn within(est: f64, truth: f64, tol: f64) -> bool {
    (est / truth - 1.0).abs() <= tol
}

fn hint<'a>(v: &'a Value, id: &str) -> Vec<&'a Value> {
    v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["id"] == id)
        .collect()
}

fn assert_tokens(v: &Value, t: &Truth) {
    let est = v["steady"]["gen_tokens"].as_f64().unwrap();
    assert!(within(est, t.total, 0.03), "{est} vs {}", t.total);
    for (name, tokens) in &t.gpus {
        let row = v["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["instance"] == name.as_str())
            .unwrap_or_else(|| panic!("no instance {name}"));
        let est = row["gen_tokens"].as_f64().unwrap();
        assert!(within(est, *tokens, 0.03), "{name}: {est} vs {tokens}");
    }
}

#[test]
fn fleet_of_seven_with_a_slow_gpu_a_restart_and_a_failure_spike() {
    let v = report("fleet");
    let t = truth("fleet");
    assert_eq!(t.gpus.len(), 7);
    assert_tokens(&v, &t);

    // gpu3 runs 25% slower than the others; nobody else is flagged
    for i in v["instances"].as_array().unwrap() {
        let off = i["vs_median"].as_f64().unwrap();
        if i["instance"] == "gpu3" {
            assert!((-0.28..=-0.22).contains(&off), "{off}");
            assert_eq!(i["imbalanced"], true);
        } else {
            assert!(off.abs() < 0.02, "{i}");
            assert_eq!(i["imbalanced"], false);
        }
    }
    let imb = hint(&v, "instance_imbalance");
    assert_eq!(imb.len(), 1);
    assert!(imb[0]["evidence"]["text"]
        .as_str()
        .unwrap()
        .contains("gpu3 -25%"));

    // the restart splits the run, with what changed
    let segs = v["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    assert_eq!(segs[0]["reason"], "begin");
    assert_eq!(segs[1]["reason"], "restart");
    assert_eq!(segs[1]["instances"], 7);
    let changes = segs[1]["changes"].as_array().unwrap();
    assert!(changes.contains(&serde_json::json!({"key": "context_len", "before": "8192", "after": "16384", "instances": 7})), "{changes:?}");
    // the same server settings, so about the same steady throughput
    assert!(segs[1]["vs_previous"].as_f64().unwrap().abs() < 0.03);
    // steady total ≈ 6 × 1780 + 1335 tok/s (simulator: 1779 per normal GPU, 1333 for gpu3)
    let steady = v["steady"]["gen_tps"].as_f64().unwrap();
    assert!(within(steady, 6.0 * 1779.0 + 1333.0, 0.02), "{steady}");

    // completions: the cap, its hit rate and the failures, exactly as written
    let (n, capped, failed) = t.completions.unwrap();
    let c = &v["completions"];
    assert_eq!(c["count"], n);
    assert_eq!(c["cap"]["value"], 4096);
    assert_eq!(c["finish_reasons"]["length"], capped);
    assert_eq!(c["finish_reasons"]["error"], failed);
    assert!((c["cap"]["hit_rate"].as_f64().unwrap() - capped as f64 / n as f64).abs() < 1e-12);

    let h = hint_ids(&v);
    for id in [
        "cap_hit_high",
        "failure_spike",
        "instance_imbalance",
        "running_cap",
    ] {
        assert!(h.contains(&id), "{id} missing from {h:?}");
    }
    for id in ["saturated", "kv_bound", "client_bound", "throughput_decay"] {
        assert!(!h.contains(&id), "{id} in {h:?}");
    }
    // the spike lies after the first segment's records (about 60% of the job)
    let spike = &hint(&v, "failure_spike")[0]["evidence"];
    assert!(spike["first_record"].as_u64().unwrap() > n / 2, "{spike}");
    // hints carry severity, evidence and an action
    for h in v["hints"].as_array().unwrap() {
        assert!(["info", "warning", "critical"].contains(&h["severity"].as_str().unwrap()));
        assert!(!h["evidence"]["text"].as_str().unwrap().is_empty());
        assert!(!h["action"].as_str().unwrap().is_empty());
    }
    // timeline rows: the total and each instance per bucket
    let rows = v["timeline"].as_array().unwrap();
    let per = rows.iter().filter(|r| r["instance"].is_null()).count();
    assert_eq!(rows.len(), per * 8);
    assert_eq!(v["timeline_bucket_s"], 10.0);
}

#[test]
fn vllm_at_128_and_200_clients_is_saturated_past_the_knee() {
    let a = report("vllm-c128");
    let b = report("vllm-c200");
    assert_tokens(&a, &truth("vllm-c128"));
    assert_tokens(&b, &truth("vllm-c200"));
    // the simulated server gains under 10% of a request's rate per request beyond
    // 9 × base / per_req = 80 running requests
    for v in [&a, &b] {
        let k = v["knee"]["running"].as_f64().unwrap();
        assert!((75.0..=110.0).contains(&k), "{k}");
        assert_eq!(hint_ids(v), vec!["saturated"]);
        let curve = v["curve"].as_array().unwrap();
        assert!(curve.len() >= 16);
        for row in curve {
            let (r, tps, per) = (
                row["running"].as_f64().unwrap(),
                row["tps_median"].as_f64().unwrap(),
                row["tps_per_req"].as_f64().unwrap(),
            );
            assert!(r >= 1.0 && tps > 0.0 && per > 0.0);
        }
        // time share adds up to the whole
        let share: f64 = curve
            .iter()
            .map(|r| r["time_share"].as_f64().unwrap())
            .sum();
        assert!((share - 1.0).abs() < 1e-9);
    }
    // clients join at 0.25/s: a long ramp-up, then a drain
    let seg = &a["segments"][0];
    assert!(seg["ramp_up_s"].as_f64().unwrap() > 100.0);
    assert!(seg["drain_s"].as_f64().unwrap() > 0.0);
    assert_eq!(a["steady"]["ramp_up_s"], seg["ramp_up_s"]);
    // 56% more concurrency buys only a few percent
    let gain =
        b["steady"]["gen_tps"].as_f64().unwrap() / a["steady"]["gen_tps"].as_f64().unwrap() - 1.0;
    assert!((0.005..=0.05).contains(&gain), "{gain}");
}

#[test]
fn raising_max_running_requests_from_16_to_40() {
    let v = report("sglang-mrr");
    assert_tokens(&v, &truth("sglang-mrr"));
    let segs = v["segments"].as_array().unwrap();
    assert_eq!(segs.len(), 2);
    assert_eq!(
        segs[1]["changes"],
        serde_json::json!([{"key": "max_running_requests", "before": "16", "after": "40", "instances": 1}])
    );
    // step time 0.012 + 0.0003 × running: 16 / 0.0168 s = 952 tok/s, 40 / 0.024 s = 1667 tok/s
    let gain = segs[1]["vs_previous"].as_f64().unwrap();
    assert!((0.65..=0.85).contains(&gain), "{gain}");
    assert!(within(segs[0]["gen_tps"].as_f64().unwrap(), 952.4, 0.03));
    assert!(within(segs[1]["gen_tps"].as_f64().unwrap(), 1666.7, 0.05));
    // before the change: pinned at the cap with a queue and free KV cache
    let cap = hint(&v, "running_cap");
    assert!(!cap.is_empty());
    assert_eq!(cap[0]["evidence"]["cap"], 16.0);
    assert!(cap[0]["evidence"]["text"]
        .as_str()
        .unwrap()
        .starts_with("segment 1:"));
}

#[test]
fn demo_tokens_match_the_simulator() {
    let v = report("demo");
    for (name, truth) in [("sglang_gpu0", 1_261_522.0), ("sglang_gpu1", 1_265_645.0)] {
        let row = v["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["instance"] == name)
            .unwrap();
        let est = row["gen_tokens"].as_f64().unwrap();
        assert!(within(est, truth, 0.01), "{name}: {est}");
    }
}

#[test]
fn rotated_parts_merge_and_folders_tell_instances_apart() {
    let whole = report("demo");
    let tokens = |v: &Value, name: &str| {
        v["instances"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["instance"] == name)
            .unwrap_or_else(|| panic!("no {name} in {}", v["instances"]))["gen_tokens"]
            .as_f64()
            .unwrap()
    };
    let text = std::fs::read_to_string(runs().join("demo/sglang_gpu0.log")).unwrap();
    let cut = text[..text.len() / 2].rfind('\n').unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    for node in ["node1", "node2"] {
        std::fs::create_dir(dir.path().join(node)).unwrap();
    }
    // node1: one log rotated into two parts; node2: another GPU with the same file name
    std::fs::write(dir.path().join("node1/sglang_gpu0.log.1"), &text[..cut]).unwrap();
    std::fs::write(dir.path().join("node1/sglang_gpu0.log"), &text[cut..]).unwrap();
    std::fs::copy(
        runs().join("demo/sglang_gpu1.log"),
        dir.path().join("node2/sglang_gpu0.log"),
    )
    .unwrap();
    let d = dir.path().display().to_string();
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = ["tokstat", "report", "--format", "json", "-q", &d];
    assert_eq!(tokstat::run(argv, &mut out, &mut err), 0);
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["instances"].as_array().unwrap().len(), 2);
    assert_eq!(
        tokens(&v, "node1/sglang_gpu0"),
        tokens(&whole, "sglang_gpu0")
    );
    assert_eq!(
        tokens(&v, "node2/sglang_gpu0"),
        tokens(&whole, "sglang_gpu1")
    );
    assert_eq!(v["segments"].as_array().unwrap().len(), 1);
}

/// The report does not depend on how many threads read it: a log of several chunks (the
/// demo GPU's log eight times over) read on 1, 2 and 3 threads gives the same JSON, byte for
/// byte — chunk boundaries, per-thread caches and the order results arrive in change, the
/// answer must not.
#[test]
fn report_is_the_same_on_any_number_of_threads() {
    let text = std::fs::read_to_string(runs().join("demo/sglang_gpu0.log"))
        .unwrap()
        .repeat(8);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu0.log");
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string();
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let argv = ["tokstat", "report", "--format", "json", "-q", path.as_str()];
            let code = tokstat::run(argv, &mut out, &mut err);
            assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
            String::from_utf8(out).unwrap()
        })
    };
    let one = on(1);
    assert!(one.contains("\"timeline\""));
    assert_eq!(one, on(2));
    assert_eq!(one, on(3));
}

/// The paste of the issue: 16 decode lines at 500-1,450 tok/s over 8 s, 21.5 minutes of
/// silence, 4 prefill lines. It reported "steady 337 tok/s · peak 140 tok/s · drain 21m 32s";
/// then, with the silence cut, "steady 530 · peak 530 · mean 795" (the 8 s spread over a 15 s
/// bucket). Now steady and peak are the decode lines' tokens over the time they cover, the
/// silence is no drain, and the mean over the whole span says how little the paste served.
#[test]
fn a_pasted_excerpt_reads_at_its_own_rate() {
    let dir = tempfile::tempdir().unwrap();
    let rates = [
        500, 1450, 900, 1200, 700, 1300, 800, 1100, 600, 1400, 1000, 1250, 750, 950, 1350, 650,
    ];
    let mut lines: Vec<String> = rates
        .iter()
        .enumerate()
        .map(|(i, r)| format!("[2026-05-10 00:00:{:02} TP0] Decode batch, #running-req: 40, #token: 51200, token usage: 0.12, cuda graph: True, gen throughput (token/s): {r}.00, #queue-req: 0", 3 + i / 2))
        .collect();
    for k in 0..4 {
        lines.push(format!("[2026-05-10 00:21:{:02} TP0] Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0, token usage: 0.12, #running-req: 40, #queue-req: 0", 41 + k));
    }
    let path = dir.path().join("excerpt.log");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let r = tokstat::report::build(&tokstat::report::Options {
        inputs: vec![path.display().to_string()],
        ..Default::default()
    })
    .unwrap();
    let s = &r.steady;
    let decode = &r.segments[0];
    let served = decode.gen_tps_mean.unwrap();
    // the tokens over the time the decode lines cover, within the rates they logged
    assert!((500.0..1450.0).contains(&served), "{served}");
    assert!((s.gen_tps.unwrap() / served - 1.0).abs() < 1e-9, "{s:?}");
    assert!(
        (s.peak_gen_tps.unwrap() / served - 1.0).abs() < 1e-9,
        "{s:?}"
    );
    assert_eq!(s.drain_s, None);
    assert_eq!(r.segments.len(), 2);
    assert_eq!(r.segments[1].reason, "gap");
    // 7,950 tokens over the 21 m 41 s from the first line to the last
    assert_eq!(s.gen_tokens, 7950.0);
    let span = s.span_gen_tps.unwrap();
    assert!((span - 7950.0 / 1301.0).abs() < 1e-9, "{span}");
}

/// Short and gappy excerpts (under 30 s of decode lines, then a silence of up to half an
/// hour, then prefill lines): the peak is never below the steady rate — a minute-long peak
/// window shrinks to a shorter steady window — and the silence is a gap between segments, not
/// drain (a paste of 8 s of lines reported "steady 476, peak 119 tok/s (best 1m) · drain
/// 21m 32s").
#[test]
fn short_excerpts_keep_peak_at_or_above_steady() {
    let dir = tempfile::tempdir().unwrap();
    let mut state: u64 = 7;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % n
    };
    let mut checked = 0;
    for case in 0..200 {
        let mut lines = Vec::new();
        let mut t_ms: u64 = 0;
        let decode = 3 + next(30);
        let step = 200 + next(800);
        for _ in 0..decode {
            if t_ms > 29_000 {
                break;
            }
            let s = t_ms / 1000;
            let rate = 500 + next(950);
            lines.push(format!("[2026-05-10 00:{:02}:{:02} TP0] Decode batch, #running-req: 40, #token: 51200, token usage: 0.12, cuda graph: True, gen throughput (token/s): {rate}.00, #queue-req: 0", s / 60, s % 60));
            t_ms += step;
        }
        let silence = next(1800);
        for k in 0..1 + next(6) {
            let s = t_ms / 1000 + silence + k;
            lines.push(format!("[2026-05-10 {:02}:{:02}:{:02} TP0] Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0, token usage: 0.12, #running-req: 40, #queue-req: 0", s / 3600, s / 60 % 60, s % 60));
        }
        let path = dir.path().join(format!("case{case}.log"));
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        let r = tokstat::report::build(&tokstat::report::Options {
            inputs: vec![path.display().to_string()],
            ..Default::default()
        })
        .unwrap();
        // a silence after the last decode line longer than a gap (5 min) is idle time, not
        // drain
        let drain = r.steady.drain_s.unwrap_or(0.0);
        if silence > 300 {
            assert!(
                drain < 60.0,
                "case {case}: drain {drain} s after {silence} s of silence"
            );
        }
        let (Some(steady), Some(peak)) = (r.steady.gen_tps, r.steady.peak_gen_tps) else {
            continue;
        };
        assert!(
            peak >= steady * (1.0 - 1e-12),
            "case {case}: peak {peak} below steady {steady}"
        );
        // rates are over the time served: a few seconds of lines inside a bucket are not
        // spread over all of it, so no rate falls below the mean while serving, and the
        // mean over the whole span (the silence included) is below both
        let mean = r.steady.mean_gen_tps.unwrap();
        let span = r.steady.span_gen_tps.unwrap();
        assert!(
            steady >= mean * (1.0 - 1e-12) && peak >= mean * (1.0 - 1e-12),
            "case {case}: steady {steady}, peak {peak}, mean while serving {mean}"
        );
        assert!(span <= mean * (1.0 + 1e-12), "case {case}: {span} > {mean}");
        // one instance: its steady rate is the run's, weighed alike
        let own = r.instances[0].gen_tps.unwrap();
        assert!(
            (own / steady - 1.0).abs() < 1e-9,
            "case {case}: {own} vs {steady}"
        );
        checked += 1;
    }
    assert!(checked >= 30, "{checked}");
}
