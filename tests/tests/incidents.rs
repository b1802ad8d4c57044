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
            "recompile",
            "http_5xx",
            "http_4xx"
        ]
    );
    let count = |k: &str| kind(&v, k)["count"].as_u64().unwrap();
    let counts: Vec<u64> = kinds.iter().map(|k| count(k)).collect();
    assert_eq!(counts, [4, 1, 0, 1, 2, 1, 0, 1, 0, 0, 0, 2, 1, 2, 0]);
    // an access line's status, read without a record
    let http = kind(&v, "http_5xx");
    assert_eq!(http["samples"][0]["line"], 12);
    assert_eq!(http["samples"][1]["line"], 13);
    assert_eq!(http["samples"][1]["ts"], "2026-03-02T11:01:10");

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
    assert_eq!(incidents.len(), 15);
    assert!(incidents.iter().all(|i| i["count"] == 0), "{incidents:?}");
    let (code, out, _) = tokstat_tests::tokstat(&["report", "--year", "2026", &log]);
    assert_eq!(code, 0);
    let line = out
        .lines()
        .find(|l| l.starts_with("Incidents"))
        .expect("an incidents line");
    assert_eq!(
        line,
        "Incidents: none (crash, traceback, exception, cuda_oom, distributed, health_check, kv_transfer, error, oom, retraction, preemption, abort, recompile, http_5xx, http_4xx)"
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

/// A simulated instance: a 15-minute start-up, 30 minutes of serving, a crash (CUDA out of
/// memory), a 12-minute restart, 12 more minutes of serving, then 40 minutes of aborted
/// requests and nothing running. Each stretch, the crash-to-ready time and the hints are
/// what the log was written to hold.
#[test]
fn lifecycle_of_a_crash_and_restart() {
    use std::fmt::Write as _;
    let t = |s: u32| {
        format!(
            "2026-03-02 {:02}:{:02}:{:02}",
            10 + s / 3600,
            s / 60 % 60,
            s % 60
        )
    };
    let mut log = String::new();
    let args = "server_args=ServerArgs(model_path='m', tp_size=1, max_running_requests=64)";
    writeln!(log, "[{}] {args}", t(0)).unwrap();
    writeln!(
        log,
        "[{}] The server is fired up and ready to roll!",
        t(900)
    )
    .unwrap();
    let decode = |log: &mut String, from: u32, to: u32| {
        for s in (from..=to).step_by(10) {
            writeln!(log, "[{} TP0] Decode batch. #running-req: 8, #token: 4000, token usage: 0.05, gen throughput (token/s): 400.00, #queue-req: 0", t(s)).unwrap();
        }
    };
    decode(&mut log, 910, 2700);
    writeln!(
        log,
        "[{} TP0] Scheduler hit an exception: Traceback (most recent call last):",
        t(2705)
    )
    .unwrap();
    writeln!(
        log,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB."
    )
    .unwrap();
    writeln!(log, "[{}] {args}", t(2760)).unwrap();
    writeln!(
        log,
        "[{}] The server is fired up and ready to roll!",
        t(3480)
    )
    .unwrap();
    decode(&mut log, 3490, 4200);
    for k in 0..12 {
        writeln!(log, "[{}] Abort request rid='r{k}'", t(4205 + k * 217)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu0.log");
    std::fs::write(&path, log).unwrap();
    let v = report(&[path.to_str().unwrap()]);
    let l = &v["lifecycle"];
    let i = &l["instances"][0];
    assert_eq!(i["starts"], 2);
    assert_eq!(i["ready_ts"], "2026-03-02T10:15:00");
    // held: 10:00:00 to the last abort line at 11:10:05 + 11 × 217 s
    assert_eq!(i["held_s"], 4205.0 + 11.0 * 217.0);
    assert_eq!(i["starting_s"], 900.0 + 720.0);
    // 180 and 72 decode lines of 10 s each (the first after each start given the typical
    // interval, as nothing reaches back across a restart)
    assert_eq!(i["serving_s"], 1800.0 + 720.0);
    assert_eq!(i["idle_s"], 4205.0 + 11.0 * 217.0 - 1620.0 - 2520.0);
    assert_eq!(i["crash_to_ready_s"], serde_json::json!([775.0]));
    let ids: Vec<&str> = v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    for id in ["crash", "slow_startup", "idle_capacity", "client_aborts"] {
        assert!(ids.contains(&id), "{id} not in {ids:?}");
    }
    assert_eq!(ids[0], "crash");
    let crash = v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["id"] == "crash")
        .unwrap();
    assert_eq!(crash["severity"], "critical");
    assert_eq!(crash["evidence"]["cuda_oom"], 1);
    assert_eq!(kind(&v, "abort")["count"], 12);
}

/// HTTP 5xx responses alone put the census first but raise no `crash` hint.
#[test]
fn server_errors_alone_are_no_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu0.log");
    let mut log = String::new();
    for s in 0..30 {
        log.push_str(&format!("[2026-03-02 10:00:{s:02} TP0] Decode batch. #running-req: 8, #token: 4000, token usage: 0.05, gen throughput (token/s): 400.00, #queue-req: 0\n"));
        log.push_str(&format!("[2026-03-02 10:00:{s:02}] INFO:     127.0.0.1:4{s:04} - \"POST /generate HTTP/1.1\" {}\n", if s % 10 == 3 { "500 Internal Server Error" } else { "200 OK" }));
    }
    std::fs::write(&path, log).unwrap();
    let v = report(&[path.to_str().unwrap()]);
    let http = kind(&v, "http_5xx");
    assert_eq!(http["count"], 3);
    assert_eq!(http["first_ts"], "2026-03-02T10:00:03");
    assert_eq!(http["last_ts"], "2026-03-02T10:00:23");
    assert_eq!(
        v["lines"]["other"], 30,
        "access lines stay `other` in the accounting"
    );
    assert!(v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["id"] != "crash"));
}
