#!/usr/bin/env bash
# A day of one vLLM server's every series at a 15 s interval (the series of
# docs/formats.md's vLLM 0.33 scrape, counters rising), backfilled into Debian's Prometheus
# with `promtool tsdb create-blocks-from openmetrics`, then read three ways (issue 53):
# `tokstat report --prometheus` over the API, `curl` fetching the same window's JSON (and
# tokstat reading that file), `promtool tsdb dump` of the window (and tokstat reading it).
# Wall times and peak memory; the figures must agree.
# Usage: bench/prometheus.sh   (needs prometheus, promtool, curl; files in bench-data/prometheus)
set -euo pipefail
cd "$(dirname "$0")/.."
[ -n "${NO_BUILD:-}" ] || cargo build --release -q -p tokstat
t=$PWD/target/release/tokstat
dir=bench-data/prometheus
rm -rf "$dir" && mkdir -p "$dir"
end=$(( $(date +%s) / 3600 * 3600 - 3 * 3600 ))
start=$(( end - 86400 ))
python3 - "$start" "$end" > "$dir/day.om" <<'PY'
import re, sys
start, end = int(sys.argv[1]), int(sys.argv[2])
series = []
for line in open("fixtures/formats/prometheus/vllm-metrics-v1-v0.33.0.prom"):
    if line.startswith("#") or not line.strip():
        continue
    m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)", line)
    if m:
        series.append((m.group(1), m.group(2) or "", float(m.group(3))))
names = sorted({s[0] for s in series})
for name in names:
    # every series as its own family of unknown type: names stored as written
    print(f"# TYPE {name} unknown")
    for n, labels, v in series:
        if n != name:
            continue
        rising = n.endswith(("_total", "_count", "_sum", "_bucket"))
        for k, ts in enumerate(range(start, end + 1, 15)):
            print(f"{n}{labels} {v + k * 10.0 if rising else v} {ts}")
print("# EOF")
PY
ls -la "$dir/day.om" | awk '{print "openmetrics:", $5, "bytes"}'
echo "series: $(grep -c '^# TYPE' "$dir/day.om"), samples: $(grep -vc '^#' "$dir/day.om")"
promtool tsdb create-blocks-from openmetrics "$dir/day.om" "$dir/data" > /dev/null
port=19090
prometheus --storage.tsdb.path="$dir/data" --storage.tsdb.retention.time=10y --web.listen-address=127.0.0.1:$port \
  --config.file=/dev/null > "$dir/prometheus.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 60); do curl -sf http://127.0.0.1:$port/-/ready >/dev/null && break; sleep 0.5; done
since=$start; until_=$end
sel='{__name__=~"(ray_(serve_)?)?(vllm|sglang)[:_].+"}'
answer='import json,sys; m=json.load(sys.stdin)["metrics"]; print(m["scrapes"], m["samples"], m["gen_tps"], m["requests_per_s"])'
tm() { /usr/bin/time -f "  %e s, %M KB peak" "$@"; }
echo "tokstat report --prometheus (API, chunked, 4 queries at once):"
tm $t report --format json -q --prometheus http://127.0.0.1:$port --since $since --until $until_ > "$dir/api-report.json"
python3 -c "$answer" < "$dir/api-report.json"
echo "curl of the window as one query:"
tm curl -sfG http://127.0.0.1:$port/api/v1/query --data-urlencode "query=$sel[86400s]" --data-urlencode "time=$until_" -o "$dir/window.json"
ls -la "$dir/window.json" | awk '{print "  ", $5, "bytes"}'
echo "tokstat report of curl's file:"
tm $t report --format json -q "$dir/window.json" | python3 -c "$answer"
echo "promtool tsdb dump of the window:"
tm sh -c "promtool tsdb dump --min-time=$(( since * 1000 + 1 )) --max-time=$(( until_ * 1000 )) $dir/data > $dir/dump.txt"
ls -la "$dir/dump.txt" | awk '{print "  ", $5, "bytes"}'
echo "tokstat report of the dump:"
tm $t report --format json -q "$dir/dump.txt" | python3 -c "$answer"
