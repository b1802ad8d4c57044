//! Content sniffing: what kind of artifact an input is, from its first lines (never its name).

/// What an input holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Kind {
    /// An engine or server log (SGLang, vLLM, or text we do not know yet).
    Log,
    /// JSON or JSONL (completions, benchmark results).
    Json,
    /// Prometheus text exposition.
    Prometheus,
    /// Nothing to read.
    Empty,
    /// Not text (an image, an archive, UTF-16, random bytes): listed, not read.
    Binary,
    /// A server log inside a log collector's records (Docker json-file, CRI, journald,
    /// Loki, CloudWatch, Cloud Logging, Elasticsearch, Fluent Bit, `kubectl --prefix`).
    Envelope(crate::wrappers::envelope::Collector),
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Log => "log",
            Kind::Json => "json",
            Kind::Prometheus => "prometheus",
            Kind::Empty => "empty",
            Kind::Binary => "binary",
            // (a server log all the same: the collector is named beside it)
            Kind::Envelope(_) => "log",
        }
    }
}

/// Whether a first line is of a kind.
type Claims = fn(&[u8]) -> bool;

/// The kinds of text a first line may claim, in order: the first that claims the first
/// non-blank line wins; a line none claims is a log's. A new kind of text input is a line
/// here (and its reader in the CLI's `ingest/kinds/`).
const FIRST_LINE: [(Kind, Claims); 3] = [
    (Kind::Prometheus, quoted_name_sample),
    (Kind::Json, json_line),
    (Kind::Prometheus, prometheus_line),
];

/// A sample whose metric name is in the braces, quoted (Prometheus 3.x: `{"my.metric"} 1`)
/// or as `__name__` (`promtool tsdb dump`: `{__name__="m", job="x"} 1 1796479669338`),
/// which begins like a JSON object.
fn quoted_name_sample(line: &[u8]) -> bool {
    (line.starts_with(b"{\"") || line.starts_with(b"{__name__="))
        && std::str::from_utf8(line).is_ok_and(|t| {
            matches!(
                crate::prometheus::parse_line(t),
                Ok(crate::prometheus::Line::Sample(_))
            )
        })
}

/// A JSON document, a JSONL record or an array of records begins.
fn json_line(line: &[u8]) -> bool {
    line.starts_with(b"{") || line.starts_with(b"[{") || line == b"["
}

/// A scrape's `# HELP`, `# TYPE` or `# scrape` line, or an engine's sample.
fn prometheus_line(line: &[u8]) -> bool {
    line.starts_with(b"# HELP ")
        || line.starts_with(b"# TYPE ")
        || line.starts_with(b"# scrape")
        || is_engine_sample(line)
}

/// Classifies an input from its first bytes (a few KB are enough).
pub fn sniff(head: &[u8]) -> Kind {
    let head = crate::text::without_bom(head);
    // AIPerf's server metrics are the Parquet files read (the Prometheus reader tells them
    // by the file's metadata, and lists any other as not read)
    if is_parquet(head) {
        return Kind::Prometheus;
    }
    if is_binary(head) {
        return Kind::Binary;
    }
    // the Prometheus API's query results, and a collector's records, before JSON claims
    // their `{`
    if crate::prometheus_api::sniff(head) || crate::loadgen::aiperf_scrapes::sniff(head) {
        return Kind::Prometheus;
    }
    if let Some(c) = crate::wrappers::envelope::sniff(head) {
        return Kind::Envelope(c);
    }
    // a load generator's YAML or CSV result file, read by the JSON reader
    if crate::loadgen::yaml::sniff(head).is_some() || crate::loadgen::csv::sniff(head).is_some() {
        return Kind::Json;
    }
    let mut commented = false;
    let mut lines = head.split(|&c| c == b'\n').take(32);
    while let Some(raw) = lines.next() {
        let line = raw.trim_ascii();
        if line.is_empty() {
            continue;
        }
        match FIRST_LINE.iter().find(|(_, claims)| claims(line)) {
            Some(&(kind, _)) => return kind,
            // a plain comment (`# A normal comment.` before a scrape's `# TYPE` lines) says
            // nothing yet: the next line decides
            None if line.starts_with(b"#") => {
                commented = true;
                continue;
            }
            // a JSONL file cut at the front (`tail -c`, a rotated copy) starts inside a
            // record: the lines after it say what it is
            None if cut_records(lines.by_ref()) => return Kind::Json,
            // OpenMetrics ends every exposition with `# EOF`: bare `name value` samples
            // (no `# TYPE`, no labels, no engine name) are a scrape when it follows them
            None if exposition(head) => return Kind::Prometheus,
            None => return Kind::Log,
        }
    }
    if commented && exposition(head) {
        return Kind::Prometheus;
    }
    if commented {
        Kind::Log
    } else {
        Kind::Empty
    }
}

