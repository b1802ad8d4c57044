#!/usr/bin/env python3
"""A fleet read on many workers by real cluster engines: Spark (pyspark, `local[2]`) and
Dask distributed (a local cluster of two worker processes) each schedule one `tokstat export`
per node of the 7-GPU fixture fleet (seven SGLang logs and the completions folder: eight
nodes), in a shuffled order, into one shared folder. Then:

- `tokstat report DIR` must equal `tokstat report` on all the raw inputs (the JSON, to the
  last digit, `files[]` included), whatever order the tasks ran and finished in;
- every table of the shared folder must read in Spark without options beyond
  `recursiveFileLookup` (no `mergeSchema`): exactly the columns `tokstat schema` documents, no
  decimal, no void column, `run` and `instance` strings;
- `tokstat export DIR --to MERGED` writes the merged run's tables, from which Spark SQL and
  Dask alone reproduce each instance's and the run's steady tok/s and the completions' count,
  cap-hit rate, output-token mean, p50 and p99, to 1e-9 relative.

Prints each step's wall time (the costs docs/cluster.md quotes).

Usage: tests/cluster/check_cluster.py [--fleet DIR] TOKSTAT_BINARY [spark|dask|ray ...]
       (default: the fixture fleet, spark dask; DIR: one entry per node)
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FLEET = os.path.join(ROOT, "fixtures", "runs", "fleet")
YEAR = "2026"  # the fixture logs' stamps have no year
REL = 1e-9


def close(a, b):
    return abs(a - b) <= REL * max(abs(a), abs(b))


def nodes(fleet):
    """The fleet as nodes, `(node name, input)` in the order `report` is given them: each
    entry of `fleet` one node, named after its folder (`nodeA/server.log`, `nodeB/…`) or,
    where the entries are files, `node0`, `node1`, …"""
    entries = sorted(os.listdir(fleet))
    folders = all(os.path.isdir(os.path.join(fleet, e)) for e in entries)
    return [(e if folders else f"node{k}", os.path.join(fleet, e)) for k, e in enumerate(entries)]


def export_task(task):
    """One node's task, run on a worker: export its input into the shared folder."""
    tokstat, shared, node, path = task
    t = time.perf_counter()
    subprocess.run([tokstat, "export", "-q", "--year", YEAR, "--to", shared,
                    "--partition-by", "run,instance", "--run", "fleet", "--node", node, path],
                   check=True, stdout=subprocess.DEVNULL)
    return node, time.perf_counter() - t, time.time()


def report(tokstat, inputs):
    out = subprocess.run([tokstat, "report", "--format", "json", "-q", "--year", YEAR, *inputs],
                         check=True, capture_output=True).stdout
    return json.loads(out)


def want(rep):
    """The report's figures the tables must give back."""
    c = rep["completions"]
    steady = {i["instance"]: i["gen_tps"] for i in rep["instances"]}
    steady["(run)"] = rep["steady"]["gen_tps"]
    return steady, {"count": c["count"], "hit_rate": c["cap"]["hit_rate"],
                    "mean": c["output_tokens"]["mean"], "p50": c["output_tokens"]["p50"],
                    "p99": c["output_tokens"]["p99"]}


def check_figures(engine, got_steady, got_completions, rep):
    steady, completions = want(rep)
    assert got_steady.keys() == steady.keys(), (engine, sorted(got_steady), sorted(steady))
    for k, v in steady.items():
        assert close(got_steady[k], v), (engine, k, got_steady[k], v)
    assert got_completions["count"] == completions["count"], (engine, got_completions)
    for k in ("hit_rate", "mean", "p50", "p99"):
        assert close(got_completions[k], completions[k]), (engine, k, got_completions, completions)
    return len(steady) + 5


