# tokstat tasks; `just --list` shows them.

# release build of the CLI
build:
    cargo build --release -p tokstat

# the whole test suite (the same command CI and the README use)
test:
    cargo test --workspace

# formatting and lints, as CI checks them
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings

# parser micro-benchmarks, then the tool side by side with wc -l and DuckDB on a 1 GB log
bench:
    cargo bench -p tokstat-parsers
    bench/run.sh
    bench/completions.sh

# what CI runs
ci:
    .ci/run

# the report on the bundled demo run
demo:
    cargo run --release -- demo

# fuzz one parser target for a minute (needs cargo-fuzz; stable toolchain via RUSTC_BOOTSTRAP)
fuzz target="log_line":
    cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -O {{target}} -- -max_total_time=60

# regenerate the demo run and the scenario runs (fixtures/runs/*, with their truth files)
regen-runs:
    cargo run -p xtask -- demo
    cargo run -p xtask -- runs
