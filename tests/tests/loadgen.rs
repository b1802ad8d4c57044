//! Load generators' result files (issue 41): every figure each real file states is
//! reproduced exactly, counts of requests, errors and cancellations come from each tool's
//! own fields, and runs of different tools compare. The files and where they came from:
//! `fixtures/formats/loadgen/README.md`.

use serde_json::Value;
use tokstat_tests::{fixture, tokstat};

fn report(paths: &[&str]) -> Value {
    let mut args = vec!["report", "--format", "json"];
    args.extend_from_slice(paths);
    let (code, out, err) = tokstat(&args);
    assert_eq!(code, 0, "{paths:?}: {err}");
    exact(&out)
}

/// JSON text as a tree with every number read exactly (serde_json's default reader may be
/// one unit in the last place off).
fn exact(text: &str) -> Value {
    tokstat_parsers::json::value::parse(text.as_bytes()).unwrap()
}

/// A file as JSON (YAML files aside), decompressed when it ends in `.zst`.
fn original(path: &str) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let bytes = if path.ends_with(".zst") {
        zstd::decode_all(&bytes[..]).unwrap()
    } else {
        bytes
    };
    tokstat_parsers::json::value::parse(&bytes).unwrap()
}

/// The value at a dotted key of the tool's (`percentiles.p90`, `time_to_first_token.p50`,
/// or a flat LLMPerf key as a whole).
fn at<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    if let Some(x) = v.get(key) {
        return Some(x);
    }
    key.split('.').try_fold(v, |v, k| v.get(k))
}

fn num(v: &Value) -> f64 {
    match v {
        Value::String(s) if s == "Infinity" => f64::INFINITY,
        _ => v.as_f64().unwrap(),
    }
}

/// Every figure a run states under a key of the file is the file's value at that key, to
/// the last digit; returns how many were checked.
fn stated_as_written(run: &Value, doc: &Value) -> usize {
    let mut checked = 0;
    for s in run["stated"].as_array().unwrap() {
        let key = s["key"].as_str().unwrap();
        // figures tokstat derives from two of the file's (`a ÷ b`) or reads from settings
        if key.contains('÷')
            || key.contains(" = ")
            || key.contains(" + ")
            || key.starts_with("input_config.")
        {
            continue;
        }
        let key = key
            .strip_prefix("strategy.")
            .map_or(key.to_string(), |k| format!("config.strategy.{k}"));
        let want = at(doc, &key)
            .or_else(|| at(doc, &key.replace("config.strategy", "args.strategy")))
            .or_else(|| at(doc, &format!("metrics.{key}")))
            .unwrap_or_else(|| panic!("{key} not in the file"));
        assert_eq!(num(&s["value"]), num(want), "{key}");
        checked += 1;
    }
    checked
}

#[test]
fn aiperf_summaries_of_both_layouts_state_the_files_figures() {
    for (dir, version, requests, failed, model, conc) in [
        (
            "0.13.0-c4-cancel",
            Some("0.13.0"),
            40.0,
            13.0,
            "mock-model",
            4.0,
        ),
        ("0.8.0-c4", Some("0.8.0"), 40.0, 4.0, "mock-model", 4.0),
        ("0.2.0-c4", None, 40.0, 4.0, "mock-model", 4.0),
    ] {
        let path = fixture(&format!(
            "formats/loadgen/aiperf/{dir}/profile_export_aiperf.json"
        ));
        let r = report(&[&path]);
        let run = &r["bench_runs"][0];
        assert_eq!(run["tool"], "AIPerf");
        assert_eq!(run["tool_version"].as_str(), version);
        assert_eq!(run["model"], model);
        assert_eq!(run["streaming"], true);
        assert_eq!(run["max_concurrency"], conc);
        assert_eq!(run["num_prompts"], 40.0);
        // request_count is AIPerf's successful requests, error_request_count its failed
        let doc = original(&path);
        assert_eq!(run["completed"], doc["request_count"]["avg"]);
        assert_eq!(run["failed"], doc["error_request_count"]["avg"]);
        assert_eq!(run["failed"], failed);
        assert_eq!(
            run["completed"].as_f64().unwrap() + run["failed"].as_f64().unwrap(),
            requests
        );
        // a summary has no per-request rows: `requests` is absent, never 0
        assert_eq!(run["requests"], Value::Null);
        assert_eq!(run["duration_s"], doc["benchmark_duration"]["avg"]);
        assert_eq!(run["median_ttft_ms"], doc["time_to_first_token"]["p50"]);
        assert_eq!(run["p99_tpot_ms"], doc["inter_token_latency"]["p99"]);
        assert_eq!(run["median_e2e_ms"], doc["request_latency"]["p50"]);
        assert_eq!(
            run["output_throughput"],
            doc["output_token_throughput"]["avg"]
        );
        let n = stated_as_written(run, &doc);
        assert!(n > 100, "{dir}: {n} figures checked");
    }
}

