//! Every fuzz target's committed corpus (`fuzz/seeds/<target>/`: a minimised sample of what
//! the fuzzer found interesting, and every input that once failed) replayed through the
//! target's own check under `cargo test`, so a finding stays fixed without the fuzzing
//! toolchain.

macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(mod $name {
            include!(concat!("../../fuzz/checks/", stringify!($name), ".rs"));
        })*
        const TARGETS: &[(&str, fn(&[u8]))] = &[$((stringify!($name), $name::check)),*];
    };
}

targets!(
    bench_console,
    envelope,
    engine_messages,
    json_record,
    kv_pairs,
    loadgen,
    log_line,
    numbers,
    prometheus,
    scan
);

#[test]
fn every_target_replays_its_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds");
    for (name, check) in TARGETS {
        let dir = root.join(name);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() >= 10, "{name}: only {} inputs", files.len());
        for f in &files {
            let data = std::fs::read(f).unwrap();
            let run = std::panic::catch_unwind(|| check(&data));
            assert!(run.is_ok(), "{name}: {} fails its check", f.display());
        }
    }
}
