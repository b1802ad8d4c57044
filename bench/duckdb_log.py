"""What a notebook user writes today: DuckDB over the raw log with regexp_extract.

Computes what `tokstat report` prints per file for an SGLang log: decode and prefill line
counts, mean / max generation throughput, mean running and queued requests, peak KV usage.
"""
import sys

import duckdb

path = sys.argv[1]
q = f"""
WITH lines AS (
  SELECT line FROM read_csv('{path}', columns={{'line': 'VARCHAR'}}, header=false,
                            delim=chr(31), quote='', escape='', auto_detect=false)
), dec AS (
  SELECT CAST(regexp_extract(line, 'gen throughput \\(token/s\\): ([0-9.]+)', 1) AS DOUBLE) AS gen,
         CAST(regexp_extract(line, '#running-req: ([0-9]+)', 1) AS BIGINT) AS running,
         CAST(regexp_extract(line, '#queue-req: ([0-9]+)', 1) AS BIGINT) AS waiting,
         CAST(regexp_extract(line, 'token usage: ([0-9.]+)', 1) AS DOUBLE) AS kv
  FROM lines WHERE line LIKE '%Decode batch%'
)
SELECT (SELECT count(*) FROM dec) AS decode_lines,
       (SELECT count(*) FROM lines WHERE line LIKE '%Prefill batch%') AS prefill_lines,
       avg(gen), max(gen), avg(running), avg(waiting), max(kv)
FROM dec
"""
print(duckdb.sql(q).fetchall())
