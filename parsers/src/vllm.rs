//! vLLM engine and server messages (docs/formats.md §2), V0 and V1, 0.2.0 to 0.34.0.
//!
//! Stats lines are `key: value` parts read by name: `Pending` (V0) and `Waiting` (V1) are the
//! same field, the `{GPU,XPU,…} KV cache usage` percent becomes a fraction, optional parts
//! (Preemptions, Deferred, KV fetch, External / MM cache) appear only when non-zero.

use crate::kv::pairs;
use crate::num::{float, percent_as_fraction, split_unit, uint};
use crate::record::{Body, Config, Engine, Event, EventKind, Extra, Shape, Step, StepKind};
use crate::wrappers::prefix::Level;

const VL: Option<Engine> = Some(Engine::Vllm);

/// Parses a vLLM message. `None`: not a vLLM message.
pub fn parse(msg: &str, level: Option<Level>) -> Option<Body<'_>> {
    let first = *msg.as_bytes().first()?;
    let body = match first {
        b'A' if msg.starts_with("Avg prompt throughput: ") => Some(stats(msg, None, None)),
        b'E' if msg.starts_with("Engine ") => engine_stats(msg),
        b'0'..=b'9' => aggregated_stats(msg).or_else(|| capacity(msg)),
        b'S' => {
            if let Some(r) = msg.strip_prefix("SpecDecoding metrics: ") {
                Some(spec(r))
            } else if let Some(r) = msg.strip_prefix("Speculative metrics: ") {
                Some(spec(r))
            } else if msg.starts_with("Sequence group ") && msg.contains(" is preempted by ") {
                Some(preemption(msg))
            } else {
                None
            }
        }
        b'P' => msg
            .strip_prefix("Prefix cache hit rate: ")
            .map(prefix_cache),
        b'C' => chunked_prefill(msg).or_else(|| capacity(msg)),
        // start-up milestones, as the engine's source has them: `"Loading model weights took
        // %.4f GB"` (worker/model_runner.py, 0.6.3; GiB on XPU, `… took in total …` on HPU),
        // `"Model loading took %.4f GiB and %.6f seconds"` (model_runner.py and
        // v1/worker/gpu_model_runner.py, 0.8.5–0.10.1), `"Model loading took %s GiB memory and
        // %.6f seconds"` (0.33.0), the loader's `"Loading weights took %.2f seconds"` (0.8.5+),
        // `"Graph capturing finished in %.0f secs."` (0.6.3), `"… secs, took %.2f GiB"`
        // (0.8.5+)
        b'M' if msg.starts_with("Model loading took ") => {
            Some(milestone(EventKind::WeightsLoaded, msg))
        }
        b'L' if msg.starts_with("Loading model weights took ")
            || msg.starts_with("Loading weights took ") =>
        {
            Some(milestone(EventKind::WeightsLoaded, msg))
        }
        b'G' if msg.starts_with("Graph capturing finished in ") => {
            Some(milestone(EventKind::GraphsCaptured, msg))
        }
        b'G' | b'X' | b'T' | b'H' | b'N' | b'M' => capacity(msg),
        b'#' => msg.strip_prefix("# GPU blocks: ").map(blocks),
        b'n' => msg.strip_prefix("non-default args: ").map(dict_config),
        b'a' => msg.strip_prefix("args: ").map(namespace_config),
        b'v' => msg
            .strip_prefix("vLLM API server version ")
            .map(|v| Body::Config(Config::new(Engine::Vllm, &[("version", v.trim())], None))),
        b'I' => engine_config(msg),
        _ => None,
    };
    if body.is_some() {
        return body;
    }
    matches!(level, Some(Level::Error | Level::Critical)).then(|| {
        Body::Event(Event {
            engine: VL,
            kind: crate::incident::classify(msg).unwrap_or(EventKind::Error),
            message: msg,
            count: None,
        })
    })
}

/// A line cut short (`…, Swapp`, `GPU: 41.23%, CP`): `read` of the fields before the cut
/// part, marked partial (read whole, the cut part would continue the value before it,
/// silently). `None` when the body looks whole.
fn if_cut<'a>(body: &'a str, read: impl Fn(&'a str) -> Body<'a>) -> Option<Body<'a>> {
    let short = crate::kv::cut_tail(body).filter(|s| crate::kv::cut_tail(s).is_none())?;
    let mut b = read(short);
    if let Body::Step(s) = &mut b {
        s.partial = true;
    }
    Some(b)
}

