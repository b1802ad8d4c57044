//! The corpus test (issue 23): every stats line of the format fixtures (`fixtures/formats/
//! {sglang,vllm}`, every engine version, their readings pinned field by field by the
//! `.expected` files), put through the ways real logs arrive — docker and compose prefixes,
//! journald, colour codes, CRLF endings, rows of a terminal 80 columns wide, several records
//! glued on one line, a progress bar's `\r` before it, a cut end — must read as the clean
//! line does: 100% of stats lines, every
//! value exact. Ground truth is `tokstat parse` on the clean lines.

use serde_json::Value;
use tokstat_tests::{fixture, tokstat};

/// The `steps` records `parse` gives for a file, without where they came from.
fn steps(path: &std::path::Path) -> Vec<Value> {
    // (exit code 1 for a file of no record: the probes of other lines)
    let (_, out, _) = tokstat(&[
        "parse",
        "-q",
        "--year",
        "2026",
        "--date",
        "2024-09-01",
        path.to_str().unwrap(),
    ]);
    out.lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["table"] == "steps")
        .map(|mut r| {
            let o = r.as_object_mut().unwrap();
            for k in ["source", "line", "instance"] {
                o.remove(k);
            }
            r
        })
        .collect()
}

/// The clean stats lines of the fixtures (those `parse` reads as one step each).
fn stats_lines(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["formats/sglang", "formats/vllm"] {
        let mut files: Vec<_> = std::fs::read_dir(fixture(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        files.sort();
        for f in files {
            for line in std::fs::read_to_string(&f).unwrap().lines() {
                let probe = dir.join("probe.log");
                std::fs::write(&probe, format!("{line}\n")).unwrap();
                let s = steps(&probe);
                // (partial lines, cut on purpose in the fixtures, are the cut wrapper's)
                if s.len() == 1 && s[0].get("partial").is_none() {
                    out.push(line.to_string());
                }
            }
        }
    }
    out
}

/// The wrappers: each turns a list of clean lines into a file's text.
fn wrapped(name: &str, lines: &[String]) -> String {
    let each = |f: &dyn Fn(usize, &str) -> String| -> String {
        lines
            .iter()
            .enumerate()
            .map(|(i, l)| f(i, l) + "\n")
            .collect()
    };
    match name {
        "docker" => each(&|i, l| format!("2026-05-12T07:51:{:02}.069569496Z {l}", i % 60)),
        "compose" => each(&|_, l| format!("sglang-1  | {l}")),
        "journald" => {
            each(&|i, l| format!("Nov 30 18:13:{:02} gpu-node-7 python3[1234]: {l}", i % 60))
        }
        "ansi" => each(&|_, l| {
            // colour codes around the logger's level or stamp, as the engines' colourised
            // formatters put them
            match l.find(" INFO ").or_else(|| l.find("INFO ")) {
                Some(i) if i < 40 => {
                    let at = l[i..].find("INFO").unwrap() + i;
                    format!("{}\x1b[32mINFO\x1b[0m{}", &l[..at], &l[at + 4..])
                }
                _ => format!("\x1b[2m{l}\x1b[0m"),
            }
        }),
        "crlf" => lines.iter().map(|l| format!("{l}\r\n")).collect(),
        // a terminal 80 or 120 columns wide: each line broken into rows that long
        "wrapped" | "wrapped120" => each(&|_, l| {
            let chars: Vec<char> = l.chars().collect();
            chars
                .chunks(if name == "wrapped" { 80 } else { 120 })
                .map(|c| c.iter().collect::<String>())
                .collect::<Vec<_>>()
                .join("\n")
        }),
        // two records to a line; lines with no logger prefix at all (SGLang 0.1.14–0.1.16)
        // cannot be told apart once glued, and keep lines of their own
        "glued" => {
            let mut out = String::new();
            let mut held: Option<&str> = None;
            for l in lines {
                let prefixed = ['[', '(', '\x1b'].iter().any(|c| l.starts_with(*c))
                    || ["INFO ", "WARNING ", "DEBUG "]
                        .iter()
                        .any(|w| l.starts_with(w));
                match (prefixed, held.take()) {
                    (true, Some(h)) => out.push_str(&format!("{h}{l}\n")),
                    (true, None) => held = Some(l),
                    (false, h) => {
                        if let Some(h) = h {
                            out.push_str(&format!("{h}\n"));
                        }
                        out.push_str(&format!("{l}\n"));
                    }
                }
            }
            if let Some(h) = held {
                out.push_str(&format!("{h}\n"));
            }
            out
        }
        "progress" => each(&|i, l| {
            format!("Processed prompts:  {i:>2}%|█▏        | {i}/100 [00:41<2:58, 4.93it/s]\r{l}")
        }),
        _ => unreachable!(),
    }
}

#[test]
fn every_stats_line_reads_exactly_under_every_wrapper() {
    let dir = tempfile::tempdir().unwrap();
    let lines = stats_lines(dir.path());
    assert!(lines.len() >= 60, "{} stats lines", lines.len());
    let clean = dir.path().join("clean.log");
    std::fs::write(&clean, lines.join("\n") + "\n").unwrap();
    let truth = steps(&clean);
    assert_eq!(truth.len(), lines.len());
    let mut failures = Vec::new();
    for name in [
        "docker",
        "compose",
        "journald",
        "ansi",
        "crlf",
        "wrapped",
        "wrapped120",
        "glued",
        "progress",
    ] {
        let path = dir.path().join(format!("{name}.log"));
        std::fs::write(&path, wrapped(name, &lines)).unwrap();
        let got = steps(&path);
        if got.len() != truth.len() {
            failures.push(format!(
                "{name}: {} of {} stats lines read",
                got.len(),
                truth.len()
            ));
            continue;
        }
        for (i, (g, t)) in got.iter().zip(&truth).enumerate() {
            // a wrapper's own stamp may stand in for an engine stamp without a year
            let (mut g, mut t) = (g.clone(), t.clone());
            if matches!(name, "docker" | "journald") {
                g.as_object_mut().unwrap().remove("ts");
                t.as_object_mut().unwrap().remove("ts");
            }
            if g != t {
                failures.push(format!(
                    "{name}: line {i}: {}\n  got  {g}\n  want {t}",
                    lines[i]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // cut short inside the last field's key (a paste or a terminal width): the line reads
    // as partial, with every complete field before the cut as the clean line has it
    let mut cut_lines = Vec::new();
    let mut kept = Vec::new();
    for (l, t) in lines.iter().zip(&truth) {
        let body = l.trim_end().trim_end_matches([',', ' ', '.', '%']);
        let Some(at) = body.rfind(", ") else { continue };
        let Some(key) = body.get(at + 2..at + 4) else {
            continue;
        };
        // (a part of a list value, `0.781, 0.612, 0.441`, cut to `0.` is no key: no reader
        // can tell it from a shorter list)
        if !key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '#') {
            continue;
        }
        cut_lines.push(format!("{}, {key}", &body[..at]));
        kept.push(t);
    }
    let path = dir.path().join("cut.log");
    std::fs::write(&path, cut_lines.join("\n") + "\n").unwrap();
    let got = steps(&path);
    if got.len() != cut_lines.len() {
        for l in &cut_lines {
            let one = dir.path().join("one.log");
            std::fs::write(&one, format!("{l}\n")).unwrap();
            if steps(&one).len() != 1 {
                eprintln!("not a step: {l}");
            }
        }
    }
    assert_eq!(got.len(), cut_lines.len(), "every cut line still a step");
    for ((g, t), l) in got.iter().zip(kept).zip(&cut_lines) {
        for (k, v) in g.as_object().unwrap() {
            match k.as_str() {
                // (the unmodelled pairs before the cut)
                "extra" => {
                    for (ek, ev) in v.as_object().unwrap() {
                        assert_eq!(Some(ev), t["extra"].get(ek), "extra {ek} of {l}");
                    }
                }
                _ => assert_eq!(Some(v), t.get(k), "{k} of the cut line {l}"),
            }
        }
    }
    // and the accounting says so
    let (_, _, err) = tokstat(&[
        "parse",
        "--year",
        "2026",
        "--date",
        "2024-09-01",
        path.to_str().unwrap(),
    ]);
    let n = cut_lines.len();
    assert!(
        err.contains(&format!("{n} lines: {n} parsed ({n} cut short)")),
        "{err}"
    );
}
