//! The layers of the crate import only what the README's layout allows: `ingest/` nothing
//! above it, `analysis/` no renderer and no command line, `report/` and `compare/` no
//! renderer, `render/` no command line, `export/` no command line.

use std::path::Path;

/// The `crate::` modules each source folder may name.
const ALLOWED: [(&str, &[&str]); 7] = [
    ("ingest", &["ingest", "testing"]),
    ("analysis", &["analysis", "ingest", "testing"]),
    ("report", &["report", "analysis", "ingest"]),
    ("compare", &["compare", "report", "analysis", "ingest"]),
    ("pulse", &["pulse", "report", "analysis", "ingest"]),
    (
        "render",
        &["render", "compare", "pulse", "report", "analysis", "ingest"],
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