def schedule(engine, tokstat, shared, order):
    """The exports, one task per node in `order`; returns the order they finished in."""
    tasks = [(tokstat, shared, node, path) for node, path in order]
    if engine == "spark":
        sc = spark_session().sparkContext
        done = sc.parallelize(tasks, len(tasks)).map(export_task).collect()
    elif engine == "ray":
        import ray
        remote = ray_session().remote(export_task)
        done = ray.get([remote.remote(t) for t in tasks])
    else:
        from dask.distributed import as_completed
        futures = dask_client().map(export_task, tasks, pure=False)
        done = [f.result() for f in as_completed(futures)]
    return sorted(done, key=lambda d: d[2])


_spark = None
_dask = None
_ray = None


def ray_session():
    global _ray
    if _ray is None:
        import ray
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        _ray = ray
    return _ray


def spark_session():
    global _spark
    if _spark is None:
        from pyspark.sql import SparkSession
        _spark = (SparkSession.builder.master("local[2]").appName("tokstat-fleet")
                  .config("spark.ui.enabled", "false")
                  .config("spark.ui.showConsoleProgress", "false")
                  .config("spark.sql.session.timeZone", "UTC").getOrCreate())
        _spark.sparkContext.setLogLevel("ERROR")
    return _spark


def dask_client():
    global _dask
    if _dask is None:
        from dask.distributed import Client, LocalCluster
        _dask = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=None))
    return _dask


def tables(shared):
    """The tables of the shared folder (one with no rows is not written), the ones every
    fleet has among them."""
    found = sorted(t for t in os.listdir(shared) if t not in ("_tokstat", "report"))
    assert {"steps", "timeline", "completions", "instances", "segments"} <= set(found), found
    return found


def spark_tables(shared, merged, documented):
    """Spark reads every table of the shared folder as documented, and the merged run's
    figures by Spark SQL alone."""
    from pyspark.sql.types import DecimalType, NullType, StringType
    spark = spark_session()
    checks = 0

    def view(root, name):
        df = spark.read.option("recursiveFileLookup", "true").parquet(f"{root}/{name}")
        df.createOrReplaceTempView(name)
        return df

    for name in tables(shared):
        df = view(shared, name)
        cols = [f.name for f in df.schema.fields]
        assert cols == documented[name], (name, cols, documented[name])
        for f in df.schema.fields:
            assert not isinstance(f.dataType, (DecimalType, NullType)), (name, f)
            if f.name in ("run", "instance"):
                assert isinstance(f.dataType, StringType), (name, f)
        checks += 1
    for name in ("timeline", "completions"):
        view(merged, name)
    steady = dict(spark.sql(
        "select coalesce(instance, '(run)'), sum(serving_gen_tps * covered_s) / sum(covered_s) "
        "from timeline where steady and serving_gen_tps is not null group by instance"
    ).collect())
    row = spark.sql(
        "select count(*) as count, count_if(finish_reason = 'length') / count(*) as hit_rate, "
        "avg(output_tokens) as mean, percentile(output_tokens, 0.5) as p50, "
        "percentile(output_tokens, 0.99) as p99 from completions").collect()[0]
    return checks, steady, row.asDict()


def dask_tables(shared, documented):
    """Dask reads every table of the shared folder as documented, without a schema given."""
    import dask.dataframe as dd
    checks = 0
    for name in tables(shared):
        df = dd.read_parquet(f"{shared}/{name}")
        assert list(df.columns) == documented[name], (name, list(df.columns), documented[name])
        types = {c: str(t) for c, t in df.dtypes.items()}
        assert not any(t.startswith("uint") or t == "null" for t in types.values()), (name, types)
        assert len(df) > 0, name
        checks += 1
    return checks


def dask_figures(merged):
    """The merged run's figures by Dask alone (the quantiles on the gathered column: Dask's
    own are approximate)."""
    import dask.dataframe as dd
    t = dd.read_parquet(f"{merged}/timeline")
    t = t[t.steady & t.serving_gen_tps.notnull()]
    t = t.assign(tokens=t.serving_gen_tps * t.covered_s,
                 instance=t.instance.astype("object").fillna("(run)"))
    sums = t.groupby("instance")[["tokens", "covered_s"]].sum().compute()
    steady = {k: r.tokens / r.covered_s for k, r in sums.iterrows()}
    c = dd.read_parquet(f"{merged}/completions")
    count = int(c.shape[0].compute())
    hits = int((c.finish_reason == "length").sum().compute())
    out = c.output_tokens.dropna().compute()
    return steady, {"count": count, "hit_rate": hits / count, "mean": float(out.mean()),
                    "p50": float(out.quantile(0.5)), "p99": float(out.quantile(0.99))}


