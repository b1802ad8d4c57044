//! Content sniffing: what kind of artifact an input is, from its first lines (never its name).

/// What an input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An engine or server log (SGLang, vLLM, or text we do not know yet).
    Log,
    /// JSON or JSONL (completions, benchmark results).
    Json,
    /// Prometheus text exposition.
    Prometheus,
    /// Nothing to read.
    Empty,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Log => "log",
            Kind::Json => "json",
            Kind::Prometheus => "prometheus",
            Kind::Empty => "empty",
        }
    }
}

/// Classifies an input from its first bytes (a few KB are enough).
pub fn sniff(head: &[u8]) -> Kind {
    let head = crate::text::without_bom(head);
    for raw in head.split(|&c| c == b'\n').take(32) {
        let line = raw.trim_ascii();
        if line.is_empty() {
            continue;
        }
        if line.starts_with(b"{") || line.starts_with(b"[{") || line == b"[" {
            return Kind::Json;
        }
        if line.starts_with(b"# HELP ")
            || line.starts_with(b"# TYPE ")
            || line.starts_with(b"# scrape")
            || is_engine_sample(line)
        {
            return Kind::Prometheus;
        }
        return Kind::Log;
    }
    Kind::Empty
}

/// A Prometheus sample line of an engine's metrics (`vllm:…`, `sglang:…`, `sglang_…`), or
/// of any family with a label set: an excerpt of a scrape pasted without its `# HELP` /
/// `# TYPE` lines. A bare `name value` line is too like a log's words to count.
fn is_engine_sample(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    match crate::prometheus::parse_line(text) {
        Ok(crate::prometheus::Line::Sample(s)) => {
            ["vllm:", "sglang:", "sglang_"]
                .iter()
                .any(|p| s.name.starts_with(p))
                || !s.labels.is_empty()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        assert_eq!(sniff(b"\n{\"id\":1}\n"), Kind::Json);
        assert_eq!(sniff(b"# HELP vllm:x y\n"), Kind::Prometheus);
        assert_eq!(sniff(b"[2026-05-09 22:29:22 TP0] Decode batch"), Kind::Log);
        assert_eq!(sniff(b"\n\n"), Kind::Empty);
    }

    /// Regression: a scrape excerpt that starts at a sample line was read as a log (every
    /// line `other`).
    #[test]
    fn scrape_excerpts_without_help_or_type() {
        assert_eq!(
            sniff(b"vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 12.0\n"),
            Kind::Prometheus
        );
        assert_eq!(sniff(b"sglang:gen_throughput 1234.5\n"), Kind::Prometheus);
        assert_eq!(sniff(b"sglang_num_running_reqs 3\n"), Kind::Prometheus);
        assert_eq!(
            sniff(b"process_cpu_seconds_total{pid=\"1\"} 4.5\n"),
            Kind::Prometheus
        );
        // words that happen to look like `name value` stay a log
        assert_eq!(sniff(b"step 5\n"), Kind::Log);
        assert_eq!(
            sniff(b"INFO 03-02 09:14:05 metrics.py:341] Avg prompt throughput: 1.0 tokens/s\n"),
            Kind::Log
        );
        assert_eq!(
            sniff(b"[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 1\n"),
            Kind::Log
        );
    }
}
