//! Command-line definitions (clap derive). Each subcommand's work is in `cmd/<name>.rs`.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Answers about LLM inference runs (SGLang, vLLM) from their logs and outputs.
#[derive(Debug, Parser)]
#[command(name = "tokstat", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Normalized records as JSON lines, one per recognized record (scripting, debugging).
    Parse(ParseArgs),
    /// The post-mortem: everything the inputs allow.
    Report(ReportArgs),
    /// Did the change help? Two or more runs side by side, with intervals and verdicts.
    Compare(CompareArgs),
    /// The report on the bundled demo run.
    Demo(DemoArgs),
    /// Every table as Parquet (or CSV, JSON lines) for notebooks and query engines.
    Export(ExportArgs),
    /// The documented tables: columns, types, units.
    Schema(FormatArgs),
    /// A running job over a window: client and server rates, the gap, work left and an ETA.
    Pulse(PulseArgs),
    /// Follow a running job: progress, rates, server against client, ETA, redrawn.
    Watch(WatchArgs),
}

/// Options shared by commands that read inputs.
#[derive(Debug, Args, Clone)]
pub struct InputArgs {
    /// Files, folders (recursed), globs, or `-` for stdin. gzip / zstd detected by content.
    #[arg(required = true, value_name = "INPUTS")]
    pub inputs: Vec<String>,
    #[command(flatten)]
    pub dates: DateArgs,
    /// No accounting summary on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Exit with code 1 when any line is malformed or any input is not read in full.
    #[arg(long)]
    pub strict: bool,
    /// How long to wait for a writer on a named pipe (FIFO) before giving up, e.g. `30s`
    /// (default: wait, and say so after a second).
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub timeout: Option<std::time::Duration>,
    /// Worker threads (default: the cores this process may use, container CPU limits
    /// included).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
}

/// A window of a Prometheus server read as an input (docs/prometheus.md).
#[derive(Debug, Args, Clone, Default)]
pub struct PrometheusArgs {
    /// A Prometheus server to read a window of (or Thanos, Mimir, Cortex, VictoriaMetrics,
    /// Google Managed Prometheus): `http://host:9090`, `https://user:password@host/prefix`.
    #[arg(long, value_name = "URL")]
    pub prometheus: Option<String>,
    /// The window's start: RFC 3339, Unix seconds, or a duration before now (`2h`, `1h30m`).
    #[arg(
        long,
        value_name = "TIME",
        default_value = "1h",
        requires = "prometheus"
    )]
    pub since: String,
    /// The window's end (as `--since`; `now` by default).
    #[arg(
        long,
        value_name = "TIME",
        default_value = "now",
        requires = "prometheus"
    )]
    pub until: String,
    #[command(flatten)]
    pub access: PrometheusAccess,
}

/// A Prometheus server read live, by `pulse` and `watch`: the window is theirs.
#[derive(Debug, Args, Clone, Default)]
pub struct PrometheusLive {
    /// A Prometheus server holding the servers' metrics (or Thanos, Mimir, Cortex,
    /// VictoriaMetrics, Google Managed Prometheus): read for the server's side of the
    /// window instead of scraping `/metrics` (docs/prometheus.md).
    #[arg(long, value_name = "URL", conflicts_with = "metrics")]
    pub prometheus: Option<String>,
    #[command(flatten)]
    pub access: PrometheusAccess,
}

/// How to reach a Prometheus server and what to read of it.
#[derive(Debug, Args, Clone, Default)]
pub struct PrometheusAccess {
    /// The series to read, a PromQL series selector (default: every vLLM and SGLang
    /// series, under any name Prometheus stores them by).
    #[arg(long = "match", value_name = "SELECTOR", requires = "prometheus")]
    pub selector: Option<String>,
    /// A file holding a bearer token (managed services require one).
    #[arg(
        long,
        value_name = "FILE",
        requires = "prometheus",
        conflicts_with = "bearer_token_env"
    )]
    pub bearer_token_file: Option<std::path::PathBuf>,
    /// An environment variable holding a bearer token.
    #[arg(long, value_name = "VAR", requires = "prometheus")]
    pub bearer_token_env: Option<String>,
    /// An extra request header, `Name: value` (`X-Scope-OrgID: team-a`); repeatable.
    #[arg(long = "header", value_name = "NAME: VALUE", requires = "prometheus")]
    pub headers: Vec<String>,
    /// PEM certificates to trust beside the system's roots (a private CA).
    #[arg(long, value_name = "FILE", requires = "prometheus")]
    pub ca_file: Option<std::path::PathBuf>,
    /// How long each query may take.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    pub query_timeout: std::time::Duration,
}

