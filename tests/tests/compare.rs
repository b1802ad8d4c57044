//! `tokstat compare` on runs of known truth: the simulator's logs (`xtask::sim`) and
//! completions (`xtask::gen_completions`), and the scenario runs under `fixtures/runs/`.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tokstat_tests::{fixture, tokstat, tokstat_json};
use xtask::{gen_completions, sim};

fn compare(args: &[&str]) -> Value {
    let mut a = vec!["compare", "--format", "json"];
    a.extend_from_slice(args);
    tokstat_json(&a)
}

/// The row of a figure (of the first compared run).
fn figure<'a>(c: &'a Value, name: &str) -> &'a Value {
    c["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no figure {name}"))
}

/// The interval of a figure's ratio (compared over baseline).
fn ratio_interval(row: &Value) -> (f64, f64) {
    let a = row["values"][0].as_f64().unwrap();
    (
        1.0 + row["ci_low"].as_f64().unwrap() / a,
        1.0 + row["ci_high"].as_f64().unwrap() / a,
    )
}

/// A simulated SGLang server's log of about 300 KB (some 50 steady buckets of 10 s).
fn sim_log(dir: &Path, name: &str, seed: u64, slowdown: f64) -> PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let path = folder.join("gpu0.log");
    let cfg = sim::Config {
        seed,
        target_bytes: 300_000,
        slowdown,
        ..sim::Config::default()
    };
    sim::write_sglang_log(&cfg, &path).unwrap();
    folder
}

const THROUGHPUT: [&str; 3] = [
    "steady gen tok/s",
    "steady gen tok/s per instance",
    "tok/s per running request",
];

#[test]
fn two_seeds_of_one_configuration_read_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let a = sim_log(dir.path(), "a", 1, 1.0);
    let b = sim_log(dir.path(), "b", 2, 1.0);
    let c = compare(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    for name in THROUGHPUT {
        let row = figure(&c, name);
        assert_eq!(row["verdict"], "~", "{name}: {row}");
        let (lo, hi) = ratio_interval(row);
        assert!(lo < 1.0 && hi > 1.0, "{name}: [{lo}, {hi}]");
    }
    assert_eq!(c["provenance"]["changed"], serde_json::json!([]));
    assert!(c["summary"][0]
        .as_str()
        .unwrap()
        .contains("no significant change"));
}

#[test]
fn a_faster_server_is_better_with_the_true_ratio_inside() {
    let dir = tempfile::tempdir().unwrap();
    let a = sim_log(dir.path(), "base", 1, 1.0);
    // every step and prefill takes 0.8 of the time: 1.25 times the throughput
    let b = sim_log(dir.path(), "fast", 2, 0.8);
    let c = compare(&[a.to_str().unwrap(), b.to_str().unwrap()]);
    let row = figure(&c, "steady gen tok/s");
    assert_eq!(row["verdict"], "better", "{row}");
    let (lo, hi) = ratio_interval(row);
    assert!(lo < 1.25 && hi > 1.25, "[{lo}, {hi}]");
    assert_eq!(row["significant"], true);
}

/// Over many pairs of seeds, the 95% interval holds the true ratio (1.25) about 95 times in
/// 100.
#[test]
fn intervals_hold_the_truth_in_about_95_of_100_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let pairs = 100;
    let mut held = 0;
    for k in 0..pairs {
        let a = sim_log(dir.path(), &format!("a{k}"), 100 + k, 1.0);
        let b = sim_log(dir.path(), &format!("b{k}"), 500 + k, 0.8);
        let c = compare(&[a.to_str().unwrap(), b.to_str().unwrap()]);
        let (lo, hi) = ratio_interval(figure(&c, "steady gen tok/s"));
        held += usize::from(lo <= 1.25 && hi >= 1.25);
    }
    assert!(held * 100 >= pairs as usize * 88, "{held} of {pairs}");
}

#[test]
fn more_clients_on_a_saturated_server_name_the_saturation() {
    let c = compare(&[
        "--year",
        "2026",
        &format!("c128={}", fixture("runs/vllm-c128")),
        &format!("c200={}", fixture("runs/vllm-c200")),
    ]);
    assert_eq!(c["runs"][0]["label"], "c128");
    assert_eq!(c["runs"][1]["label"], "c200");
    let row = figure(&c, "steady gen tok/s");
    assert_eq!(row["verdict"], "~", "{row}");
    let s = c["summary"][0].as_str().unwrap();
    assert!(s.starts_with("c200 vs c128: steady tok/s +"), "{s}");
    assert!(s.contains("saturated"), "{s}");
    // every documented key of a figure row
    for key in [
        "name",
        "unit",
        "better_when",
        "base",
        "run",
        "values",
        "delta",
        "ratio",
        "ci_low",
        "ci_high",
        "p_value",
        "significant",
        "verdict",
        "method",
    ] {
        assert!(row.get(key).is_some(), "{key}");
    }
    assert_eq!(c["schema_version"], 1);
}

