//! Snapshots of every rendering of the demo and of each simulated run in `fixtures/runs/`:
//! the terminal table, markdown and the JSON report. A change to any figure or to the layout
//! shows up as a reviewed snapshot diff (`cargo insta review`, or `INSTA_UPDATE=always`).
//!
//! Paths are written relative to the fixtures folder, so the snapshots do not depend on
//! where the sources are checked out.

use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// Runs tokstat with `args`; returns its exit code and stdout with the fixtures folder
/// written as `<fixtures>`.
fn tokstat(args: &[&str]) -> (i32, String) {
    let mut out = Vec::new();
    let mut err = Vec::new();
    let argv = std::iter::once("tokstat").chain(args.iter().copied());
    let code = tokstat::run(argv, &mut out, &mut err);
    (code, relative(&String::from_utf8(out).unwrap()))
}

/// `text` with every path that leads into a `fixtures` folder written as `<fixtures>/…`, and
/// into the folder `demo` unpacks its runs in as `<demo>/…`.
fn relative(text: &str) -> String {
    let text = shorten(text, "/fixtures/", |_| "/fixtures".len(), "<fixtures>");
    // `…/tokstat-demo-0123456789abcdef/`
    shorten(
        &text,
        "/tokstat-demo-",
        |_| "/tokstat-demo-".len() + 16,
        "<demo>",
    )
}

fn shorten(text: &str, marker: &str, len: impl Fn(&str) -> usize, with: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || matches!(c, '"' | '>' | '=' | '\'' | '('))
            .map_or(0, |k| k + 1);
        out.push_str(&rest[..start]);
        out.push_str(with);
        rest = &rest[(at + len(marker)).min(rest.len())..];
    }
    out.push_str(rest);
    out
}

/// The scenario runs, each read as `report` reads a folder (vLLM stamps dated 2026).
const RUNS: [&str; 6] = [
    "demo",
    "completions",
    "fleet",
    "sglang-mrr",
    "vllm-c128",
    "vllm-c200",
];

fn snapshot_run(run: &str, format: &str) {
    let dir = fixtures().join("runs").join(run).display().to_string();
    let (code, out) = tokstat(&["report", "--year", "2026", "--format", format, &dir]);
    assert_eq!(code, 0, "{run}: {out}");
    insta::assert_snapshot!(format!("{run}.{format}"), out);
}

#[test]
fn runs_as_tables() {
    for run in RUNS {
        snapshot_run(run, "table");
    }
}

#[test]
fn runs_as_json() {
    for run in RUNS {
        snapshot_run(run, "json");
    }
}

#[test]
fn runs_as_markdown() {
    for run in RUNS {
        snapshot_run(run, "markdown");
    }
}

