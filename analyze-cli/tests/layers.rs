//! The layers of the crate import only what docs/layout.md allows: `ingest/` nothing
//! above it, `analysis/` no renderer and no command line, `report/` and `compare/` no
//! renderer, `render/` no command line, `export/` no command line.

use std::path::Path;

/// The `crate::` modules each source folder may name.
const ALLOWED: [(&str, &[&str]); 7] = [
    ("ingest", &["ingest", "testing"]),
    ("analysis", &["analysis", "ingest", "testing"]),
    ("report", &["report", "analysis", "ingest"]),
    ("compare", &["compare", "report", "analysis", "ingest"]),
    ("live", &["live", "report", "analysis", "ingest"]),
    (
        "render",
        &["render", "compare", "live", "report", "analysis", "ingest"],
    ),
    (
        "export",
        &[
            "export", "report", "frames", "schema", "render", "analysis", "ingest", "testing",
        ],
    ),
];

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn layers_import_only_what_the_layout_allows() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut wrong = Vec::new();
    for (folder, allowed) in ALLOWED {
        let mut paths = Vec::new();
        files(&src.join(folder), &mut paths);
        assert!(!paths.is_empty(), "{folder}/ has no source");
        for p in paths {
            let text = std::fs::read_to_string(&p).unwrap();
            for (n, line) in text.lines().enumerate() {
                for (at, _) in line.match_indices("crate::") {
                    let module: String = line[at + 7..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    // `crate::{a, b}` and constants of the crate root (exit codes) are fine
                    let root = module.is_empty()
                        || module.chars().all(|c| c.is_ascii_uppercase() || c == '_');
                    if !root && !allowed.contains(&module.as_str()) {
                        wrong.push(format!("{}:{}: crate::{module}", p.display(), n + 1));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports across layers:\n{}",
        wrong.join("\n")
    );
}

/// A source file's module path (`analysis::hints::steady`) from its path under `src/`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

/// The files each file names through `crate::` and `super::` paths (its tests left out),
/// as module paths of the crate's files.
fn imports(src: &Path) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let mut paths = Vec::new();
    files(src, &mut paths);
    let modules: Vec<Vec<String>> = paths.iter().map(|p| module_of(src, p)).collect();
    let is_module = |m: &[String]| modules.iter().any(|x| x == m);
    paths
        .iter()
        .zip(&modules)
        .map(|(p, me)| {
            let text = std::fs::read_to_string(p).unwrap();
            let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
            // (doc links name modules without importing them)
            let text: String = code
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let mut named = Vec::new();
            for start in ["crate::", "super::"] {
                for (at, _) in text.match_indices(start) {
                    if at > 0 && {
                        let c = text.as_bytes()[at - 1];
                        c.is_ascii_alphanumeric() || c == b'_' || c == b':'
                    } {
                        continue;
                    }
                    // the path's segments, as far as they name modules
                    let rest = &text[at + start.len()..];
                    let segs: Vec<String> = rest
                        .split("::")
                        .map(|s| {
                            s.chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                                .collect::<String>()
                        })
                        .take_while(|s| !s.is_empty())
                        .collect();
                    let mut base: Vec<String> = if start == "crate::" {
                        Vec::new()
                    } else {
                        // `super` of a `mod.rs` is its folder's parent; of a file, its folder
                        let mut b = me.clone();
                        b.pop();
                        b
                    };
                    let mut best = None;
                    for s in segs {
                        base.push(s);
                        if is_module(&base) {
                            best = Some(base.clone());
                        } else {
                            break;
                        }
                    }
                    let target = best.unwrap_or_else(|| {
                        // `super::Item`, `crate::ingest::Item`: the module before the item
                        if !is_module(&base) {
                            base.pop();
                        }
                        base
                    });
                    if &target != me && is_module(&target) && !named.contains(&target) {
                        named.push(target);
                    }
                }
            }
            (me.clone(), named)
        })
        .collect()
}

/// The import cycles among a crate's files: each strongly connected set of two or more.
fn cycles(src: &Path) -> Vec<String> {
    let graph = imports(src);
    let index = |m: &Vec<String>| graph.iter().position(|(x, _)| x == m).unwrap();
    let edges: Vec<Vec<usize>> = graph
        .iter()
        .map(|(_, to)| to.iter().map(index).collect())
        .collect();
    let reach = |from: usize| {
        let mut seen = vec![false; graph.len()];
        let mut todo = vec![from];
        while let Some(n) = todo.pop() {
            for &m in &edges[n] {
                if !seen[m] {
                    seen[m] = true;
                    todo.push(m);
                }
            }
        }
        seen
    };
    let reaches: Vec<Vec<bool>> = (0..graph.len()).map(reach).collect();
    let mut done = vec![false; graph.len()];
    let mut out = Vec::new();
    for a in 0..graph.len() {
        if done[a] {
            continue;
        }
        let set: Vec<usize> = (0..graph.len())
            .filter(|&b| b != a && reaches[a][b] && reaches[b][a])
            .collect();
        if set.is_empty() {
            continue;
        }
        let mut names = vec![graph[a].0.join("::")];
        for &b in &set {
            done[b] = true;
            names.push(graph[b].0.join("::"));
        }
        out.push(names.join(" ↔ "));
    }
    out
}

/// No file imports, through others, a file that imports it: in the CLI crate and in the
/// parsers. A vocabulary both sides use goes into a file of its own.
#[test]
fn no_import_cycles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for src in [root.join("src"), root.join("../parsers/src")] {
        let found = cycles(&src);
        assert!(
            found.is_empty(),
            "import cycles in {}:\n{}",
            src.display(),
            found.join("\n")
        );
    }
}
