//! Server logs as log collectors hand them over (issue 54): every collector's records of an
//! SGLang and a vLLM log give the plain log's figures; identities become instances; the
//! collector dates year-less stamps and its clock offset is stated.

use serde_json::Value;
use tokstat_parsers::wrappers::envelope::write::{wrap, Wrapping, ALL};
use tokstat_parsers::wrappers::envelope::Collector;
use tokstat_tests::{fixture, tokstat};

fn json(args: &[&str]) -> Value {
    let (code, out, err) = tokstat(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// 2026-05-10T00:00:00Z, the fixture runs' first stamp (as UTC).
const RUN_START_MS: i64 = 1_778_371_200_000;

/// An instance's figures without its name.
fn figures(instance: &Value) -> Value {
    let mut i = instance.clone();
    i.as_object_mut().unwrap().remove("instance");
    i
}

/// Each collector's records of an SGLang and a vLLM log: the same stats lines, the same
/// steady tok/s and instance figures, to the last digit, as the plain log's (read with
/// `--year 2026`; the wrapped ones take their year from the collector), every row counted.
#[test]
fn every_collector_gives_the_plain_logs_figures() {
    let dir = tempfile::tempdir().unwrap();
    for log in ["runs/sglang-mrr/sglang.log", "runs/vllm-c128/vllm.log"] {
        let plain_path = fixture(log);
        let plain_text = std::fs::read_to_string(&plain_path).unwrap();
        let plain = json(&[
            "report",
            "--format",
            "json",
            "-q",
            "--year",
            "2026",
            &plain_path,
        ]);
        let p = &plain["instances"][0];
        assert!(p["stat_lines"].as_u64().unwrap() > 100);
        for (k, c) in ALL.into_iter().enumerate() {
            for ahead_h in [0, 8] {
                let w = Wrapping {
                    start_ms: RUN_START_MS - ahead_h * 3_600_000,
                    server_ahead_ms: Some(ahead_h * 3_600_000),
                    piece: 64,
                    ..Wrapping::default()
                };
                let path = dir.path().join(format!("w{k}-{ahead_h}.txt"));
                std::fs::write(&path, wrap(c, &plain_text, &w)).unwrap();
                let path = path.display().to_string();
                let r = json(&["report", "--format", "json", "-q", &path]);
                let what = format!("{log} as {c:?}, server {ahead_h} h ahead");
                assert_eq!(r["instances"].as_array().unwrap().len(), 1, "{what}");
                assert_eq!(figures(&r["instances"][0]), figures(p), "{what}");
                assert_eq!(r["steady"], plain["steady"], "{what}");
                assert_eq!(r["lines"]["parsed"], plain["lines"]["parsed"], "{what}");
                assert_eq!(r["lines"]["total"], plain["lines"]["total"], "{what}");
                let e = &r["files"][0]["envelope"];
                assert_eq!(e["collector"], c.as_str(), "{what}");
                let rows = e["rows"].as_u64().unwrap();
                let joined = e["joined"].as_u64().unwrap();
                assert_eq!(
                    rows - joined,
                    plain["lines"]["total"].as_u64().unwrap(),
                    "{what}"
                );
                if matches!(c, Collector::DockerJson | Collector::Cri) {
                    assert!(joined > 100, "{what}: {e}");
                }
                let clock = &e["clock"];
                assert_eq!(
                    clock["zone"],
                    if ahead_h == 0 { "UTC" } else { "UTC+08:00" },
                    "{what}: {e}"
                );
                assert!(
                    clock["skew_s"].as_f64().unwrap().abs() <= 1.0,
                    "{what}: {e}"
                );
            }
        }
    }
}

/// `kubectl logs -l app=vllm --prefix` of two pods, interleaved: two instances, each with
/// its own pod's figures (those of the two pods' plain logs read together).
#[test]
fn two_pods_interleaved_are_two_instances() {
    let dir = tempfile::tempdir().unwrap();
    let logs = ["runs/vllm-c128/vllm.log", "runs/vllm-c200/vllm.log"];
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut plains = Vec::new();
    for (k, log) in logs.iter().enumerate() {
        let text = std::fs::read_to_string(fixture(log)).unwrap();
        let w = Wrapping {
            pod: ["vllm-0", "vllm-1"][k],
            start_ms: RUN_START_MS,
            server_ahead_ms: Some(0),
            ..Wrapping::default()
        };
        rows.push(
            wrap(Collector::KubectlPrefix, &text, &w)
                .lines()
                .map(str::to_string)
                .collect(),
        );
        let plain = dir.path().join(format!("vllm-{k}.log"));
        std::fs::write(&plain, &text).unwrap();
        plains.push(plain.display().to_string());
    }
    let mut mixed = String::new();
    let n = rows[0].len().max(rows[1].len());
    for i in 0..n {
        for r in &rows {
            if let Some(l) = r.get(i) {
                mixed.push_str(l);
                mixed.push('\n');
            }
        }
    }
    let path = dir.path().join("pods.log");
    std::fs::write(&path, mixed).unwrap();
    let r = json(&[
        "report",
        "--format",
        "json",
        "-q",
        &path.display().to_string(),
    ]);
    let instances = r["instances"].as_array().unwrap();
    let names: Vec<&str> = instances
        .iter()
        .map(|i| i["instance"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["vllm-0", "vllm-1"]);
    let together = json(&[
        "report", "--format", "json", "-q", "--year", "2026", &plains[0], &plains[1],
    ]);
    assert_eq!(r["instances"], together["instances"]);
    assert_eq!(r["steady"], together["steady"]);
    let identities: Vec<&Value> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["envelope"]["identity"])
        .collect();
    assert_eq!(identities, ["vllm-0/vllm", "vllm-1/vllm"]);
}

/// A vLLM log without years, wrapped by a collector in December, keeps its New Year right:
/// the envelope's year, then the next.
#[test]
fn year_less_stamps_take_the_collectors_year() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("formats/messy/vllm-messy.log")).unwrap();
    // 2026-12-31T23:59:50Z: the log's first stamp is 12-31 23:59:55
    let w = Wrapping {
        start_ms: 1_798_761_590_000,
        server_ahead_ms: Some(0),
        ..Wrapping::default()
    };
    let path = dir.path().join("messy.json");
    std::fs::write(&path, wrap(Collector::DockerJson, &text, &w)).unwrap();
    let r = json(&[
        "report",
        "--format",
        "json",
        "-q",
        &path.display().to_string(),
    ]);
    assert_eq!(r["instances"][0]["first_ts"], "2026-12-31T23:59:55");
    assert!(r["instances"][0]["last_ts"]
        .as_str()
        .unwrap()
        .starts_with("2027-01-01"));
}

