#!/usr/bin/env bash
# Time and peak anonymous memory of `tokstat report` against DuckDB's regexp_extract query
# as a log grows: generated SGLang logs of 1, 5 and 20 GB in two shapes, access-heavy (the
# simulator's mix: 21% decode, 39% prefill, 40% access lines) and stats-dense (the same
# without its access lines). The 20 GB logs are written zstd-compressed (they would not fit
# the disk plain) and read as streams by both tools.
# Usage: bench/scale.sh [SIZES_GB…]   (default: 1 5 20; files kept in bench-data/)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-1 5 20}")
read -r -a sizes <<< "${sizes[*]}"
cargo build --release -q -p tokstat -p xtask
python3 -c 'import duckdb' 2>/dev/null || python3 -m pip install -q duckdb
t=./target/release/tokstat
mkdir -p bench-data
for gb in "${sizes[@]}"; do
  bytes=$((gb * 1000000000))
  for shape in access stats; do
    if [ "$gb" -ge 20 ]; then f=bench-data/scale-$shape-${gb}g.log.zst; else f=bench-data/scale-$shape-${gb}g.log; fi
    if [ ! -f "$f" ]; then
      # (stats-dense: more bytes generated, as the access lines are dropped)
      gen=$bytes
      [ "$shape" = stats ] && gen=$((bytes * 100 / 73))
      # (through a named pipe: the simulator prints its summary on stdout)
      fifo=$(mktemp -u) && mkfifo "$fifo"
      { if [ "$shape" = stats ]; then grep -v ' HTTP/1.1" ' || true; else cat; fi; } < "$fifo" \
        | if [[ "$f" == *.zst ]]; then zstd -q -1 -T2 -o "$f"; else cat > "$f"; fi &
      ./target/release/xtask sglang-log --out "$fifo" --bytes "$gen" > /dev/null
      wait
      rm -f "$fifo"
    fi
    echo "== $f ($(du -h "$f" | cut -f1))"
    /usr/bin/time -f "tokstat report: %e s wall, %U s user, %M KB max RSS" \
      "$t" report --format json -q "$f" > /tmp/scale-report.json
    bench/peak_anon.sh "$t" report --format json -q "$f"
    /usr/bin/time -f "duckdb: %e s wall, %U s user, %M KB max RSS" python3 bench/duckdb_log.py "$f"
    bench/peak_anon.sh python3 bench/duckdb_log.py "$f"
  done
done
