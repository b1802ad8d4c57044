#!/usr/bin/env python3
"""The exported dataset in DuckDB and pyarrow: two runs (the 7-GPU fleet with its
completions, and vLLM at 128 clients) exported by two writers into one folder, partitioned
by run and instance, then read back as one table per kind. DuckDB must reproduce the report's
completions count, cap-hit rate, output-token p99 and each instance's steady tok/s (the
report.json each writer left beside its tables) by query alone; pyarrow must read the same rows;
every file of a table must have the one schema (signed integers, no null-typed column, run and
instance in the files: the layout `TABLE/run-R/instance-I/` is not Hive's, so no reader turns
`run-128` into a number); every Parquet file must carry tokstat's key-value metadata;
`tokstat report DIR --run RUN` must give each writer's report back; and `export DIR --to DIR2`
must write the merged run's tables, which reproduce the same figures.

Usage: tests/interop/check_export.py TOKSTAT_BINARY
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

import duckdb
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUNS = os.path.join(ROOT, "fixtures", "runs")


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def figures(db, table, run, report):
    """The report's figures by query alone: each instance's and the run's steady tok/s (the
    covered-time-weighted serving rate of the steady buckets), the completions' count, cap-hit
    rate and output-token p99. Returns the number of checks."""
    checks = 0
    steady = (f"select instance, sum(serving_gen_tps * covered_s) / sum(covered_s) "
              f"from {table('timeline')} where run = ? and steady and serving_gen_tps is not null "
              f"group by instance")
    rows = dict(db.execute(steady, [run]).fetchall())
    want = {i["instance"]: i["gen_tps"] for i in report["instances"]}
    want[None] = report["steady"]["gen_tps"]
    assert rows.keys() == want.keys(), (run, rows, want)
    for inst, tps in rows.items():
        assert close(tps, want[inst]), (run, inst, tps, want[inst])
        checks += 1
    (bucket,) = db.execute(f"select distinct bucket_s from {table('timeline')} where run = ?",
                           [run]).fetchone()
    assert close(bucket, report["timeline_bucket_s"]), (bucket, report["timeline_bucket_s"])
    got = dict(db.execute(f"select instance, stat_lines from {table('instances')} where run = ?",
                          [run]).fetchall())
    assert got == {i["instance"]: i["stat_lines"] for i in report["instances"]}, got
    checks += 2
    c = report["completions"]
    if c is not None:
        n, hits, p99 = db.execute(
            f"select count(*), count(*) filter (finish_reason = 'length'), "
            f"quantile_cont(output_tokens, 0.99) from {table('completions')} where run = ?", [run]
        ).fetchone()
        assert n == c["count"], (n, c["count"])
        assert close(hits / n, c["cap"]["hit_rate"]), (hits / n, c["cap"])
        assert close(p99, c["output_tokens"]["p99"]), (p99, c["output_tokens"])
        checks += 3
    return checks


def main():
    tokstat = os.path.abspath(sys.argv[1])
    checks = 0
    with tempfile.TemporaryDirectory() as out:
        for run, path in [("fleet", "fleet"), ("c128", "vllm-c128")]:
            subprocess.run([tokstat, "export", "-q", "--year", "2026", "--to", out,
                            "--partition-by", "run,instance", "--run", run,
                            os.path.join(RUNS, path)], check=True, stdout=subprocess.DEVNULL)
        db = duckdb.connect()

        def table(name, root=out):
            # a partitioned export has a folder per table, an unpartitioned one a file
            files = f"{root}/{name}/**/*.parquet" if os.path.isdir(f"{root}/{name}") \
                else f"{root}/{name}.parquet"
            return f"read_parquet('{files}', hive_partitioning = false)"

        reports = {}
        for run in ("fleet", "c128"):
            (report_path,) = glob.glob(f"{out}/report/run-{run}/*.json")
            reports[run] = json.load(open(report_path))
            checks += figures(db, table, run, reports[run])
        # one schema per table, whatever the file (Spark and pyarrow read the first file's)
        for name in ("steps", "timeline", "completions", "instances", "segments", "config",
                     "events"):
            schemas = {str(pq.read_schema(p).remove_metadata())
                       for p in glob.glob(f"{out}/{name}/**/*.parquet", recursive=True)}
            assert len(schemas) == 1, (name, schemas)
            (schema,) = schemas
            # (no null-typed or unsigned column; strings as large_string: pandas, and so Ray
            # Data, cannot take polars' string_view)
            assert not any(t in schema for t in (": null", "uint", "string_view")), (name, schema)
            checks += 1
        # the merged run: the fleet exported node by node (in a shuffled order), then
        # `export DATASET --to DIR2`, whose tables give the same figures by query alone
        with tempfile.TemporaryDirectory() as nodes_root:
            nodes, merged = (os.path.join(nodes_root, d) for d in ("nodes", "merged"))
            fleet = os.path.join(RUNS, "fleet")
            parts = sorted(os.listdir(fleet))
            for k in (3, 0, 7, 5, 1, 6, 2, 4):
                subprocess.run([tokstat, "export", "-q", "--year", "2026", "--to", nodes,
                                "--partition-by", "run,instance", "--run", "fleet",
                                "--node", f"node{k}", os.path.join(fleet, parts[k])],
                               check=True, stdout=subprocess.DEVNULL)
            done = subprocess.run([tokstat, "export", "-q", "--year", "2026", "--to", merged,
                                   nodes], stdout=subprocess.DEVNULL)
            assert done.returncode in (0, 2), done
            back = json.load(open(os.path.join(merged, "report.json")))
            want = dict(reports["fleet"])
            for r in (back, want):
                r.pop("files")
            assert back == want, "the merged export's report"
            checks += 1 + figures(db, lambda name: table(name, merged), "fleet", back)
        # pyarrow reads the same rows, run and instance included
        for name in ("steps", "timeline", "completions"):
            arrow = ds.dataset(f"{out}/{name}", format="parquet").to_table()
            (duck,) = db.execute(f"select count(*) from {table(name)}").fetchone()
            assert arrow.num_rows == duck > 0, (name, arrow.num_rows, duck)
            assert "run" in arrow.column_names
            checks += 1
        # DuckDB and pyarrow decode the same steps values (tokstat encodes some pages itself)
        sums = ", ".join(f"sum({c}), count({c})" for c in (
            "running", "waiting", "gen_tps", "prompt_tps", "kv_usage", "new_tokens", "accept_len"))
        duck = db.execute(f"select {sums}, count(distinct kind), min(ts), max(ts) "
                          f"from {table('steps')}").fetchone()
        arrow = ds.dataset(f"{out}/steps", format="parquet").to_table()
        mine = []
        for c in ("running", "waiting", "gen_tps", "prompt_tps", "kv_usage", "new_tokens",
                  "accept_len"):
            mine += [pc.sum(arrow[c]).as_py(), len(arrow) - arrow[c].null_count]
        mine += [len(pc.unique(arrow["kind"])), pc.min(arrow["ts"]).as_py(),
                 pc.max(arrow["ts"]).as_py()]
        for a, b in zip(duck, mine):
            assert a == b or (isinstance(a, float) and close(a, b)), (duck, mine)
        checks += 1
        # each row group's statistics are its values' (readers skip row groups by them)
        for path in glob.glob(f"{out}/steps/**/*.parquet", recursive=True):
            f = pq.ParquetFile(path)
            for g in range(f.metadata.num_row_groups):
                rows = f.read_row_group(g)
                for i in range(f.metadata.num_columns):
                    col = f.metadata.row_group(g).column(i)
                    values = rows[col.path_in_schema]
                    if values.type == "string_view":
                        values = values.cast("string")
                    st = col.statistics
                    assert st.null_count == values.null_count, (path, col.path_in_schema)
                    if values.null_count < len(values):
                        lo, hi = pc.min_max(values).values()
                        assert (st.min, st.max) == (lo.as_py(), hi.as_py()), (
                            path, col.path_in_schema, st, lo, hi)
        checks += 1
        # every file says what it is
        for path in glob.glob(f"{out}/*/**/*.parquet", recursive=True):
            meta = {k.decode(): v.decode() for k, v in db.execute(
                "select key, value from parquet_kv_metadata(?)", [path]).fetchall()}
            for key in ("tokstat_version", "tokstat_schema_version",
                        "tokstat_table_schema_version", "tokstat_table",
                        "tokstat_run", "tokstat_inputs", "tokstat_units"):
                assert key in meta, (path, meta.keys())
            assert meta["tokstat_table_schema_version"] == "2", meta
            units = json.loads(meta["tokstat_units"])
            assert "ts" not in units or units["ts"].startswith("datetime"), units
        checks += 1
        # the folder reported back, one run at a time: the report each writer left
        for run in ("fleet", "c128"):
            back = subprocess.run([tokstat, "report", "--format", "json", "-q", "--run", run, out],
                                  check=True, capture_output=True).stdout
            (report_path,) = glob.glob(f"{out}/report/run-{run}/*.json")
            assert json.loads(back) == json.load(open(report_path)), run
            checks += 1
    checks += one_clock(tokstat)
    print(f"export: {checks} passed, 0 failed")


def one_clock(tokstat):
    """A benchmark run and its server on one clock (the engine simulator's fixture): the
    exported `one_clock` table read by DuckDB and pyarrow holds the report's buckets."""
    sim = os.path.join(os.path.dirname(RUNS), "formats", "loadgen", "sim", "c16-cap8")
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([tokstat, "export", "-q", "--to", out, os.path.join(sim, "server.log"),
                        os.path.join(sim, "aiperf")], check=True)
        report = json.load(open(os.path.join(out, "report.json")))
        path = os.path.join(out, "one_clock.parquet")
        db = duckdb.connect()
        got = db.execute(f"select server, count(*), sum(starts), sum(completions), "
                         f"min(offset_s), max(offset_s) from read_parquet('{path}') "
                         f"group by server order by server").fetchall()
        want = sorted((c["server"], len(c["rows"]), sum(r["starts"] for r in c["rows"]),
                       sum(r["completions"] for r in c["rows"]),
                       c["alignment"]["aligned"]["offset_s"],
                       c["alignment"]["aligned"]["offset_s"]) for c in report["one_clock"])
        assert [g[:4] for g in got] == [w[:4] for w in want], (got, want)
        for g, w in zip(got, want):
            assert close(g[4], w[4]) and close(g[5], w[5]), (g, w)
        table = pq.read_table(path)
        assert table.num_rows == sum(len(c["rows"]) for c in report["one_clock"])
        assert str(table.schema.field("ts").type).startswith("timestamp"), table.schema
    return 2


if __name__ == "__main__":
    main()
