#!/usr/bin/env python3
"""Where a notebook starts from an exported run: `tokstat export logs/ out/ --to DIR
--partition-by run,instance --run NAME` on each node, then these queries over DIR.

Usage: examples/notebook.py DIR      (pip install duckdb)
"""
import sys

import duckdb

d = sys.argv[1]
db = duckdb.connect()


def t(name):
    return f"read_parquet('{d}/{name}/**/*.parquet', hive_partitioning = true)"


QUERIES = {
    "steady tok/s per run and instance (mean of steady buckets)":
        f"select run, instance, round(avg(gen_tps), 1) as steady_tps from {t('timeline')} "
        f"where steady and instance is not null group by all order by all",
    "throughput per minute (the run's total)":
        f"select run, time_bucket(interval 1 minute, ts) as minute, round(avg(gen_tps)) as gen_tps, "
        f"round(avg(running), 1) as running from {t('timeline')} where instance is null "
        f"group by all order by all limit 20",
    "output tokens and cap hits per run":
        f"select run, count(*) as completions, quantile_cont(output_tokens, [0.5, 0.9, 0.99]) as p50_p90_p99, "
        f"round(avg((finish_reason = 'length')::int), 4) as cap_hit_rate from {t('completions')} group by run",
    "settings each instance started with":
        f"select run, instance, key, value from {t('config')} where key in "
        f"('max_running_requests', 'max_num_seqs', 'model_path', 'model') order by all",
}

for title, q in QUERIES.items():
    print(f"-- {title}")
    try:
        print(db.sql(q))
    except duckdb.Error as e:  # a table the inputs did not have
        print(f"   ({e.__class__.__name__}: {str(e).splitlines()[0]})\n")