def ray_figures(merged):
    """The merged run's figures by Ray Data (and pandas on the gathered rows)."""
    import ray.data
    t = ray.data.read_parquet(f"{merged}/timeline").to_pandas()
    t = t[t.steady & t.serving_gen_tps.notnull()]
    t = t.assign(tokens=t.serving_gen_tps * t.covered_s,
                 instance=t.instance.astype("object").fillna("(run)"))
    sums = t.groupby("instance")[["tokens", "covered_s"]].sum()
    steady = {k: r.tokens / r.covered_s for k, r in sums.iterrows()}
    c = ray.data.read_parquet(f"{merged}/completions").to_pandas()
    out = c.output_tokens.dropna()
    return steady, {"count": len(c), "hit_rate": (c.finish_reason == "length").sum() / len(c),
                    "mean": float(out.mean()), "p50": float(out.quantile(0.5)),
                    "p99": float(out.quantile(0.99))}


def main():
    args = sys.argv[1:]
    fleet = FLEET
    if "--fleet" in args:
        i = args.index("--fleet")
        fleet = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    tokstat = os.path.abspath(args[0])
    engines = args[1:] or ["spark", "dask"]
    documented = {t: [c["name"] for c in cols] for t, cols in json.loads(subprocess.run(
        [tokstat, "schema", "--format", "json"], check=True, capture_output=True).stdout).items()}
    fleet = nodes(fleet)
    t = time.perf_counter()
    raw = report(tokstat, [p for _, p in fleet])
    print(f"report on the raw inputs: {time.perf_counter() - t:.2f} s")
    checks = 0
    for seed, engine in enumerate(engines):
        order = fleet[:]
        random.Random(seed + 42).shuffle(order)
        with tempfile.TemporaryDirectory() as work:
            shared, merged = os.path.join(work, "shared"), os.path.join(work, "merged")
            t = time.perf_counter()
            {"spark": spark_session, "dask": dask_client, "ray": ray_session}[engine]()
            start = time.perf_counter() - t
            t = time.perf_counter()
            done = schedule(engine, tokstat, shared, order)
            exports = time.perf_counter() - t
            t = time.perf_counter()
            back = report(tokstat, [shared])
            merge = time.perf_counter() - t
            assert back == raw, f"{engine}: report DIR differs from report on the raw inputs"
            checks += 1
            t = time.perf_counter()
            subprocess.run([tokstat, "export", "-q", "--year", YEAR, "--to", merged,
                            "--partition-by", "run,instance", shared],
                           check=True, stdout=subprocess.DEVNULL)
            merged_export = time.perf_counter() - t
            t = time.perf_counter()
            if engine == "spark":
                n, steady, completions = spark_tables(shared, merged, documented)
                checks += n
            elif engine == "ray":
                steady, completions = ray_figures(merged)
            else:
                checks += dask_tables(shared, documented)
                steady, completions = dask_figures(merged)
            query = time.perf_counter() - t
            checks += check_figures(engine, steady, completions, raw)
            print(f"{engine}: scheduled {' '.join(n for n, _ in order)}; finished "
                  f"{' '.join(d[0] for d in done)}")
            print(f"{engine}: start {start:.2f} s, {len(order)} exports {exports:.2f} s "
                  f"(each {min(d[1] for d in done):.2f}-{max(d[1] for d in done):.2f} s on its "
                  f"worker), report DIR {merge:.2f} s, merged export {merged_export:.2f} s, "
                  f"figures by query {query:.2f} s")
    print(f"cluster: {checks} passed, 0 failed")


if __name__ == "__main__":
    main()