fn milestone(kind: EventKind, message: &str) -> Body<'_> {
    Body::Event(Event {
        engine: VL,
        kind,
        message,
        count: None,
    })
}

/// `Engine 000: Avg prompt throughput: …` (0.8.3+) and `Engine 000: Iteration(…): …` (0.26+).
fn engine_stats(msg: &str) -> Option<Body<'_>> {
    let rest = msg.strip_prefix("Engine ")?;
    let colon = rest.find(": ")?;
    let idx = uint(&rest[..colon])? as u32;
    let body = &rest[colon + 2..];
    if body.starts_with("Iteration(") {
        return Some(iteration(body, idx));
    }
    body.starts_with("Avg prompt throughput: ")
        .then(|| stats(body, Some(idx), None))
}

/// The per-step line that `--enable-logging-iteration-details` adds (v1/metrics/loggers.py,
/// `_log_iteration_details`, 0.26.0 on):
/// `"%sIteration(%d): %d context requests, %d context tokens, %d generation requests, %d
/// generation tokens, iteration elapsed time: %.2f ms%s, GPU KV cache usage: %.1f%%%s"`, the
/// first `%s` the `Engine 000: ` prefix, the second ` (dummy)` for a dummy step, the last
/// `, encoder inputs: %d, encoder output embeddings: %d` when there are encoder inputs; from
/// 0.30.0 the device is named (`%s KV cache usage`). The engine's step in the SGLang terms
/// of the other columns: `running` the generation (decoding) requests, `new_seq` and
/// `new_tokens` the context (prefill) requests and tokens.
fn iteration(body: &str, engine_index: u32) -> Body<'_> {
    let body = body.trim_end();
    match iteration_fields(body, engine_index, false) {
        // cut short: the parts before the last one, which the cut may have shortened
        None => match body.rfind(", ") {
            Some(at) => iteration_fields(&body[..at], engine_index, true)
                .unwrap_or(Body::Malformed(NOT_VLLMS)),
            None => Body::Malformed("iteration line without its request and token counts"),
        },
        Some(b) => b,
    }
}

/// The parts of an iteration-details line, in the order vLLM prints them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Iter {
    Index,
    ContextRequests,
    ContextTokens,
    GenerationRequests,
    GenerationTokens,
    Elapsed,
    KvUsage,
    EncoderInputs,
    EncoderEmbeddings,
    /// A part a later version adds: kept among the extras.
    Other,
}

impl Iter {
    fn of(key: &str) -> Iter {
        match key {
            "iteration" => Iter::Index,
            "context requests" => Iter::ContextRequests,
            "context tokens" => Iter::ContextTokens,
            "generation requests" => Iter::GenerationRequests,
            "generation tokens" => Iter::GenerationTokens,
            "iteration elapsed time" => Iter::Elapsed,
            k if k.ends_with(" KV cache usage") => Iter::KvUsage,
            "encoder inputs" => Iter::EncoderInputs,
            "encoder output embeddings" => Iter::EncoderEmbeddings,
            _ => Iter::Other,
        }
    }

    fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// The step of an iteration-details body, `cut` when the line was cut short after it. `None`
/// when its last part is not the line's end (the KV cache usage or the encoder parts) or does
/// not parse: the line was cut in it.
fn iteration_fields(body: &str, engine_index: u32, cut: bool) -> Option<Body<'_>> {
    let mut s = Step {
        engine: VL,
        kind: Some(StepKind::Iteration),
        engine_index: Some(engine_index),
        partial: cut,
        extra: Extra::new(body, Shape::Counted, iteration_extra),
        ..Step::default()
    };
    let mut pairs = crate::kv::counted_pairs(body).peekable();
    let mut seen = 0u32;
    while let Some((key, value)) = pairs.next() {
        let last = pairs.peek().is_none();
        if key.is_empty() {
            return (!last).then_some(Body::Malformed(NOT_VLLMS));
        }
        let part = Iter::of(key);
        if part != Iter::Other && seen & part.bit() != 0 {
            return Some(Body::Malformed(crate::sglang::REPEATED));
        }
        seen |= part.bit();
        let ok = match part {
            Iter::ContextRequests => uint(value).map(|v| s.new_seq = Some(v)).is_some(),
            Iter::ContextTokens => uint(value).map(|v| s.new_tokens = Some(v)).is_some(),
            Iter::GenerationRequests => uint(value).map(|v| s.running = Some(v)).is_some(),
            Iter::Elapsed => {
                let ms = value.strip_suffix(" (dummy)").unwrap_or(value);
                ms.strip_suffix(" ms").and_then(float).is_some()
            }
            // without its `%`, the line was cut in the number
            Iter::KvUsage => value
                .ends_with('%')
                .then(|| percent_as_fraction(value))
                .flatten()
                .map(|v| s.kv_usage = Some(v))
                .is_some(),
            Iter::Other => true,
            Iter::Index
            | Iter::GenerationTokens
            | Iter::EncoderInputs
            | Iter::EncoderEmbeddings => uint(value).is_some(),
        };
        if last && !cut && !(ok && matches!(part, Iter::KvUsage | Iter::EncoderEmbeddings)) {
            return None;
        }
        if !ok {
            return Some(Body::Malformed(
                "an iteration field did not parse as a number",
            ));
        }
    }
    let counts = Iter::ContextRequests.bit()
        | Iter::ContextTokens.bit()
        | Iter::GenerationRequests.bit()
        | Iter::GenerationTokens.bit();
    if seen & counts != counts && !cut {
        return Some(Body::Malformed(
            "iteration line without its request and token counts",
        ));
    }
    Some(Body::Step(s))
}

/// What an iteration line with a part of neither shape (`N name`, `key: value`) is.
const NOT_VLLMS: &str = "an iteration line's part is not one vLLM prints";

/// An iteration-details pair that no column takes.
fn iteration_extra<'a>(key: &'a str, value: &'a str, _: &mut bool) -> Option<(&'a str, &'a str)> {
    let modelled = matches!(
        key,
        "context requests" | "context tokens" | "generation requests" | ""
    ) || key.ends_with(" KV cache usage");
    (!modelled).then_some((key, value))
}

/// `2 Engines Aggregated: Avg prompt throughput: …` (0.11.1+).
fn aggregated_stats(msg: &str) -> Option<Body<'_>> {
    let (n, rest) = msg.split_once(" Engines Aggregated: ")?;
    let n = uint(n)?;
    rest.starts_with("Avg prompt throughput: ")
        .then(|| stats(rest, None, Some(n as u32)))
}

fn num_of(v: &str) -> &str {
    split_unit(v).0
}

/// Columns of the periodic stats line; a `{device} KV cache usage` maps to `kv_usage` only
/// the first time (V0 also prints the CPU swap space).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stat {
    PromptTps,
    GenTps,
    Running,
    Waiting,
    Preemptions,
    HitRate,
    KvUsage,
}

fn stat_field(key: &str, kv_seen: &mut bool) -> Option<Stat> {
    Some(match key {
        "Avg prompt throughput" => Stat::PromptTps,
        "Avg generation throughput" => Stat::GenTps,
        "Running" => Stat::Running,
        "Pending" | "Waiting" => Stat::Waiting,
        "Preemptions" => Stat::Preemptions,
        "Prefix cache hit rate" => Stat::HitRate,
        k if k.ends_with(" KV cache usage") && !*kv_seen => {
            *kv_seen = true;
            Stat::KvUsage
        }
        _ => return None,
    })
}

/// A stats pair that no column takes.
fn stats_extra<'a>(key: &'a str, value: &'a str, kv_seen: &mut bool) -> Option<(&'a str, &'a str)> {
    (stat_field(key, kv_seen).is_none() && !key.is_empty()).then_some((key, value))
}

