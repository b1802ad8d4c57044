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
    // down from the crash (2705 s) to the restart's first line (2760 s): idle before
    // issue 40
    assert_eq!(i["down_s"], 55.0);
    assert_eq!(i["idle_s"], 4205.0 + 11.0 * 217.0 - 1620.0 - 2520.0 - 55.0);
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

/// The simulated fleet's schedulers die of CUDA out of memory, the servers restart, and
/// requests fail with HTTP 500 for the first minute: the census counts what the simulator
/// wrote, the timeline's HTTP columns sum to its responses, and one `error_burst` names the
/// minute, the crash before it and the restart; the completions' failure spike cites them.
#[test]
fn fleet_crash_restart_and_5xx_burst() {
    let truth = std::fs::read_to_string(tokstat_tests::fixture("runs/fleet.truth.txt")).unwrap();
    // `gpuN: …; http: A answered, F failed (500); crashed at T`
    let (mut answered, mut failed, mut crashes) = (0u64, 0u64, 0u64);
    for line in truth.lines().filter(|l| l.starts_with("gpu")) {
        let http = line.split("; http: ").nth(1).unwrap();
        let n: Vec<u64> = http
            .split(|c: char| !c.is_ascii_digit())
            .filter(|s| !s.is_empty())
            .take(2)
            .map(|s| s.parse().unwrap())
            .collect();
        answered += n[0];
        failed += n[1];
        assert!(line.ends_with("crashed at 2026-05-10T00:08:25"), "{line}");
        crashes += 1;
    }
    assert_eq!((answered, failed, crashes), (3989, 133, 7));

    let v = report(&[&tokstat_tests::fixture("runs/fleet")]);
    let count = |k: &str| kind(&v, k)["count"].as_u64().unwrap();
    // two lines of each crash (the scheduler's exception, the parent's sigquit), the OOM
    assert_eq!(count("crash"), 2 * crashes);
    assert_eq!(count("cuda_oom"), crashes);
    assert_eq!(count("http_5xx"), failed);
    assert_eq!(count("http_4xx"), 0);
    assert_eq!(kind(&v, "http_5xx")["first_ts"], "2026-05-10T00:10:21");
    let run_rows: Vec<&Value> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["instance"].is_null())
        .collect();
    let sum = |c: &str| -> u64 { run_rows.iter().map(|r| r[c].as_u64().unwrap()).sum() };
    assert_eq!(
        (sum("http_ok"), sum("http_4xx"), sum("http_5xx")),
        (answered, 0, failed)
    );
    // every instance's rows too
    let per_instance: u64 = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| !r["instance"].is_null())
        .map(|r| r["http_5xx"].as_u64().unwrap())
        .sum();
    assert_eq!(per_instance, failed);

    let hints = v["hints"].as_array().unwrap();
    let bursts: Vec<&Value> = hints.iter().filter(|h| h["id"] == "error_burst").collect();
    assert_eq!(bursts.len(), 1, "{bursts:#?}");
    let e = &bursts[0]["evidence"];
    assert_eq!(e["count"], failed);
    assert_eq!(
        (e["from"].as_str().unwrap(), e["to"].as_str().unwrap()),
        ("2026-05-10T00:10:20", "2026-05-10T00:11:20")
    );
    let text = e["text"].as_str().unwrap();
    for said in [
        "133 HTTP 5xx responses in 1m 00s from 00:10:20 to 00:11:20",
        "7 instances logged crash and cuda_oom at 00:08:25: torch.OutOfMemoryError: CUDA out of memory",
        "7 instances became ready at 00:10:20, and the burst began within 10s of it",
    ] {
        assert!(text.contains(said), "{said:?} not in {text:?}");
    }
    let spike = hints.iter().find(|h| h["id"] == "failure_spike").unwrap();
    let text = spike["evidence"]["text"].as_str().unwrap();
    assert!(
        text.contains("the server logs show 14 crash at 2026-05-10T00:08:25, 7 cuda_oom at 2026-05-10T00:08:25, 7 health_check at 2026-05-10T00:08:45, 133 http_5xx from 2026-05-10T00:10:21 to 2026-05-10T00:11:19"),
        "{text}"
    );
    // the health check timed out 20 s after each crash
    assert_eq!(count("health_check"), crashes);
    assert_eq!(kind(&v, "health_check")["first_ts"], "2026-05-10T00:08:45");
    // the lifecycle: every instance ready again after its crash, and each of its two
    // start-ups spent 8 s loading weights, 2 s allocating the KV cache, 8 s capturing graphs
    // and 7 s on the rest
    let lives = v["lifecycle"]["instances"].as_array().unwrap();
    assert_eq!(lives.len(), 7);
    let phases =
        serde_json::json!({"weights": 16.0, "kv_cache": 4.0, "graphs": 16.0, "other": 14.0});
    for l in lives {
        assert_eq!(l["crash_to_ready_s"], serde_json::json!([115.0]), "{l}");
        assert_eq!(l["starts"], 2, "{l}");
        assert_eq!(l["startup_phases_s"], phases, "{l}");
    }
    let run = &v["lifecycle"]["startup_phases_s"];
    assert_eq!(
        run,
        &serde_json::json!({"weights": 112.0, "kv_cache": 28.0, "graphs": 112.0, "other": 98.0})
    );
    assert!(v["lifecycle"]["summary"].as_str().unwrap().contains(
        "5m 50s starting (5%: weights 1m 52s, KV cache 28s, graphs 1m 52s, rest 1m 38s)"
    ));
}

