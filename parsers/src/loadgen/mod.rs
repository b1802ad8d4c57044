//! Load generators' result files (docs/formats.md §4.4–§4.10): one model, [`Run`], for the
//! files of every tool, and one reader per tool.
//!
//! | tool | files | reader |
//! |---|---|---|
//! | vLLM `bench serve`, SGLang `bench_serving` | `--save-result` JSON, JSONL | [`vllm`] |
//! | AIPerf, GenAI-Perf | `profile_export_aiperf.json` / `…_genai_perf.json`, AIPerf's `profile_export.jsonl` | [`aiperf`] |
//! | GuideLLM 0.3–0.8 | `benchmarks.json` / `.yaml` | [`guidellm`] |
//! | inference-perf | `stage_N_lifecycle_metrics.json`, `summary_…`, `per_request_lifecycle_metrics.json` | [`inference_perf`] |
//! | LLMPerf | `*_summary.json`, `*_individual_responses.json` | [`llmperf`] |
//! | genai-bench | a run's JSON (`aggregated_metrics`, `individual_request_metrics`) | [`genai_bench`] |
//! | inference-perf, AIPerf (the server's side) | `stage_N_prometheus_metrics.json`, `server_metrics_export.json` | [`server`] |
//!
//! A run's figures are kept under one vocabulary and one set of units whatever the tool:
//! vLLM's result-file names (`duration` s, `request_throughput` req/s, `median_ttft_ms`,
//! …, see [`FIGURES`]). A tool's figure is put under such a name only where its definition
//! is the same; every figure read keeps the tool's own key and unit beside it
//! ([`Stated`]), and a figure defined differently (LLMPerf's inter-token latency, GuideLLM's
//! time per output token) is kept under the tool's name only. A figure a file does not hold
//! is absent, never 0.

pub mod aiperf;
pub mod aiperf_scrapes;
pub mod csv;
pub mod genai_bench;
pub mod guidellm;
pub mod inference_perf;
pub mod llmperf;
pub mod server;
mod units;
pub mod vllm;
pub mod yaml;

pub use units::{Unit, UnitError};

use crate::json::JsonError;
use serde_json::Value;

/// The load generator that wrote a result file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Tool {
    /// `vllm bench serve --save-result` (and `benchmarks/benchmark_serving.py` before it).
    #[default]
    VllmBench,
    /// `python -m sglang.bench_serving --output-file`.
    SglangBench,
    /// A serving benchmark's summary printed into a server log.
    Console,
    AiPerf,
    GenAiPerf,
    GuideLlm,
    InferencePerf,
    LlmPerf,
    GenaiBench,
}

