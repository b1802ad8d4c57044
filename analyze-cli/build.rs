//! Packs the demo runs (`fixtures/runs/{demo,completions,vllm-c128,vllm-c200}`) into one
//! gzip-compressed archive that `tokstat demo` carries inside the binary, so that it works
//! after `cargo install` from any folder. The archive is a list of entries: path length
//! (u32 LE), path, data length (u64 LE), data.

use std::io::Write;
use std::path::{Path, PathBuf};

const RUNS: [&str; 4] = ["demo", "completions", "vllm-c128", "vllm-c200"];

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/runs");
    let mut archive = Vec::new();
    for run in RUNS {
        let dir = root.join(run);
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut found = Vec::new();
        files(&dir, &mut found);
        for f in found {
            let rel = f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let data = std::fs::read(&f).unwrap();
            archive.extend_from_slice(&(rel.len() as u32).to_le_bytes());
            archive.extend_from_slice(rel.as_bytes());
            archive.extend_from_slice(&(data.len() as u64).to_le_bytes());
            archive.extend_from_slice(&data);
        }
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("demo-runs.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&out).unwrap(),
        flate2::Compression::best(),
    );
    gz.write_all(&archive).unwrap();
    gz.finish().unwrap();
}
