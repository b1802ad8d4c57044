//! The summary block the serving benchmarks print to the console: vLLM's
//! `benchmarks/benchmark_serving.py` and `vllm bench serve` (`vllm/benchmarks/serve.py`),
//! and SGLang's `sglang.bench_serving` (`sglang/benchmark/serving.py` from 0.5.2x). Every
//! release of both prints it the same way, quoted from their source (vLLM 0.6.3 to 0.33.0,
//! SGLang 0.4.0 to 0.5.23):
//!
//! ```text
//! print("{s:{c}^{n}}".format(s=' Serving Benchmark Result ', n=50, c='='))
//! print("{:<40} {:<10}".format("Successful requests:", metrics.completed))
//! print("{:<40} {:<10.2f}".format("Benchmark duration (s):", benchmark_duration))
//! print("{s:{c}^{n}}".format(s=metric_header, n=50, c='-'))
//! print("{:<40} {:<10.2f}".format(f"P{p_word} {metric_name} (ms):", value))
//! print("=" * 50)
//! ```
//!
//! A block is a header line, then `label: value` lines (the label padded to 40 columns)
//! and `---- Section ----` lines, up to a line of `=`. Labels name the keys the same tools
//! write into their result JSON (`Successful requests:` → `completed`, `Median TTFT (ms):` →
//! `median_ttft_ms`, SGLang's `P99 E2E Latency (ms):` → `p99_e2e_latency_ms`), so that a
//! pasted summary reads as the tool's result file does, without its per-request lists.
//! Labels no release printed are kept under their own name in snake case.

use crate::loadgen::{Run, Tool};

/// The block's title, as the header line centres it.
const TITLE: &str = "Serving Benchmark Result";

/// Lines a block may have (the longest release prints about 45).
pub const MAX_LINES: usize = 120;

/// Whether `line` opens a block: the title centred in `=` (a paste may have cut or
/// widened the rule, and SGLang prints a blank line before it).
pub fn is_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("==") && t.trim_matches('=').trim() == TITLE
}

/// Whether `line` closes a block: a rule of `=` alone.
pub fn is_footer(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 10 && t.bytes().all(|b| b == b'=')
}

/// What one line of a block is.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockLine<'a> {
    /// `---- Time to First Token ----`, or a blank line.
    Section,
    /// `label: value`, the label with its colon.
    Value(&'a str, &'a str),
    /// Anything else: the block ended before it (a log line, a traceback).
    Foreign,
}

/// Reads a line inside a block.
pub fn block_line(line: &str) -> BlockLine<'_> {
    let t = line.trim();
    if t.is_empty() || (t.starts_with("--") && t.ends_with("--")) {
        return BlockLine::Section;
    }
    // `{:<40} {:<10}`: the label ends at its colon (labels hold no other), which padding or
    // the line's end follows; its words are those of labels (`Position 0:` indented under
    // speculative decoding)
    let Some(i) = t.find(':') else {
        return BlockLine::Foreign;
    };
    let (label, value) = (&t[..=i], &t[i + 1..]);
    let labelled = i > 0
        && label.len() <= 60
        && (value.is_empty() || value.starts_with([' ', '\t']))
        && label
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphabetic())
        && label[..i]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b" ()/%.,-_".contains(&b));
    if labelled {
        BlockLine::Value(label, value.trim())
    } else {
        BlockLine::Foreign
    }
}

