//! Records: what one log line means, borrowing the line's text.
//!
//! A record carries the schema's fields (see `tokstat schema` and docs/export.md, tables `steps`, `events`,
//! `config`) already converted — kv usage as a fraction, percents as fractions, throughput per
//! second — and keeps every `key: value` it does not model in [`Extra`], so a newer engine
//! version loses nothing.

use crate::wrappers::prefix::Prefix;

/// Which engine wrote a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Engine {
    Sglang,
    Vllm,
}

impl Engine {
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sglang => "sglang",
            Engine::Vllm => "vllm",
        }
    }
}

/// The kind of a statistics line (`steps.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StepKind {
    /// SGLang `Decode batch` (and 0.1.x bare `#running-req:` lines).
    Decode,
    /// SGLang `Prefill batch` / 0.1.x `new fill batch`.
    Prefill,
    /// vLLM periodic stats line.
    Stats,
    /// vLLM speculative-decoding metrics line.
    Spec,
    /// vLLM V0 `Prefix cache hit rate: GPU: …` line.
    Cache,
    /// vLLM `Engine 000: Iteration(N): …` line (0.26+, `--enable-logging-iteration-details`):
    /// one engine step, beside the periodic stats lines, which the timeline reads instead.
    Iteration,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::Decode => "decode",
            StepKind::Prefill => "prefill",
            StepKind::Stats => "stats",
            StepKind::Spec => "spec",
            StepKind::Cache => "cache",
            StepKind::Iteration => "iteration",
        }
    }
}

/// The shape of a body's `key: value`-like parts (see [`crate::kv`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Shape {
    /// `key: value` parts.
    #[default]
    Keyed,
    /// Counts before their names (`31 generation tokens`), after an `Iteration(N): ` head.
    Counted,
}

/// Of a body's pairs, those a dialect keeps as extra (no column took them); the flag is the
/// dialect's own, reset for each reading of the body.
pub type ExtraFilter = for<'a> fn(&'a str, &'a str, &mut bool) -> Option<(&'a str, &'a str)>;

fn keep_nothing<'a>(_: &'a str, _: &'a str, _: &mut bool) -> Option<(&'a str, &'a str)> {
    None
}

/// Unmodelled `key: value` pairs of a stats line, found lazily: the record keeps the body it
/// came from and re-reads it only when asked, so parsing a line copies nothing and the
/// record stays small, and there is no cap on how many unknown pairs a line may carry. The
/// dialect that read the line hands in the body's shape and its filter: the model names no
/// dialect.
#[derive(Debug, Clone, Copy)]
pub struct Extra<'a> {
    body: &'a str,
    shape: Shape,
    keep: ExtraFilter,
}

impl Default for Extra<'_> {
    fn default() -> Self {
        Extra {
            body: "",
            shape: Shape::Keyed,
            keep: keep_nothing,
        }
    }
}

/// Two extras are equal when they hold the same pairs.
impl PartialEq for Extra<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl<'a> Extra<'a> {
    pub(crate) fn new(body: &'a str, shape: Shape, keep: ExtraFilter) -> Extra<'a> {
        Extra { body, shape, keep }
    }

    /// The pairs the parser did not map to a column, in line order.
    pub fn iter(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let keep = self.keep;
        let mut seen = false;
        let pairs = match self.shape {
            Shape::Counted => BodyPairs::Counted(crate::kv::counted_pairs(self.body)),
            Shape::Keyed => BodyPairs::Keyed(crate::kv::pairs(self.body)),
        };
        pairs.filter_map(move |(k, v)| keep(k, v, &mut seen))
    }

    pub fn is_empty(&self) -> bool {
        self.iter().next().is_none()
    }

    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }
}

/// The pairs of a body, by its shape.
enum BodyPairs<'a> {
    Keyed(crate::kv::Pairs<'a>),
    Counted(crate::kv::CountedPairs<'a>),
}

impl<'a> Iterator for BodyPairs<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            BodyPairs::Keyed(p) => p.next(),
            BodyPairs::Counted(p) => p.next(),
        }
    }
}

/// One statistics line (`steps` table).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Step<'a> {
    pub engine: Option<Engine>,
    pub kind: Option<StepKind>,
    pub running: Option<u64>,
    pub waiting: Option<u64>,
    pub gen_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    /// KV pool usage, fraction 0–1.
    pub kv_usage: Option<f64>,
    /// KV slots in use.
    pub tokens: Option<u64>,
    pub new_seq: Option<u64>,
    pub new_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub accept_len: Option<f64>,
    /// Fraction 0–1.
    pub accept_rate: Option<f64>,
    pub graph: Option<bool>,
    pub mamba_usage: Option<f64>,
    pub swa_usage: Option<f64>,
    /// Fraction 0–1.
    pub prefix_hit_rate: Option<f64>,
    pub preemptions: Option<u64>,
    /// vLLM `Engine NNN:` index (kept in `dp`, as vLLM engines are DP ranks).
    pub engine_index: Option<u32>,
    /// vLLM `N Engines Aggregated:`.
    pub aggregated_engines: Option<u32>,
    /// The line was cut short (a paste window, a terminal's width): its last part had lost
    /// its value, and the fields before it are what this step holds.
    pub partial: bool,
    pub extra: Extra<'a>,
}