/// What completes stamps that carry no year or no date.
#[derive(Debug, Args, Clone, Default)]
pub struct DateArgs {
    /// Year for vLLM stamps, which carry none (default: the file's modification year).
    #[arg(long, value_name = "YYYY")]
    pub year: Option<i32>,
    /// Date for SGLang 0.2.14–0.3.3 time-only stamps (default: the file's modification date).
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: Option<String>,
}

#[derive(Debug, Args)]
pub struct ParseArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

/// The report's output formats (one type for the command line and the renderers).
pub use crate::render::Format;

#[derive(Debug, Args)]
pub struct FormatArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
#[command(mut_arg("inputs", |a| a.required(false).required_unless_present("prometheus")))]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub completions: CompletionArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    /// Of an exported dataset (a folder `tokstat export` wrote) that holds several runs,
    /// the one to report.
    #[arg(long, value_name = "LABEL")]
    pub run: Option<String>,
    /// The node the files given were read on, beside exported datasets: an instance name
    /// a node of the dataset also has becomes NAME/INSTANCE.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
}

#[derive(Debug, Args)]
#[command(mut_arg("inputs", |a| a.required(false).required_unless_present_any(["metrics", "prometheus"])))]
pub struct PulseArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub prometheus: PrometheusLive,
    /// A server's Prometheus endpoint, scraped at the window's start and at each sample
    /// (`http://host:8000/metrics`); alone, or beside the inputs.
    #[arg(long, value_name = "URL")]
    pub metrics: Option<String>,
    /// Append each scrape, stamped, to this file (read later by `report` and `compare`).
    #[arg(long, value_name = "FILE", requires = "metrics")]
    pub save_scrapes: Option<std::path::PathBuf>,
    /// How long to follow the inputs.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    pub window: std::time::Duration,
    /// Readings within the window, for the spread of the rates (the ETA's band).
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = clap::value_parser!(u32).range(2..=120))]
    pub samples: u32,
    /// Requests in the whole job, for the work left and the ETA.
    #[arg(long, value_name = "N", conflicts_with = "total_from")]
    pub total: Option<u64>,
    /// The job's prompts file: one request per non-empty line.
    #[arg(long, value_name = "FILE")]
    pub total_from: Option<std::path::PathBuf>,
    /// `table` or `json`.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    #[command(flatten)]
    pub completions: CompletionArgs,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Files and folders to follow (JSONL, server logs, folders of batch files).
    #[arg(value_name = "INPUTS", required_unless_present_any = ["metrics", "prometheus"])]
    pub inputs: Vec<String>,
    #[command(flatten)]
    pub dates: DateArgs,
    #[command(flatten)]
    pub prometheus: PrometheusLive,
    /// A server's Prometheus endpoint, scraped at each look (`http://host:8000/metrics`).
    #[arg(long, value_name = "URL")]
    pub metrics: Option<String>,
    /// Append each scrape, stamped, to this file (read later by `report` and `compare`).
    #[arg(long, value_name = "FILE", requires = "metrics")]
    pub save_scrapes: Option<std::path::PathBuf>,
    /// Time between looks.
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = humantime::parse_duration)]
    pub every: std::time::Duration,
    /// Requests in the whole job, for the progress bar and the ETA.
    #[arg(long, value_name = "N", conflicts_with = "total_from")]
    pub total: Option<u64>,
    /// The job's prompts file: one request per non-empty line.
    #[arg(long, value_name = "FILE")]
    pub total_from: Option<std::path::PathBuf>,
    /// Print one view and exit.
    #[arg(long)]
    pub once: bool,
    /// Stop after this long (default: until interrupted).
    #[arg(long = "for", value_name = "DURATION", value_parser = humantime::parse_duration)]
    pub duration: Option<std::time::Duration>,
    #[command(flatten)]
    pub completions: CompletionArgs,
}

/// How to analyse server logs.
#[derive(Debug, Args, Clone, Default)]
pub struct ServerArgs {
    /// Timeline bucket, e.g. `10s`, `1m`, `1h` (default: a round length giving ≤ 120 buckets).
    #[arg(long, value_name = "DURATION", value_parser = parse_bucket)]
    pub bucket: Option<i64>,
    /// Time between Prometheus scrapes that carry no time (no `# scrape <time>` line, no
    /// time in the file name): they are placed this far apart, in the order given.
    #[arg(long, value_name = "DURATION", value_parser = parse_interval)]
    pub interval: Option<f64>,
}