/// A broken record is malformed with its row; a file of nothing but broken rows is said so.
#[test]
fn broken_records_are_malformed_with_their_rows() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("runs/vllm-c128/vllm.log")).unwrap();
    let w = Wrapping {
        start_ms: RUN_START_MS,
        server_ahead_ms: Some(0),
        ..Wrapping::default()
    };
    let mut file: Vec<String> = wrap(Collector::DockerJson, &text, &w)
        .lines()
        .map(str::to_string)
        .collect();
    file[9].truncate(30);
    let path = dir.path().join("docker.log");
    std::fs::write(&path, file.join("\n") + "\n").unwrap();
    let r = json(&[
        "report",
        "--format",
        "json",
        "-q",
        &path.display().to_string(),
    ]);
    let f = &r["files"][0];
    assert_eq!(f["malformed"], 1);
    assert_eq!(f["malformed_samples"][0]["line"], 10);
    assert_eq!(f["total"].as_u64().unwrap(), text.lines().count() as u64);
}

/// The committed fixtures (`cargo run -p xtask -- envelopes`): every collector's file of
/// the SGLang and the vLLM fixture log reads as the plain log does (its stats lines).
#[test]
fn the_envelope_fixtures_read_as_their_logs() {
    for (engine, log) in [
        (
            "sglang",
            "formats/sglang/sglang-v0.5.9-v0.5.23-scheduler.log",
        ),
        ("vllm", "formats/vllm/vllm-v1-loggers-v0.11.1-v0.33.0.log"),
    ] {
        let plain = json(&[
            "report",
            "--format",
            "json",
            "-q",
            "--year",
            "2026",
            &fixture(log),
        ]);
        let want: u64 = plain["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["stat_lines"].as_u64().unwrap())
            .sum();
        let dir = tokstat_tests::fixtures().join("formats/envelopes");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if !p.file_name().unwrap().to_string_lossy().starts_with(engine) {
                continue;
            }
            n += 1;
            let r = json(&["report", "--format", "json", "-q", &p.display().to_string()]);
            let got: u64 = r["instances"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["stat_lines"].as_u64().unwrap())
                .sum();
            assert_eq!(got, want, "{}", p.display());
            assert_eq!(
                r["lines"]["malformed"],
                plain["lines"]["malformed"],
                "{}",
                p.display()
            );
        }
        assert_eq!(n, ALL.len());
    }
}
