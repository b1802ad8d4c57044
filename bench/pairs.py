#!/usr/bin/env python3
"""Times two commands in interleaved pairs and prints the distribution of their ratio.

This machine's speed drifts between slow and fast phases within minutes, and a ratio from
two separate hyperfine series can mix phases. A pair runs the base command and then the
other one back to back, so each ratio compares like with like.

Usage: bench/pairs.py N FILE BASE CMD   ({f} in BASE and CMD is replaced by FILE)
"""
import statistics
import subprocess
import sys
import time


def run(cmd, f):
    t0 = time.perf_counter()
    subprocess.run(cmd.format(f=f), shell=True, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    n, f, base, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    bs, cs = [], []
    for _ in range(n):
        bs.append(run(base, f))
        cs.append(run(cmd, f))
    rs = sorted(c / b for b, c in zip(bs, cs))
    q = lambda p: rs[min(len(rs) - 1, int(p * len(rs)))]
    print(f"{n} interleaved pairs: {base.split()[0]} median {statistics.median(bs) * 1e3:.1f} ms, "
          f"{cmd.split()[0].split('/')[-1]} median {statistics.median(cs) * 1e3:.1f} ms; "
          f"ratio median {statistics.median(rs):.2f}, p10 {q(0.1):.2f}, p90 {q(0.9):.2f}, "
          f"max {rs[-1]:.2f}")


if __name__ == "__main__":
    main()
