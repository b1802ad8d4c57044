#!/usr/bin/env bash
# Runs a command and prints its peak anonymous resident memory (heap, stacks), sampled from
# /proc every 20 ms. Mapped input files are file-backed pages and are not counted: this is
# the memory that would grow if records were copied.
"$@" > /dev/null &
pid=$!
peak=0
while kill -0 "$pid" 2>/dev/null; do
  a=$(awk '/RssAnon/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
  [ -n "$a" ] && [ "$a" -gt "$peak" ] && peak=$a
  sleep 0.02
done
wait "$pid"
echo "peak anonymous memory: $((peak / 1024)) MiB  ($*)"