impl Step<'_> {
    /// The values of this step that aggregates read.
    pub fn gauges(&self) -> Gauges {
        Gauges {
            running: self.running,
            waiting: self.waiting,
            gen_tps: self.gen_tps,
            prompt_tps: self.prompt_tps,
            kv_usage: self.kv_usage,
            accept_len: self.accept_len,
            new_seq: self.new_seq,
            new_tokens: self.new_tokens,
            preemptions: self.preemptions,
        }
    }
}

/// The values of a stats line that the report's aggregates read: what [`crate::visit_quick_line`] fills
/// without building a whole [`Step`] (a few hundred bytes, most of them never read there).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Gauges {
    pub running: Option<u64>,
    pub waiting: Option<u64>,
    pub gen_tps: Option<f64>,
    pub prompt_tps: Option<f64>,
    /// Fraction 0–1.
    pub kv_usage: Option<f64>,
    pub accept_len: Option<f64>,
    pub new_seq: Option<u64>,
    pub new_tokens: Option<u64>,
    pub preemptions: Option<u64>,
}

/// A set of [`Gauges`] fields, named after them: what a quick reader keeps (see
/// the SGLang reader's `Keep`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GaugeSet(pub u16);

impl GaugeSet {
    pub const RUNNING: GaugeSet = GaugeSet(1);
    pub const WAITING: GaugeSet = GaugeSet(1 << 1);
    pub const GEN_TPS: GaugeSet = GaugeSet(1 << 2);
    pub const PROMPT_TPS: GaugeSet = GaugeSet(1 << 3);
    pub const KV_USAGE: GaugeSet = GaugeSet(1 << 4);
    pub const ACCEPT_LEN: GaugeSet = GaugeSet(1 << 5);
    pub const NEW_SEQ: GaugeSet = GaugeSet(1 << 6);
    pub const NEW_TOKENS: GaugeSet = GaugeSet(1 << 7);
    pub const NONE: GaugeSet = GaugeSet(0);
    pub const ALL: GaugeSet = GaugeSet(0xff);

    pub const fn has(self, o: GaugeSet) -> bool {
        self.0 & o.0 == o.0
    }

    pub const fn with(self, o: GaugeSet) -> GaugeSet {
        GaugeSet(self.0 | o.0)
    }
}

/// Kinds of `events` rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum EventKind {
    /// SGLang retraction (`KV cache pool is full. Retract requests.`, `… out of memory happened`).
    Retraction,
    /// The engine's own out-of-memory message (`Prefill out of memory`, `Decode out of
    /// memory`) that is not a retraction.
    Oom,
    /// vLLM V0 `Sequence group … is preempted`.
    Preemption,
    /// `The server is fired up and ready to roll!` / vLLM `Application startup complete`.
    ServerReady,
    /// Error-level lines that are none of the kinds below.
    Error,
    /// The engine or one of its processes died (`EngineDeadError`, `Scheduler hit an
    /// exception`, `Received sigquit from a child process`, a segmentation fault).
    Crash,
    /// `Traceback (most recent call last):`
    Traceback,
    /// A traceback's last line, `SomeError: message` (the exception type and message).
    Exception,
    /// CUDA out of memory (`torch.OutOfMemoryError`, `CUDA error: out of memory`).
    CudaOom,
    /// NCCL / distributed errors and collective timeouts.
    Distributed,
    /// A failed health check.
    HealthCheck,
    /// A KV-cache transfer failure or timeout (prefill/decode disaggregation).
    KvTransfer,
    /// A request aborted, or its client gone.
    Abort,
    /// A graph recompiled at run time (`torch._dynamo` recompilation).
    Recompile,
    /// An HTTP access line with a 4xx / 5xx status (counted in the incident census, read
    /// without building a record).
    Http4xx,
    Http5xx,
    /// A start-up milestone: the weights are loaded (vLLM `Model loading took … seconds`,
    /// `Loading weights took …`, `Loading model weights took …`; SGLang's `Load weight
    /// end.` is a configuration line, and marks the same).
    WeightsLoaded,
    /// A start-up milestone: the CUDA graphs are captured (SGLang `Capture cuda graph end.`,
    /// `Capture … CUDA graph end.`; vLLM `Graph capturing finished in …`).
    GraphsCaptured,
}

