#!/usr/bin/env bash
# A fleet for the cluster recipes (docs/cluster.md): eight nodes, each a folder holding a
# generated SGLang `server.log` (~300 k lines; every node's log has the same name) and its own
# `completions.jsonl` (20 k records), then tests/cluster/check_cluster.py on it under Spark,
# Dask and Ray (those from PyPI into bench-data/cluster-venv), printing each step's time.
# Usage: bench/fleet.sh [ENGINES...]   (default: spark dask ray)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p tokstat -p xtask
fleet=bench-data/fleet8
for k in 0 1 2 3 4 5 6 7; do
  d=$fleet/node$k
  mkdir -p "$d"
  [ -f "$d/server.log" ] || ./target/release/xtask sglang-log --out "$d/server.log" \
    --bytes 60000000 --seed $((k + 1)) --gpu "$k"
  [ -f "$d/completions.jsonl" ] || ./target/release/xtask completions --out "$d/completions.jsonl" \
    --records 20000 --text-chars 800 --pipeline --seed $((k + 11))
done
venv=bench-data/cluster-venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -c 'import pyspark, dask.distributed, ray' 2>/dev/null ||
  "$venv/bin/python" -m pip install -q 'pyspark>=4,<5' 'dask[distributed,dataframe]' 'pandas<3' pyarrow 'ray[data]'
echo "fleet: $(du -sh $fleet | cut -f1), $(cat $fleet/*/server.log | wc -l) log lines, $(cat $fleet/*/completions.jsonl | wc -l) completions, $(nproc) cores"
SPARK_LOCAL_IP=127.0.0.1 "$venv/bin/python" tests/cluster/check_cluster.py --fleet "$fleet" \
  target/release/tokstat ${@:-spark dask ray}