impl Tool {
    /// The tool's name as its users write it.
    pub fn name(self) -> &'static str {
        match self {
            Tool::VllmBench => "vllm bench serve",
            Tool::SglangBench => "sglang bench_serving",
            Tool::Console => "serving benchmark (console)",
            Tool::AiPerf => "AIPerf",
            Tool::GenAiPerf => "GenAI-Perf",
            Tool::GuideLlm => "GuideLLM",
            Tool::InferencePerf => "inference-perf",
            Tool::LlmPerf => "LLMPerf",
            Tool::GenaiBench => "genai-bench",
        }
    }

    /// Where the tool's definitions differ from tokstat's (vLLM's), in words, for the report.
    pub fn definitions(self) -> &'static [&'static str] {
        match self {
            Tool::AiPerf => &[
                "output_token_throughput counts every output token, reasoning tokens included, over the benchmark's duration",
                "time_to_first_token is the first token of any kind (a reasoning token included)",
                "inter_token_latency is (request latency − TTFT) / (output tokens − 1): tokstat's TPOT; inter_chunk_latency is the gap between chunks: tokstat's ITL",
                "request_count counts successful requests; completed_request_count counts every finished one, errors included",
            ],
            Tool::GenAiPerf => &[
                "output_token_throughput is the output tokens of all requests over the span from the first request to the last response: not request rate × mean output length",
                "inter_token_latency is (request latency − TTFT) / (output tokens − 1): tokstat's TPOT",
            ],
            Tool::GuideLlm => &[
                "requests_per_second and output_tokens_per_second are means over the benchmark's time series of rates, not totals over its duration; tokstat's own (requests or tokens ÷ duration) is recomputed where per-request rows are kept",
                "inter_token_latency_ms is (last token − first token) / (output tokens − 1): tokstat's TPOT; time_per_output_token_ms divides the same span by every output token (not by the gaps between them) and is kept under GuideLLM's name",
                "per-request rows may be a sample (`--output-sampling`); counts and percentiles are the file's",
                "incomplete requests (in flight when a benchmark ended) are counted as cancelled, among the failed",
            ],
            Tool::InferencePerf => &[
                "time_per_output_token is (last token − first token) / (output tokens − 1): tokstat's TPOT; normalized_time_per_output_token is request latency / output tokens and is kept under inference-perf's name",
                "achieved_rate is the rate requests were sent at, not a completion rate",
            ],
            Tool::LlmPerf => &[
                "inter_token_latency_s is the whole request's time, TTFT included, divided by its output tokens: kept under LLMPerf's name; tokstat's TPOT is recomputed from each request's latency, TTFT and output tokens",
                "`version` (2023-08-31) is the results format's, not the tool's",
                "mean_output_throughput_token_per_s is the output tokens of successful requests over the wall time of the whole test",
            ],
            Tool::GenaiBench => &[
                "tpot is the output latency (e2e − TTFT) / (output tokens − 1): tokstat's TPOT",
                "requests_per_minute (older files) is per minute; converted to per second",
            ],
            Tool::VllmBench | Tool::SglangBench | Tool::Console => &[],
        }
    }
}

/// One request of a run. Times in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Request {
    pub index: u64,
    pub input_len: Option<u64>,
    pub output_len: Option<u64>,
    pub ttft_s: Option<f64>,
    /// Time per output token after the first: (e2e − ttft) / (output − 1).
    pub tpot_s: Option<f64>,
    /// The mean gap between streamed chunks.
    pub itl_mean_s: Option<f64>,
    pub e2e_s: Option<f64>,
    /// Failed, by the tool's own fields (an error code or message, a cancellation).
    pub error: bool,
    /// Cancelled by the client (AIPerf's `was_cancelled`, GuideLLM's incomplete requests):
    /// counted among the errors.
    pub cancelled: bool,
    /// When it was sent and when its last byte came, in seconds on the tool's clock, where
    /// the tool records them: since the Unix epoch when the run's [`Run::epoch`] says so
    /// (AIPerf, GuideLLM), else a monotonic clock's (inference-perf's `perf_counter`): good
    /// for spans, not for dates.
    pub start_s: Option<f64>,
    pub end_s: Option<f64>,
}

impl Request {
    /// tokstat's TPOT from a request's end-to-end latency, TTFT and output tokens:
    /// (e2e − ttft) / (output − 1), for two output tokens or more.
    pub fn tpot_of(e2e_s: Option<f64>, ttft_s: Option<f64>, output: Option<u64>) -> Option<f64> {
        match (e2e_s, ttft_s, output) {
            (Some(e), Some(t), Some(o)) if o > 1 => Some((e - t) / (o - 1) as f64),
            _ => None,
        }
    }
}

/// A figure as the tool wrote it: its key (a path such as
/// `time_to_first_token.p50`), its unit, its value, and the figure of [`FIGURES`] it was put
/// under (converted to that figure's unit), if any.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Stated {
    pub key: String,
    pub unit: String,
    pub value: f64,
    pub figure: Option<String>,
}

/// What the load was, where the file states it.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Setup {
    /// The tool's version, where the file stamps it.
    pub version: Option<String>,
    pub model: Option<String>,
    /// The server's address or the API it was sent to (`chat`, `/v1/completions`, …).
    pub endpoint: Option<String>,
    pub streaming: Option<bool>,
    /// The tool's name for the load (`concurrent`, `constant`, `sweep`, `poisson`, …).
    pub strategy: Option<String>,
}

