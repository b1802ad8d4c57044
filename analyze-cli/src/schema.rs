//! The documented tables: every column of what `parse` writes and `export` exports, with
//! its type, unit and meaning (`tokstat schema` prints them).

/// A column: name, type, meaning.
pub type Column = (&'static str, &'static str, &'static str);

/// `(table, columns)`.
pub const TABLES: &[(&str, &[Column])] = &[
    (
        "steps",
        &[
            ("source", "str", "input path"),
            ("line", "u64", "1-based line number"),
            ("instance", "str", "file stem, plus #DP<n> for a DP rank"),
            ("engine", "str", "sglang | vllm"),
            ("kind", "str", "decode | prefill | stats | spec | cache"),
            ("ts", "datetime", "naive local time, as logged"),
            ("dp", "u32", "data-parallel rank (vLLM engine index)"),
            ("tp", "u32", "tensor-parallel rank"),
            ("pp", "u32", "pipeline-parallel rank"),
            ("ep", "u32", "expert-parallel rank"),
            ("running", "u64", "requests in the running batch"),
            (
                "waiting",
                "u64",
                "requests queued (#queue-req, Pending, Waiting)",
            ),
            ("gen_tps", "f64", "generation tokens/s as logged"),
            ("prompt_tps", "f64", "prompt (prefill) tokens/s as logged"),
            ("kv_usage", "f64", "KV pool usage, fraction 0-1"),
            ("tokens", "u64", "KV slots in use"),
            ("new_seq", "u64", "requests in a prefill batch"),
            ("new_tokens", "u64", "tokens computed in a prefill batch"),
            (
                "cached_tokens",
                "u64",
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
                "u64",
                "preemptions in the interval (vLLM V1)",
            ),
            ("extra", "json", "unmodelled key: value pairs"),
        ],
    ),
    (
        "events",
        &[
            ("source", "str", "input path"),
            ("line", "u64", "1-based line number"),
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
                "u64",
                "requests retracted, or vLLM's cumulative preemption count; for http_4xx / http_5xx in export, the access lines of the instance's time slot starting at ts (a second; a minute or more on logs spanning over 5 h)",
            ),
        ],
    ),
    (
        "config",
        &[
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
            ("source", "str", "input path"),
            ("scrape", "u64", "0-based scrape number, in time order"),
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
                "u64",
                "HTTP access lines answered (status below 400); null without access lines",
            ),
            ("http_4xx", "u64", "HTTP access lines with a 4xx status"),
            ("http_5xx", "u64", "HTTP access lines with a 5xx status"),
            ("steady", "bool", "inside a segment's steady window"),
        ],
    ),
    (
        "completions",
        &[
            ("source", "str", "input path of the record"),
            (
                "record",
                "u64",
                "1-based place among the file's completions (choices)",
            ),
            ("output_tokens", "u64", "tokens generated"),
            ("input_tokens", "u64", "prompt tokens"),
            (
                "reasoning_tokens",
                "u64",
                "reasoning tokens, where the record splits them out",
            ),
            ("output_chars", "u64", "characters of the output text"),
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
            ("tool", "str", "the load generator that wrote the file (vllm bench serve, AIPerf, GuideLLM, inference-perf, LLMPerf, genai-bench, …)"),
            ("run", "str", "the benchmark run (backend / label, strategy, stage)"),
            ("request", "u64", "place in the run"),
            ("input_tokens", "u64", "prompt tokens"),
            ("output_tokens", "u64", "tokens generated"),
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
];

/// The unit of a column, from its name: what a notebook needs to read a number right.
pub fn unit(column: &str) -> &'static str {
    match column {
        "ts" | "created" => "datetime (ms)",
        c if c.ends_with("_tps") => "tokens/s",
        c if c.ends_with("_ms") => "ms",
        c if c.ends_with("_s") => "s",
        c if c.ends_with("_usage") || c.ends_with("_rate") => "fraction 0-1",
        c if c.ends_with("_tokens") || c == "tokens" || c == "accept_len" => "tokens",
        "running" | "waiting" | "new_seq" => "requests",
        "output_chars" => "characters",
        "line" | "record" | "request" | "scrape" | "count" | "events" | "preemptions" => "count",
        c if c.starts_with("http_") => "count",
        _ => "",
    }
}
