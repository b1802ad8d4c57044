#!/usr/bin/env bash
# Side-by-side timing of tokstat against what users run today, on a generated >= 1 GB SGLang
# log (decode, prefill and access lines from the simulator): `wc -l`, DuckDB regexp_extract
# (from PyPI, as in a notebook), `tokstat report --format json`, `tokstat parse > /dev/null`.
# Usage: bench/run.sh [BYTES]   (default 1.1e9; the file is kept in bench-data/)
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=${1:-1100000000}
log=bench-data/sglang-$bytes.log
cargo build --release -q -p tokstat -p xtask
[ -f "$log" ] || ./target/release/xtask sglang-log --out "$log" --bytes "$bytes"
python3 -c 'import duckdb' 2>/dev/null || python3 -m pip install -q duckdb
command -v hyperfine >/dev/null || { apt-get install -y -q hyperfine >/dev/null 2>&1 || true; }
t=./target/release/tokstat
echo "input: $log ($(du -h "$log" | cut -f1), $(wc -l < "$log") lines), $(nproc) cores"
# the two answers must agree before their times mean anything
python3 bench/duckdb_log.py "$log"
$t report --format json -q "$log" | python3 -c 'import json,sys; i=json.load(sys.stdin)["instances"][0]; print("tokstat:", i["stat_lines"], i["prefill_lines"], i["gen_tps_mean"], i["gen_tps_max"], i["running_mean"], i["waiting_mean"], i["kv_usage_max"])'
if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs 5 \
    -n 'wc -l' "wc -l $log" \
    -n 'tokstat report --format json' "$t report --format json -q $log" \
    -n 'tokstat parse > /dev/null' "$t parse -q $log" \
    -n 'duckdb regexp_extract' "python3 bench/duckdb_log.py $log"
else
  for c in "wc -l $log" "$t report --format json -q $log" "$t parse -q $log" "python3 bench/duckdb_log.py $log"; do
    /usr/bin/time -f "%e s  $c" $c > /dev/null
  done
fi
# export costs at most 1.5x the report it includes (issue 19): in interleaved pairs, as the
# machine's phases move both (each export writes over the one before)
out=$(mktemp -d)
python3 bench/pairs.py 10 "$log" "$t report --format json -q {f}" "$t export -q --to $out {f}"
rm -rf "$out"