/// The result key of a label (see the module docs).
pub fn key(label: &str) -> String {
    let fixed = match label {
        "Successful requests:" => "completed",
        "Failed requests:" => "failed",
        "Benchmark duration (s):" => "duration",
        "Total input tokens:" => "total_input_tokens",
        "Total input text tokens:" => "total_input_text_tokens",
        "Total input vision tokens:" => "total_input_vision_tokens",
        "Total generated tokens:" => "total_output_tokens",
        "Total generated tokens (retokenized):" => "total_output_tokens_retokenized",
        "Request throughput (req/s):" => "request_throughput",
        "Request goodput (req/s):" => "request_goodput",
        "Input token throughput (tok/s):" => "input_throughput",
        "Output token throughput (tok/s):" => "output_throughput",
        "Peak output token throughput (tok/s):" => "max_output_tokens_per_s",
        "Peak concurrent requests:" => "max_concurrent_requests",
        "Total Token throughput (tok/s):" | "Total token throughput (tok/s):" => {
            "total_token_throughput"
        }
        "Traffic request rate:" | "Request rate configured (RPS):" => "request_rate",
        // (SGLang 0.4.x spelled it `reqeuest`)
        "Max reqeuest concurrency:"
        | "Max request concurrency:"
        | "Maximum request concurrency:" => "max_concurrency",
        "Concurrency:" => "concurrency",
        "Accept length:" | "Acceptance length:" => "accept_length",
        "Acceptance rate (%):" => "acceptance_rate",
        _ => "",
    };
    if !fixed.is_empty() {
        return fixed.to_string();
    }
    // `Mean TTFT (ms):`, `P99 E2E Latency (ms):`, `P99.9 ITL (ms):`, `Median probe E2EL (ms):`
    if let Some(body) = label.strip_suffix(" (ms):") {
        if let Some((stat, metric)) = body.split_once(' ') {
            let stat = match stat {
                "Mean" | "Median" | "Std" | "Max" | "Min" => Some(stat.to_ascii_lowercase()),
                p if p.len() > 1
                    && p.starts_with('P')
                    && p[1..].bytes().all(|b| b.is_ascii_digit() || b == b'.') =>
                {
                    Some(p.to_ascii_lowercase())
                }
                _ => None,
            };
            if let Some(stat) = stat {
                return format!("{stat}_{}_ms", snake(metric));
            }
        }
    }
    snake(label)
}