fn stats(body: &str, engine_index: Option<u32>, aggregated: Option<u32>) -> Body<'_> {
    let body = body.trim_end().trim_end_matches('.');
    if let Some(b) = if_cut(body, |short| stats(short, engine_index, aggregated)) {
        return b;
    }
    let mut s = Step {
        engine: VL,
        kind: Some(StepKind::Stats),
        engine_index,
        aggregated_engines: aggregated,
        extra: Extra::new(body, Shape::Keyed, stats_extra),
        ..Step::default()
    };
    let mut kv_seen = false;
    let mut seen = 0u32;
    for (key, value) in pairs(body) {
        if key.is_empty() {
            return Body::Malformed("a part without `key: value` in a stats line");
        }
        let n = num_of(value);
        let stat = stat_field(key, &mut kv_seen);
        if let Some(f) = stat {
            // never last-wins: two records glued on one line repeat every key
            if seen & (1 << f as u32) != 0 {
                return Body::Malformed(crate::sglang::REPEATED);
            }
            seen |= 1 << f as u32;
        }
        let ok = match stat {
            Some(Stat::PromptTps) => float(n).map(|v| s.prompt_tps = Some(v)).is_some(),
            Some(Stat::GenTps) => float(n).map(|v| s.gen_tps = Some(v)).is_some(),
            Some(Stat::Running) => uint(n).map(|v| s.running = Some(v)).is_some(),
            Some(Stat::Waiting) => uint(n).map(|v| s.waiting = Some(v)).is_some(),
            Some(Stat::Preemptions) => uint(n).map(|v| s.preemptions = Some(v)).is_some(),
            Some(Stat::HitRate) => percent_as_fraction(n)
                .map(|v| s.prefix_hit_rate = Some(v))
                .is_some(),
            Some(Stat::KvUsage) => percent_as_fraction(n)
                .map(|v| s.kv_usage = Some(v))
                .is_some(),
            None => true,
        };
        if !ok {
            return Body::Malformed("a stats field did not parse as a number");
        }
    }
    if s.gen_tps.is_none() || s.running.is_none() {
        return Body::Malformed("stats line without generation throughput or running count");
    }
    Body::Step(s)
}

fn is_spec_field(key: &str) -> bool {
    matches!(
        key,
        "Mean acceptance length" | "Avg Draft acceptance rate" | "Draft acceptance rate"
    )
}

/// A speculative-decoding pair that no column takes.
fn spec_extra<'a>(key: &'a str, value: &'a str, _: &mut bool) -> Option<(&'a str, &'a str)> {
    (!is_spec_field(key) && !key.is_empty()).then_some((key, value))
}

/// A V0 prefix-cache pair that no column takes.
fn cache_extra<'a>(key: &'a str, value: &'a str, _: &mut bool) -> Option<(&'a str, &'a str)> {
    (key != "GPU").then_some((key, value))
}

/// `SpecDecoding metrics: …` (V1, every variant) and `Speculative metrics: …` (V0).
fn spec(body: &str) -> Body<'_> {
    let body = body.trim_end().trim_end_matches('.');
    if let Some(b) = if_cut(body, spec) {
        return b;
    }
    let mut s = Step {
        engine: VL,
        kind: Some(StepKind::Spec),
        extra: Extra::new(body, Shape::Keyed, spec_extra),
        ..Step::default()
    };
    for (key, value) in pairs(body) {
        let ok = match key {
            "Mean acceptance length" => float(value).map(|v| s.accept_len = Some(v)).is_some(),
            // V1 prints a percent, V0 a fraction with 3 decimals; the `%` tells them apart
            "Avg Draft acceptance rate" | "Draft acceptance rate" => {
                let v = if value.ends_with('%') {
                    percent_as_fraction(value)
                } else {
                    float(value)
                };
                v.map(|v| s.accept_rate = Some(v)).is_some()
            }
            "" => false,
            _ => true,
        };
        if !ok {
            return Body::Malformed("a speculative-decoding field did not parse");
        }
    }
    if s.accept_len.is_none() && s.accept_rate.is_none() {
        return Body::Malformed("speculative line without acceptance length or rate");
    }
    Body::Step(s)
}

/// V0 `Prefix cache hit rate: GPU: 41.23%, CPU: 0.00%`.
fn prefix_cache(rest: &str) -> Body<'_> {
    let body = rest.trim_end();
    if let Some(b) = if_cut(body, prefix_cache) {
        return b;
    }
    let mut s = Step {
        engine: VL,
        kind: Some(StepKind::Cache),
        extra: Extra::new(body, Shape::Keyed, cache_extra),
        ..Step::default()
    };
    for (key, value) in pairs(body) {
        if key == "GPU" {
            s.prefix_hit_rate = percent_as_fraction(value);
        }
    }
    if s.prefix_hit_rate.is_none() {
        return Body::Malformed("prefix-cache line without a GPU hit rate");
    }
    Body::Step(s)
}

/// `Sequence group … is preempted by PreemptionMode.RECOMPUTE mode … total_num_cumulative_preemption=51`.
fn preemption(msg: &str) -> Body<'_> {
    let count = msg
        .rsplit_once("total_num_cumulative_preemption=")
        .and_then(|(_, n)| uint(n.trim().trim_end_matches('.')));
    Body::Event(Event {
        engine: VL,
        kind: EventKind::Preemption,
        message: msg,
        count,
    })
}

