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
