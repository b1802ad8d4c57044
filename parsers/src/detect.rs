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
        {
            return Kind::Prometheus;
        }
        return Kind::Log;
    }
    Kind::Empty
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
}
