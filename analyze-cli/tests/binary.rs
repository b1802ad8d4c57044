//! The `tokstat` binary itself (what `main` adds to the library: its output streams).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Regression: `main` held the stderr lock for the whole run, so a message written on
/// another thread waited for it forever. Polars writes its verbose log from its own threads:
/// with `POLARS_VERBOSE=1` every report with a timeline hung. It must finish, with the
/// report on stdout and polars' lines on stderr.
#[test]
fn a_library_writing_to_stderr_from_its_threads_does_not_hang_the_report() {
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs/demo");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tokstat"))
        .args(["report", "--format", "json", "-q", demo])
        .env("POLARS_VERBOSE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // the pipes are drained on threads of their own, so that a full pipe cannot stall it
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("the report hung with POLARS_VERBOSE=1");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let (out, err) = (out.join().unwrap(), err.join().unwrap());
    assert!(status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lines"]["total"], 4680);
    assert!(
        err.contains("HASH AGGREGATION") || err.contains("thread count"),
        "{err}"
    );
}
