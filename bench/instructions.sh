#!/usr/bin/env bash
# Instructions a tokstat command executes, counted by callgrind: repeatable to the
# instruction for the same binary and input, whatever else the machine is doing, so changes
# of 1% show here long before they show in timings (this machine's speed drifts by a third).
# The count covers every thread; it says nothing about page faults or parallelism.
# Usage: bench/instructions.sh FILE [BIN...]   (default BIN: target/release/tokstat;
# ARGS overrides the arguments before FILE, default "report --format json -q")
set -euo pipefail
f=$1
shift
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(target/release/tokstat)
command -v valgrind >/dev/null || apt-get install -y -q valgrind >/dev/null
read -r -a args <<< "${ARGS:-report --format json -q}"
lines=$(wc -l < "$f")
for b in "${bins[@]}"; do
  out=$(mktemp)
  valgrind --tool=callgrind --callgrind-out-file="$out" "$b" "${args[@]}" "$f" > /dev/null 2> "$out.err"
  ir=$(awk '/^summary:/ {print $2}' "$out")
  echo "$b: $ir instructions, $((ir / (lines > 0 ? lines : 1))) a line ($lines lines)"
  rm -f "$out" "$out.err"
done
