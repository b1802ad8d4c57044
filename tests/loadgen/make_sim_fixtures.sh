#!/usr/bin/env bash
# Remakes one of fixtures/formats/loadgen/sim/ (issue 55's test bed): the engine simulator on
# a skewed clock, a real load generator against it, and (with PROMETHEUS=1) Debian's
# Prometheus scraping it every second, its raw samples saved from its API. Needs AIPerf
# (`pip install aiperf==0.13.0`) and a tokenizer AIPerf can load offline as `local/bert`
# (any small tokenizer.json in the Hugging Face cache under that name).
#
#   tests/loadgen/make_sim_fixtures.sh OUT PORT "SIM ARGS" "AIPERF ARGS"
#   PROMETHEUS=1 tests/loadgen/make_sim_fixtures.sh /tmp/kv 18096 \
#     "--max-running 16 --kv-tokens 1800" "--concurrency 16 --request-count 400 --output-tokens-mean 64"
set -euo pipefail
out=$1 port=$2 sim=$3 load=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
# shellcheck disable=SC2086
python3 "$here/engine_sim.py" --port "$port" $sim --decode-ms 10 --prefill-us-per-token 50 \
  --stats-interval 1 --clock-offset -17992.7 --log "$out/server.log" --truth "$out/truth.jsonl" &
sim_pid=$!
prom_pid=
if [ "${PROMETHEUS:-0}" = 1 ]; then
  printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: vllm\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' "$port" > "$out/prom.yml"
  prometheus --config.file="$out/prom.yml" --storage.tsdb.path="$out/promdata" \
    --web.listen-address=127.0.0.1:$((port + 1000)) > "$out/prom.log" 2>&1 &
  prom_pid=$!
fi
trap 'kill $sim_pid $prom_pid 2>/dev/null || true' EXIT
sleep 6
t0=$(date -u +%s)
# shellcheck disable=SC2086
HF_HUB_OFFLINE=1 aiperf profile --model sim-model --url "http://127.0.0.1:$port" \
  --endpoint-type completions --streaming $load --output-tokens-stddev 0 \
  --synthetic-input-tokens-mean 100 --synthetic-input-tokens-stddev 0 --random-seed 7 \
  --tokenizer local/bert --server-metrics-formats json jsonl --artifact-dir "$out/aiperf-out" \
  --ui-type none > "$out/aiperf.out"
sleep 3
if [ -n "$prom_pid" ]; then
  t1=$(date -u +%s)
  mkdir -p "$out/prometheus"
  curl -sG "127.0.0.1:$((port + 1000))/api/v1/query" \
    --data-urlencode "query={__name__=~\"vllm:.*\"}[$((t1 - t0 + 10))s]" \
    --data-urlencode "time=$t1" > "$out/prometheus/query.json"
  zstd -q -19 -f --rm "$out/prometheus/query.json" -o "$out/prometheus/query.json.zst"
fi
mkdir -p "$out/aiperf"
cp "$out"/aiperf-out/{profile_export_aiperf.json,server_metrics_export.json,server_metrics_export.jsonl} "$out/aiperf/"
zstd -q -19 -f "$out/aiperf-out/profile_export.jsonl" -o "$out/aiperf/profile_export.jsonl.zst"
zstd -q -19 -f "$out/truth.jsonl" -o "$out/truth.jsonl.zst"