/// `Total cached tokens:` → `total_cached_tokens`; `E2E Latency` → `e2e_latency`.
fn snake(label: &str) -> String {
    let mut out = String::with_capacity(label.len());
    for c in label.chars() {
        if c.is_ascii_alphanumeric() || c == '.' {
            out.push(c.to_ascii_lowercase());
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_end_matches('_').to_string()
}

/// A value: a number (`inf` as infinity), or `None` for words (`not set`, `trace`, a
/// backend's name).
fn number(value: &str) -> Option<f64> {
    let v = value.trim();
    match v {
        "inf" | "Infinity" => Some(f64::INFINITY),
        _ => v.parse::<f64>().ok().filter(|x| x.is_finite()),
    }
}

/// A block read: the run, and what its lines were.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block {
    pub run: Run,
    /// Lines of the block, header and footer included.
    pub lines: usize,
    /// Whether its closing rule was seen (a block cut short keeps what it has).
    pub closed: bool,
}

/// Reads a block from the line after its header, up to its footer (included) or the first
/// line that is no part of it (not included).
pub fn read_block<'a>(lines: impl IntoIterator<Item = &'a str>) -> Block {
    let mut b = Block {
        lines: 1,
        run: Run::new(Tool::Console, ""),
        ..Block::default()
    };
    for line in lines.into_iter().take(MAX_LINES) {
        if is_footer(line) {
            b.lines += 1;
            b.closed = true;
            break;
        }
        match block_line(line) {
            BlockLine::Section => {}
            BlockLine::Value("Backend:", v) => b.run.name = v.to_string(),
            BlockLine::Value(label, v) => {
                if let Some(x) = number(v) {
                    b.run.scalars.push((key(label), x));
                }
            }
            BlockLine::Foreign => break,
        }
        b.lines += 1;
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A vLLM 0.10 block and an SGLang 0.5 block, as the tools print them.
    #[test]
    fn blocks_of_both_tools() {
        let vllm = "\
============ Serving Benchmark Result ============
Successful requests:                     1000      
Maximum request concurrency:             128       
Benchmark duration (s):                  98.40     
Total input tokens:                      215196    
Total generated tokens:                  185024    
Request throughput (req/s):              10.16     
Output token throughput (tok/s):         1880.33   
Total Token throughput (tok/s):          4067.31   
---------------Time to First Token----------------
Mean TTFT (ms):                          412.06    
Median TTFT (ms):                        301.12    
P99 TTFT (ms):                           1930.44   
-----Time per Output Token (excl. 1st token)------
Mean TPOT (ms):                          60.21     
Median TPOT (ms):                        58.90     
P99 TPOT (ms):                           121.07    
---------------Inter-token Latency----------------
Mean ITL (ms):                           58.77     
Median ITL (ms):                         44.31     
P99 ITL (ms):                            310.52    
==================================================
after";
        let mut lines = vllm.lines();
        assert!(is_header(lines.next().unwrap()));
        let b = read_block(lines);
        assert!(b.closed);
        assert_eq!(b.lines, 22);
        let get = |k: &str| b.run.get(&[k]);
        assert_eq!(get("completed"), Some(1000.0));
        assert_eq!(get("max_concurrency"), Some(128.0));
        assert_eq!(get("duration"), Some(98.40));
        assert_eq!(get("total_output_tokens"), Some(185024.0));
        assert_eq!(get("total_token_throughput"), Some(4067.31));
        assert_eq!(get("median_ttft_ms"), Some(301.12));
        assert_eq!(get("p99_tpot_ms"), Some(121.07));
        assert_eq!(get("p99_itl_ms"), Some(310.52));
        assert_eq!(b.run.scalars.len(), 17);
        assert_eq!(b.run.name, "");

        let sglang = "
============ Serving Benchmark Result ============
Backend:                                 sglang    
Traffic request rate:                    inf       
Max reqeuest concurrency:                not set   
Successful requests:                     500       
Benchmark duration (s):                  61.02     
Total generated tokens (retokenized):    99120     
P99 E2E Latency (ms):                    20031.50  
P99.9 ITL (ms):                          212.00    
Total cached tokens:                     1024      
Accept length:                           2.41      
";
        let mut lines = sglang.lines().skip(1);
        assert!(is_header(lines.next().unwrap()));
        let b = read_block(lines);
        assert!(!b.closed, "cut short: no closing rule");
        assert_eq!(b.run.name, "sglang");
        assert_eq!(b.run.get(&["request_rate"]), Some(f64::INFINITY));
        assert_eq!(b.run.get(&["max_concurrency"]), None);
        assert_eq!(
            b.run.get(&["total_output_tokens_retokenized"]),
            Some(99120.0)
        );
        assert_eq!(b.run.get(&["p99_e2e_latency_ms"]), Some(20031.5));
        assert_eq!(b.run.get(&["p99.9_itl_ms"]), Some(212.0));
        assert_eq!(b.run.get(&["total_cached_tokens"]), Some(1024.0));
        assert_eq!(b.run.get(&["accept_length"]), Some(2.41));
    }

    /// Headers and rules of other widths count; other `=` lines and log lines do not.
    #[test]
    fn headers_rules_and_foreign_lines() {
        assert!(is_header("== Serving Benchmark Result =="));
        assert!(is_header(
            "   ============ Serving Benchmark Result ============  "
        ));
        assert!(!is_header(
            "============ Offline Throughput Benchmark Result ============"
        ));
        assert!(!is_header("Serving Benchmark Result"));
        assert!(is_footer("=========="));
        assert!(!is_footer("====="));
        assert!(!is_footer("===== x ====="));
        assert_eq!(
            block_line("INFO 03-02 10:00:00 [loggers.py:123] Engine 000: Avg prompt"),
            BlockLine::Foreign
        );
        assert_eq!(
            block_line("  Position 0:                           81.20"),
            BlockLine::Value("Position 0:", "81.20")
        );
        let b = read_block([
            "Successful requests:   3",
            "[2026-01-01 10:00:00] Decode batch. #running-req: 1",
            "Benchmark duration (s): 2",
        ]);
        assert_eq!((b.lines, b.closed, b.run.scalars.len()), (2, false, 1));
    }
}