impl EventKind {
    /// Every kind, in the order the incident census lists them.
    pub const ALL: [EventKind; 18] = [
        EventKind::Crash,
        EventKind::Traceback,
        EventKind::Exception,
        EventKind::CudaOom,
        EventKind::Distributed,
        EventKind::HealthCheck,
        EventKind::KvTransfer,
        EventKind::Error,
        EventKind::Oom,
        EventKind::Retraction,
        EventKind::Preemption,
        EventKind::Abort,
        EventKind::Recompile,
        EventKind::Http5xx,
        EventKind::Http4xx,
        EventKind::ServerReady,
        EventKind::WeightsLoaded,
        EventKind::GraphsCaptured,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Retraction => "retraction",
            EventKind::Oom => "oom",
            EventKind::Preemption => "preemption",
            EventKind::ServerReady => "server_ready",
            EventKind::Error => "error",
            EventKind::Crash => "crash",
            EventKind::Traceback => "traceback",
            EventKind::Exception => "exception",
            EventKind::CudaOom => "cuda_oom",
            EventKind::Distributed => "distributed",
            EventKind::HealthCheck => "health_check",
            EventKind::KvTransfer => "kv_transfer",
            EventKind::Abort => "abort",
            EventKind::Recompile => "recompile",
            EventKind::Http4xx => "http_4xx",
            EventKind::Http5xx => "http_5xx",
            EventKind::WeightsLoaded => "weights_loaded",
            EventKind::GraphsCaptured => "graphs_captured",
        }
    }

    /// Whether it marks a step of a server's start-up (not an incident).
    pub fn milestone(self) -> bool {
        matches!(
            self,
            EventKind::ServerReady | EventKind::WeightsLoaded | EventKind::GraphsCaptured
        )
    }

    /// Whether it says the engine died or a collective failed: what ends a serving
    /// stretch until the next ready line.
    pub fn fatal(self) -> bool {
        matches!(
            self,
            EventKind::Crash | EventKind::CudaOom | EventKind::Distributed
        )
    }

    /// Whether it says something broke (rather than that the server worked under
    /// pressure, or started).
    pub fn broke(self) -> bool {
        matches!(
            self,
            EventKind::Crash
                | EventKind::Traceback
                | EventKind::Exception
                | EventKind::CudaOom
                | EventKind::Distributed
                | EventKind::HealthCheck
                | EventKind::KvTransfer
                | EventKind::Http5xx
        )
    }
}

/// One event line (`events` table).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Event<'a> {
    pub engine: Option<Engine>,
    pub kind: EventKind,
    pub message: &'a str,
    /// How many requests it concerns (retracted requests), or the running total it reports
    /// (vLLM `total_num_cumulative_preemption`).
    pub count: Option<u64>,
}

/// One configuration line (one or more `config` rows).
///
/// Pairs come from two places: a few picked out of free text (`GPU KV cache size: 1,048,576
/// tokens` → `kv_cache_tokens`), and a Python repr body — `a=1, b='x'` (`ServerArgs(…)`,
/// `Namespace(…)`, `max_total_num_tokens=…`) or `'a': 1` (`server_args={…}`, vLLM
/// `non-default args: {…}`) — split lazily when rows are asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config<'a> {
    pub engine: Option<Engine>,
    fixed: [(&'static str, &'a str); 4],
    nfixed: u8,
    /// The repr body, without its enclosing `Name(`…`)` or `{`…`}`.
    pub repr: Option<&'a str>,
}

impl<'a> Config<'a> {
    pub(crate) fn new(
        engine: Engine,
        pairs: &[(&'static str, &'a str)],
        repr: Option<&'a str>,
    ) -> Config<'a> {
        let mut fixed = [("", ""); 4];
        for (slot, p) in fixed.iter_mut().zip(pairs) {
            *slot = *p;
        }
        Config {
            engine: Some(engine),
            fixed,
            nfixed: pairs.len().min(4) as u8,
            repr,
        }
    }

    /// The `(key, value)` rows of this line; values lose their Python quotes.
    pub fn pairs(&self) -> impl Iterator<Item = (&'a str, &'a str)> + '_ {
        let from_repr = self
            .repr
            .into_iter()
            .flat_map(crate::kv::repr_items)
            .filter_map(crate::kv::repr_pair)
            .map(|(k, v)| (k, crate::kv::unquote(v)));
        self.fixed[..usize::from(self.nfixed)]
            .iter()
            .copied()
            .chain(from_repr)
    }
}

/// What a line is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Body<'a> {
    Step(Step<'a>),
    Event(Event<'a>),
    Config(Config<'a>),
    /// Recognised but not a record: access lines, load progress, unrelated messages, blanks.
    Other,
    /// Looked like a stats line but did not parse; the reason says what was wrong.
    Malformed(&'static str),
}

/// A parsed line: its prefix and what it means.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line<'a> {
    pub prefix: Prefix<'a>,
    pub body: Body<'a>,
}
