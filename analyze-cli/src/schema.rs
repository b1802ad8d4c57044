//! The documented tables: every column of what `parse` writes and `export` exports, with
//! its type, unit and meaning (`tokstat schema` prints them).

/// The tables' schema version (`tokstat_table_schema_version` in every Parquet file): raised
/// when a column is renamed or removed or changes type or meaning. 2: `run` (and `instance`)
/// in every file, every column in every file, counts signed, `requests.run` renamed
/// `bench_run`, `timeline.bucket_s` and `covered_s`, the `instances` and `segments` tables.
pub const VERSION: u32 = 2;

/// A column: name, type, meaning.
pub type Column = (&'static str, &'static str, &'static str);

/// The run's label (`export --run`), first in every exported table, so that each file holds
/// what its path says (export only: `parse` has no run).
const RUN: Column = (
    "run",
    "str",
    "the run's label (export --run; default: the first input's name)",
);

/// `(table, columns)`.
pub const TABLES: &[(&str, &[Column])] = &[
    (
        "steps",
        &[
            RUN,
            ("source", "str", "input path"),
            ("line", "i64", "1-based line number"),
            ("instance", "str", "file stem, plus #DP<n> for a DP rank"),
            ("engine", "str", "sglang | vllm"),
            ("kind", "str", "decode | prefill | stats | spec | cache"),
            ("ts", "datetime", "naive local time, as logged"),
            ("dp", "i32", "data-parallel rank (vLLM engine index)"),
            ("tp", "i32", "tensor-parallel rank"),
            ("pp", "i32", "pipeline-parallel rank"),
            ("ep", "i32", "expert-parallel rank"),
            ("running", "i64", "requests in the running batch"),
            (
                "waiting",
                "i64",
                "requests queued (#queue-req, Pending, Waiting)",
            ),
            ("gen_tps", "f64", "generation tokens/s as logged"),
            ("prompt_tps", "f64", "prompt (prefill) tokens/s as logged"),
            ("kv_usage", "f64", "KV pool usage, fraction 0-1"),
            ("tokens", "i64", "KV slots in use"),
            ("new_seq", "i64", "requests in a prefill batch"),
            ("new_tokens", "i64", "tokens computed in a prefill batch"),
            (
                "cached_tokens",
                "i64",
                "prefix-cache hits in a prefill batch",
            ),
            ("accept_len", "f64", "speculative mean acceptance length"),
            (
                "accept_rate",
                "f64",
                "speculative acceptance rate, fraction 0-1",
            ),
            ("graph", "bool", "batch ran in a CUDA/CPU/NPU graph"),
            ("mamba_usage", "f64", "Mamba pool usage, fraction 0-1"),
            ("swa_usage", "f64", "SWA pool usage, fraction 0-1"),
            (
                "prefix_hit_rate",
                "f64",
                "prefix-cache hit rate, fraction 0-1",
            ),
            (
                "preemptions",
                "i64",
                "preemptions in the interval (vLLM V1)",
            ),
            ("extra", "json", "unmodelled key: value pairs"),
        ],
    ),
    (
        "events",
        &[
            RUN,
            ("source", "str", "input path"),
            ("line", "i64", "1-based line number"),
            ("instance", "str", "as in steps"),
            ("ts", "datetime", "naive local time"),
            (
                "kind",
                "str",
                "crash | traceback | exception | cuda_oom | distributed | health_check | kv_transfer | error | oom | retraction | preemption | abort | recompile | http_5xx | http_4xx | server_ready",
            ),
            ("message", "str", "the message text"),
            (
                "count",
                "i64",
                "requests retracted, or vLLM's cumulative preemption count; for http_4xx / http_5xx in export, the access lines of the instance's time slot starting at ts (a second; a minute or more on logs spanning over 5 h)",
            ),
        ],
    ),
    (
        "config",
        &[
            RUN,
            ("source", "str", "input path"),
            ("instance", "str", "as in steps"),
            ("ts", "datetime", "naive local time"),
            ("key", "str", "setting name as the engine spells it"),
            (
                "value",
                "str",
                "setting value (quotes and thousands separators removed)",
            ),
        ],
    ),
    (
        "metrics",
        &[
            RUN,
            ("source", "str", "input path"),
            ("scrape", "i64", "0-based scrape number, in time order"),
            (
                "ts",
                "datetime",
                "scrape time: `# scrape` line, file name, sample stamps or --interval",
            ),
            (
                "name",
                "str",
                "metric wire name (`vllm:…_total`, `…_bucket`)",
            ),
            ("labels", "str", "k=v,k=v sorted, values unescaped"),
            ("value", "f64", "sample value (null for NaN / ±Inf)"),
            (
                "type",
                "str",
                "counter | gauge | histogram | summary | untyped (from # TYPE)",
            ),
        ],
    ),
    (
        "timeline",
        &[
            RUN,
            (
                "ts",
                "datetime",
                "bucket start (report --format json: timeline)",
            ),
            ("instance", "str", "null for the run's total"),
            (
                "gen_tps",
                "f64",
                "generated tokens/s: logged rates × their intervals, split by overlap",
            ),
            (
                "serving_gen_tps",
                "f64",
                "generated tokens/s over the time the stats lines cover in the bucket (gen_tps where they cover it all; null where none): what steady and peak rates average",
            ),
            (
                "prompt_tps",
                "f64",
                "prompt tokens/s (prefill batches, vLLM rates)",
            ),
            (
                "running",
                "f64",
                "mean of the bucket's lines (summed over instances)",
            ),
            (
                "waiting",
                "f64",
                "mean of the bucket's lines (summed over instances)",
            ),
            (
                "kv_usage",
                "f64",
                "mean, fraction 0-1 (averaged over instances)",
            ),
            ("accept_len", "f64", "mean speculative acceptance length"),
            (
                "events",
                "f64",
                "retracted requests, preemptions, errors, starts",
            ),
            (
                "http_ok",
                "i64",
                "HTTP access lines answered (status below 400); null without access lines",
            ),
            ("http_4xx", "i64", "HTTP access lines with a 4xx status"),
            ("http_5xx", "i64", "HTTP access lines with a 5xx status"),
            ("steady", "bool", "inside a segment's steady window"),
            (
                "covered_s",
                "f64",
                "time the stats lines cover in the bucket (the most any instance covers, for the total): steady tok/s = sum(serving_gen_tps × covered_s) / sum(covered_s) over steady rows",
            ),
            (
                "bucket_s",
                "f64",
                "the bucket's length (report --format json: timeline_bucket_s)",
            ),
        ],
    ),
    (
        "completions",
        &[
            RUN,
            ("source", "str", "input path of the record"),
            (
                "record",
                "i64",
                "1-based place among the file's completions (choices)",
            ),
            ("output_tokens", "i64", "tokens generated"),
            ("input_tokens", "i64", "prompt tokens"),
            (
                "reasoning_tokens",
                "i64",
                "reasoning tokens, where the record splits them out",
            ),
            ("output_chars", "i64", "characters of the output text"),
            (
                "finish_reason",
                "str",
                "stop | length | error | abort | other",
            ),
            ("latency_s", "f64", "end-to-end latency the record states"),
            (
                "created",
                "datetime",
                "when the request was created (the record's `created`)",
            ),
        ],
    ),
    (
        "requests",
        &[
            RUN,
            ("tool", "str", "the load generator that wrote the file (vllm bench serve, AIPerf, GuideLLM, inference-perf, LLMPerf, genai-bench, …)"),
            ("bench_run", "str", "the benchmark run in the tool's file (backend / label, strategy, stage)"),
            ("request", "i64", "place in the run"),
            ("input_tokens", "i64", "prompt tokens"),
            ("output_tokens", "i64", "tokens generated"),
            ("ttft_ms", "f64", "time to first token"),
            ("tpot_ms", "f64", "time per output token after the first"),
            ("itl_ms", "f64", "mean inter-token latency"),
            ("e2e_ms", "f64", "end-to-end latency"),
            ("error", "bool", "the request failed (the tool's error fields, or cancelled)"),
            ("cancelled", "bool", "the client cancelled it (AIPerf's was_cancelled, GuideLLM's incomplete)"),
            ("start", "datetime", "when it was sent, where the tool records it in Unix time (AIPerf, GuideLLM; null for inference-perf, whose clock is monotonic)"),
            ("end", "datetime", "when its last byte came, where the tool records it"),
        ],
    ),
    (
        "instances",
        &[
            RUN,
            ("instance", "str", "as in steps"),
            ("engine", "str", "sglang | vllm"),
            ("first_ts", "datetime", "its first stats line"),
            ("last_ts", "datetime", "its last stats line"),
            ("span_s", "f64", "last_ts - first_ts"),
            ("stat_lines", "i64", "decode (SGLang) or periodic stats (vLLM) lines"),
            ("prefill_lines", "i64", "prefill batch lines"),
            ("gen_tps", "f64", "steady tok/s: its serving rate over the run's steady buckets, weighted by the time covered (report: instances[].gen_tps)"),
            ("vs_median", "f64", "relative difference from the median instance's steady rate"),
            ("imbalanced", "bool", "beyond ±15% of the median"),
            ("gen_tokens", "f64", "tokens generated, from the logged rates"),
            ("gen_tps_mean", "f64", "mean over its stats lines"),
            ("gen_tps_max", "f64", "maximum over its stats lines"),
            ("running_mean", "f64", "mean over its stats lines"),
            ("running_max", "f64", "maximum over its stats lines"),
            ("waiting_mean", "f64", "mean over its stats lines"),
            ("kv_usage_mean", "f64", "mean, fraction 0-1"),
            ("kv_usage_max", "f64", "maximum, fraction 0-1"),
            ("prefill_tokens", "i64", "prompt tokens of its prefill batches"),
            ("retractions", "i64", "retraction events"),
            ("preemptions", "i64", "preemptions"),
            ("errors", "i64", "error lines"),
        ],
    ),
    (
        "segments",
        &[
            RUN,
            ("segment", "i64", "0-based, in time order (report: segments[].index)"),
            ("reason", "str", "why it starts: the first, a restart, a gap, a change of settings"),
            ("start", "datetime", "its first bucket"),
            ("end", "datetime", "the end of its last bucket"),
            ("duration_s", "f64", "end - start"),
            ("instances", "i64", "instances serving in it"),
            ("gen_tokens", "f64", "tokens generated in it"),
            ("gen_tps", "f64", "its steady tok/s (null without a steady window)"),
            ("gen_tps_mean", "f64", "tokens over its busy time"),
            ("peak_gen_tps", "f64", "its best rate over the peak window"),
            ("steady_from", "datetime", "its steady window's start (null without one)"),
            ("steady_to", "datetime", "its steady window's end"),
            ("ramp_up_s", "f64", "start to steady"),
            ("drain_s", "f64", "steady to end"),
        ],
    ),
    (
        "one_clock",
        &[
            RUN,
            ("bench_run", "str", "the benchmark run's name (report: one_clock[].run)"),
            ("server", "str", "the server's side it was aligned with: server log | scrapes"),
            ("offset_s", "f64", "server clock - client clock, as found (docs/one-clock.md)"),
            ("ts", "datetime", "the bucket's start, on the clock ts_clock names"),
            ("ts_clock", "str", "client (its Unix clock, UTC) | server (as logged, for a client whose clock is monotonic)"),
            ("bucket_s", "f64", "the bucket's length"),
            ("starts", "i64", "requests the client sent in it"),
            ("completions", "i64", "requests answered in it"),
            ("errors", "i64", "requests failed in it"),
            ("in_flight", "f64", "the client's mean requests in flight"),
            ("ttft_mean_ms", "f64", "TTFT of the requests sent in it: mean"),
            ("ttft_p50_ms", "f64", "TTFT p50 of the requests sent in it"),
            ("ttft_p99_ms", "f64", "TTFT p99 of the requests sent in it"),
            ("itl_p50_ms", "f64", "mean inter-token latency per request: p50"),
            ("itl_p99_ms", "f64", "mean inter-token latency per request: p99"),
            ("e2e_p50_ms", "f64", "end-to-end latency of the requests sent in it: p50"),
            ("e2e_p99_ms", "f64", "end-to-end latency of the requests sent in it: p99"),
            ("running", "f64", "the server's mean running requests"),
            ("waiting", "f64", "the server's mean waiting requests"),
            ("kv_usage", "f64", "the server's mean KV usage, fraction 0-1"),
            ("preemptions", "f64", "requests preempted (null: not counted by the source)"),
            ("gen_tps", "f64", "the server's generated tokens/s"),
        ],
    ),
];

/// The unit of a column, from its name: what a notebook needs to read a number right.
pub fn unit(column: &str) -> &'static str {
    match column {
        "ts" | "created" | "start" | "end" | "steady_from" | "steady_to" => "datetime (ms)",
        c if c.ends_with("_ts") => "datetime (ms)",
        c if c.ends_with("_tps") => "tokens/s",
        c if c.ends_with("_ms") => "ms",
        c if c.ends_with("_s") => "s",
        c if c.ends_with("_usage") || c.ends_with("_rate") => "fraction 0-1",
        c if c.ends_with("_tokens") || c == "tokens" || c == "accept_len" => "tokens",
        "running" | "waiting" | "new_seq" | "in_flight" => "requests",
        "starts" | "completions" => "count",
        "output_chars" => "characters",
        "line" | "record" | "request" | "scrape" | "count" | "events" | "preemptions" => "count",
        "stat_lines" | "prefill_lines" | "retractions" | "errors" | "segment" => "count",
        "instances" => "instances",
        c if c.starts_with("http_") => "count",
        _ => "",
    }
}

/// The documented columns of `table`, in the schema's order.
pub fn columns(table: &str) -> Option<&'static [Column]> {
    TABLES.iter().find(|t| t.0 == table).map(|t| t.1)
}

/// The polars type of a documented type (`str` and `json` are text).
pub fn dtype(schema: &str) -> polars::prelude::DataType {
    use polars::prelude::{DataType, TimeUnit};
    match schema {
        "i64" => DataType::Int64,
        "i32" => DataType::Int32,
        "f64" => DataType::Float64,
        "bool" => DataType::Boolean,
        "datetime" => DataType::Datetime(TimeUnit::Milliseconds, None),
        _ => DataType::String,
    }
}

#[cfg(test)]
mod tests {
    /// Every column has a type `dtype` knows, and no table names a column twice.
    #[test]
    fn every_type_is_known() {
        for (table, cols) in super::TABLES {
            for (i, (name, ty, _)) in cols.iter().enumerate() {
                assert!(
                    ["str", "json", "i64", "i32", "f64", "bool", "datetime"].contains(ty),
                    "{table}.{name}: {ty}"
                );
                assert!(
                    !cols[..i].iter().any(|c| c.0 == *name),
                    "{table}.{name} twice"
                );
            }
        }
    }
}