/// One benchmark run: a file, or one benchmark of a file that holds several (a GuideLLM
/// sweep).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Run {
    /// The run's name: the tool's label, strategy or stage, as given.
    pub name: String,
    pub tool: Tool,
    pub setup: Setup,
    /// Figures by the names of [`FIGURES`], in their units (`Infinity` kept as infinity);
    /// for vLLM and SGLang files, every numeric key as written.
    pub scalars: Vec<(String, f64)>,
    /// Every figure as the tool wrote it (empty for vLLM's and SGLang's files, whose keys are
    /// the scalars' own).
    pub stated: Vec<Stated>,
    pub requests: Vec<Request>,
    /// The files it was read from.
    pub files: Vec<String>,
    /// The requests' times ([`Request::start_s`]) are Unix time.
    pub epoch: bool,
    /// The requests are a sample of the run's (GuideLLM's `--output-sampling`): their
    /// distributions are not the run's; the file's own figures are.
    pub requests_sampled: bool,
    /// The server's side of the run as the tool summarised it beside its results
    /// (inference-perf's Prometheus report, AIPerf's server-metrics export).
    #[cfg_attr(feature = "serde", serde(default))]
    pub server: Option<server::ServerView>,
}

/// The figures a run may hold, by the names vLLM's result files give them, with their units.
pub const FIGURES: &[(&str, &str)] = &[
    ("duration", "s"),
    ("completed", "requests"),
    ("failed", "requests"),
    ("num_prompts", "requests"),
    ("request_rate", "req/s"),
    ("max_concurrency", "requests"),
    ("request_throughput", "req/s"),
    ("output_throughput", "tok/s"),
    ("total_token_throughput", "tok/s"),
    ("total_input_tokens", "tokens"),
    ("total_output_tokens", "tokens"),
    ("request_goodput", "req/s"),
    ("mean_ttft_ms", "ms"),
    ("median_ttft_ms", "ms"),
    ("p90_ttft_ms", "ms"),
    ("p99_ttft_ms", "ms"),
    ("mean_tpot_ms", "ms"),
    ("median_tpot_ms", "ms"),
    ("p90_tpot_ms", "ms"),
    ("p99_tpot_ms", "ms"),
    ("mean_itl_ms", "ms"),
    ("median_itl_ms", "ms"),
    ("p90_itl_ms", "ms"),
    ("p99_itl_ms", "ms"),
    ("mean_e2el_ms", "ms"),
    ("median_e2el_ms", "ms"),
    ("p90_e2el_ms", "ms"),
    ("p99_e2el_ms", "ms"),
    ("mean_input_tokens", "tokens"),
    ("mean_output_tokens", "tokens"),
];

impl Run {
    /// A scalar result; the first of `keys` present wins (names changed across versions).
    pub fn get(&self, keys: &[&str]) -> Option<f64> {
        keys.iter()
            .find_map(|k| self.scalars.iter().find(|(n, _)| n == k).map(|(_, v)| *v))
    }

    /// A run of `tool` named `name`.
    pub fn new(tool: Tool, name: impl Into<String>) -> Run {
        Run {
            name: name.into(),
            tool,
            ..Run::default()
        }
    }

    /// Records a figure the tool wrote under `key` in `unit`, and puts it under `figure`
    /// (one of [`FIGURES`], converted to its unit) when given. A value that is not a number
    /// is not a figure: nothing is recorded.
    pub fn state(&mut self, key: &str, unit: &str, value: Option<f64>, figure: Option<&str>) {
        let Some(value) = value else { return };
        let mut put = None;
        if let Some(f) = figure {
            if let Some(&(name, to)) = FIGURES.iter().find(|(n, _)| *n == f) {
                if let Ok(v) = Unit::parse(unit).and_then(|u| u.convert(value, to)) {
                    if !self.scalars.iter().any(|(n, _)| n == name) {
                        self.scalars.push((name.to_string(), v));
                        put = Some(name.to_string());
                    }
                }
            }
        }
        self.stated.push(Stated {
            key: key.to_string(),
            unit: unit.to_string(),
            value,
            figure: put,
        });
    }
}