pub fn parse_interval(s: &str) -> Result<f64, String> {
    crate::analysis::bench::duration(s)
        .filter(|&secs| secs > 0.0)
        .ok_or_else(|| format!("`{s}`: expected a duration, like 15s or 1m"))
}

pub fn parse_bucket(s: &str) -> Result<i64, String> {
    crate::analysis::bench::duration(s)
        .map(|secs| (secs * 1000.0).round() as i64)
        .filter(|&ms| ms >= 1000)
        .ok_or_else(|| format!("`{s}`: expected a duration of at least 1s, like 10s, 5m or 1h"))
}

/// How to read completion records.
#[derive(Debug, Args, Clone, Default)]
pub struct CompletionArgs {
    /// The output token cap (`max_tokens`); default: stated by the records or inferred.
    #[arg(long, value_name = "N")]
    pub cap: Option<u64>,
    /// JSON pointer to the output token count in records of another shape (`/meta/ntok`).
    #[arg(long, value_name = "POINTER")]
    pub tokens_path: Option<String>,
    /// JSON pointer to the finish reason in records of another shape (`/fr`).
    #[arg(long, value_name = "POINTER")]
    pub finish_path: Option<String>,
    /// Service-level objectives for benchmark goodput, e.g. `ttft=2s,tpot=50ms,e2e=30s`.
    #[arg(long, value_name = "OBJECTIVES", value_parser = parse_slo)]
    pub slo: Option<crate::analysis::bench::Slo>,
}

pub fn parse_slo(s: &str) -> Result<crate::analysis::bench::Slo, String> {
    crate::analysis::bench::Slo::parse(s)
}

#[derive(Debug, Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub format: FormatArgs,
    /// Compare two bundled runs (vLLM at 128 and 200 clients) instead.
    #[arg(long)]
    pub compare: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Runs: a folder, a file or a glob each; `label=path` names one (else its last path
    /// component does). The first is the baseline. `path#N` or `path#NAME` takes one
    /// benchmark of a result file that holds several — the Nth from 1, or the one named so
    /// (`benchmarks.json#concurrent@4`, `results/#stage_3`); `tokstat report` lists them.
    /// With `--prometheus`, each run is a window of the server: `label=T1..T2` (the times
    /// as `--since` takes them).
    #[arg(required = true, value_name = "RUN")]
    pub runs: Vec<String>,
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
    /// A change smaller than this share of the baseline reads `~`, significant or not.
    #[arg(long, value_name = "SHARE", default_value = "2%", value_parser = parse_share)]
    pub threshold: f64,
    /// Compare runs of different engines or models.
    #[arg(long)]
    pub force: bool,
    /// Compare the segments of one run (before and after each restart or long silence).
    #[arg(long)]
    pub segments: bool,
    #[command(flatten)]
    pub dates: DateArgs,
    #[command(flatten)]
    pub format: FormatArgs,
    #[command(flatten)]
    pub completions: CompletionArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

pub fn parse_share(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let v = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|x| x / 100.0),
        None => t.parse::<f64>(),
    };
    v.ok()
        .filter(|x| x.is_finite() && (0.0..1.0).contains(x))
        .ok_or_else(|| format!("`{s}`: expected a share such as 2% or 0.02"))
}

/// File formats of `export`.
pub use crate::export::FileFormat;

/// What `--partition-by` may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Partition {
    Run,
    Instance,
}

#[derive(Debug, Args)]
#[command(mut_arg("inputs", |a| a.required(false).required_unless_present("prometheus")))]
pub struct ExportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
    /// The folder the tables are written into (created if missing).
    #[arg(long, value_name = "DIR")]
    pub to: std::path::PathBuf,
    /// File format of the tables.
    #[arg(long, value_enum, default_value_t)]
    pub format: FileFormat,
    /// Hive partitions: `run`, `instance` or both (`run,instance`).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "KEYS")]
    pub partition_by: Vec<Partition>,
    /// The run's label (default: the first input's folder or file name).
    #[arg(long, value_name = "LABEL")]
    pub run: Option<String>,
    /// The node these inputs are read on (default: the host name): in a folder many
    /// nodes export into, an instance name two nodes have becomes NODE/INSTANCE.
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    #[command(flatten)]
    pub completions: CompletionArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}
