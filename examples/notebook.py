#!/usr/bin/env python3
"""Where a notebook starts from an exported run: `tokstat export logs/ out/ --to DIR
--partition-by run,instance --run NAME` on each node, then these queries over DIR.

Usage: examples/notebook.py DIR      (pip install duckdb)
"""
import os
import sys

import duckdb

d = sys.argv[1]
db = duckdb.connect()


def t(name):
    # a partitioned export has a folder per table (run and instance are columns of every
    # file, so no Hive partitioning), an unpartitioned one a file
    files = f"{d}/{name}/**/*.parquet" if os.path.isdir(f"{d}/{name}") else f"{d}/{name}.parquet"
    return f"read_parquet('{files}', hive_partitioning = false)"


QUERIES = {
    "steady tok/s per run and instance (the report's: steady buckets weighted by time covered)":
        f"select run, coalesce(instance, '(run)') as instance, "
        f"round(sum(serving_gen_tps * covered_s) / sum(covered_s), 1) as steady_tps "
        f"from {t('timeline')} where steady and serving_gen_tps is not null "
        f"group by all order by all",
    "instances side by side":
        f"select run, instance, engine, span_s, gen_tps, vs_median, imbalanced, running_mean, "
        f"kv_usage_max, preemptions from {t('instances')} order by all",
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