/// Why a result file could not be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LoadgenError {
    #[error("not JSON: {0}")]
    Json(#[from] JsonError),
    /// The document has the tool's shape but not a field every file of it has.
    #[error("{tool} result file without {missing}")]
    Missing { tool: &'static str, missing: String },
}

/// The layouts of result files tokstat reads, by what their first bytes show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// vLLM / SGLang result: one run per file or per line ([`vllm`]).
    Vllm,
    /// AIPerf's or GenAI-Perf's summary ([`aiperf::summary`]).
    ProfileExport,
    /// AIPerf's CSV summary ([`csv::summary`]).
    AiPerfCsv,
    /// AIPerf's sweep aggregate, `sweep_aggregate/profile_export_aiperf_sweep.json`
    /// ([`aiperf::sweep`]): one run per combination of the swept parameters.
    AiPerfSweep,
    /// AIPerf's aggregate of one variation's trials,
    /// `aggregate/<variation>/profile_export_aiperf_aggregate.json`: each figure's mean and
    /// confidence interval over the trials (recognised, not read; the sweep aggregate and
    /// the trials' own folders are).
    AiPerfAggregate,
    /// GenAI-Perf's CSV summary ([`csv::summary`]).
    GenAiPerfCsv,
    /// GuideLLM 0.5+'s CSV ([`csv::guidellm`]).
    GuideLlmCsv,
    /// GuideLLM 0.3 – 0.4's CSV: one header row of flattened names (recognised, not read).
    GuideLlmCsvOld,
    /// AIPerf's per-request records, one per line ([`aiperf::record`]).
    AiPerfRecords,
    /// AIPerf's `inputs.json`: the payloads sent, no result (recognised, not read).
    AiPerfInputs,
    /// inference-perf's `validation.json`: its checks of its own reports (recognised, not
    /// read).
    InferencePerfValidation,
    /// perf_analyzer's raw `profile_export.json` under GenAI-Perf: request and response
    /// times, no token counts and no error field (recognised, not read).
    PerfAnalyzerExport,
    /// GuideLLM's benchmarks report ([`guidellm::report`]).
    GuideLlm,
    /// inference-perf's summary of a stage or of all ([`inference_perf::summary`]).
    InferencePerfSummary,
    /// inference-perf's per-request list ([`inference_perf::requests`]).
    InferencePerfRequests,
    /// LLMPerf's summary ([`llmperf::summary`]).
    LlmPerfSummary,
    /// LLMPerf's individual responses ([`llmperf::responses`]).
    LlmPerfResponses,
    /// inference-perf's summary of the server's Prometheus metrics over a stage
    /// (`stage_N_prometheus_metrics.json`, `summary_prometheus_metrics.json`): the server's
    /// side of the run ([`server::inference_perf`]).
    InferencePerfServerMetrics,
    /// AIPerf's summary of the server's metrics over its profiling window
    /// (`server_metrics_export.json`): totals, rates and percentiles of each series, the
    /// server's side of the run ([`server::aiperf`]; its scrapes, `.jsonl` and `.parquet`,
    /// are read as scrapes).
    AiPerfServerMetricsSummary,
    /// The CSV of AIPerf's server-metrics summary: the JSON's figures, rounded (recognised,
    /// not read; the JSON is).
    AiPerfServerMetricsCsv,
    /// genai-bench's run ([`genai_bench::run`]).
    GenaiBench,
    /// genai-bench's `experiment_metadata.json`: the experiment's settings, no result
    /// (recognised, not read).
    GenaiBenchMetadata,
}

impl Layout {
    /// The tool that writes it.
    pub fn tool(self) -> Tool {
        match self {
            Layout::Vllm => Tool::VllmBench,
            Layout::ProfileExport
            | Layout::AiPerfRecords
            | Layout::AiPerfInputs
            | Layout::AiPerfServerMetricsSummary
            | Layout::AiPerfServerMetricsCsv => Tool::AiPerf,
            Layout::AiPerfCsv | Layout::AiPerfSweep | Layout::AiPerfAggregate => Tool::AiPerf,
            Layout::PerfAnalyzerExport | Layout::GenAiPerfCsv => Tool::GenAiPerf,
            Layout::GuideLlmCsv | Layout::GuideLlmCsvOld => Tool::GuideLlm,
            Layout::GuideLlm => Tool::GuideLlm,
            Layout::InferencePerfSummary
            | Layout::InferencePerfRequests
            | Layout::InferencePerfServerMetrics
            | Layout::InferencePerfValidation => Tool::InferencePerf,
            Layout::LlmPerfSummary | Layout::LlmPerfResponses => Tool::LlmPerf,
            Layout::GenaiBench | Layout::GenaiBenchMetadata => Tool::GenaiBench,
        }
    }