/// vLLM's access lines carry no stamp: each is placed at the stats line before it; a steady
/// 404 trickle raises no burst while a minute of 503s does. (Chunks merge like the whole:
/// `ingest::responses`'s unit tests.)
#[test]
fn unstamped_access_lines_follow_the_stamp_before_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("vllm.log");
    let mut log = String::new();
    let (mut ok, mut refused, mut failed) = (0u64, 0u64, 0u64);
    // an hour of stats lines every 10 s, each followed by 20 access lines
    for k in 0..360u32 {
        let (m, s) = (k * 10 / 60, k * 10 % 60);
        log.push_str(&format!("INFO 03-02 10:{m:02}:{s:02} [loggers.py:123] Engine 000: Avg prompt throughput: 100.0 tokens/s, Avg generation throughput: 800.0 tokens/s, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 5.0%, Prefix cache hit rate: 0.0%\n"));
        for j in 0..20u32 {
            let status = match (k, j) {
                (_, 0) => "404 Not Found",
                (180..=185, 1..=10) => "503 Service Unavailable",
                _ => "200 OK",
            };
            match status.as_bytes()[0] {
                b'4' => refused += 1,
                b'5' => failed += 1,
                _ => ok += 1,
            }
            log.push_str(&format!(
                "INFO:     10.0.0.{j}:5{k:04} - \"POST /v1/completions HTTP/1.1\" {status}\n"
            ));
        }
    }
    std::fs::write(&path, log).unwrap();
    let v = report(&[path.to_str().unwrap(), "--bucket", "60s", "--threads", "2"]);
    assert_eq!((ok, refused, failed), (6780, 360, 60));
    let rows = v["timeline"].as_array().unwrap();
    // (the first line's interval begins in the minute before 10:00)
    assert_eq!(rows.len(), 61);
    assert_eq!(rows[0]["ts"], "2026-03-02T09:59:00");
    assert_eq!(
        (
            &rows[0]["http_ok"],
            &rows[0]["http_4xx"],
            &rows[0]["http_5xx"]
        ),
        (&Value::from(0), &Value::from(0), &Value::from(0))
    );
    for (i, r) in rows[1..].iter().enumerate() {
        // six stats lines a minute, each with its 20 access lines
        let want_5xx = if i == 30 { 60 } else { 0 };
        assert_eq!(r["http_4xx"], 6, "{r}");
        assert_eq!(r["http_5xx"], want_5xx, "{r}");
        assert_eq!(r["http_ok"], 120 - 6 - want_5xx, "{r}");
    }
    let bursts: Vec<&Value> = v["hints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["id"] == "error_burst")
        .collect();
    assert_eq!(bursts.len(), 1, "{bursts:#?}");
    assert_eq!(bursts[0]["evidence"]["count"], 60);
    assert_eq!(bursts[0]["evidence"]["from"], "2026-03-02T10:30:00");
    assert_eq!(bursts[0]["evidence"]["to"], "2026-03-02T10:31:00");
}

/// Regression: the census's sample lines of a log read in several chunks were numbered from
/// their chunk's start (line 5,631 for line 150,001 of a 27 MB log).
#[test]
fn sample_lines_are_numbered_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gpu0.log");
    let mut log = String::new();
    for i in 0..30_000u32 {
        if i == 25_000 {
            log.push_str("[2026-03-02 10:59:59] Scheduler hit an exception: boom\n");
        }
        log.push_str(&format!("[2026-03-02 10:{:02}:{:02} TP0] Decode batch. #running-req: 8, #token: 4000, token usage: 0.05, gen throughput (token/s): 400.00, #queue-req: 0\n", i / 1000 % 60, i / 17 % 60));
    }
    assert!(log.len() > 3 << 20, "more than three chunks");
    std::fs::write(&path, log).unwrap();
    let v = report(&[path.to_str().unwrap(), "--threads", "2"]);
    assert_eq!(kind(&v, "crash")["samples"][0]["line"], 25_001);
}

/// Issue 40, item 5: the fleet's servers die of CUDA out of memory and restart 90 s later
/// (the simulator's `gap_after`): each is down 90 s, which was counted as idle.
#[test]
fn the_fleet_is_down_between_crash_and_restart() {
    let v = report(&[&tokstat_tests::fixture("runs/fleet")]);
    let l = &v["lifecycle"];
    let instances = l["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 7);
    for i in instances {
        assert_eq!(i["down_s"], 90.0, "{}", i["instance"]);
    }
    assert_eq!(l["down_h"], 7.0 * 90.0 / 3600.0);
}
