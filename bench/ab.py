#!/usr/bin/env python3
"""Compares tokstat binaries in interleaved rounds: wall and CPU time (user + system).

This machine's speed drifts between slow and fast phases within minutes; a round runs every
binary once, back to back, so the per-round ratios to the first binary compare like with
like. Effects of 2-3% still need 15 or more rounds to show.

Usage: bench/ab.py ROUNDS FILE BIN...   (ARGS overrides the arguments before FILE,
default "report --format json -q")
"""
import os
import resource
import statistics
import subprocess
import sys
import time


def main():
    n, f, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    args = os.environ.get("ARGS", "report --format json -q").split()
    wall = {b: [] for b in bins}
    cpu = {b: [] for b in bins}
    for _ in range(n):
        for b in bins:
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run([b] + args + [f], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            wall[b].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[b].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    for b in bins:
        rw = statistics.median(x / y for x, y in zip(wall[b], wall[bins[0]]))
        rc = statistics.median(x / y for x, y in zip(cpu[b], cpu[bins[0]]))
        print(f"{b:28s} wall median {statistics.median(wall[b]) * 1e3:5.0f} ms, "
              f"min {min(wall[b]) * 1e3:5.0f} | cpu median {statistics.median(cpu[b]) * 1e3:5.0f} ms, "
              f"min {min(cpu[b]) * 1e3:5.0f} | paired ratio: wall {rw:.3f}, cpu {rc:.3f}")


if __name__ == "__main__":
    main()
