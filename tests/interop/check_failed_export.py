#!/usr/bin/env python3
"""An export that fails leaves nothing that looks like data (issue 56, item 4).

A shared folder holds node A's export of four GPUs of the fleet (partitioned by run and
instance, as a cluster job writes it). Then:

- node B's export of the other three is killed (SIGKILL, a preempted task) at several
  moments while it writes;
- node C's export runs out of space on a full filesystem (a tmpfs of a few hundred KB
  holding node A's export).

After each, DuckDB (`read_parquet('DIR/steps/**/*.parquet')`), pyarrow's datasets and Spark
(`spark.read.parquet`) read every table of the shared folder without error, and hold
exactly node A's rows; `tokstat report DIR` equals the report of node A's export alone; the
full disk's error names the operating system's `No space left on device`.

Usage: tests/interop/check_failed_export.py TOKSTAT_BINARY (as root it mounts a tmpfs; otherwise
it caps the file size instead)
"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import duckdb
import pyarrow.dataset as ds

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLEET = os.path.join(ROOT, "fixtures", "runs", "fleet")
A = [os.path.join(FLEET, f"gpu{k}.log") for k in range(4)]
B = [os.path.join(FLEET, f"gpu{k}.log") for k in range(4, 7)]


def export(tokstat, to, node, inputs, **kw):
    return subprocess.Popen([tokstat, "export", "-q", "--year", "2026", "--to", to,
                             "--partition-by", "run,instance", "--run", "fleet",
                             "--node", node, *inputs],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, **kw)


def visible(d):
    """The files a query engine lists: no name starting with `.` or `_` on the way."""
    out = []
    for p in glob.glob(f"{d}/**/*", recursive=True):
        rel = os.path.relpath(p, d)
        if os.path.isfile(p) and not any(c.startswith((".", "_")) for c in rel.split(os.sep)):
            out.append(rel)
    return sorted(out)


def report(tokstat, d):
    r = subprocess.run([tokstat, "report", "--format", "json", "-q", "--year", "2026", d],
                       capture_output=True, text=True)
    assert r.returncode in (0, 2), r.stderr
    v = json.loads(r.stdout)
    v.pop("files", None)
    return v


def rows(spark, d):
    """Each table's rows as DuckDB, pyarrow and Spark count them (all must agree)."""
    out = {}
    for table in sorted(os.listdir(d)):
        if not glob.glob(f"{d}/{table}/**/*.parquet", recursive=True):
            continue
        ((duck,),) = duckdb.sql(f"select count(*) from read_parquet('{d}/{table}/**/*.parquet', "
                                "hive_partitioning = false, union_by_name = true)").fetchall()
        arrow = ds.dataset(f"{d}/{table}", format="parquet").count_rows()
        sp = spark.read.option("recursiveFileLookup", "true").parquet(f"{d}/{table}").count()
        assert duck == arrow == sp, (table, duck, arrow, sp)
        out[table] = duck
    return out


def main():
    tokstat = os.path.abspath(sys.argv[1])
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName("tokstat-failed-export")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    checks = 0
    tmp = tempfile.mkdtemp(prefix="tokstat-failed-")
    try:
        only_a = os.path.join(tmp, "only-a")
        assert export(tokstat, only_a, "a", A).wait() == 0
        want_rows, want_report, want_files = rows(spark, only_a), report(tokstat, only_a), visible(only_a)
        assert want_rows.get("steps", 0) > 0, want_rows
        # node B's whole export timed once, to kill it at moments inside it on any machine
        start = time.time()
        assert export(tokstat, os.path.join(tmp, "b-alone"), "b", B).wait() == 0
        whole_s = time.time() - start
        full_time = None
        # a killed node B, at several moments of its writing
        for at in (round(whole_s * f, 3) for f in (0.1, 0.25, 0.4, 0.55, 0.7)):
            shared = os.path.join(tmp, f"shared-{at}")
            shutil.copytree(only_a, shared)
            start = time.time()
            p = export(tokstat, shared, "b", B)
            time.sleep(at)
            p.send_signal(signal.SIGKILL)
            p.wait()
            if p.returncode == 0:
                full_time = time.time() - start
                print(f"  killed at {at} s: node B had finished ({full_time:.2f} s)")
                continue
            assert visible(shared) == want_files, (at, set(visible(shared)) ^ set(want_files))
            assert rows(spark, shared) == want_rows, at
            assert report(tokstat, shared) == want_report, at
            left = [p for p in glob.glob(f"{shared}/**/.*", recursive=True)]
            print(f"  killed at {at} s: {len(want_files)} files of node A, none of B's "
                  f"({len(left)} staged files left, hidden); DuckDB, pyarrow and Spark read "
                  f"{sum(want_rows.values())} rows; report equals node A's")
            checks += 1
        assert checks >= 3, "node B finished before most kills: give it more to write"
        # a full disk: node C's export on a tmpfs that holds node A's and little more (where
        # this machine lets us mount one), else each of its files capped by RLIMIT_FSIZE
        # (SIGXFSZ ignored: the write fails with EFBIG as a full disk's with ENOSPC)
        mnt = os.path.join(tmp, "full")
        os.makedirs(mnt)
        # (tmpfs counts whole pages)
        used = sum(-(-os.path.getsize(os.path.join(only_a, f)) // 4096) * 4096
                   for f in visible(only_a))
        size_kb = used // 1024 + 64
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", mnt],
                                 capture_output=True).returncode == 0
        try:
            shared = os.path.join(mnt, "shared")
            shutil.copytree(only_a, shared)
            if mounted:
                p, want = export(tokstat, shared, "c", B), "No space left on device"
            else:
                import resource

                def capped():
                    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
                p, want = export(tokstat, shared, "c", B, preexec_fn=capped), "File too large"
            _, err = p.communicate()
            assert p.returncode != 0, "the export fitted: make the tmpfs smaller"
            assert want in err and "panicked" not in err, err
            assert "serialize buffer" not in err, err
            assert visible(shared) == want_files, set(visible(shared)) ^ set(want_files)
            assert rows(spark, shared) == want_rows
            assert report(tokstat, shared) == want_report
            how = f"a full tmpfs of {size_kb} KB" if mounted else "files capped at 4 KB (no mount here)"
            print(f"  {how}: exit {p.returncode}: {err.strip().splitlines()[-1]}")
            checks += 1
        finally:
            if mounted:
                subprocess.run(["umount", mnt], check=False)
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"failed exports: {checks} passed, 0 failed")


if __name__ == "__main__":
    main()