#[test]
fn a_higher_cap_moves_cap_hits_and_lengths_the_right_way() {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (name, cap, seed) in [("cap4k", 4096, 1), ("cap8k", 8192, 2)] {
        let p = dir.path().join(format!("{name}.jsonl"));
        let cfg = gen_completions::Config {
            seed,
            records: 4000,
            target_bytes: 0,
            cap,
            text_chars: 64,
            failure_rate: 0.005,
            drift: 1.0,
            pipeline_only: false,
            text: gen_completions::Text::Dense,
        };
        gen_completions::write(&cfg, &p).unwrap();
        paths.push(p.display().to_string());
    }
    let c = compare(&[&paths[0], &paths[1]]);
    let cap = figure(&c, "cap-hit rate");
    assert_eq!(cap["verdict"], "better", "{cap}");
    assert_eq!(cap["method"], "newcombe");
    assert!(cap["ci_high"].as_f64().unwrap() < 0.0);
    let p99 = figure(&c, "output tokens p99");
    assert_eq!(p99["verdict"], "higher", "{p99}");
    assert_eq!(p99["method"], "order_statistics");
    // a cap moves the tail, not the middle
    assert_eq!(figure(&c, "output tokens p50")["verdict"], "~");
}

#[test]
fn the_segments_of_one_run() {
    let c = compare(&["--segments", &fixture("runs/sglang-mrr")]);
    assert_eq!(
        c["provenance"]["single_change"],
        "max_running_requests 16 → 40"
    );
    let row = figure(&c, "steady gen tok/s");
    assert_eq!(row["verdict"], "better");
    // the simulator's first phase: 936.9 tok/s (fixtures/runs/sglang-mrr.truth.txt)
    let first = row["values"][0].as_f64().unwrap();
    assert!((first / 936.9 - 1.0).abs() < 0.01, "{first}");
    assert_eq!(figure(&c, "mean running")["verdict"], "higher");
    let (code, _, err) = tokstat(&["compare", "--segments", &fixture("runs/demo")]);
    assert_eq!(code, 1);
    assert!(err.contains("one segment only"), "{err}");
}

#[test]
fn runs_of_different_models_need_force() {
    let dir = tempfile::tempdir().unwrap();
    let a = sim_log(dir.path(), "qwen", 1, 1.0);
    let b = sim_log(dir.path(), "llama", 2, 1.0);
    let log = b.join("gpu0.log");
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::write(
        &log,
        text.replace("Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B"),
    )
    .unwrap();
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let (code, _, err) = tokstat(&["compare", a, b]);
    assert_eq!(code, 1);
    assert!(
        err.contains("differ in models") && err.contains("--force"),
        "{err}"
    );
    let c = compare(&["--force", a, b]);
    assert_eq!(c["provenance"]["forced"], true);
    let (code, table, _) = tokstat(&["compare", "--force", a, b]);
    assert_eq!(code, 0);
    assert!(table.contains("compared with --force"), "{table}");
}

#[test]
fn compare_needs_two_runs() {
    let (code, _, err) = tokstat(&["compare", &fixture("runs/demo")]);
    assert_eq!(code, 1);
    assert!(err.contains("two runs"), "{err}");
}

/// Two pasted console summaries of `vllm bench serve` compare directly: their figures as
/// points (no interval), the client's concurrency as the single change, each value exactly as
/// printed; an SGLang summary inside a larger log is read as a run too.
#[test]
fn console_summaries_compare_as_runs() {
    let a = fixture("formats/bench/vllm-bench-serve-console-c128-v0.10.1.txt");
    let b = fixture("formats/bench/vllm-bench-serve-console-c200-v0.10.1.txt");
    let c = compare(&[&format!("c128={a}"), &format!("c200={b}")]);
    assert_eq!(
        c["provenance"]["single_change"], "bench max_concurrency 128 → 200",
        "{}",
        c["provenance"]
    );
    for (name, want) in [
        ("TTFT p50", [301.12, 640.20]),
        ("TTFT p99", [1930.44, 3810.08]),
        ("TPOT p50", [58.90, 89.75]),
        ("TPOT p99", [121.07, 170.30]),
        ("ITL p99", [310.52, 402.77]),
        ("E2E p50", [10980.2, 16540.6]),
        ("E2E p99", [25010.9, 36211.4]),
        ("request throughput", [10.16, 10.74]),
        ("output token throughput", [1880.33, 1987.37]),
    ] {
        let row = figure(&c, name);
        let got: Vec<f64> = row["values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        assert_eq!(got, want, "{name}");
        assert!(row["ci_low"].is_null(), "{name}: a point figure");
        let better = name.contains("throughput");
        assert_eq!(
            row["verdict"],
            if better { "better" } else { "worse" },
            "{name}"
        );
    }

    // the summary inside a job's log: its own lines parsed, the log's others not
    let log = fixture("formats/bench/sglang-bench-serving-console-v0.5.9.log");
    let (code, out, err) = tokstat(&["report", "--format", "json", "-q", &log]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["lines"]["total"].as_u64(), v["lines"]["parsed"].as_u64()),
        (Some(44), Some(37)),
        "the block's 37 lines (7 to 43), header and rule included"
    );
    let run = &v["bench_runs"][0];
    assert_eq!(run["name"], "sglang");
    assert_eq!(run["completed"], 500.0);
    assert_eq!(run["duration_s"], 61.02);
    assert_eq!(run["max_concurrency"], 64.0);
    assert!(run["request_rate"].is_null(), "inf is no JSON number");
    assert_eq!(run["median_ttft_ms"], 188.2);
    assert_eq!(run["p99_e2e_ms"], 20031.5);
    assert_eq!(run["p99_itl_ms"], 140.66);
}

