//! Every fixture line of `fixtures/formats/` against its expected reading, field by field.
//!
//! Each `X.log` has a `X.expected` beside it: one line per input line, listing every field the
//! parser produced. The expectations were written from the engines' format strings
//! (docs/formats.md §1–2) and checked by hand; `BLESS=1 cargo test -p tokstat-parsers --test
//! main variants::` rewrites them after a deliberate change, for review in the diff.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use tokstat_parsers::record::{Body, Line};
use tokstat_parsers::scan::lines;
use tokstat_parsers::stamp::{days_from_civil, Calendar};

fn describe(line: &Line<'_>, ts: Option<String>) -> String {
    let mut s = String::new();
    let p = &line.prefix;
    let ranks = [
        ("dp", p.ranks.dp),
        ("tp", p.ranks.tp),
        ("pp", p.ranks.pp),
        ("ep", p.ranks.ep),
        ("attn_cp", p.ranks.attn_cp),
        ("moe_dp", p.ranks.moe_dp),
    ];
    let mut head = String::new();
    if let Some(ts) = ts {
        write!(head, " ts={ts}").unwrap();
    }
    for (k, v) in ranks {
        if let Some(v) = v {
            write!(head, " {k}={v}").unwrap();
        }
    }
    if let Some(proc_) = p.process {
        write!(head, " process={proc_}").unwrap();
    }
    match &line.body {
        Body::Other => s.push_str("other"),
        Body::Malformed(why) => write!(s, "malformed: {why}").unwrap(),
        Body::Step(st) => {
            write!(
                s,
                "step {} {}{}{head}",
                st.engine.unwrap().as_str(),
                st.kind.unwrap().as_str(),
                if st.partial { " partial" } else { "" }
            )
            .unwrap();
            let u = [
                ("engine_index", st.engine_index.map(u64::from)),
                ("engines", st.aggregated_engines.map(u64::from)),
                ("running", st.running),
                ("waiting", st.waiting),
                ("tokens", st.tokens),
                ("new_seq", st.new_seq),
                ("new_tokens", st.new_tokens),
                ("cached_tokens", st.cached_tokens),
                ("preemptions", st.preemptions),
            ];
            for (k, v) in u {
                if let Some(v) = v {
                    write!(s, " {k}={v}").unwrap();
                }
            }
            let f = [
                ("gen_tps", st.gen_tps),
                ("prompt_tps", st.prompt_tps),
                ("kv_usage", st.kv_usage),
                ("accept_len", st.accept_len),
                ("accept_rate", st.accept_rate),
                ("mamba_usage", st.mamba_usage),
                ("swa_usage", st.swa_usage),
                ("prefix_hit_rate", st.prefix_hit_rate),
            ];
            for (k, v) in f {
                if let Some(v) = v {
                    write!(s, " {k}={v}").unwrap();
                }
            }
            if let Some(g) = st.graph {
                write!(s, " graph={g}").unwrap();
            }
            for (k, v) in st.extra.iter() {
                write!(s, " [{k}]={v:?}").unwrap();
            }
        }
        Body::Event(e) => {
            write!(s, "event {}{head}", e.kind.as_str()).unwrap();
            if let Some(c) = e.count {
                write!(s, " count={c}").unwrap();
            }
            write!(s, " message={:?}", e.message).unwrap();
        }
        Body::Config(c) => {
            write!(s, "config{head}").unwrap();
            for (k, v) in c.pairs() {
                write!(s, " {k}={v:?}").unwrap();
            }
        }
    }
    s
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/formats");
    let mut out = Vec::new();
    for dir in ["sglang", "vllm", "messy", "incidents"] {
        let mut v: Vec<_> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "log"))
            .collect();
        v.sort();
        out.extend(v);
    }
    out
}

fn read(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    // a fixed calendar: year 2026 for vLLM, 2024-09-01 for time-only SGLang stamps
    let mut cal = Calendar::new(2026, days_from_civil(2024, 9, 1).unwrap());
    let mut scratch = String::new();
    let mut out = String::new();
    for (i, raw) in lines(&bytes).enumerate() {
        let line = tokstat_parsers::parse_line(raw, &mut scratch);
        // a line holding several records glued together: each piece on a line of its own,
        // under the same line number
        let pieces = match std::str::from_utf8(raw) {
            Ok(text) if tokstat_parsers::wrappers::glued::worth_splitting(&line, text) => {
                tokstat_parsers::wrappers::glued::pieces(text)
            }
            _ => Vec::new(),
        };
        if pieces.len() > 1 {
            for p in pieces {
                let mut scratch = String::new();
                let line = tokstat_parsers::parse_str_line(p, &mut scratch, true);
                let ts = cal.resolve(line.prefix.stamp).map(|t| t.to_string());
                writeln!(out, "{} {}", i + 1, describe(&line, ts)).unwrap();
            }
            continue;
        }
        let ts = cal.resolve(line.prefix.stamp).map(|t| t.to_string());
        writeln!(out, "{} {}", i + 1, describe(&line, ts)).unwrap();
    }
    out
}

#[test]
fn every_fixture_line_reads_as_expected() {
    let bless = std::env::var_os("BLESS").is_some();
    let files = fixtures();
    assert!(files.len() >= 17, "fixtures missing: {files:?}");
    let mut failures = Vec::new();
    for f in files {
        let got = read(&f);
        let exp_path = f.with_extension("expected");
        if bless {
            std::fs::write(&exp_path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&exp_path)
            .unwrap_or_else(|_| panic!("{} has no .expected file", f.display()));
        for (g, w) in got.lines().zip(want.lines()) {
            if g != w {
                failures.push(format!("{}:\n  want {w}\n  got  {g}", f.display()));
            }
        }
        if got.lines().count() != want.lines().count() {
            failures.push(format!(
                "{}: {} lines read, {} expected",
                f.display(),
                got.lines().count(),
                want.lines().count()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