#[test]
fn demo() {
    for format in ["table", "json", "markdown", "html"] {
        let (code, out) = tokstat(&["demo", "--format", format]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("demo-command.{format}"), out);
    }
    let (code, out) = tokstat(&["demo", "--compare"]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("demo-compare.table", out);
}

/// `compare` in every format: two runs (vLLM at 128 and 200 clients) and the segments of one
/// (SGLang's max_running_requests 16 → 40).
#[test]
fn comparisons() {
    let runs = fixtures().join("runs");
    let c128 = format!("c128={}", runs.join("vllm-c128").display());
    let c200 = format!("c200={}", runs.join("vllm-c200").display());
    let mrr = runs.join("sglang-mrr").display().to_string();
    for format in ["table", "json", "markdown"] {
        let (code, out) = tokstat(&[
            "compare", "--year", "2026", "--format", format, &c128, &c200,
        ]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("compare-c128-c200.{format}"), out);
        let (code, out) = tokstat(&["compare", "--segments", "--format", format, &mrr]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("compare-mrr-segments.{format}"), out);
    }
}

/// Load generators' runs in every format: a GuideLLM sweep and one AIPerf run beside it
/// (the runs table, provenance and definition notes), and their comparison across tools.
#[test]
fn load_generator_runs() {
    let lg = fixtures().join("formats/loadgen");
    let sweep = lg.join("guidellm/0.8.1-concurrent-1-2-4/benchmarks.json.zst");
    let aiperf = lg.join("aiperf/0.13.0-c4-cancel");
    let (a, b) = (
        format!("aiperf={}", lg.join("cross-tool/aiperf-c8").display()),
        format!("guidellm={}", lg.join("cross-tool/guidellm-c8").display()),
    );
    for format in ["table", "markdown"] {
        let (code, out) = tokstat(&[
            "report",
            "--format",
            format,
            &sweep.display().to_string(),
            &aiperf.display().to_string(),
        ]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("loadgen-runs.{format}"), out);
        let (code, out) = tokstat(&["compare", "--format", format, &a, &b]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("loadgen-compare.{format}"), out);
    }
}

/// A run's server side in every format: inference-perf 0.7.0's stage 0 beside its
/// Prometheus report (both windows, the client's path, estimates marked, what was not
/// measured), and the kubecon demo's stage whose server report is not its run's.
#[test]
fn server_side_renderings() {
    let lg = fixtures().join("formats/loadgen/inference-perf");
    let stage = |dir: &str| {
        [
            lg.join(dir).join("stage_0_lifecycle_metrics.json"),
            lg.join(dir).join("stage_0_prometheus_metrics.json"),
        ]
        .map(|p| p.display().to_string())
    };
    let [a, b] = stage("0.7.0-prometheus-4-8");
    let [c, d] = stage("kubecon-vllm-batch_size");
    for format in ["table", "markdown", "html"] {
        let (code, out) = tokstat(&["report", "-q", "--format", format, &a, &b]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("server-side.{format}"), out);
    }
    let (code, out) = tokstat(&["report", "-q", &c, &d]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("server-side-disagreeing.table", out);
}

/// The pulse and watch renderings, from fixed figures (a live reading's times vary): the
/// terminal table of a pulse with every part, its JSON, the watch's view and its line.
#[test]
fn pulse_and_watch_renderings() {
    use tokstat::live::pulse::{Client, Eta, Gap, Job, Pulse, ServerRates};
    use tokstat::live::watch::View;
    let server = ServerRates {
        instances: 2,
        stat_lines: 24,
        gen_tps: 1_120.4,
        running: 38.2,
        waiting: 4.1,
    };
    let eta = Eta {
        total: 1_000_000,
        done: 412_300,
        remaining: 587_700,
        projected_tokens_per_request: 1_402.3,
        tokens_per_s: 607.2,
        seconds: 587_700.0 * 1_402.3 / 607.2,
        seconds_low: 587_700.0 * 1_402.3 / 650.0,
        seconds_high: 587_700.0 * 1_402.3 / 560.0,
    };
    let p = Pulse {
        window_s: 60.02,
        samples: 6,
        bytes: 1_843_211,
        client: Some(Client {
            requests: 26,
            requests_per_s: 26.0 / 60.02,
            output_tokens: 36_444,
            output_tokens_per_s: 607.2,
            tokens_per_request_mean: Some(1_401.7),
            tokens_per_request_p50: Some(1_350.0),
            tokens_per_request_p90: Some(2_210.0),
            failures: 0,
            cap_hits: 2,
            sample_tokens_per_s: vec![560.0, 590.0, 610.0, 600.0, 650.0, 633.0],
        }),
        server: Some(server.clone()),
        metrics: None,
        gap: Some(Gap {
            ratio: 607.2 / 1_120.4,
            server_from: "stats lines",
            explanation: "the client wrote 46% fewer tokens than the servers generated: requests still running (38 on average) finish after the window, failed requests retried, or other clients share the servers".into(),
        }),
        job: Job {
            requests_done: 412_300,
            tokens_per_request_mean: Some(1_380.2),
            tokens_per_request_trend_per_1k: Some(0.05),
            failure_rate: Some(0.004),
            cap_hit_rate: Some(0.065),
        },
        eta: Some(eta.clone()),
        drift: vec!["output length: the window's mean is 1402 tokens per request, the job's 1380 (+2%)".into()],
    };
    let mut out = Vec::new();
    tokstat::render::pulse::table(&p, tokstat::render::Style::plain(), &mut out).unwrap();
    insta::assert_snapshot!("pulse.table", String::from_utf8(out).unwrap());
    insta::assert_snapshot!(
        "pulse.json",
        serde_json::to_string_pretty(&serde_json::to_value(&p).unwrap()).unwrap()
    );
    let v = View {
        elapsed_s: 905.0,
        requests_done: 412_300,
        total: Some(1_000_000),
        rates: vec![(1, 0.45, 630.0), (5, 0.43, 607.0), (15, 0.44, 611.0)],
        server: Some(server),
        failure_rate: Some(0.004),
        cap_hit_rate: Some(0.065),
        eta: Some(eta),
        drift: None,
        metrics: Some(tokstat::analysis::metrics::ScrapePoint {
            ts: None,
            gen_tps: Some(1_098.0),
            prompt_tps: Some(2_310.0),
            requests_per_s: Some(0.47),
            running: Some(37.0),
            waiting: Some(5.0),
            kv_usage: Some(0.412),
            preemptions: None,
        }),
        notes: vec!["logs/gpu0.log: truncated (copytruncate?), read again from its start".into()],
        new_notes: vec![],
    };
    let mut out = Vec::new();
    tokstat::render::pulse::watch_view(&v, tokstat::render::Style::plain(), &mut out).unwrap();
    insta::assert_snapshot!("watch.view", String::from_utf8(out).unwrap());
    insta::assert_snapshot!("watch.line", tokstat::render::pulse::watch_line(&v));
}

/// The three renderings give the report's sections in one order (`render::sections`): the
/// census first when something broke (the fleet's crash), else after the lifecycle (the
/// demo); the hints after the server's figures.
#[test]
fn every_rendering_follows_one_section_order() {
    let markers: [(&str, [&str; 4]); 3] = [
        (
            "table",
            ["Incidents", "Server logs:", "Hints", "Lifecycle:"],
        ),
        (
            "markdown",
            ["### Incidents", "### Server", "### Hints", "**Lifecycle:**"],
        ),
        (
            "html",
            [
                "<section id=\"incidents\"",
                "<section id=\"throughput\"",
                "<section id=\"hints\"",
                "<section id=\"lifecycle\"",
            ],
        ),
    ];
    // the rank of (incidents, server, hints, lifecycle) in the order expected
    for (run, order) in [("fleet", [0, 1, 2, 3]), ("demo", [3, 0, 1, 2])] {
        let path = fixtures().join("runs").join(run);
        for (format, marks) in &markers {
            let (_, out) = tokstat(&["report", "-q", "--format", format, path.to_str().unwrap()]);
            let mut at: Vec<(usize, usize)> = marks
                .iter()
                .enumerate()
                .map(|(k, m)| {
                    let pos = out
                        .find(m)
                        .unwrap_or_else(|| panic!("{run} {format}: no {m}"));
                    (pos, k)
                })
                .collect();
            at.sort();
            let got: Vec<usize> = at.iter().map(|(_, k)| *k).collect();
            let mut want: Vec<usize> = (0..4).collect();
            want.sort_by_key(|k| order[*k]);
            assert_eq!(got, want, "{run} as {format}");
        }
    }
}

/// A benchmark run and the server's side on one clock in every format: AIPerf 0.13.0 past
/// the simulator's running cap beside its log (offset −5 h + skew) and its scrapes, the
/// checks across the sides, the client's path per quantile, the series stacked on one
/// axis; and another run's client refused alignment.
#[test]
fn one_clock_renderings() {
    let sim = fixtures().join("formats/loadgen/sim");
    let log = sim.join("c16-cap8/server.log").display().to_string();
    let aiperf = sim.join("c16-cap8/aiperf").display().to_string();
    for format in ["table", "markdown", "html"] {
        let (code, out) = tokstat(&["report", "-q", "--format", format, &log, &aiperf]);
        assert_eq!(code, 0, "{out}");
        insta::assert_snapshot!(format!("one-clock.{format}"), out);
    }
    let other = sim
        .join("c4-cap8/aiperf/profile_export.jsonl.zst")
        .display()
        .to_string();
    let (code, out) = tokstat(&["report", "-q", &log, &other]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("one-clock-refused.table", out);
    // two such runs compared: both sides' figures and the client's path, per run
    let c4 = format!("c4={}", sim.join("c4-cap8").display());
    let c16 = format!("c16={}", sim.join("c16-cap8").display());
    let (code, out) = tokstat(&["compare", &c4, &c16]);
    assert_eq!(code, 0, "{out}");
    insta::assert_snapshot!("one-clock-compare.table", out);
}