    /// Whether the file holds results (rather than a run's inputs or settings).
    pub fn has_results(self) -> bool {
        !matches!(
            self,
            Layout::AiPerfInputs
                | Layout::AiPerfAggregate
                | Layout::AiPerfServerMetricsCsv
                | Layout::GenaiBenchMetadata
                | Layout::PerfAnalyzerExport
                | Layout::GuideLlmCsvOld
                | Layout::InferencePerfValidation
        )
    }

    /// What a file that holds no results is, and what to read instead (None for a result
    /// file).
    pub fn unread(self) -> Option<&'static str> {
        match self {
            Layout::AiPerfInputs => Some(
                "AIPerf's inputs.json: the payloads sent, no results; read profile_export_aiperf.json or profile_export.jsonl beside it",
            ),
            Layout::AiPerfAggregate => Some(
                "AIPerf's aggregate of one variation's trials (means and confidence intervals over them); read the sweep aggregate (sweep_aggregate/profile_export_aiperf_sweep.json) or the trials' folders",
            ),
            Layout::AiPerfServerMetricsCsv => Some(
                "AIPerf's server-metrics summary as CSV (the JSON's figures, rounded); read server_metrics_export.json beside it for the server's side of the run, or its scrapes, server_metrics_export.jsonl or .parquet (`--server-metrics-formats json csv jsonl parquet`)",
            ),
            Layout::GenaiBenchMetadata => Some(
                "genai-bench's experiment metadata: the experiment's settings, no results; read the run files beside it",
            ),
            Layout::InferencePerfValidation => Some(
                "inference-perf's validation.json: its checks of its own reports (warnings such as client and server token counts that disagree), no results; read the lifecycle files beside it",
            ),
            Layout::GuideLlmCsvOld => Some(
                "GuideLLM 0.3 – 0.4's CSV: the figures of its report flattened into one header row (not read); read the benchmarks.json or .yaml GuideLLM writes (`--output-path` or `--output kind=json`)",
            ),
            Layout::PerfAnalyzerExport => Some(
                "perf_analyzer's raw profile export (GenAI-Perf's input): request and response times without token counts or errors; read the _genai_perf.json GenAI-Perf wrote beside it",
            ),
            _ => None,
        }
    }

    /// Whether the file is one record per line (rather than one document).
    pub fn per_line(self) -> bool {
        matches!(self, Layout::AiPerfRecords)
    }
}

