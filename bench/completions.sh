#!/usr/bin/env bash
# Completions side by side: a generated ~1.1 GB JSONL of pipeline records (~9.5 KB of
# reasoning text each, with escapes and non-ASCII) through `wc -l`, DuckDB `read_json` with an
# explicit column list + `quantile_cont`, and `tokstat report --format json`; then the same
# file zstd-compressed against `zstd -dc > /dev/null`; then peak memory for 1 GB and 4 GB
# read from a pipe (no mapped file pages in the figure); the \u-escaped shape against wc -l;
# then prose (one word in sixteen escaped or non-ASCII: ~9 escapes per KB once escaped, the
# density of multilingual or reasoning text), UTF-8 and \u-escaped, against wc -l.
# Usage: bench/completions.sh [BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
bytes=${1:-1100000000}
f=bench-data/completions-$bytes.jsonl
cargo build --release -q -p tokstat -p xtask
[ -f "$f" ] || ./target/release/xtask completions --out "$f" --bytes "$bytes" --text-chars 10000 --pipeline --seed 5
[ -f "$f.zst" ] || zstd -q -T0 -3 "$f" -o "$f.zst"
python3 -c 'import duckdb' 2>/dev/null || python3 -m pip install -q duckdb
t=./target/release/tokstat
echo "input: $f ($(du -h "$f" | cut -f1), $(wc -l < "$f") records), $(nproc) cores"
python3 bench/duckdb_completions.py "$f"
$t report --format json -q "$f" | python3 -c 'import json,sys; c=json.load(sys.stdin)["completions"]; o=c["output_tokens"]; print("tokstat:", c["count"], [o["p50"], o["p90"], o["p95"], o["p99"]], o["max"], o["mean"], c["finish_reasons"].get("length", 0) / c["count"])'
if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs 5 \
    -n 'wc -l' "wc -l $f" \
    -n 'tokstat report --format json' "$t report --format json -q $f" \
    -n 'duckdb read_json + quantile_cont' "python3 bench/duckdb_completions.py $f"
  python3 bench/pairs.py 20 "$f" 'wc -l {f}' "$t report --format json -q {f}"
  hyperfine --warmup 1 --runs 5 \
    -n 'zstd -dc > /dev/null' "zstd -dc $f.zst" \
    -n 'tokstat report (.zst)' "$t report --format json -q $f.zst"
fi
# the records as Python's json.dumps writes them by default: every non-ASCII character as
# \uXXXX (about 120 escapes per KB in the stress shape, 9 in prose)
escape() {
  [ -f "$2" ] || python3 -c '
import json, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "w") as g:
    for line in f:
        g.write(json.dumps(json.loads(line), ensure_ascii=True) + "\n")
' "$1" "$2"
}
e=${f%.jsonl}-escaped.jsonl
escape "$f" "$e"
python3 bench/pairs.py 10 "$e" 'wc -l {f}' "$t report --format json -q {f}"
p=bench-data/completions-prose-$bytes.jsonl
[ -f "$p" ] || ./target/release/xtask completions --out "$p" --bytes "$bytes" --text-chars 10000 --pipeline --prose --seed 5
escape "$p" "${p%.jsonl}-escaped.jsonl"
for g in "$p" "${p%.jsonl}-escaped.jsonl"; do
  python3 bench/pairs.py 10 "$g" 'wc -l {f}' "$t report --format json -q {f}"
done
for g in "$f" "${2:-}"; do
  [ -n "$g" ] && [ -f "$g" ] && cat "$g" | /usr/bin/time -f "$g from a pipe: %e s, peak RSS %M KB" $t report --format json -q - > /dev/null
done
