//! End-to-end: the incident census of the crash fixtures — every kind listed, with the
//! counts, times, instances and first lines the fixtures hold.

use serde_json::Value;

fn report(args: &[&str]) -> Value {
    let mut argv = vec![
        "tokstat", "report", "--format", "json", "-q", "--year", "2026",
    ];
    argv.extend_from_slice(args);
    let mut out = Vec::new();
    let mut err = Vec::new();
    let code = tokstat::run(argv, &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out).unwrap()
}

fn kind<'a>(v: &'a Value, k: &str) -> &'a Value {
    v["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == k)
        .unwrap_or_else(|| panic!("no {k}"))
}

#[test]
fn census_of_the_crash_fixtures() {
    let sg = tokstat_tests::fixture("formats/incidents/sglang-crash.log");
    let vl = tokstat_tests::fixture("formats/incidents/vllm-crash.log");
    let v = report(&[&sg, &vl]);
    let kinds: Vec<&str> = v["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "crash",
            "traceback",
            "exception",
            "cuda_oom",
            "distributed",
            "health_check",
            "kv_transfer",
            "error",
            "oom",
            "retraction",
            "preemption",
            "abort",
            "recompile"
        ]
    );
    let count = |k: &str| kind(&v, k)["count"].as_u64().unwrap();
    let counts: Vec<u64> = kinds.iter().map(|k| count(k)).collect();
    assert_eq!(counts, [4, 1, 0, 1, 2, 1, 0, 1, 0, 0, 0, 2, 1]);

    let crash = kind(&v, "crash");
    assert_eq!(crash["broke"], true);
    assert_eq!(crash["first_ts"], "2026-03-02T10:01:20");
    assert_eq!(crash["last_ts"], "2026-03-02T11:01:10");
    assert_eq!(crash["by_instance"]["sglang-crash"], 2);
    assert_eq!(crash["by_instance"]["vllm-crash"], 2);
    let samples = crash["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 2);
    assert_eq!(samples[0]["line"], 14);
    assert_eq!(samples[0]["instance"], "sglang-crash");
    assert_eq!(
        samples[0]["text"],
        "Scheduler hit an exception: Traceback (most recent call last):"
    );
    assert_eq!(samples[1]["line"], 21);

    // a traceback's last line has no stamp: it takes the instance's line before it
    let oom = kind(&v, "cuda_oom");
    assert_eq!(oom["first_ts"], "2026-03-02T10:01:20");
    assert_eq!(oom["samples"][0]["line"], 19);
    assert_eq!(kind(&v, "abort")["broke"], false);
    assert_eq!(kind(&v, "kv_transfer")["samples"], Value::Array(vec![]));
    // error lines of the instances count every kind that broke, and plain errors
    let errors: Vec<u64> = v["instances"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["errors"].as_u64().unwrap())
        .collect();
    assert_eq!(errors, [5, 5]);
}

/// A log with nothing wrong lists every kind at zero; the terminal report says so in one
/// line, after the server's figures.
#[test]
fn nothing_broke_is_a_finding() {
    let log = tokstat_tests::fixture("formats/sglang/sglang-pd-disagg-v0.4.6-v0.5.23.log");
    let v = report(&[&log]);
    let incidents = v["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 13);
    assert!(incidents.iter().all(|i| i["count"] == 0), "{incidents:?}");
    let (code, out, _) = tokstat_tests::tokstat(&["report", "--year", "2026", &log]);
    assert_eq!(code, 0);
    let line = out
        .lines()
        .find(|l| l.starts_with("Incidents"))
        .expect("an incidents line");
    assert_eq!(
        line,
        "Incidents: none (crash, traceback, exception, cuda_oom, distributed, health_check, kv_transfer, error, oom, retraction, preemption, abort, recompile)"
    );
    assert!(out.find("Incidents").unwrap() > out.find("Server logs").unwrap());
}

/// When something broke, the census comes before everything else.
#[test]
fn census_first_when_something_broke() {
    let sg = tokstat_tests::fixture("formats/incidents/sglang-crash.log");
    let (code, out, _) = tokstat_tests::tokstat(&["report", "--year", "2026", &sg]);
    assert_eq!(code, 0);
    assert!(out.find("Incidents: something broke").unwrap() < out.find("Server logs").unwrap());
    let (code, md, _) =
        tokstat_tests::tokstat(&["report", "--year", "2026", "--format", "markdown", &sg]);
    assert_eq!(code, 0);
    assert!(md.find("### Incidents").unwrap() < md.find("### Server").unwrap_or(usize::MAX));
    assert!(md.contains("| **cuda_oom** | 1 |"), "{md}");
}
