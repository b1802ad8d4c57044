//! Every input line is accounted for: for every fixture file (each engine format, the messy
//! ones, completions, benchmark results, scrapes, every simulated run's files), the report's
//! `total` is the file's number of lines (as `wc -l` counts them, plus an unterminated last
//! line) and `total = parsed + other + malformed`, per file and for the run.

use serde_json::Value;
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        // the vendored public suites have tests of their own (`suites.rs`), binary cases too
        if p.ends_with("suites") {
            continue;
        }
        // saved reads are read through their export folder (`export.rs`), not as files
        if p.ends_with("saved") {
            continue;
        }
        if p.is_dir() {
            files(&p, out);
        } else if !matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("expected" | "txt" | "zst")
        ) {
            out.push(p);
        }
    }
}

fn line_count(bytes: &[u8]) -> u64 {
    let newlines = bytes.iter().filter(|&&c| c == b'\n').count() as u64;
    newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

#[test]
fn every_fixture_line_is_parsed_other_or_malformed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut all = Vec::new();
    files(&root, &mut all);
    assert!(all.len() > 80, "{} fixture files", all.len());
    for path in &all {
        let p = path.display().to_string();
        let mut out = Vec::new();
        let mut err = Vec::new();
        let args = [
            "tokstat", "report", "--format", "json", "--year", "2026", &p,
        ];
        tokstat::run(args, &mut out, &mut err);
        let r: Value = serde_json::from_slice(&out)
            .unwrap_or_else(|e| panic!("{p}: {e}: {}", String::from_utf8_lossy(&err)));
        let files = r["files"].as_array().unwrap();
        assert_eq!(files.len(), 1, "{p}: {files:?} {}", r["skipped"]);
        let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
        for v in [&files[0], &r["lines"]] {
            assert_eq!(
                n(v, "total"),
                n(v, "parsed") + n(v, "other") + n(v, "malformed"),
                "{p}: {v}"
            );
        }
        let want = line_count(&std::fs::read(path).unwrap());
        match files[0].get("envelope") {
            // a collector's records: every row read, pieces of a line joined into one
            Some(e) => {
                assert_eq!(
                    n(&files[0], "total"),
                    n(e, "rows") - n(e, "joined"),
                    "{p}: {e}"
                );
                if !p.ends_with(".json") {
                    assert_eq!(n(e, "rows"), want, "{p}");
                }
            }
            // a Parquet file's lines are its rows (AIPerf's: 100, tests/tests/metrics.rs)
            None if p.ends_with(".parquet") => {}
            None => assert_eq!(n(&files[0], "total"), want, "{p}"),
        }
        // a file recognised as holding no results (a load generator's inputs or settings) is
        // accounted for and said so, not failed
        assert!(
            r["skipped"]
                .as_array()
                .unwrap()
                .iter()
                .all(|s| s["failed"] == false
                    && s["reason"]
                        .as_str()
                        .is_some_and(|r| r.starts_with("recognised, not read"))),
            "{p}: {}",
            r["skipped"]
        );
    }
}
