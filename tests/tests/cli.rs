//! End-to-end: the `tokstat` command line (through the library entry point the binary wraps)
//! over the fixtures and the simulated demo run, asserting exact values.

use serde_json::Value;
use std::path::{Path, PathBuf};
use tokstat_tests::{fixture, tokstat};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn parse_emits_the_documented_record() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("gpu0.log");
    std::fs::write(&p, "[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 40, #token: 51200, token usage: 0.12, accept len: 3.13, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81\n").unwrap();
    let (code, out, err) = tokstat(&["parse", p.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let r = records(&out);
    assert_eq!(r.len(), 1);
    let want: Value = serde_json::json!({"table":"steps","engine":"sglang","kind":"decode","source":p.to_str().unwrap(),"line":1,"instance":"gpu0","ts":"2026-05-09T22:29:22","tp":0,"running":40,"waiting":81,"gen_tps":1863.65,"kv_usage":0.12,"tokens":51200,"accept_len":3.13,"graph":true});
    assert_eq!(r[0], want);
    assert!(
        err.contains("gpu0.log: 1 lines: 1 parsed, 0 other, 0 malformed"),
        "{err}"
    );
}

#[test]
fn every_format_fixture_is_accounted_for() {
    let (code, out, err) = tokstat(&[
        "parse",
        "--year",
        "2026",
        "--date",
        "2024-09-01",
        &fixture("formats"),
    ]);
    assert_eq!(code, 0, "{err}");
    // per-file accounting: total = parsed + other + malformed, exact counts
    for (file, total, parsed, other, malformed) in [
        ("sglang-v0.5.9-v0.5.23-scheduler.log", 11, "10 parsed", 1, 0),
        ("sglang-v0.3.4-v0.4.6-scheduler.log", 17, "13 parsed", 4, 0),
        ("vllm-v1-loggers-v0.11.1-v0.33.0.log", 12, "11 parsed", 1, 0),
        ("vllm-ascend-v0.7.3-v0.30.log", 12, "10 parsed", 2, 0),
        ("vllm-tt-plugin.log", 7, "3 parsed", 4, 0),
        // (line 10: two records glued; line 11: two glued, a key repeated)
        (
            "vllm-v1-iteration-v0.26-v0.34.log",
            12,
            "11 parsed (3 cut short)",
            0,
            1,
        ),
        // (lines 5 and 6: one record a terminal wrapped, read as one)
        ("sglang-messy.log", 14, "9 parsed", 3, 2),
        ("vllm-messy.log", 10, "7 parsed", 2, 1),
    ] {
        let want = format!("{file}: {total} lines: {parsed}, {other} other, {malformed} malformed");
        assert!(err.contains(&want), "missing `{want}` in:\n{err}");
    }
    assert!(
        err.contains(
            "sglang-messy.log: 14 lines: 9 parsed, 3 other, 2 malformed (lines 7, 13; line 7:"
        ),
        "{err}"
    );
    let all = records(&out);
    let enveloped = |r: &&Value| r["source"].as_str().unwrap().contains("/envelopes/");
    // the collectors' files of two fixture logs: each collector's gives the log's records
    let steps_of = |name: &str| {
        all.iter()
            .filter(|r| r["table"] == "steps" && r["source"].as_str().unwrap().ends_with(name))
            .count()
    };
    let plain = steps_of("sglang-v0.5.9-v0.5.23-scheduler.log")
        + steps_of("vllm-v1-loggers-v0.11.1-v0.33.0.log");
    let wrapped = all
        .iter()
        .filter(enveloped)
        .filter(|r| r["table"] == "steps")
        .count();
    assert_eq!(wrapped, 10 * plain);
    let recs: Vec<Value> = all.iter().filter(|r| !enveloped(r)).cloned().collect();
    let steps = recs.iter().filter(|r| r["table"] == "steps").count();
    let events = recs.iter().filter(|r| r["table"] == "events").count();
    let configs = recs.iter().filter(|r| r["table"] == "config").count();
    // the same counts as the reviewed `.expected` files: 137 steps (11 of them from glued
    // lines and other prefixes, 7 from lines cut short, 8 from the vLLM-Ascend and
    // Tenstorrent fixtures, 12 from the vLLM iteration-details fixture; and 63 of the engine
    // simulator's logs under loadgen/sim, 35 + 28 + 96 + 41 + 43), 33 events (16 of them incidents of the crash fixtures), 21
    // start-up milestones (13 graphs captured, 8 weights loaded), 2 HTTP 5xx access lines,
    // 157 config pairs; and 13 incidents in the `.expected` files themselves, read as logs
    // too, which quote incident messages
    assert_eq!((steps, events, configs), (137 + 243, 33 + 21 + 2 + 13, 157));
    // a line from the wrapped, coloured, CRLF-ended vLLM fixture
    let v = recs
        .iter()
        .find(|r| r["source"].as_str().unwrap().ends_with("vllm-messy.log") && r["line"] == 2)
        .unwrap();
    assert_eq!(v["instance"], "vllm-messy#DP1");
    assert_eq!(v["ts"], "2026-12-31T23:59:59");
    assert_eq!(v["gen_tps"], 633.5);
    assert_eq!(v["kv_usage"], 0.331);
    // New Year inside the file advances the year
    let v = recs
        .iter()
        .find(|r| r["source"].as_str().unwrap().ends_with("vllm-messy.log") && r["line"] == 3)
        .unwrap();
    assert_eq!(v["ts"], "2027-01-01T00:00:05");
}

#[test]
fn compressed_inputs_match_plain() {
    let src = fixture("runs/demo/sglang_gpu0.log");
    let plain = std::fs::read(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    // names that lie about the content: detection is by magic bytes only
    let gz = dir.path().join("gpu0.txt");
    let zs = dir.path().join("gpu0.log.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut e, &plain).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();
    std::fs::write(&zs, zstd::encode_all(&plain[..], 3).unwrap()).unwrap();
    let (_, want, _) = tokstat(&["parse", "--year", "2026", &src]);
    for p in [&gz, &zs] {
        let (code, got, err) = tokstat(&["parse", "--year", "2026", p.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let strip = |s: &str| {
            s.lines()
                .map(|l| {
                    let mut v: Value = serde_json::from_str(l).unwrap();
                    v.as_object_mut().unwrap().remove("source");
                    v.as_object_mut().unwrap().remove("instance");
                    v
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&got), strip(&want));
        assert!(
            err.contains("2,340 lines: 1,422 parsed, 918 other, 0 malformed"),
            "{err}"
        );
    }
}

#[test]
fn report_on_the_demo_run_matches_the_simulator() {
    let (code, out, err) = tokstat(&["report", "--format", "json", &fixture("runs/demo")]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["lines"],
        serde_json::json!({"total": 4680, "parsed": 2844, "other": 1836, "malformed": 0, "partial": 0})
    );
    let inst = v["instances"].as_array().unwrap();
    assert_eq!(inst.len(), 2);
    // simulator truth: 493 / 494 decode lines, 485 s / 609 s of decoding
    assert_eq!(inst[0]["instance"], "sglang_gpu0");
    assert_eq!(inst[0]["stat_lines"], 493);
    assert_eq!(inst[1]["stat_lines"], 494);
    assert_eq!(inst[0]["span_s"], 485.0);
    assert_eq!(inst[1]["span_s"], 608.0);
    // tokens integrated from the logged throughput, against the simulator's true counts
    // (fixtures/runs/demo.truth.txt): within 0.5%
    for (i, truth) in [(0, 1_261_522.0), (1, 1_265_645.0)] {
        let est = inst[i]["gen_tokens"].as_f64().unwrap();
        assert!((est / truth - 1.0).abs() < 0.005, "{est} vs {truth}");
    }
    // the second GPU is 25% slower
    let g0 = inst[0]["gen_tps_mean"].as_f64().unwrap();
    let g1 = inst[1]["gen_tps_mean"].as_f64().unwrap();
    assert!((g0 / g1 - 1.25).abs() < 0.01, "{g0} / {g1}");
    // the table form names both instances
    let (code, table, _) = tokstat(&["report", &fixture("runs/demo")]);
    assert_eq!(code, 0);
    assert!(
        table.contains("sglang_gpu0")
            && table.contains("sglang_gpu1")
            && table.contains("4,680 total"),
        "{table}"
    );
}

#[test]
fn year_comes_from_the_flag_or_the_file_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("v.log");
    std::fs::write(&p, "INFO 03-18 09:10:11 [loggers.py:80] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 2.0 tokens/s, Running: 4 reqs, Waiting: 0 reqs, GPU KV cache usage: 2.1%, Prefix cache hit rate: 50.0%").unwrap();
    let (_, out, _) = tokstat(&["parse", "--year", "2025", p.to_str().unwrap()]);
    assert_eq!(records(&out)[0]["ts"], "2025-03-18T09:10:11");
    // 2024-07-01 as the modification time
    let f = std::fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_719_792_000))
        .unwrap();
    drop(f);
    let (_, out, _) = tokstat(&["parse", p.to_str().unwrap()]);
    let r = &records(&out)[0];
    assert_eq!(r["ts"], "2024-03-18T09:10:11");
    assert_eq!(r["kv_usage"], 0.021);
    assert_eq!(r["prefix_hit_rate"], 0.5);
}

#[test]
fn globs_folders_and_errors() {
    let pattern = format!(
        "{}/formats/vllm/vllm-v0*.log",
        root().join("fixtures").display()
    );
    let (code, _, err) = tokstat(&["parse", &pattern]);
    assert_eq!(code, 0);
    assert_eq!(err.lines().count(), 2, "{err}");
    let (code, _, err) = tokstat(&["parse", "/no/such/file.log"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("/no/such/file.log") && err.contains("no such file"),
        "{err}"
    );
    let (code, _, err) = tokstat(&["parse"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = tokstat(&["report", "--format", "yaml", "x"]);
    assert_eq!(code, 2, "{err}");
    // a JSON file is not a log: skipped with a reason, not misread
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("c.jsonl");
    std::fs::write(&j, "{\"id\":1}\n").unwrap();
    let (code, out, err) = tokstat(&["parse", j.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("skipped: json content"), "{err}");
}

#[test]
fn schema_lists_the_tables() {
    let (code, out, _) = tokstat(&["schema", "--format", "json"]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let cols: Vec<&str> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(cols.contains(&"gen_tps") && cols.contains(&"kv_usage") && cols.contains(&"extra"));
}

#[test]
fn report_line_numbers_are_absolute_across_chunks() {
    // 3 MB: several 1 MiB chunks, counted after the fact rather than ahead (report)
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.log");
    let mut text = String::new();
    for i in 0..30_000 {
        if i == 25_000 {
            text.push_str("[2026-05-09 22:29:22 TP0] Decode batch, #running-req: many, #token: 1, token usage: 0.10, gen throughput (token/s): 1.00, #queue-req: 0\n");
        } else {
            text.push_str(&format!("[2026-05-09 22:29:22 TP0] Decode batch, #running-req: {}, #token: 44672, token usage: 0.12, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81\n", i % 64));
        }
    }
    std::fs::write(&p, text).unwrap();
    let (code, out, _) = tokstat(&["report", "--format", "json", "-q", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["lines"],
        serde_json::json!({"total": 30000, "parsed": 29999, "other": 0, "malformed": 1, "partial": 0})
    );
    assert_eq!(v["files"][0]["malformed_samples"][0]["line"], 25_001);
    assert_eq!(v["instances"][0]["stat_lines"], 29_999);
    // and parse, which numbers lines while working, agrees
    let (_, _, err) = tokstat(&["parse", p.to_str().unwrap()]);
    assert!(err.contains("(lines 25001; line 25001:"), "{err}");
}

#[test]
fn token_estimate_is_stitched_across_chunks() {
    // 20,000 decode lines one second apart at 100 tok/s (about 2.6 MB: three chunks)
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("steady.log");
    let mut text = String::new();
    for i in 0..20_000u32 {
        let (h, m, s) = (i / 3600, i / 60 % 60, i % 60);
        text.push_str(&format!("[2026-05-10 {h:02}:{m:02}:{s:02} TP0] Decode batch, #running-req: 8, #token: 4096, token usage: 0.10, cuda graph: True, gen throughput (token/s): 100.00, #queue-req: 0\n"));
    }
    std::fs::write(&p, text).unwrap();
    let (code, out, _) = tokstat(&["report", "--format", "json", "-q", p.to_str().unwrap()]);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    // every line's interval counts, the first with the typical length (1 s)
    assert_eq!(v["instances"][0]["gen_tokens"], 2_000_000.0);
    assert_eq!(v["steady"]["gen_tokens"], 2_000_000.0);
}

/// Output that cannot be written (a full disk, a closed file) is an error with exit code 1,
/// also when it only fails as the buffered report is flushed; a closed pipe is not.
#[test]
fn failed_writes_are_reported() {
    struct Failing(std::io::ErrorKind, bool);
    impl std::io::Write for Failing {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.1 {
                Err(self.0.into())
            } else {
                Ok(buf.len())
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(self.0.into())
        }
    }
    let demo = fixture("runs/demo");
    let argv = ["tokstat", "report", "--format", "json", "-q", demo.as_str()];
    for (kind, on_write) in [
        (std::io::ErrorKind::StorageFull, false),
        (std::io::ErrorKind::StorageFull, true),
        (std::io::ErrorKind::BrokenPipe, false),
    ] {
        let mut err = Vec::new();
        let code = tokstat::run(argv, &mut Failing(kind, on_write), &mut err);
        let err = String::from_utf8(err).unwrap();
        if kind == std::io::ErrorKind::BrokenPipe {
            assert_eq!((code, err.as_str()), (0, ""));
        } else {
            assert_eq!(code, 1, "{err}");
            assert!(err.starts_with("tokstat: "), "{err}");
        }
    }
}

/// On an 80-column terminal every line of the demo report and of a comparison fits, and
/// with a C locale everything is ASCII.
#[test]
fn output_fits_80_columns_and_ascii_locales() {
    use tokstat::render::Style;
    let runs = fixture("runs");
    for (unicode, args) in [
        (true, vec!["tokstat", "demo"]),
        (false, vec!["tokstat", "demo", "--compare"]),
        (
            true,
            vec![
                "tokstat",
                "compare",
                "--segments",
                &format!("{runs}/sglang-mrr"),
            ],
        ),
    ] {
        let style = Style {
            colour: false,
            unicode,
            width: Some(80),
        };
        let (mut out, mut err) = (Vec::new(), Vec::new());
        assert_eq!(
            tokstat::run_with(args.clone(), &mut out, &mut err, style),
            0
        );
        let text = String::from_utf8(out).unwrap();
        for line in text.lines() {
            assert!(line.chars().count() <= 80, "{args:?}: {line}");
        }
        assert_eq!(text.is_ascii(), !unicode, "{args:?}");
        assert!(text.contains("steady"), "{text}");
    }
}

/// The progress counters end at every input's size on disk and every file, for logs read
/// in chunks, JSON files read whole and a compressed file.
#[test]
fn progress_counts_every_byte_and_file() {
    use std::sync::Arc;
    use tokstat::ingest::progress::Progress;
    let progress = Arc::new(Progress::default());
    let inputs = vec![fixture("runs/demo"), fixture("runs/completions")];
    let size: u64 = ["runs/demo", "runs/completions"]
        .iter()
        .flat_map(|d| std::fs::read_dir(fixture(d)).unwrap())
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let report = tokstat::report::build(&tokstat::report::Options {
        inputs,
        year: Some(2026),
        progress: Some(progress.clone()),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(report.files.len(), 5);
    assert_eq!(progress.get(), (size, size, 5, 5));
}
