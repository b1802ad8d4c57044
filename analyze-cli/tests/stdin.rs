//! The built binary, for what the in-process tests cannot reach: standard input (`-`), a
//! compressed stream on it, and exit codes as the shell sees them.

use std::io::Write;
use std::process::{Command, Stdio};

fn run_with_stdin(args: &[&str], input: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokstat"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const LOG: &str = "[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 40, #token: 51200, token usage: 0.12, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81\n[2026-05-09 22:29:23] INFO:     127.0.0.1:40052 - \"POST /generate HTTP/1.1\" 200 OK\n";

#[test]
fn stdin_plain_and_zstd() {
    let (code, out, err) = run_with_stdin(&["parse", "-"], LOG.as_bytes());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        (
            v["source"].as_str(),
            v["instance"].as_str(),
            v["gen_tps"].as_f64()
        ),
        (Some("-"), Some("stdin"), Some(1863.65))
    );
    assert!(
        err.contains("-: 2 lines: 1 parsed, 1 other, 0 malformed"),
        "{err}"
    );
    // zstd on stdin: detected by its magic bytes
    let z = zstd::encode_all(LOG.as_bytes(), 3).unwrap();
    let (code, out2, _) = run_with_stdin(&["parse", "-"], &z);
    assert_eq!((code, out2), (0, out));
    // completions on stdin
    let (code, out, err) = run_with_stdin(
        &["report", "--format", "json", "-q", "-"],
        b"{\"finish_reason\":\"length\",\"usage\":{\"completion_tokens\":7}}\n",
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["completions"]["cap"]["value"], 7);
}

#[test]
fn exit_codes() {
    let (code, _, err) = run_with_stdin(&["report", "/no/such/dir/x.log"], b"");
    assert_eq!(code, 1);
    assert!(err.contains("/no/such/dir/x.log"), "{err}");
    let (code, _, _) = run_with_stdin(&["report", "--bogus"], b"");
    assert_eq!(code, 2);
    // nothing parseable is a failure
    let (code, _, _) = run_with_stdin(&["parse", "-"], b"hello\nworld\n");
    assert_eq!(code, 1);
}