/// Whether the head is an exposition of bare samples: it holds OpenMetrics' closing `# EOF`
/// line, or every one of its lines (the last, perhaps cut, aside) is a sample or a comment,
/// with at least two samples.
fn exposition(head: &[u8]) -> bool {
    let lines: Vec<&[u8]> = head
        .split(|&c| c == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .take(64)
        .collect();
    if lines.iter().any(|l| *l == b"# EOF") {
        return true;
    }
    let whole = &lines[..lines
        .len()
        .saturating_sub(usize::from(!head.ends_with(b"\n")))];
    let mut samples = 0;
    for l in whole {
        match std::str::from_utf8(l).map(crate::prometheus::parse_line) {
            Ok(Ok(crate::prometheus::Line::Sample(_))) => samples += 1,
            Ok(Ok(_)) => {}
            _ => return false,
        }
    }
    samples >= 2
}

/// Lines after a first line no kind claims that are JSON records, every one of the next
/// few (at least two; the head's last line may be cut, and is not counted).
fn cut_records<'a>(rest: impl Iterator<Item = &'a [u8]>) -> bool {
    let next: Vec<&[u8]> = rest
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty())
        .take(9)
        .collect();
    let whole = &next[..next.len().saturating_sub(1)];
    whole.len() >= 2
        && whole
            .iter()
            .all(|l| l.starts_with(b"{") && l.ends_with(b"}"))
}

/// Whether bytes open as a Parquet file does (`PAR1`).
pub fn is_parquet(head: &[u8]) -> bool {
    head.starts_with(b"PAR1")
}

/// Whether the first bytes of an input are not text: more than one in ten is a NUL, a control
/// character no log holds (tab, form feed, carriage return and the escape of colour codes
/// are text) or not UTF-8. A log with a few stray NULs or bad bytes in its lines is text, and
/// read; its odd lines are counted as malformed or other.
pub fn is_binary(head: &[u8]) -> bool {
    let control = head
        .iter()
        .filter(|&&c| c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b))
        .count();
    let invalid: usize = head.utf8_chunks().map(|c| c.invalid().len()).sum();
    // a head cut inside a character ends in a few invalid bytes: no reason to call it binary
    (control + invalid) * 10 > head.len().max(64)
}

