//! `tokstat pulse` on a file that grows while it runs: the window's records are exactly those
//! appended between its first and last mark (no record counted twice, none before its
//! newline), and the ETA is the documented formula over them, checked against values
//! recomputed here from the file itself.

use serde_json::Value;
use std::io::Write;
use tokstat_tests::tokstat;

fn record(i: u64) -> String {
    let finish = if i.is_multiple_of(40) {
        "length"
    } else {
        "stop"
    };
    format!(
        "{{\"id\": {i}, \"choices\": [{{\"finish_reason\": \"{finish}\"}}], \"usage\": {{\"prompt_tokens\": 100, \"completion_tokens\": {}}}}}\n",
        500 + (i * 7) % 300 + i / 10
    )
}

fn tokens(line: &str) -> f64 {
    let v: Value = serde_json::from_str(line).unwrap();
    v["usage"]["completion_tokens"].as_f64().unwrap()
}

#[test]
fn a_growing_file_is_measured_over_the_window_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    for i in 0..2000 {
        f.write_all(record(i).as_bytes()).unwrap();
    }
    // half a record: never counted before its newline
    let partial = record(2000);
    f.write_all(&partial.as_bytes()[..20]).unwrap();
    f.flush().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let stop = stop.clone();
        let mut f = f.try_clone().unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(100));
            f.write_all(&partial.as_bytes()[20..]).unwrap();
            let mut i = 2001;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for _ in 0..3 {
                    f.write_all(record(i).as_bytes()).unwrap();
                    i += 1;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        })
    };
    let p = path.display().to_string();
    let args = [
        "pulse",
        "--window",
        "1s",
        "--samples",
        "4",
        "--total",
        "20000",
        "--format",
        "json",
        &p,
    ];
    let (code, out, err) = tokstat(&args);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert_eq!(code, 0, "{}", err);
    let v: Value = serde_json::from_str(&out).unwrap();
    let c = &v["client"];
    let requests = c["requests"].as_u64().unwrap();
    let done = v["job"]["requests_done"].as_u64().unwrap();
    // the job before the window ended at the last newline: the 2,000 whole records
    assert_eq!(done - requests, 2000, "{v}");
    assert!(requests > 5, "{v}");
    // the window's records, from the file as it is now
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let window = &lines[2000..2000 + requests as usize];
    let bytes: usize = window.iter().map(|l| l.len() + 1).sum();
    assert_eq!(v["bytes"].as_u64().unwrap() as usize, bytes);
    let sum: f64 = window.iter().map(|l| tokens(l)).sum();
    assert_eq!(c["output_tokens"].as_f64().unwrap(), sum);
    let window_s = v["window_s"].as_f64().unwrap();
    let rate = sum / window_s;
    assert!((c["output_tokens_per_s"].as_f64().unwrap() / rate - 1.0).abs() < 1e-12);
    assert_eq!(
        c["tokens_per_request_mean"].as_f64().unwrap(),
        sum / requests as f64
    );
    // the ETA: remaining × the fitted length at the middle of what is left ÷ the rate
    let ys: Vec<f64> = lines[..done as usize].iter().map(|l| tokens(l)).collect();
    let n = ys.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / n;
    let sxx: f64 = (0..ys.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    let sxy: f64 = ys
        .iter()
        .enumerate()
        .map(|(i, y)| (i as f64 - mx) * (y - my))
        .sum();
    let b = sxy / sxx;
    let projected = my - b * mx + b * (done + 20000) as f64 / 2.0;
    let e = &v["eta"];
    assert_eq!(e["remaining"].as_u64().unwrap(), 20000 - done);
    let rel = |a: f64, b: f64| (a / b - 1.0).abs();
    assert!(
        rel(
            e["projected_tokens_per_request"].as_f64().unwrap(),
            projected
        ) < 1e-9
    );
    let seconds = (20000 - done) as f64 * projected / rate;
    assert!(rel(e["seconds"].as_f64().unwrap(), seconds) < 1e-9, "{e}");
    let (lo, hi) = (
        e["seconds_low"].as_f64().unwrap(),
        e["seconds_high"].as_f64().unwrap(),
    );
    assert!(
        lo <= seconds * (1.0 + 1e-12) && seconds <= hi * (1.0 + 1e-12),
        "{e}"
    );
    assert_eq!(c["failures"], 0);
}