/// Compare's steady rates are the reports' own, to the last digit: each run's
/// `steady.gen_tps` (weighted by the time each bucket was served), and each segment's
/// `gen_tps` with `--segments` (the demo's and the fleet's partly covered buckets once made
/// the unweighted mean 0.015% off).
#[test]
fn steady_rates_are_the_reports_own() {
    let report = |run: &str| -> Value {
        let (code, out, err) = tokstat(&[
            "report",
            "--format",
            "json",
            "--year",
            "2026",
            &fixture(&format!("runs/{run}")),
        ]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let (demo, fleet) = (report("demo"), report("fleet"));
    let c = compare(&[
        "--force",
        "--year",
        "2026",
        &format!("demo={}", fixture("runs/demo")),
        &format!("fleet={}", fixture("runs/fleet")),
    ]);
    let row = figure(&c, "steady gen tok/s");
    assert_eq!(row["values"][0], demo["steady"]["gen_tps"]);
    assert_eq!(row["values"][1], fleet["steady"]["gen_tps"]);
    let per = figure(&c, "steady gen tok/s per instance");
    let n = fleet["instances"].as_array().unwrap().len() as f64;
    assert_eq!(
        per["values"][1].as_f64().unwrap(),
        fleet["steady"]["gen_tps"].as_f64().unwrap() / n
    );
    let mrr = report("sglang-mrr");
    let c = compare(&["--segments", "--year", "2026", &fixture("runs/sglang-mrr")]);
    let row = figure(&c, "steady gen tok/s");
    for k in 0..2 {
        assert_eq!(
            row["values"][k], mrr["segments"][k]["gen_tps"],
            "segment {k}"
        );
    }
}

/// Issue 41, item 5: a run none of whose figures can be read (a load generator's file
/// that holds no client results: inference-perf's `stage_0_prometheus_metrics.json` from
/// kubernetes-sigs/inference-perf `demos/kubecon-na-2025/vllm+batch_size/results`, commit
/// 7de5ef2, the server's view of the stage: read as the server's side of a run, which
/// `compare` does not compare) is refused with exit 1, naming the run and what its inputs
/// held — never "no figure changed" over an empty table. Either side.
#[test]
fn a_run_with_no_figure_is_refused_not_compared() {
    let other = fixture(
        "formats/loadgen/inference-perf/kubecon-vllm-batch_size/stage_0_prometheus_metrics.json",
    );
    let good = fixture("runs/vllm-c128");
    for args in [
        vec![
            "compare".to_string(),
            format!("a={good}"),
            format!("b={other}"),
        ],
        vec![
            "compare".to_string(),
            format!("b={other}"),
            format!("a={good}"),
        ],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = tokstat(&args);
        assert_eq!(code, 1, "{out}\n{err}");
        assert!(!out.contains("no figure changed"), "{out}");
        assert!(err.contains("b: none of the figures compared"), "{err}");
        assert!(err.contains("1 line(s): 1 parsed, 0 other"), "{err}");
    }
}

/// Regression (issue 56, item 5): the knee row said "no interval †" though each run's knee
/// has its bootstrap interval: the difference's interval is now drawn from both (each side's
/// distance to its bounds, added in quadrature, `statistics::difference_interval`).
#[test]
fn the_knee_is_compared_with_both_runs_intervals() {
    let runs = [fixture("runs/vllm-c128"), fixture("runs/vllm-c200")];
    let c = compare(&[
        "--year",
        "2026",
        &format!("c128={}", runs[0]),
        &format!("c200={}", runs[1]),
    ]);
    let row = figure(&c, "knee");
    assert_eq!(row["method"], "bootstrap", "{row}");
    let knee = |dir: &str| {
        let (code, out, err) =
            tokstat(&["report", "--format", "json", "-q", "--year", "2026", dir]);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        let k = &v["knee"];
        let f = |key: &str| k[key].as_f64().unwrap();
        (f("running"), f("running_low"), f("running_high"))
    };
    let ((qa, la, ha), (qb, lb, hb)) = (knee(&runs[0]), knee(&runs[1]));
    assert_eq!(row["values"][0].as_f64().unwrap(), qa);
    assert_eq!(row["values"][1].as_f64().unwrap(), qb);
    let low = (qb - qa) - ((qb - lb).powi(2) + (ha - qa).powi(2)).sqrt();
    let high = (qb - qa) + ((hb - qb).powi(2) + (qa - la).powi(2)).sqrt();
    assert!(
        (row["ci_low"].as_f64().unwrap() - low).abs() < 1e-9,
        "{row}"
    );
    assert!(
        (row["ci_high"].as_f64().unwrap() - high).abs() < 1e-9,
        "{row}"
    );
}