/// A Prometheus sample line of an engine's metrics (`vllm:…`, `sglang:…`, or renamed on
/// the way: `sglang_…`, `ray_vllm_…`; see [`crate::prometheus::engine_name`]), or
/// of any family with a label set: an excerpt of a scrape pasted without its `# HELP` /
/// `# TYPE` lines. A bare `name value` line is too like a log's words to count.
fn is_engine_sample(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return false;
    };
    match crate::prometheus::parse_line(text) {
        Ok(crate::prometheus::Line::Sample(s)) => {
            let name = crate::prometheus::engine_name(s.name);
            ["vllm:", "sglang:"].iter().any(|p| name.starts_with(p)) || !s.labels.is_empty()
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

    /// Images, UTF-16 and random bytes are binary; a log with a few NULs and bad bytes in its
    /// lines, ANSI colours or CRLF line ends is not.
    #[test]
    fn binary_or_text() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0".to_vec();
        png.extend((0..200u8).map(|i| i.wrapping_mul(37)));
        assert_eq!(sniff(&png), Kind::Binary);
        let utf16: Vec<u8> = "INFO 03-02 09:14:05 metrics.py:341] Avg prompt throughput\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(sniff(&utf16), Kind::Binary);
        let line = "[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 1, gen throughput (token/s): 5.0\r\n";
        let mut log = line.repeat(20).into_bytes();
        log[30] = 0;
        log[200] = 0xff;
        log.extend(b"\x1b[32mINFO\x1b[0m ready\n");
        assert_eq!(sniff(&log), Kind::Log);
        assert!(!is_binary(b""));
    }

    /// Regression: a valid scrape whose first line is a plain comment was read as a log (0
    /// parsed, exit 1); a log whose first line is one stays a log.
    #[test]
    fn a_plain_comment_before_a_scrape() {
        let scrape = b"# A normal comment.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running 3\n";
        assert_eq!(sniff(scrape), Kind::Prometheus);
        let mut bom = b"\xef\xbb\xbf".to_vec();
        bom.extend_from_slice(scrape);
        assert_eq!(sniff(&bom), Kind::Prometheus);
        assert_eq!(
            sniff(b"# run 3\n[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 1\n"),
            Kind::Log
        );
        assert_eq!(sniff(b"# only a comment\n\n"), Kind::Log);
    }

    /// Issue 40, item 8: OpenMetrics' test expositions of bare `name value` samples (no
    /// `# TYPE`, no labels) end with `# EOF`, and were read as logs; a scrape renamed by Ray
    /// or an exporter starts with an engine sample all the same.
    #[test]
    fn open_metrics_and_renamed_engine_samples() {
        assert_eq!(sniff(b"a 1\n# EOF\n"), Kind::Prometheus);
        assert_eq!(sniff(b"a NaN\n# EOF"), Kind::Prometheus);
        assert_eq!(sniff(b"# a comment\na 1\n# EOF\n"), Kind::Prometheus);
        assert_eq!(
            sniff(b"ray_vllm_num_requests_running 3\n"),
            Kind::Prometheus
        );
        assert_eq!(sniff(b"sglang_num_running_reqs 3\n"), Kind::Prometheus);
        // AIPerf's server scrapes: its JSONL, and Parquet (told apart from others' when read)
        assert_eq!(
            sniff(
                b"{\"endpoint_url\":\"http://h:8000/metrics\",\"timestamp_ns\":1,\"metrics\":{}}\n"
            ),
            Kind::Prometheus
        );
        assert_eq!(sniff(b"PAR1\x15\x04\x15\x00\x00\x00"), Kind::Prometheus);
        assert_eq!(sniff(b"step 5 done\nloss 0.3\n"), Kind::Log);
        // bare samples, every line of them (prometheus/common's parser tests)
        assert_eq!(sniff(b"\nminimal_metric 1.234\nanother_metric -3e3 103948\n# Even that:\nno_labels{} 3\n"), Kind::Prometheus);
        assert_eq!(sniff(b"{\"name.1\"} 1\n{\"name.2\"} 1\n"), Kind::Prometheus);
        assert_eq!(sniff(b"{\"name\": 1}\n"), Kind::Json);
    }

    /// Regression (issue 40, item 1): JSONL cut at the front (`tail -c`) starts inside a
    /// record, and was read as a log; a log with a line of JSON here and there stays a log.
    #[test]
    fn jsonl_cut_at_the_front() {
        let cut = b"ent\":\"ok\"},\"finish_reason\":\"stop\"}]}\n{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4";
        assert_eq!(sniff(cut), Kind::Json);
        let log = b"INFO 03-02 09:14:05 metrics.py:341] Avg prompt throughput: 1.0 tokens/s\n{\"id\":1}\nINFO 03-02 09:14:15 ready\n";
        assert_eq!(sniff(log), Kind::Log);
        assert_eq!(sniff(b"step 5\n{\"a\":1}\n"), Kind::Log);
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