#[test]
fn a_file_that_does_not_grow_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    std::fs::write(&path, record(1)).unwrap();
    let p = path.display().to_string();
    let args = ["pulse", "--window", "200ms", "--samples", "2", &p];
    let (code, out, err) = tokstat(&args);
    assert_eq!(code, 0, "{err}");
    let text = out;
    assert!(
        text.contains("no completion records written in the window"),
        "{text}"
    );
    assert!(text.contains("1 requests done"), "{text}");
}

/// `watch` on a pipe prints one line per look; records are counted once, however many looks.
#[test]
fn watch_prints_a_line_per_look_and_counts_each_record_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.jsonl");
    let text: String = (0..10).map(record).collect();
    std::fs::write(&path, text).unwrap();
    let p = path.display().to_string();
    let args = [
        "watch", "--every", "100ms", "--for", "1s", "--total", "40", &p,
    ];
    let (code, out, _) = tokstat(&args);
    assert_eq!(code, 0);
    let text = out;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 2, "{text}");
    for l in &lines {
        assert!(l.contains(" done=10/40 "), "{l}");
    }
    let args = ["watch", "--once", "--total", "40", &p];
    let (code, out, _) = tokstat(&args);
    assert_eq!(code, 0);
    let text = out;
    assert!(text.contains("10 / 40 (25.0%)"), "{text}");
}

/// A Prometheus endpoint on 127.0.0.1 whose counters grow by a known amount per scrape:
/// the k-th scrape (from 1) says 1,000·k generated tokens and 10·k finished requests, with
/// 7 running, 3 waiting and KV usage 0.25. Returns its URL.
fn metrics_server() -> String {
    use std::io::{BufRead, BufReader};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (k, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 2 {
                line.clear();
            }
            let k = k as u64 + 1;
            let body = format!(
                "# TYPE vllm:generation_tokens_total counter\n\
                 vllm:generation_tokens_total{{model_name=\"m\"}} {}\n\
                 # TYPE vllm:request_success_total counter\n\
                 vllm:request_success_total{{finished_reason=\"stop\",model_name=\"m\"}} {}\n\
                 vllm:num_requests_running{{model_name=\"m\"}} 7\n\
                 vllm:num_requests_waiting{{model_name=\"m\"}} 3\n\
                 vllm:kv_cache_usage_perc{{model_name=\"m\"}} 0.25\n",
                1000 * k,
                10 * k
            );
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://127.0.0.1:{port}/metrics")
}

/// `watch --metrics` against [`metrics_server`]: the rates come from the increase between
/// scrapes, the gauges from the last one, and `--save-scrapes` keeps every scrape stamped,
/// which `report` reads.
#[test]
fn watch_scrapes_a_live_metrics_endpoint() {
    let url = metrics_server();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("scrapes.prom");
    let s = saved.display().to_string();
    let args = [
        "watch",
        "--metrics",
        &url,
        "--save-scrapes",
        &s,
        "--every",
        "300ms",
        "--for",
        "1s",
    ];
    let (code, out, err) = tokstat(&args);
    assert_eq!(code, 0, "{}", err);
    let text = out;
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "{text}");
    // the first scrape has no rate yet; the later ones 1,000 tokens and 10 requests per
    // ~0.3 s, running 7, waiting 3, KV 0.25
    assert!(lines[0].contains("metrics_gen_tok/s=- "), "{}", lines[0]);
    for l in &lines[1..] {
        let field = |k: &str| -> f64 {
            let at = l.find(&format!("{k}=")).unwrap() + k.len() + 1;
            l[at..].split(' ').next().unwrap().parse().unwrap()
        };
        let tps = field("metrics_gen_tok/s");
        // 1,000 tokens a scrape apart (~0.3 s, longer on a loaded machine)
        assert!((500.0..=4_000.0).contains(&tps), "{l}");
        assert!((field("metrics_req/s") * 100.0 - tps).abs() <= 1.0, "{l}");
        assert_eq!(field("metrics_running"), 7.0);
        assert_eq!(field("metrics_waiting"), 3.0);
        assert_eq!(field("metrics_kv"), 0.25);
    }
    // the saved scrapes, read back: one per look, the counters' last value
    let args = ["report", "--format", "json", "-q", &s];
    let (code, out, _) = tokstat(&args);
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&out).unwrap();
    let m = &v["metrics"];
    assert_eq!(m["scrapes"].as_u64().unwrap() as usize, lines.len());
    assert_eq!(
        m["generation_tokens"].as_f64().unwrap(),
        1000.0 * lines.len() as f64
    );
}

