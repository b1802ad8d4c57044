#!/usr/bin/env python3
"""A fleet read by Dask distributed with the tokstat Python package: one task per file
(`client.map`), each a partial read pickled back to the client (as the saved-read format's
bytes), merged there into the report of the whole fleet.

    python examples/dask_read.py FLEET [--year 2026] [--check]
"""
import argparse
import os

import tokstat
from dask.distributed import Client, LocalCluster


def read(path, year):
    return tokstat.read(path, node="fleet", year=year)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fleet")
    ap.add_argument("--year", type=int)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    fleet = os.path.abspath(a.fleet)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(fleet) for f in fs)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        parts = client.gather(client.map(read, files, year=a.year, pure=False))
    merged = tokstat.merge(parts)
    rep = merged.report()
    print(f"{len(parts)} partial reads merged: {merged}")
    print(f"steady {rep['steady']['gen_tps']:.1f} tok/s over {len(rep['instances'])} instance(s)")
    if a.check:
        assert rep == tokstat.report(files, year=a.year), \
            "the merged report differs from the report of all the files"
        print(f"check: the merge equals the report of all {len(files)} files at once")


if __name__ == "__main__":
    main()
