#!/usr/bin/env bash
# The 1.1 GB SGLang bench log read plain and as Docker json-file and CRI records (issue 54:
# within 1.5x the plain log's time, memory as bounded): the answers first (they must be the
# same), then interleaved pairs (plain, then wrapped), then peak anonymous memory.
# Usage: bench/envelopes.sh [BYTES] [PAIRS]   (the files are kept in bench-data/)
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=${1:-1100000000}
pairs=${2:-10}
log=bench-data/sglang-$bytes.log
cargo build --release -q -p tokstat -p xtask
[ -f "$log" ] || ./target/release/xtask sglang-log --out "$log" --bytes "$bytes"
t=./target/release/tokstat
for c in docker cri; do
  [ -f "$log.$c" ] || ./target/release/xtask wrap-log --collector $c --in "$log" --out "$log.$c"
done
echo "inputs: $(du -h "$log" | cut -f1) plain, $(du -h "$log.docker" | cut -f1) docker, $(du -h "$log.cri" | cut -f1) cri; $(nproc) cores"
answer='import json,sys; r=json.load(sys.stdin); i=r["instances"][0]; print(i["stat_lines"], i["prefill_lines"], i["gen_tps_mean"], r["steady"]["gen_tps"], r["lines"]["total"])'
for f in "$log" "$log.docker" "$log.cri"; do
  printf '%s: ' "$f"; $t report --format json -q "$f" | python3 -c "$answer"
done
for c in docker cri; do
  echo "== plain, then $c"
  python3 bench/pairs.py "$pairs" "$log" "$t report --format json -q {f}" "$t report --format json -q {f}.$c"
done
for f in "$log" "$log.docker" "$log.cri"; do
  bench/peak_anon.sh $t report --format json -q "$f"
done