/// `watch` follows a folder while a writer appends at a known rate, leaves a line half
/// written for a while, rotates by `copytruncate` (a copy beside, the file emptied), rotates
/// by rename and re-create, and starts a new batch file: every record is counted exactly
/// once, and each rotation is said.
#[test]
fn watch_counts_each_record_once_through_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_path_buf();
    let live = d.join("out.jsonl");
    std::fs::write(&live, "").unwrap();
    let writer = {
        let d = d.clone();
        std::thread::spawn(move || {
            let live = d.join("out.jsonl");
            let append = |p: &std::path::Path, s: &str| {
                let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
                f.write_all(s.as_bytes()).unwrap();
            };
            let pause = || std::thread::sleep(std::time::Duration::from_millis(40));
            let mut n = 0u64;
            for _ in 0..10 {
                append(&live, &record(n));
                n += 1;
                pause();
            }
            // half a line, finished later
            let half = record(n);
            append(&live, &half[..15]);
            pause();
            pause();
            append(&live, &half[15..]);
            n += 1;
            // copytruncate: copied beside, emptied in place, written on
            std::fs::copy(&live, d.join("out.jsonl.1")).unwrap();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&live)
                .unwrap()
                .set_len(0)
                .unwrap();
            for _ in 0..5 {
                append(&live, &record(n));
                n += 1;
                pause();
            }
            // rename and re-create
            std::fs::rename(&live, d.join("out.jsonl.2")).unwrap();
            std::fs::write(&live, "").unwrap();
            for _ in 0..5 {
                append(&live, &record(n));
                n += 1;
                pause();
            }
            // a new batch file
            let batch: String = (n..n + 7).map(record).collect();
            std::fs::write(d.join("batch-0002.jsonl"), batch).unwrap();
            n + 7
        })
    };
    let p = d.display().to_string();
    let args = [
        "watch", "--every", "100ms", "--for", "4s", "--total", "100", &p,
    ];
    let (code, out, err) = tokstat(&args);
    let written = writer.join().unwrap();
    assert_eq!(code, 0, "{}", err);
    let text = out;
    let last = text.lines().last().unwrap();
    assert!(
        last.contains(&format!(" done={written}/100 ")),
        "{written}: {text}"
    );
    for said in ["truncated", "rotated", "replaced", "new file"] {
        assert!(text.contains(said), "`{said}` not said:\n{text}");
    }
}

/// `pulse --metrics` with no other input (issue 40, item 6: it was refused): the endpoint is
/// scraped at the window's start and at each sample, and the window's figures are the
/// counters' increase over the time between the first and last scrape.
#[test]
fn pulse_scrapes_a_live_metrics_endpoint() {
    let url = metrics_server();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("scrapes.prom");
    let s = saved.display().to_string();
    let args = [
        "pulse",
        "--metrics",
        &url,
        "--save-scrapes",
        &s,
        "--window",
        "2s",
        "--samples",
        "2",
        "--format",
        "json",
    ];
    let (code, out, err) = tokstat(&args);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let m = &v["metrics"];
    assert_eq!(m["scrapes"], 3);
    assert_eq!(m["generation_tokens"], 3000.0);
    assert_eq!(m["finished"]["stop"], 20.0);
    let span = m["span_s"].as_f64().unwrap();
    assert!(span >= 1.9, "{span}");
    // 2,000 tokens and 20 requests over the span
    assert!((m["gen_tps"].as_f64().unwrap() * span - 2000.0).abs() < 1e-6);
    assert!((m["requests_per_s"].as_f64().unwrap() * span - 20.0).abs() < 1e-6);
    assert_eq!(m["running"]["mean"], 7.0);
    assert_eq!(m["waiting"]["mean"], 3.0);
    assert_eq!(m["kv_usage"]["mean"], 0.25);
    assert!(v["client"].is_null() && v["server"].is_null() && v["gap"].is_null());
    // the same scrapes, saved
    let (code, out, _) = tokstat(&["report", "--format", "json", "-q", &s]);
    assert_eq!(code, 0);
    let r: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(r["metrics"]["scrapes"], 3);
    assert_eq!(r["metrics"]["finished"]["stop"], 20.0);
    // the terminal line
    let args = [
        "pulse",
        "--metrics",
        &url,
        "--window",
        "2s",
        "--samples",
        "2",
    ];
    let (code, out, err) = tokstat(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("  metrics "), "{out}");
    assert!(out.contains("7.0 running · 3.0 queued · kv 0.25"), "{out}");
    // neither inputs nor --metrics: refused by the command line
    let (code, _, err) = tokstat(&["pulse"]);
    assert_eq!(code, 2, "{err}");
}