/// `GPU KV cache size: 1,048,576 tokens[, Maximum concurrency for 131,072 tokens per request: 8.00x]`
/// (any device, `GPU + host`), and `Maximum concurrency for … : 3.41x` alone.
fn capacity(msg: &str) -> Option<Body<'_>> {
    let mut fixed: [(&'static str, &str); 4] = [("", ""); 4];
    let mut n = 0;
    let mut rest = msg;
    if let Some(i) = msg.find(" KV cache size: ") {
        let dev = &msg[..i];
        if dev.is_empty()
            || dev.len() > 16
            || !dev
                .bytes()
                .all(|c| c.is_ascii_uppercase() || c == b' ' || c == b'+' || c.is_ascii_lowercase())
        {
            return None;
        }
        let r = &msg[i + " KV cache size: ".len()..];
        let end = r.find(" tokens").unwrap_or(r.len());
        fixed[n] = ("kv_cache_tokens", &r[..end]);
        n += 1;
        rest = r[end..]
            .trim_start_matches(" tokens")
            .trim_start_matches(", ");
    }
    if let Some(r) = rest.strip_prefix("Maximum concurrency for ") {
        let (len, x) = r.split_once(" tokens per request: ")?;
        fixed[n] = ("max_model_len", len);
        fixed[n + 1] = ("max_concurrency", x.trim_end_matches(['x', '.']));
        n += 2;
    } else if n == 0 {
        return None;
    }
    Some(Body::Config(Config::new(Engine::Vllm, &fixed[..n], None)))
}

/// `# GPU blocks: 27895, # CPU blocks: 2048`.
fn blocks(rest: &str) -> Body<'_> {
    let (gpu, cpu) = match rest.split_once(", # CPU blocks: ") {
        Some((g, c)) => (g, Some(c)),
        None => (rest, None),
    };
    let fixed = [
        ("num_gpu_blocks", gpu.trim()),
        ("num_cpu_blocks", cpu.unwrap_or("").trim()),
    ];
    Body::Config(Config::new(
        Engine::Vllm,
        &fixed[..if cpu.is_some() { 2 } else { 1 }],
        None,
    ))
}

/// `non-default args: {'model': …}`.
fn dict_config(rest: &str) -> Body<'_> {
    let r = rest.trim();
    let inner = r
        .strip_prefix('{')
        .map(|r| r.strip_suffix('}').unwrap_or(r))
        .unwrap_or(r);
    Body::Config(Config::new(Engine::Vllm, &[], Some(inner)))
}

/// `args: Namespace(host=None, port=8000, …)`.
fn namespace_config(rest: &str) -> Body<'_> {
    let r = rest.trim();
    let inner = match r.strip_prefix("Namespace(") {
        Some(i) => i.strip_suffix(')').unwrap_or(i),
        None => r,
    };
    Body::Config(Config::new(Engine::Vllm, &[], Some(inner)))
}

/// `Initializing a V1 LLM engine (v0.9.0) with config: model='…', …` and the V0 form,
/// and `Chunked prefill is enabled with max_num_batched_tokens=512.`.
fn engine_config(msg: &str) -> Option<Body<'_>> {
    if let Some(r) = msg.strip_prefix("Initializing a") {
        let open = r.find("(v")?;
        let close = open + r[open..].find(')')?;
        let version = &r[open + 2..close];
        // the V0 form closes with `seed=0)`; drop that unbalanced `)`
        let cfg = r[close..].split_once("with config: ").map(|(_, c)| {
            let c = c.trim_end();
            let unbalanced =
                c.bytes().filter(|&b| b == b')').count() > c.bytes().filter(|&b| b == b'(').count();
            if unbalanced {
                c.strip_suffix(')').unwrap_or(c)
            } else {
                c
            }
        });
        return Some(Body::Config(Config::new(
            Engine::Vllm,
            &[("version", version)],
            cfg,
        )));
    }
    None
}

/// `Chunked prefill is enabled with max_num_batched_tokens=512.`
fn chunked_prefill(msg: &str) -> Option<Body<'_>> {
    let r = msg.strip_prefix("Chunked prefill is enabled with ")?;
    Some(Body::Config(Config::new(
        Engine::Vllm,
        &[],
        Some(r.trim_end_matches('.')),
    )))
}
