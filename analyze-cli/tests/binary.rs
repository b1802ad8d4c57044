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
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokstat"));
    cmd.args(["report", "--format", "json", "-q", demo])
        .env("POLARS_VERBOSE", "1");
    let (status, out, err) = run_to_end(cmd, || {});
    assert!(status.success(), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["lines"]["total"], 4680);
    assert!(
        err.contains("HASH AGGREGATION") || err.contains("thread count"),
        "{err}"
    );
}

/// Runs the binary to its end with its pipes drained on threads (a full pipe cannot stall
/// it), calling `before` once it runs; (status, stdout, stderr). Killed, and the test failed,
/// if it has not ended after two minutes: a hang fails rather than waits.
fn run_to_end(
    mut cmd: Command,
    before: impl FnOnce(),
) -> (std::process::ExitStatus, String, String) {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            r.read_to_string(&mut s).unwrap();
            s
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    before();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("{cmd:?} did not end in two minutes");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    (status, out.join().unwrap(), err.join().unwrap())
}

/// Regression: a log truncated (logrotate's `copytruncate`) while the report read it killed
/// the process with SIGBUS, exit 135 and no word. It must end normally, keep what it read,
/// and say the file shrank.
#[test]
fn a_log_truncated_while_read_is_reported_not_fatal() {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    let dir = std::env::temp_dir().join(format!("tokstat-sigbus-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("server.log");
    let demo = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/runs/demo/sglang_gpu0.log"
    ))
    .unwrap();
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
        // ~150 MB: seconds of reading for the unoptimised test build
        for _ in 0..500 {
            f.write_all(&demo).unwrap();
        }
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tokstat"));
    cmd.args(["report", "--format", "json", "-q"]).arg(&log);
    let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    let (status, out, err) = run_to_end(cmd, || {
        std::thread::sleep(Duration::from_millis(300));
        file.set_len(0).unwrap();
    });
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(status.signal(), None, "killed by a signal: {err}");
    assert_eq!(status.code(), Some(1), "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let skipped = v["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    let reason = skipped[0]["reason"].as_str().unwrap();
    eprintln!("{reason}");
    assert!(reason.contains("shrank while read"), "{reason}");
    assert_eq!(skipped[0]["failed"], true);
    // whole lines only, each accounted for
    let lines = &v["lines"];
    let n = |k: &str| lines[k].as_u64().unwrap();
    assert_eq!(n("total"), n("parsed") + n("other") + n("malformed"));
    assert_eq!(n("malformed"), 0, "{lines}");
}

/// Files and folders the user cannot read are listed with the system's reason, and the rest
/// is read. Run as an unprivileged user (root reads everything): directly when the tests are
/// not root, else through `setpriv`.
#[test]
fn unreadable_files_and_folders_are_listed_with_their_reason() {
    use std::os::unix::fs::PermissionsExt;
    let root = unsafe { geteuid() } == 0;
    let setpriv = std::path::Path::new("/usr/bin/setpriv");
    if root && !setpriv.exists() {
        eprintln!("note: root without setpriv: cannot drop privileges to test permissions");
        return;
    }
    let dir = std::env::temp_dir().join(format!("tokstat-perm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("locked")).unwrap();
    let demo = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/runs/demo/sglang_gpu0.log"
    );
    std::fs::copy(demo, dir.join("gpu0.log")).unwrap();
    std::fs::copy(demo, dir.join("gpu1.log")).unwrap();
    std::fs::copy(demo, dir.join("locked/gpu2.log")).unwrap();
    let mode = |p: &str, m: u32| {
        std::fs::set_permissions(dir.join(p), std::fs::Permissions::from_mode(m)).unwrap()
    };
    mode("gpu1.log", 0o000);
    mode("locked", 0o000);
    mode(".", 0o755);
    let mut cmd = if root {
        // a copy the other user can reach (the build's folder may be private to root)
        let bin = std::env::temp_dir().join(format!("tokstat-perm-bin-{}", std::process::id()));
        std::fs::copy(env!("CARGO_BIN_EXE_tokstat"), &bin).unwrap();
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let mut c = Command::new(setpriv);
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"]);
        c.arg(bin);
        c
    } else {
        Command::new(env!("CARGO_BIN_EXE_tokstat"))
    };
    cmd.args(["report", "--format", "json", "-q"]).arg(&dir);
    let (status, out, err) = run_to_end(cmd, || {});
    mode("locked", 0o755);
    std::fs::remove_dir_all(&dir).unwrap();
    let _ = std::fs::remove_file(
        std::env::temp_dir().join(format!("tokstat-perm-bin-{}", std::process::id())),
    );
    assert_eq!(status.code(), Some(1), "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    assert_eq!(v["lines"]["total"], 2340, "gpu0.log is read");
    let skipped: Vec<(String, String)> = v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let src = s["source"].as_str().unwrap();
            (
                src[src.rfind('/').unwrap() + 1..].to_string(),
                s["reason"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        skipped,
        [
            (
                "locked".to_string(),
                "cannot list: Permission denied (os error 13)".to_string()
            ),
            (
                "gpu1.log".to_string(),
                format!(
                    "cannot open {}: Permission denied (os error 13)",
                    dir.join("gpu1.log").display()
                )
            ),
        ]
    );
}

extern "C" {
    fn geteuid() -> u32;
}

/// `--threads 1` gives the same report as all cores: the order of the work never shows.
#[test]
fn one_thread_gives_the_same_report() {
    let fleet = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/runs/fleet");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_tokstat"))
            .args(["report", "--format", "json", "-q"])
            .args(extra)
            .arg(fleet)
            .output()
            .unwrap();
        assert!(out.status.success());
        out.stdout
    };
    assert_eq!(run(&["--threads", "1"]), run(&[]));
}