/// The layout of a result file from its head (the first record of a JSONL file, or the
/// first bytes of a document), or `None` for JSON that is no result file (completion
/// records). Keys are looked for as written by each tool's writer (docs/formats.md).
pub fn sniff(head: &[u8]) -> Option<Layout> {
    let has = |k: &str| memchr::memmem::find(head, k.as_bytes()).is_some();
    let start = head
        .iter()
        .position(|c| !c.is_ascii_whitespace() && *c != 0xEF && *c != 0xBB && *c != 0xBF)
        .map(|i| head[i]);
    if has("\"aggregation_type\"") && has("\"per_combination_metrics\"") {
        return Some(Layout::AiPerfSweep);
    }
    if has("\"aggregation_type\"") && has("\"ci_low\"") {
        return Some(Layout::AiPerfAggregate);
    }
    if has("\"endpoints_configured\"") && has("\"endpoint_info\"") {
        return Some(Layout::AiPerfServerMetricsSummary);
    }
    if has("\"request_start_ns\"") && has("\"metadata\"") {
        return Some(Layout::AiPerfRecords);
    }
    if has("\"reports\"") && has("\"global\"") && has("\"check\"") && has("\"severity\"") {
        return Some(Layout::InferencePerfValidation);
    }
    if has("\"experiments\"") && has("\"service_kind\"") && has("\"response_timestamps\"") {
        return Some(Layout::PerfAnalyzerExport);
    }
    if has("\"input_config\"")
        && (has("\"request_throughput\"")
            || has("\"time_to_first_token\"")
            || has("\"request_latency\"")
            || has("\"request_count\""))
    {
        return Some(Layout::ProfileExport);
    }
    if has("\"guidellm_version\"") || (has("\"benchmarks\"") && has("\"generative_benchmark\"")) {
        return Some(Layout::GuideLlm);
    }
    if empty_object_at(head, b"\"load_summary\"") && has("\"kv_cache_usage_percentage\"") {
        return Some(Layout::InferencePerfServerMetrics);
    }
    if has("\"load_summary\"") && (has("\"successes\"") || has("\"failures\"")) {
        return Some(Layout::InferencePerfSummary);
    }
    if start == Some(b'[') && has("\"start_time\"") && has("\"end_time\"") && has("\"info\"") {
        return Some(Layout::InferencePerfRequests);
    }
    if has("\"results_num_requests_started\"")
        || has("\"results_ttft_s_mean\"")
        || has("\"results_mean_output_throughput_token_per_s\"")
    {
        return Some(Layout::LlmPerfSummary);
    }
    if start == Some(b'[') && has("\"error_code\"") && has("\"end_to_end_latency_s\"") {
        return Some(Layout::LlmPerfResponses);
    }
    if has("\"aggregated_metrics\"") && (has("\"num_concurrency\"") || has("\"stats\"")) {
        return Some(Layout::GenaiBench);
    }
    if has("\"iteration_type\"") && has("\"traffic_scenario\"") {
        return Some(Layout::GenaiBenchMetadata);
    }
    if start == Some(b'{') && has("\"data\"") && has("\"session_id\"") && has("\"payloads\"") {
        return Some(Layout::AiPerfInputs);
    }
    vllm::is_bench(head).then_some(Layout::Vllm)
}

/// Whether `key` is followed by `: {}` (with any whitespace), as inference-perf's server
/// report writes `"load_summary": {}` ("model server doesn't report failed requests").
fn empty_object_at(head: &[u8], key: &[u8]) -> bool {
    memchr::memmem::find_iter(head, key).any(|i| {
        let mut rest = head[i + key.len()..]
            .iter()
            .filter(|c| !c.is_ascii_whitespace());
        rest.next() == Some(&b':') && rest.next() == Some(&b'{') && rest.next() == Some(&b'}')
    })
}

/// Reads a whole result file of `layout` (not [`Layout::per_line`]) into its runs; `stem`
/// names a run whose file gives it no name (inference-perf's `stage_0`).
pub fn read(layout: Layout, doc: &[u8], stem: &str) -> Result<Vec<Run>, LoadgenError> {
    if layout == Layout::Vllm {
        return Ok(vec![vllm::read_run(doc)?]);
    }
    if !layout.has_results() {
        return Ok(Vec::new());
    }
    let v = crate::json::value::parse(doc)?;
    match layout {
        Layout::ProfileExport => aiperf::summary(&v).map(|r| vec![r]),
        Layout::AiPerfSweep => aiperf::sweep(&v),
        Layout::GuideLlm => guidellm::report(&v),
        Layout::InferencePerfSummary => inference_perf::summary(&v, stem).map(|r| vec![r]),
        Layout::InferencePerfRequests => inference_perf::requests(&v, stem).map(|r| vec![r]),
        Layout::LlmPerfSummary => llmperf::summary(&v).map(|r| vec![r]),
        Layout::LlmPerfResponses => llmperf::responses(&v, stem).map(|r| vec![r]),
        Layout::GenaiBench => genai_bench::run(&v, stem).map(|r| vec![r]),
        Layout::InferencePerfServerMetrics => {
            let name = stem.strip_suffix("_prometheus_metrics").unwrap_or(stem);
            server_run(Tool::InferencePerf, name, server::inference_perf(&v))
        }
        // named after its folder, as AIPerf's other files are ([`join`])
        Layout::AiPerfServerMetricsSummary => server_run(Tool::AiPerf, "", server::aiperf(&v)),
        _ => Ok(Vec::new()),
    }
}

