"""What a notebook user writes today for completions: DuckDB read_json with an explicit column
list (the fastest form: no schema inference, texts not materialised beyond what is named),
then quantile_cont over the output tokens and the cap-hit rate."""
import sys

import duckdb

path = sys.argv[1]
q = f"""
SELECT count(*) AS records,
       quantile_cont(usage.completion_tokens, [0.5, 0.9, 0.95, 0.99]) AS q,
       max(usage.completion_tokens) AS max_tokens,
       avg(usage.completion_tokens) AS mean_tokens,
       avg(CASE WHEN finish_reason = 'length' THEN 1.0 ELSE 0.0 END) AS cap_hit_rate
FROM read_json('{path}', format='newline_delimited',
               columns={{'finish_reason': 'VARCHAR', 'usage': 'STRUCT(completion_tokens BIGINT)'}})
"""
print(duckdb.sql(q).fetchall())
