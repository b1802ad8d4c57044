//! Simulated completion JSONL with known truth: long-tailed output lengths cut at a cap,
//! reasoning text with escapes and non-ASCII, a few failures, in one of the shapes users
//! write (pipeline records, OpenAI chat responses, SGLang `/generate`).

use crate::sim::Rng;
use anyhow::Result;
use std::io::{BufWriter, Write};
use std::path::Path;

pub struct Config {
    pub seed: u64,
    pub records: u64,
    /// Stop once this many bytes are written (0: no limit).
    pub target_bytes: u64,
    pub cap: u64,
    /// Mean characters of reasoning text per record.
    pub text_chars: usize,
    /// Share of records that fail with an error object.
    pub failure_rate: f64,
    /// Mean output length grows by this factor from the first to the last record (drift).
    pub drift: f64,
    /// Only pipeline records (`{"idx", "reasoning", "content", "finish_reason", "usage"}`)
    /// instead of three shapes in turn.
    pub pipeline_only: bool,
    /// The words of the text: every other one escaped or non-ASCII ([`Text::Dense`]), or
    /// English prose with one in about sixteen ([`Text::Prose`]).
    pub text: Text,
}

/// How dense the text is in escapes and non-ASCII characters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Text {
    /// [`WORDS`] in equal shares: about 120 escapes per KB once Python's `json.dumps`
    /// escapes the non-ASCII ones, a stress test.
    #[default]
    Dense,
    /// [`PROSE`] with one word in sixteen from [`WORDS`]: about 9 escapes per KB once
    /// escaped, as in multilingual or reasoning text.
    Prose,
}

/// What the file holds, for tests and benchmarks to assert against.
#[derive(Debug, Default)]
pub struct Truth {
    pub records: u64,
    pub bytes: u64,
    pub errors: u64,
    pub capped: u64,
    pub output_tokens: u64,
    pub max_tokens: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

const WORDS: &[&str] = &[
    "the",
    "token",
    "cap",
    "ë",
    "naïve",
    "模型",
    "推理",
    "\\n",
    "\\\"quoted\\\"",
    "x²",
    "→",
    "tab\\t",
    "😀",
    "\\u00e9",
    "sum",
    "proof",
    "∑",
    "Hence",
];

const PROSE: &[&str] = &[
    "the",
    "model",
    "answer",
    "so",
    "we",
    "need",
    "to",
    "check",
    "whether",
    "each",
    "term",
    "is",
    "positive",
    "then",
    "sum",
    "over",
    "all",
    "cases",
    "let",
    "me",
    "consider",
    "first",
    "second",
    "value",
    "which",
    "gives",
    "us",
    "a",
    "bound",
    "and",
    "therefore",
    "result",
    "follows",
    "wait",
    "actually",
    "compute",
    "again",
    "carefully",
    "for",
    "integer",
    "solutions",
];

fn text(rng: &mut Rng, chars: usize, mix: Text, out: &mut String) {
    out.clear();
    while out.len() < chars {
        let words = match mix {
            Text::Prose if rng.f() >= 0.0625 => PROSE,
            _ => WORDS,
        };
        out.push_str(words[(rng.f() * words.len() as f64) as usize]);
        out.push(' ');
    }
}

fn quantile(sorted: &[u64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] as f64 + (sorted[hi] as f64 - sorted[lo] as f64) * (pos - lo as f64)
}

pub fn write(cfg: &Config, path: &Path) -> Result<Truth> {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    let mut rng = Rng::new(cfg.seed);
    let mut t = Truth::default();
    let mut lens = Vec::new();
    let mut reasoning = String::new();
    let mut line = String::new();
    let mut i = 0u64;
    while (cfg.records == 0 || i < cfg.records)
        && (cfg.target_bytes == 0 || t.bytes < cfg.target_bytes)
    {
        let progress = if cfg.records > 0 {
            i as f64 / cfg.records as f64
        } else {
            t.bytes as f64 / cfg.target_bytes.max(1) as f64
        };
        let mean = 1500.0 * (1.0 + (cfg.drift - 1.0) * progress);
        let want = (-(1.0 - rng.f()).ln() * mean) as u64 + 8;
        let tokens = want.min(cfg.cap);
        let prompt = 100 + (rng.f() * 900.0) as u64;
        line.clear();
        use std::fmt::Write as _;
        if rng.f() < cfg.failure_rate {
            write!(
                line,
                r#"{{"idx": {i}, "error": {{"message": "Request timed out after 600 s", "type": "timeout"}}}}"#
            )?;
            t.errors += 1;
        } else {
            let finish = if want >= cfg.cap { "length" } else { "stop" };
            t.capped += u64::from(want >= cfg.cap);
            t.output_tokens += tokens;
            lens.push(tokens);
            text(
                &mut rng,
                cfg.text_chars.max(1) * (tokens as usize).min(4 * cfg.cap as usize) / 1500,
                cfg.text,
                &mut reasoning,
            );
            match if cfg.pipeline_only { 0 } else { i % 3 } {
                0 => write!(
                    line,
                    r#"{{"idx": {i}, "reasoning": "{reasoning}", "content": "The answer is {i}.", "finish_reason": "{finish}", "usage": {{"prompt_tokens": {prompt}, "completion_tokens": {tokens}, "total_tokens": {}}}}}"#,
                    prompt + tokens
                )?,
                1 => write!(
                    line,
                    r#"{{"id": "chatcmpl-{i:08x}", "object": "chat.completion", "created": 1778365762, "model": "Qwen/Qwen3-8B", "choices": [{{"index": 0, "message": {{"role": "assistant", "content": "Answer {i}", "reasoning_content": "{reasoning}"}}, "logprobs": null, "finish_reason": "{finish}", "stop_reason": null}}], "usage": {{"prompt_tokens": {prompt}, "total_tokens": {}, "completion_tokens": {tokens}, "prompt_tokens_details": null}}}}"#,
                    prompt + tokens
                )?,
                _ => {
                    let fr = if finish == "length" {
                        format!(r#"{{"type": "length", "length": {}}}"#, cfg.cap)
                    } else {
                        r#"{"type": "stop", "matched": 151645}"#.to_string()
                    };
                    write!(
                        line,
                        r#"{{"text": "{reasoning}", "meta_info": {{"id": "{i:032x}", "finish_reason": {fr}, "prompt_tokens": {prompt}, "completion_tokens": {tokens}, "cached_tokens": 0, "e2e_latency": {:.3}}}}}"#,
                        tokens as f64 / 40.0
                    )?
                }
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
        t.bytes += line.len() as u64;
        t.records += 1;
        i += 1;
    }
    out.flush()?;
    lens.sort_unstable();
    if !lens.is_empty() {
        t.max_tokens = *lens.last().unwrap_or(&0);
        t.p50 = quantile(&lens, 0.5);
        t.p90 = quantile(&lens, 0.9);
        t.p99 = quantile(&lens, 0.99);
    }
    Ok(t)
}