/// A run that holds only the server's side, to be joined to the client's run ([`join`]).
fn server_run(
    tool: Tool,
    name: &str,
    view: Option<server::ServerView>,
) -> Result<Vec<Run>, LoadgenError> {
    let view = view.ok_or(LoadgenError::Missing {
        tool: tool.name(),
        missing: "the server's figures (`successes` or `metrics`)".to_string(),
    })?;
    let mut run = Run::new(tool, name);
    run.server = Some(view);
    Ok(vec![run])
}

/// Reads a document of `layout` from a parsed tree (a YAML file read into the same tree).
pub fn read_value(layout: Layout, v: &Value, stem: &str) -> Result<Vec<Run>, LoadgenError> {
    match layout {
        Layout::ProfileExport => aiperf::summary(v).map(|r| vec![r]),
        Layout::AiPerfSweep => aiperf::sweep(v),
        Layout::GuideLlm => guidellm::report(v),
        Layout::InferencePerfSummary => inference_perf::summary(v, stem).map(|r| vec![r]),
        _ => Ok(Vec::new()),
    }
}

/// Joins each summary with the per-request file of the same run: one run seen twice, by
/// the summary's settings and figures and by the other file's rows. AIPerf writes
/// `profile_export_aiperf.json` and `profile_export.jsonl` into one artifact folder (a run
/// is named after the folder, which AIPerf names after the model, endpoint and load);
/// LLMPerf writes `X_summary.json` and `X_individual_responses.json` side by side;
/// inference-perf `summary_lifecycle_metrics.json` and `per_request_lifecycle_metrics.json`
/// (the stages' own summaries stay runs of their own).
///
/// The server's side of a run (a run holding only [`Run::server`]) joins the client's run
/// it was written beside: inference-perf's `stage_N_prometheus_metrics.json` the stage of
/// the same name, AIPerf's `server_metrics_export.json` the run of its folder. One with no
/// such run stays a run of its own.
pub fn join(runs: &mut Vec<Run>) {
    let folder = |r: &Run| {
        r.files.first().and_then(|f| {
            std::path::Path::new(f)
                .parent()
                .map(|p| p.to_string_lossy().into_owned())
        })
    };
    for r in runs.iter_mut().filter(|r| r.tool == Tool::AiPerf) {
        if r.name.is_empty()
            || r.name.starts_with("profile_export")
            || r.name.starts_with("server_metrics_export")
        {
            let dir = folder(r).and_then(|d| {
                std::path::Path::new(&d)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
            });
            if let Some(d) = dir {
                r.name = d;
            }
        }
    }
    // a CSV summary beside its JSON twin is the same run, rounded: the JSON is read; a YAML
    // twin of a JSON (GuideLLM writes both of one report) is the same runs: each is read once
    let csv = |r: &Run| r.files.first().is_some_and(|f| f.contains(".csv"));
    let yaml = |r: &Run| {
        r.files
            .first()
            .is_some_and(|f| f.contains(".yaml") || f.contains(".yml"))
    };
    let twins: Vec<bool> = runs
        .iter()
        .map(|r| {
            let beside =
                |j: &Run| j.tool == r.tool && !j.stated.is_empty() && folder(j) == folder(r);
            (csv(r) && runs.iter().any(|j| !csv(j) && beside(j)))
                || (yaml(r)
                    && runs
                        .iter()
                        .any(|j| !csv(j) && !yaml(j) && beside(j) && j.name == r.name))
        })
        .collect();
    let mut twin = twins.into_iter();
    runs.retain(|_| !twin.next().unwrap_or(false));
    // a sweep's aggregate read beside the runs it aggregates (`SWEEP/sweep_aggregate/…`
    // beside `SWEEP/concurrency_2/…`): each combination is one of those runs, read from its
    // own files
    let sweep_of = |r: &Run| {
        (r.tool == Tool::AiPerf && r.setup.strategy.as_deref() == Some("sweep"))
            .then(|| folder(r))
            .flatten()
            .and_then(|d| {
                let d = std::path::Path::new(&d);
                (d.file_name()? == "sweep_aggregate")
                    .then(|| d.parent().map(|p| p.to_path_buf()))?
            })
    };
    let load = |r: &Run| (r.get(&["max_concurrency"]), r.get(&["request_rate"]));
    let aggregated: Vec<bool> = runs
        .iter()
        .map(|r| {
            sweep_of(r).is_some_and(|root| {
                runs.iter().any(|j| {
                    j.tool == Tool::AiPerf
                        && sweep_of(j).is_none()
                        && load(j) == load(r)
                        && j.files
                            .iter()
                            .any(|f| std::path::Path::new(f).starts_with(&root))
                })
            })
        })
        .collect();
    let mut agg = aggregated.into_iter();
    runs.retain(|_| !agg.next().unwrap_or(false));
    let mut k = 0;
    while k < runs.len() {
        let rows = &runs[k];
        let joins = matches!(
            rows.tool,
            Tool::AiPerf | Tool::LlmPerf | Tool::InferencePerf
        ) && rows.stated.is_empty()
            && !rows.requests.is_empty();
        let home = folder(rows);
        let summary = joins
            .then(|| {
                runs.iter().position(|s| {
                    s.tool == rows.tool
                        && s.requests.is_empty()
                        && !s.stated.is_empty()
                        && folder(s) == home
                        && match s.tool {
                            Tool::AiPerf => true,
                            Tool::InferencePerf => {
                                rows.name == "per_request" && s.name == "summary"
                            }
                            _ => s.name == rows.name,
                        }
                })
            })
            .flatten();
        match summary {
            Some(j) => {
                let rec = runs.remove(k);
                let j = if j > k { j - 1 } else { j };
                runs[j].requests = rec.requests;
                // (the rows' clock and sampling are the rows', not the summary's)
                runs[j].epoch = rec.epoch;
                runs[j].requests_sampled |= rec.requests_sampled;
                runs[j].files.extend(rec.files);
            }
            None => k += 1,
        }
    }
    let server_only = |r: &Run| r.server.is_some() && r.stated.is_empty() && r.requests.is_empty();
    let mut k = 0;
    while k < runs.len() {
        let side = &runs[k];
        let client = server_only(side)
            .then(|| {
                runs.iter().position(|c| {
                    !server_only(c)
                        && c.server.is_none()
                        && c.tool == side.tool
                        && folder(c) == folder(side)
                        && (c.tool == Tool::AiPerf || c.name == side.name)
                })
            })
            .flatten();
        match client {
            Some(j) => {
                let side = runs.remove(k);
                let j = if j > k { j - 1 } else { j };
                runs[j].server = side.server;
                runs[j].files.extend(side.files);
            }
            None => k += 1,
        }
    }
}

/// Helpers over a parsed tree.
pub(crate) mod tree {
    use serde_json::Value;

    /// The value at a path of keys.
    pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
        path.iter().try_fold(v, |v, k| v.get(*k))
    }

    /// A number: a JSON number, or a string holding one (`"inf"`, `"Infinity"`).
    pub fn num(v: Option<&Value>) -> Option<f64> {
        match v? {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => crate::num::float(s.trim()),
            _ => None,
        }
    }

    /// The number at a path.
    pub fn num_at(v: &Value, path: &[&str]) -> Option<f64> {
        num(at(v, path))
    }

    /// A string at a path (a number written as text).
    pub fn text_at(v: &Value, path: &[&str]) -> Option<String> {
        match at(v, path)? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// A boolean at a path.
    pub fn bool_at(v: &Value, path: &[&str]) -> Option<bool> {
        at(v, path)?.as_bool()
    }

    /// Whether a value is present and not null.
    pub fn present(v: Option<&Value>) -> bool {
        v.is_some_and(|v| !v.is_null())
    }

    /// A non-negative count.
    pub fn count(v: Option<&Value>) -> Option<u64> {
        num(v)
            .filter(|x| x.is_finite() && *x >= 0.0)
            .map(|x| x.round() as u64)
    }
}
