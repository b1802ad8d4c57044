#!/usr/bin/env python3
"""A fleet read by Spark with the tokstat Python package: Spark lists the files
(`binaryFile`), each executor reads its files' bytes into partial reads (`mapInArrow`,
the reads travelling back as the saved-read format's bytes), and the driver merges them
into the report of the whole fleet — no `tokstat` binary, no shared folder.

    python examples/spark_read.py FLEET [--year 2026] [--check]

FLEET: a folder of server logs and completion files (nodes' sub-folders, or the files).
`--check` also reads every file at once on the driver and requires the same report, to the
last digit (what CI runs on the fixture fleet).
"""
import argparse
import os
import sys

import pyarrow as pa
import tokstat
from pyspark.sql import SparkSession


def read_parts(year):
    """The function each executor runs over its batches of `binaryFile` rows."""

    def read(batches):
        import tokstat  # (imported on the executor)

        for batch in batches:
            paths, blobs = [], []
            for path, content in zip(batch.column("path").to_pylist(),
                                     batch.column("content").to_pylist()):
                local = path.removeprefix("file:")
                # one node for the whole fleet: same-named logs would need one node each
                part = tokstat.read_bytes(content, local, node="fleet", year=year)
                paths.append(local)
                blobs.append(part.to_bytes())
            yield pa.RecordBatch.from_pydict({"path": paths, "read": blobs})

    return read


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fleet")
    ap.add_argument("--year", type=int)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    fleet = os.path.abspath(a.fleet)
    # the executors run this Python (where tokstat and pyarrow are installed)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (SparkSession.builder.master("local[2]").appName("tokstat-read")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    files = (spark.read.format("binaryFile").option("recursiveFileLookup", "true")
             .load(fleet).select("path", "content"))
    rows = files.mapInArrow(read_parts(a.year), "path string, read binary").collect()
    merged = tokstat.merge([tokstat.Read.from_bytes(r["read"]) for r in rows])
    rep = merged.report()
    print(f"{len(rows)} partial reads merged: {merged}")
    s, c = rep["steady"], rep.get("completions")
    print(f"steady {s['gen_tps']:.1f} tok/s over {len(rep['instances'])} instance(s)")
    for i in rep["instances"]:
        print(f"  {i['instance']:<10} {i['gen_tps']:>9.1f} tok/s")
    if c:
        print(f"completions {c['count']}, cap-hit rate {c['cap']['hit_rate']:.4f}, "
              f"output tokens p50 {c['output_tokens']['p50']} p99 {c['output_tokens']['p99']}")
    if a.check:
        inputs = sorted(os.path.join(d, f) for d, _, fs in os.walk(fleet) for f in fs)
        assert rep == tokstat.report(inputs, year=a.year), \
            "the merged report differs from the report of all the files"
        print(f"check: the merge equals the report of all {len(inputs)} files at once")
    spark.stop()


if __name__ == "__main__":
    main()