/// AIPerf's per-request records: every request read, the failed from `error`, the
/// cancelled from `metadata.was_cancelled` (before: only the errored lines were read, as
/// completions, "Failures: 100%"). The rows' percentiles are the summary's beside them.
#[test]
fn aiperf_records_count_cancelled_and_failed_requests_from_their_fields() {
    let dir = fixture("formats/loadgen/aiperf/0.13.0-c4-cancel");
    let r = report(&[&format!("{dir}/profile_export.jsonl")]);
    let run = &r["bench_runs"][0];
    assert_eq!(
        (&run["requests"], &run["errors"], &run["cancelled"]),
        (&Value::from(40), &Value::from(13), &Value::from(9))
    );
    assert_eq!(r["lines"]["parsed"], 40);
    assert!(r["completions"].is_null(), "records are not completions");
    let doc = original(&format!("{dir}/profile_export_aiperf.json"));
    for (ours, theirs) in [
        ("ttft_ms", "time_to_first_token"),
        ("tpot_ms", "inter_token_latency"),
        ("e2e_ms", "request_latency"),
    ] {
        for (q, stat) in [("p50", "p50"), ("p90", "p90"), ("p99", "p99")] {
            let a = run[ours][q].as_f64().unwrap();
            let b = doc[theirs][stat].as_f64().unwrap();
            assert!((a - b).abs() <= 1e-9 * b.abs(), "{ours} {q}: {a} vs {b}");
        }
    }
    // the folder: the summary and the records are one run, named after the folder
    let r = report(&[&dir]);
    let runs = r["bench_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(runs[0]["name"], "0.13.0-c4-cancel");
    assert_eq!(
        (&runs[0]["requests"], &runs[0]["failed"], &runs[0]["model"]),
        (
            &Value::from(40),
            &Value::from(13.0),
            &Value::from("mock-model")
        )
    );
}

#[test]
fn guidellm_reports_of_both_layouts_are_one_run_per_benchmark() {
    for (dir, version, file) in [
        (
            "0.8.1-concurrent-1-2-4",
            Some("0.8.1"),
            "benchmarks.json.zst",
        ),
        ("0.4.0-concurrent-1-2-4", None, "benchmarks.json.zst"),
        ("0.3.1-concurrent-1-2-4", None, "benchmarks.json.zst"),
    ] {
        let path = fixture(&format!("formats/loadgen/guidellm/{dir}/{file}"));
        let r = report(&[&path]);
        let runs = r["bench_runs"].as_array().unwrap();
        let names: Vec<&str> = runs.iter().map(|x| x["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["concurrent@1", "concurrent@2", "concurrent@4"]);
        let doc = original(&path);
        for (k, run) in runs.iter().enumerate() {
            assert_eq!(run["tool"], "GuideLLM");
            assert_eq!(run["tool_version"].as_str(), version);
            assert_eq!(run["max_concurrency"], [1.0, 2.0, 4.0][k]);
            // the file's totals: successful, and errored with incomplete as failed
            let bench = &doc["benchmarks"][k];
            let totals = if bench["metrics"]["request_totals"].is_object() {
                &bench["metrics"]["request_totals"]
            } else {
                &bench["request_totals"]
            };
            let t = |key: &str| totals[key].as_f64().unwrap();
            assert_eq!(run["completed"], t("successful"));
            assert_eq!(run["failed"], t("errored") + t("incomplete"));
            assert_eq!(run["failed"], 2.0, "the server fails every 10th request");
            if run["requests_sampled"] == false {
                assert_eq!(run["requests"].as_f64().unwrap(), t("total"));
                assert_eq!(
                    run["errors"].as_f64().unwrap(),
                    t("errored") + t("incomplete")
                );
            }
            // (0.8.1 was run without --model: its backend names none)
            let model = (!dir.starts_with("0.8")).then_some("mock-model");
            assert_eq!(run["model"].as_str(), model, "{dir}");
            let n = stated_as_written(run, &doc["benchmarks"][k]);
            assert!(n >= 30, "{dir} #{k}: {n} figures checked");
            // tokstat's rate from the file's totals equals the one over its rows
            let rows = run["recomputed"]["request_throughput"].as_f64().unwrap();
            let file = run["request_throughput"].as_f64().unwrap();
            assert!((rows / file - 1.0).abs() < 0.01, "{rows} vs {file}");
        }
    }
}

#[test]
fn a_guidellm_yaml_report_reads_as_its_json_twin() {
    let dir = fixture("formats/loadgen/guidellm/0.8.1-concurrent-1-2-4");
    let json = report(&[&format!("{dir}/benchmarks.json.zst")]);
    let yaml = report(&[&format!("{dir}/benchmarks.yaml.zst")]);
    let strip = |v: &Value| {
        let mut v = v["bench_runs"].clone();
        for r in v.as_array_mut().unwrap() {
            r.as_object_mut().unwrap().remove("stated");
        }
        v
    };
    assert_eq!(strip(&json), strip(&yaml));
    assert_eq!(yaml["lines"]["malformed"], 0);
    // Regression (issue 56): the folder of both was six runs, each benchmark twice; the
    // twins are one report, read once
    let both = report(&[&dir]);
    assert_eq!(strip(&both), strip(&json));
}

#[test]
fn an_inference_perf_folder_is_a_sweep_of_its_stages() {
    let dir = fixture("formats/loadgen/inference-perf/kubecon-vllm-batch_size");
    let r = report(&[&dir]);
    let runs = r["bench_runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["stage_0", "stage_1", "stage_2", "stage_3", "stage_4", "stage_5", "stage_6", "summary"]
    );
    for run in runs {
        let name = run["name"].as_str().unwrap();
        let doc = original(&format!("{dir}/{name}_lifecycle_metrics.json"));
        let n = stated_as_written(run, &doc);
        assert!(n >= 20, "{name}: {n}");
        assert_eq!(
            run["completed"],
            doc["successes"]["count"].as_f64().unwrap()
        );
        // seconds in the file, milliseconds in the report
        let ttft = doc["successes"]["latency"]["time_to_first_token"]["median"]
            .as_f64()
            .unwrap();
        assert!((run["median_ttft_ms"].as_f64().unwrap() - ttft * 1000.0).abs() < 1e-9);
    }
    assert_eq!(runs[3]["request_rate"], 111.92);
    // the server-metrics summary beside them is stage 0's server side: the demo's server
    // finished 1140 requests over the stage, its client 60, so the two are said not to be
    // one run's and no client − server is given
    assert!(r["skipped"].as_array().unwrap().is_empty());
    let server = &runs[0]["server"];
    assert!(server["file"]
        .as_str()
        .unwrap()
        .ends_with("stage_0_prometheus_metrics.json"));
    let fig = |name: &str| {
        server["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["figure"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    assert_eq!(fig("completed")["server"], 1140.0);
    assert_eq!(fig("completed")["client"], 60.0);
    // seconds in the file, milliseconds in the report
    assert!((fig("median_ttft_ms")["server"].as_f64().unwrap() - 1.151869 * 1000.0).abs() < 1e-9);
    // this layout's time_per_output_token is vLLM's per-token histogram: ITL
    assert_eq!(fig("median_itl_ms")["server"], 10.0);
    // the demo's KV usage is 0.0 throughout: no result, not an idle cache
    assert!(fig("mean_kv_usage")["server"].is_null());
    assert!(server["disagreement"]
        .as_str()
        .unwrap()
        .contains("the server finished 1140 requests over its window, the client 60"));
    assert!(fig("median_ttft_ms")["client_path"].is_null());
    assert!(runs[1]["server"].is_null());
}

#[test]
fn a_genai_bench_run_states_its_figures() {
    let path = fixture("formats/loadgen/genai-bench/mock_run_data.json");
    let r = report(&[&path]);
    let run = &r["bench_runs"][0];
    assert_eq!(run["tool"], "genai-bench");
    assert_eq!(run["name"], "D(100,100) c1");
    let doc = original(&path);
    assert!(stated_as_written(run, &doc) >= 15);
    // requests per minute, converted
    let rpm = doc["aggregated_metrics"]["requests_per_minute"]
        .as_f64()
        .unwrap();
    assert_eq!(run["request_throughput"], rpm / 60.0);
    assert_eq!(run["requests"], 2);
}

/// The must-show: one server measured by AIPerf and by GuideLLM (100 requests at
/// concurrency 8 each), compared: the load generator is listed among what differs and the
/// verdict says a difference may be the tools'.
#[test]
fn two_load_generators_runs_of_one_server_compare() {
    let dir = fixture("formats/loadgen/cross-tool");
    let (code, out, err) = tokstat(&[
        "compare",
        "--format",
        "json",
        &format!("aiperf={dir}/aiperf-c8"),
        &format!("guidellm={dir}/guidellm-c8"),
    ]);
    assert_eq!(code, 0, "{err}");
    let c = exact(&out);
    let changed: Vec<&str> = c["provenance"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["key"].as_str().unwrap())
        .collect();
    assert!(changed.contains(&"load generator"), "{changed:?}");
    assert!(c["summary"][0]
        .as_str()
        .unwrap()
        .contains("different load generators"));
    let fig = |name: &str| {
        c["figures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
            .clone()
    };
    // 10 of 100 failed in each (the server fails every 10th request)
    assert_eq!(
        fig("request failure rate")["values"],
        serde_json::json!([0.1, 0.1])
    );
    assert!(fig("TTFT p50")["ci_low"].is_number());
}

/// `path#N` and `path#NAME` take one benchmark of a sweep; an unknown one lists them.
#[test]
fn compare_takes_one_benchmark_of_a_sweep() {
    let f = fixture("formats/loadgen/guidellm/0.8.1-concurrent-1-2-4/benchmarks.json.zst");
    let (code, out, err) = tokstat(&[
        "compare",
        "--format",
        "json",
        &format!("{f}#1"),
        &format!("{f}#concurrent@4"),
    ]);
    assert_eq!(code, 0, "{err}");
    let c = exact(&out);
    let labels: Vec<&str> = c["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["benchmarks.json.zst#1", "benchmarks.json.zst#concurrent@4"]
    );
    let conc = c["provenance"]["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "bench max_concurrency")
        .unwrap()
        .clone();
    assert_eq!(conc["values"], serde_json::json!([["1"], ["4"]]));
    let (code, _, err) = tokstat(&["compare", &format!("{f}#1"), &format!("{f}#9")]);
    assert_eq!(code, 1);
    assert!(
        err.contains("#9: no such benchmark; the inputs hold 3 (1 concurrent@1, 2 concurrent@2, 3 concurrent@4)"),
        "{err}"
    );
}

/// LLMPerf's summary and its individual responses (ray-project/llmperf f1d6bed, run against
/// the mock server): one run; the figures as written; the rows' TTFT and E2E quantiles are
/// the summary's (pandas' linear quantiles, as tokstat's).
#[test]
fn llmperf_summary_and_responses_are_one_run() {
    let dir = fixture("formats/loadgen/llmperf/f1d6bed-c4");
    let r = report(&[&dir]);
    let runs = r["bench_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run = &runs[0];
    assert_eq!(run["name"], "mock-model_100_32");
    assert_eq!(
        (&run["requests"], &run["errors"]),
        (&Value::from(28), &Value::from(0))
    );
    let doc = original(&format!("{dir}/mock-model_100_32_summary.json"));
    assert!(stated_as_written(run, &doc) >= 25);
    for (ours, theirs) in [("ttft_ms", "ttft_s"), ("e2e_ms", "end_to_end_latency_s")] {
        for q in ["p50", "p90", "p99"] {
            let a = run[ours][q].as_f64().unwrap();
            let b = doc[&format!("results_{theirs}_quantiles_{q}")]
                .as_f64()
                .unwrap()
                * 1000.0;
            assert!((a - b).abs() <= 1e-9 * b, "{ours} {q}: {a} vs {b}");
        }
    }
    // completed per minute, converted
    let per_min = doc["results_num_completed_requests_per_min"]
        .as_f64()
        .unwrap();
    assert!((run["request_throughput"].as_f64().unwrap() - per_min / 60.0).abs() < 1e-12);
}

/// GenAI-Perf's summary, as its own test suite writes one (perf_analyzer
/// `genai-perf/tests/test_process_export_files.py`, `mock_gap_profile_data`): its figures,
/// settings from `input_config`; perf_analyzer's raw export beside it is recognised.
#[test]
fn a_genai_perf_summary_states_its_figures() {
    let dir = fixture("formats/loadgen/genai-perf");
    let r = report(&[&dir]);
    let run = &r["bench_runs"][0];
    assert_eq!(run["tool"], "GenAI-Perf");
    assert_eq!(run["name"], "mock_gap_profile_data");
    assert_eq!(run["model"], "small_model");
    assert_eq!(run["max_concurrency"], 1.0);
    assert_eq!(
        (&run["request_throughput"], &run["output_throughput"]),
        (&Value::from(15.0), &Value::from(200.0))
    );
    let doc = original(&format!("{dir}/mock_gap_profile_data_genai_perf.json"));
    assert!(stated_as_written(run, &doc) >= 4);
    assert_eq!(run["requests"], Value::Null);
    let skipped = r["skipped"].as_array().unwrap();
    assert!(skipped[0]["reason"]
        .as_str()
        .unwrap()
        .contains("perf_analyzer's raw profile export"));
}

/// AIPerf's CSV summary alone gives the JSON's figures rounded as the CSV writes them (two
/// decimals); beside the JSON it is the same run and the JSON's figures stand. GuideLLM's
/// CSV is recognised and not read.
#[test]
fn csv_summaries_read_alone_and_yield_to_their_json_twin() {
    for dir in ["0.13.0-c4-cancel", "0.2.0-c4"] {
        let dir = fixture(&format!("formats/loadgen/aiperf/{dir}"));
        let csv = report(&[&format!("{dir}/profile_export_aiperf.csv")]);
        let json = report(&[&format!("{dir}/profile_export_aiperf.json")]);
        let (c, j) = (&csv["bench_runs"][0], &json["bench_runs"][0]);
        for k in [
            "median_ttft_ms",
            "p99_ttft_ms",
            "median_e2e_ms",
            "request_throughput",
            "completed",
            "failed",
            "duration_s",
        ] {
            let (a, b) = (c[k].as_f64().unwrap(), j[k].as_f64().unwrap());
            assert!((a - b).abs() <= 0.005 + 1e-9, "{dir} {k}: {a} vs {b}");
        }
        let both = report(&[&dir]);
        let runs = both["bench_runs"].as_array().unwrap();
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0]["median_ttft_ms"], j["median_ttft_ms"]);
        assert_eq!(both["lines"]["other"], 0);
    }
    // (GuideLLM 0.8's CSV is read now: `guidellm_csv_reads_as_its_json`)
    let f = fixture("formats/loadgen/guidellm/0.3.1-concurrent-1-2-4/benchmarks.csv");
    let (code, out, _) = tokstat(&["report", "--format", "json", &f]);
    assert_eq!(code, 1, "{out}");
}

/// inference-perf 0.7.0 (PyPI) run against the mock server with `per_request: true`: the
/// per-request file joins the summary; tokstat's own rates over the rows equal the
/// summary's (both successful requests over last end − first start); the failed requests
/// (HTTP 500) are read from `error`; its clock is monotonic, so no dates are exported.
#[test]
fn inference_perf_per_request_rows_join_the_summary_and_agree_with_it() {
    let dir = fixture("formats/loadgen/inference-perf/0.7.0-constant-4-8");
    let r = report(&[&dir]);
    let runs = r["bench_runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["stage_0", "stage_1", "summary"]);
    let s = &runs[2];
    assert_eq!(
        (&s["requests"], &s["errors"]),
        (&Value::from(72), &Value::from(7))
    );
    assert_eq!(
        (&s["completed"], &s["failed"]),
        (&Value::from(65.0), &Value::from(7.0))
    );
    let mine = &s["recomputed"];
    for (a, b) in [
        (&mine["request_throughput"], &s["request_throughput"]),
        (&mine["output_throughput"], &s["output_throughput"]),
    ] {
        let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
        assert!((a - b).abs() <= 1e-9 * b, "{a} vs {b}");
    }
    for name in ["stage_0", "stage_1", "summary"] {
        let run = runs.iter().find(|x| x["name"] == name).unwrap();
        let doc = original(&format!("{dir}/{name}_lifecycle_metrics.json"));
        assert!(stated_as_written(run, &doc) >= 20, "{name}");
    }
    assert_eq!(
        r["skipped"].as_array().unwrap().len(),
        1,
        "validation.json recognised"
    );
}

/// Regression (issue 56): AIPerf 0.1.1's summary keeps its metrics under `records` (TTFT
/// tagged `ttft`, no version stamp, no duration): it was "248 malformed lines … without any
/// metric", the run read from the rounded CSV beside it alone, its settings lost. Checked
/// against the file's own figures (AIPerf 0.1.1 from PyPI against the mock server: 100
/// requests at concurrency 4, every 10th failed).
#[test]
fn aiperf_0_1_summary_under_records() {
    let path = fixture("formats/loadgen/aiperf/0.1.1-c4/profile_export_aiperf.json");
    let r = report(&[&path]);
    let run = &r["bench_runs"][0];
    let doc = original(&path);
    let rec = &doc["records"];
    assert_eq!(run["tool"], "AIPerf");
    assert_eq!(run["tool_version"], Value::Null);
    assert_eq!(run["model"], "mock-model");
    assert_eq!(run["max_concurrency"], 4.0);
    assert_eq!(run["num_prompts"], 100.0);
    assert_eq!(run["completed"], 90.0);
    assert_eq!(run["failed"], 10.0);
    assert_eq!(run["completed"], rec["request_count"]["avg"]);
    assert_eq!(run["median_ttft_ms"], rec["ttft"]["p50"]);
    assert_eq!(run["p99_ttft_ms"], rec["ttft"]["p99"]);
    assert_eq!(run["p99_tpot_ms"], rec["inter_token_latency"]["p99"]);
    assert_eq!(run["median_e2e_ms"], rec["request_latency"]["p50"]);
    assert_eq!(
        run["output_throughput"],
        rec["output_token_throughput"]["avg"]
    );
    assert_eq!(r["lines"]["malformed"], 0);
    // beside its CSV twin: one run, the JSON's figures
    let both = report(&[&fixture("formats/loadgen/aiperf/0.1.1-c4")]);
    let runs = both["bench_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["median_ttft_ms"], rec["ttft"]["p50"]);
}

/// Regression (issue 56): AIPerf's sweep aggregate (`aggregation_type: "sweep"`,
/// `per_combination_metrics`) was one "vllm bench serve" run of dashes. It is the sweep:
/// one run per combination, figures as its trials' own files give them, AIPerf's confidence
/// intervals kept; beside those files, the runs are read once (from them). The aggregate of
/// one variation's trials is recognised and refused with what to read. (AIPerf 0.13.0 from
/// PyPI, `--concurrency 2,4 --request-count 20` against the mock server.)
#[test]
fn aiperf_sweep_aggregate_is_a_run_per_combination() {
    let root = fixture("formats/loadgen/aiperf/0.13.0-sweep-c2-c4");
    let sweep = report(&[&format!(
        "{root}/sweep_aggregate/profile_export_aiperf_sweep.json"
    )]);
    let runs = sweep["bench_runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (run, c) in runs.iter().zip([2, 4]) {
        assert_eq!(run["name"], format!("concurrency={c}"));
        assert_eq!(run["max_concurrency"], f64::from(c));
        let own = report(&[&format!(
            "{root}/concurrency_{c}/profile_export_aiperf.json"
        )]);
        let own = &own["bench_runs"][0];
        for k in [
            "request_throughput",
            "output_throughput",
            "median_ttft_ms",
            "p99_e2e_ms",
        ] {
            let (a, b) = (run[k].as_f64().unwrap(), own[k].as_f64().unwrap());
            assert!((a - b).abs() <= 1e-9 * b.abs(), "c{c} {k}: {a} vs {b}");
        }
        assert_eq!(run["completed"], 18.0);
        assert_eq!(run["failed"], 2.0);
        let stated = run["stated"].as_array().unwrap();
        assert!(stated
            .iter()
            .any(|s| s["key"] == "request_throughput.ci_low" && s["unit"] == "requests/sec"));
    }
    let all = report(&[&root]);
    let names: Vec<&str> = all["bench_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["concurrency_2", "concurrency_4"]);
    let agg = format!("{root}/aggregate/concurrency_2/profile_export_aiperf_aggregate.json");
    let (code, out, err) = tokstat(&["report", "-q", agg.as_str()]);
    let text = out + &err;
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("AIPerf's aggregate of one variation's trials"),
        "{text}"
    );
    // the rule behind it: a file taken for a tool's layout of which no figure is read is
    // refused, never a run of dashes (the sweep file as a later AIPerf might rename it)
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("sweep.json");
    let doc = std::fs::read_to_string(format!(
        "{root}/sweep_aggregate/profile_export_aiperf_sweep.json"
    ))
    .unwrap()
    .replace("per_combination_metrics", "per_combo")
    .replace("aggregation_type", "agg_type");
    std::fs::write(&renamed, doc).unwrap();
    let (code, out, err) = tokstat(&["report", "-q", renamed.to_str().unwrap()]);
    let text = out + &err;
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("holds none of the figures tokstat reads"),
        "{text}"
    );
}

/// GuideLLM 0.8's CSV read (issue 56; it was recognised only): every figure it holds is the
/// JSON twin's, to the last digit (its rows put back into the JSON's tree); the token
/// totals it lacks leave the output rate out rather than make one up. Beside the JSON it
/// yields to it. 0.3's one-row CSV is still recognised, not read.
#[test]
fn guidellm_csv_reads_as_its_json() {
    let dir = fixture("formats/loadgen/guidellm/0.8.1-concurrent-1-2-4");
    let csv = report(&[&format!("{dir}/benchmarks.csv")]);
    let json = report(&[&format!("{dir}/benchmarks.json.zst")]);
    let (c, j) = (
        csv["bench_runs"].as_array().unwrap(),
        json["bench_runs"].as_array().unwrap(),
    );
    assert_eq!(c.len(), 3);
    let mut same = 0;
    for (a, b) in c.iter().zip(j) {
        assert_eq!(a["name"], b["name"]);
        for (k, v) in a.as_object().unwrap() {
            let per_request = [
                "stated",
                "requests",
                "errors",
                "cancelled",
                "definitions",
                "recomputed",
                "ttft_ms",
                "tpot_ms",
                "itl_ms",
                "e2e_ms",
                "model",
            ];
            if per_request.contains(&k.as_str()) || v.is_null() {
                continue;
            }
            assert_eq!(v, &b[k], "{} {k}", a["name"]);
            same += 1;
        }
        assert_eq!(a["output_throughput"], Value::Null);
        assert_eq!(a["model"], "mock-model");
    }
    assert!(same >= 3 * 18, "{same} figures compared");
    assert_eq!(csv["lines"]["malformed"], 0);
    let old = fixture("formats/loadgen/guidellm/0.3.1-concurrent-1-2-4/benchmarks.csv");
    let (_, out, err) = tokstat(&["report", "-q", old.as_str()]);
    let text = out + &err;
    assert!(text.contains("GuideLLM 0.3 – 0.4's CSV"), "{text}");
}

/// A figure of a run's server side, by tokstat's name.
fn server_figure(run: &Value, name: &str) -> Value {
    run["server"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["figure"] == name)
        .unwrap_or_else(|| panic!("{name}: {}", run["server"]))
        .clone()
}

/// Issue 53's last item: inference-perf 0.7.0 (PyPI) run against the mock server with
/// Debian's Prometheus 2.42 scraping its `/metrics` every second and `report.prometheus:
/// {summary, per_stage}` (fixtures/formats/loadgen/README.md). Each stage's and the
/// summary's Prometheus report is the server's side of the run of the same name, figure by
/// figure beside the client's: the mock's TTFT sum is 0.040 s per request by construction,
/// so the server's mean TTFT is 40 ms exactly and the client's path is what the client saw
/// beyond it; the mock serves no ITL, queue or token-length histogram, for which
/// inference-perf writes 0.0: not measured (or "0, or not measured" for a queue).
#[test]
fn inference_perf_prometheus_reports_are_the_server_side_of_their_stage() {
    let dir = fixture("formats/loadgen/inference-perf/0.7.0-prometheus-4-8");
    let r = report(&[&dir]);
    assert!(
        r["skipped"].as_array().unwrap().is_empty(),
        "{}",
        r["skipped"]
    );
    let runs = r["bench_runs"].as_array().unwrap();
    let names: Vec<&str> = runs.iter().map(|x| x["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["stage_0", "stage_1", "summary"]);
    for run in runs {
        let name = run["name"].as_str().unwrap();
        let doc = original(&format!("{dir}/{name}_prometheus_metrics.json"));
        let ok = &doc["successes"];
        let server = &run["server"];
        assert!(server["file"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{name}_prometheus_metrics.json")));
        assert!(server["disagreement"].is_null(), "{name}: {server}");
        let count = ok["count"].as_f64().unwrap();
        let rate = ok["rate"].as_f64().unwrap();
        assert_eq!(server_figure(run, "completed")["server"], count);
        assert_eq!(server_figure(run, "completed")["client"], run["completed"]);
        assert_eq!(server_figure(run, "request_throughput")["server"], rate);
        // inference-perf's increase and rate over one range: the range, its stage plus the
        // scrape interval and its 2 s buffer
        let window = server_figure(run, "window")["server"].as_f64().unwrap();
        assert!((window - count / rate).abs() < 1e-12);
        // the mock's TTFT: 40 ms each, exactly
        let ttft = server_figure(run, "mean_ttft_ms");
        assert!((ttft["server"].as_f64().unwrap() - 40.0).abs() < 1e-9);
        // the client's mean: of the per-request rows where joined (the summary), else the
        // stage file's own
        let client = ttft["client"].as_f64().unwrap();
        let own = run["ttft_ms"]["mean"].as_f64().unwrap_or_else(|| {
            let doc = original(&format!("{dir}/{name}_lifecycle_metrics.json"));
            doc["successes"]["latency"]["time_to_first_token"]["mean"]
                .as_f64()
                .unwrap()
                * 1000.0
        });
        assert!((client - own).abs() < 1e-9, "{name}: {client} {own}");
        let path = ttft["client_path"].as_f64().unwrap();
        assert!((path - (client - 40.0)).abs() < 1e-9);
        assert!(path > 0.0 && path < 10.0, "{name}: {path} ms on loopback");
        let e2e = server_figure(run, "mean_e2el_ms");
        let server_e2e = ok["request_latency"]["mean"].as_f64().unwrap() * 1000.0;
        assert!((e2e["server"].as_f64().unwrap() - server_e2e).abs() < 1e-9);
        let e2e_path = e2e["client_path"].as_f64().unwrap();
        assert!(e2e_path > 0.0 && e2e_path < 10.0, "{name}: {e2e_path}");
        // quantiles are the buckets' estimates, flagged, and no client − server
        let median = server_figure(run, "median_ttft_ms");
        assert_eq!(median["server_estimated"], true);
        assert!(median["client_path"].is_null());
        // written 0.0 where the mock serves no such histogram
        assert!(server_figure(run, "mean_itl_ms")["server"].is_null());
        assert!(server_figure(run, "mean_output_tokens")["server"].is_null());
        let queue = server_figure(run, "mean_queue_ms");
        assert_eq!(
            (
                queue["server"].as_f64(),
                queue["server_zero_unsure"].as_bool()
            ),
            (Some(0.0), Some(true))
        );
        // KV usage: the mock's running / 64, a fraction
        let kv = server_figure(run, "mean_kv_usage")["server"]
            .as_f64()
            .unwrap();
        assert_eq!(
            kv,
            ok["kv_cache_usage_percentage"]["mean"].as_f64().unwrap()
        );
    }
    let (code, table, err) = tokstat(&["report", &dir]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains("stage_0 · the server's side: inference-perf's PromQL"),
        "{table}"
    );
    assert!(table.contains("0, or not measured"), "{table}");
}

/// A server report in which every query found nothing (inference-perf writes 0.0 for each:
/// Prometheus was not scraping the server, or under other names) is refused, not shown as
/// a server that did nothing.
#[test]
fn an_inference_perf_prometheus_report_of_zeros_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("stage_0_prometheus_metrics.json");
    let src = original(&fixture(
        "formats/loadgen/inference-perf/0.7.0-prometheus-4-8/stage_0_prometheus_metrics.json",
    ));
    fn zero(v: &mut Value) {
        match v {
            Value::Number(_) => *v = serde_json::json!(0.0),
            Value::Object(m) => m.values_mut().for_each(zero),
            _ => {}
        }
    }
    let mut doc = src;
    zero(&mut doc);
    std::fs::write(&f, serde_json::to_string(&doc).unwrap()).unwrap();
    let (code, out, err) = tokstat(&["report", f.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        (out.clone() + &err).contains("every figure in it is 0 or NaN, which is what inference-perf writes where a query found no series"),
        "{out}{err}"
    );
}
