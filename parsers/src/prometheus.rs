//! Prometheus text exposition (what `/metrics` of SGLang and vLLM returns), one line at a
//! time, zero-copy.
//!
//! `prometheus_client` prints `name{label="value",…} value [timestamp]`, with labels sorted,
//! values in Python `repr` (exponent form from 1e6: `2.345678e+06`, and `NaN`, `+Inf`,
//! `-Inf`), `# HELP` / `# TYPE` lines per family and — for a family declared but never
//! touched — only those two. Sample order and HELP text are never relied on (multiprocess
//! mode reorders samples and may replace the HELP text). A `# scrape <time>` comment, which
//! tokstat's users put between successive scrapes appended to one file, marks where a new
//! scrape starts and when it was taken.

use crate::stamp::{days_from_civil, Ts};
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::char;
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// A metric family's declared type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MetricType {
    Counter,
    Gauge,
    Histogram,
    Summary,
    Untyped,
}

impl MetricType {
    pub fn as_str(self) -> &'static str {
        match self {
            MetricType::Counter => "counter",
            MetricType::Gauge => "gauge",
            MetricType::Histogram => "histogram",
            MetricType::Summary => "summary",
            MetricType::Untyped => "untyped",
        }
    }

    fn parse(s: &str) -> MetricType {
        match s {
            "counter" => MetricType::Counter,
            "gauge" => MetricType::Gauge,
            "histogram" => MetricType::Histogram,
            "summary" => MetricType::Summary,
            _ => MetricType::Untyped,
        }
    }
}

/// One sample line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample<'a> {
    pub name: &'a str,
    /// The text between the braces (empty without labels); see [`labels`].
    pub labels: &'a str,
    pub value: f64,
    /// The optional trailing timestamp, milliseconds since the epoch.
    pub timestamp_ms: Option<i64>,
}

impl<'a> Sample<'a> {
    /// The value of one label, unescaped only when it has escapes.
    pub fn label(&self, key: &str) -> Option<std::borrow::Cow<'a, str>> {
        labels(self.labels)
            .find(|(k, _)| *k == key)
            .map(|(_, v)| unescape(v))
    }
}

/// One line of exposition text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Line<'a> {
    Sample(Sample<'a>),
    Type {
        name: &'a str,
        kind: MetricType,
    },
    Help {
        name: &'a str,
    },
    /// `# scrape <time>`: a new scrape starts; the time when it could be read.
    Scrape(Option<Ts>),
    /// Other comments and blank lines.
    Comment,
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_' || c == ':'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == ':'
}

fn metric_name(s: &str) -> IResult<&str, &str> {
    let (rest, name) = take_while1(is_name_char).parse(s)?;
    if !name.starts_with(is_name_start) {
        return Err(nom::Err::Error(nom::error::Error::new(
            s,
            nom::error::ErrorKind::Alpha,
        )));
    }
    Ok((rest, name))
}

/// The braces of a sample: `{` … `}`, honouring quotes and escapes inside values.
fn label_block(s: &str) -> Result<(&str, &str), &'static str> {
    let b = s.as_bytes();
    let mut i = 1;
    let mut quoted = false;
    while i < b.len() {
        match b[i] {
            b'\\' if quoted => i += 1,
            b'"' => quoted = !quoted,
            b'}' if !quoted => return Ok((&s[1..i], &s[i + 1..])),
            _ => {}
        }
        i += 1;
    }
    Err("unterminated label set")
}

/// A sample value: Python `repr` / Go float text, including `NaN`, `+Inf`, `-Inf`.
pub fn value(s: &str) -> Option<f64> {
    match s {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ if s
            .bytes()
            .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c))
            && !s.is_empty() =>
        {
            s.parse().ok()
        }
        _ => None,
    }
}

fn sample(line: &str) -> Result<Sample<'_>, &'static str> {
    let (rest, name) = metric_name(line).map_err(|_| "not a metric name")?;
    let (labels, rest) = if rest.starts_with('{') {
        label_block(rest)?
    } else {
        ("", rest)
    };
    if !labels_valid(labels) {
        return Err("bad label set");
    }
    let mut parts = rest.split_ascii_whitespace();
    let v = parts.next().ok_or("no value")?;
    let value = value(v).ok_or("bad value")?;
    let timestamp_ms = match parts.next() {
        None => None,
        Some(t) => Some(t.parse::<i64>().map_err(|_| "bad timestamp")?),
    };
    if parts.next().is_some() {
        return Err("text after the timestamp");
    }
    Ok(Sample {
        name,
        labels,
        value,
        timestamp_ms,
    })
}

/// Whether a label block is `name="value"` pairs separated by commas (a trailing comma is
/// allowed, as the format permits).
fn labels_valid(s: &str) -> bool {
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let Ok((r, _)) = metric_name(rest) else {
            return false;
        };
        let r = r.trim_start();
        let Some(r) = r.strip_prefix("=\"") else {
            return false;
        };
        let Some(end) = closing_quote(r) else {
            return false;
        };
        rest = r[end + 1..].trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return false;
        }
    }
    true
}

/// Index of the quote closing a label value that starts at `s[0]`.
fn closing_quote(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The `(name, raw value)` pairs of a label block (values still escaped).
pub fn labels(s: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = s;
    std::iter::from_fn(move || {
        rest = rest.trim_start_matches([',', ' ']);
        if rest.is_empty() {
            return None;
        }
        let eq = rest.find("=\"")?;
        let key = rest[..eq].trim();
        let after = &rest[eq + 2..];
        let end = closing_quote(after)?;
        let val = &after[..end];
        rest = &after[end + 1..];
        Some((key, val))
    })
}

/// A label value without its escapes (`\\`, `\"`, `\n`).
pub fn unescape(v: &str) -> std::borrow::Cow<'_, str> {
    if !v.contains('\\') {
        return std::borrow::Cow::Borrowed(v);
    }
    let mut out = String::with_capacity(v.len());
    let mut it = v.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

fn comment(line: &str) -> Line<'_> {
    let body = line[1..].trim_start();
    let word = |s: &'static str| -> IResult<&str, &str> {
        preceded(tag(s), preceded(char(' '), take_while(|c: char| c == ' '))).parse(body)
    };
    if let Ok((rest, _)) = word("TYPE") {
        if let Ok((rest, name)) = metric_name(rest) {
            return Line::Type {
                name,
                kind: MetricType::parse(rest.trim()),
            };
        }
    }
    if let Ok((rest, _)) = word("HELP") {
        if let Ok((_, name)) = metric_name(rest) {
            return Line::Help { name };
        }
    }
    if let Some(rest) = body.strip_prefix("scrape") {
        if rest.is_empty() || rest.starts_with([' ', '\t', ':', '=']) {
            return Line::Scrape(scrape_time(rest.trim_start_matches([' ', '\t', ':', '='])));
        }
    }
    Line::Comment
}

/// Parses one line (without its newline). `Err` says why a non-comment line is not a sample.
pub fn parse_line(line: &str) -> Result<Line<'_>, &'static str> {
    let line = line.trim_end_matches('\r').trim();
    if line.is_empty() {
        return Ok(Line::Comment);
    }
    if line.starts_with('#') {
        return Ok(comment(line));
    }
    sample(line).map(Line::Sample)
}

/// A scrape time: RFC 3339 / ISO 8601 (`2026-05-10T00:00:10`, a space instead of `T`,
/// fractional seconds, `Z` — times are kept naive, like the logs'), or Unix seconds.
pub fn scrape_time(s: &str) -> Option<Ts> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if s.bytes().all(|c| c.is_ascii_digit() || c == b'.') {
        let secs: f64 = s.parse().ok()?;
        return Some(Ts((secs * 1000.0).round() as i64));
    }
    iso(s)
}

/// `YYYY-MM-DD[T ]HH:MM:SS[.fff][Z]` (also the compact `YYYYMMDDTHHMMSS` of file names).
pub fn iso(s: &str) -> Option<Ts> {
    let s = s.trim_end_matches('Z');
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_digit).collect();
    let compact = !s.contains('-');
    if compact && digits.len() != 14 {
        return None;
    }
    let (date, time) = s.split_once(['T', ' ', '_'])?;
    let d: Vec<&str> = if compact {
        vec![date.get(..4)?, date.get(4..6)?, date.get(6..8)?]
    } else {
        date.split('-').collect()
    };
    let t: Vec<&str> = if compact {
        vec![time.get(..2)?, time.get(2..4)?, time.get(4..6)?]
    } else {
        time.split(':').collect()
    };
    if d.len() != 3 || t.len() != 3 {
        return None;
    }
    let y: i32 = d[0].parse().ok()?;
    let (m, day): (u8, u8) = (d[1].parse().ok()?, d[2].parse().ok()?);
    let days = days_from_civil(y, m, day)?;
    let (h, mi): (u32, u32) = (t[0].parse().ok()?, t[1].parse().ok()?);
    let sec: f64 = t[2].parse().ok()?;
    if h > 23 || mi > 59 || !(0.0..61.0).contains(&sec) {
        return None;
    }
    let ms = (h * 3600 + mi * 60) * 1000 + (sec * 1000.0).round() as u32;
    Some(Ts::from_parts(days, ms))
}

/// The family a sample belongs to: histogram and summary series, and the `_created` /
/// `_total` of counters, share their family's name.
pub fn family<'a>(
    name: &'a str,
    types: &impl Fn(&str) -> Option<MetricType>,
) -> (&'a str, &'a str) {
    if types(name).is_some() {
        return (name, "");
    }
    for suffix in ["_bucket", "_count", "_sum", "_created", "_total"] {
        if let Some(base) = name.strip_suffix(suffix) {
            if types(base).is_some() {
                return (base, suffix);
            }
        }
    }
    (name, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples() {
        let l = parse_line(
            r#"vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-8B"} 2.345678e+06"#,
        )
        .unwrap();
        let Line::Sample(s) = l else { panic!("{l:?}") };
        assert_eq!(s.name, "vllm:prompt_tokens_total");
        assert_eq!(s.value, 2_345_678.0);
        assert_eq!(s.label("engine").as_deref(), Some("0"));
        assert_eq!(s.label("model_name").as_deref(), Some("Qwen/Qwen3-8B"));
        let Ok(Line::Sample(s)) = parse_line(r#"x_bucket{le="+Inf"} +Inf 1778371200000"#) else {
            panic!()
        };
        assert_eq!(
            (s.value, s.timestamp_ms),
            (f64::INFINITY, Some(1_778_371_200_000))
        );
        let Ok(Line::Sample(s)) = parse_line("up NaN") else {
            panic!()
        };
        assert!(s.value.is_nan() && s.labels.is_empty());
        let Ok(Line::Sample(s)) = parse_line(r#"m{path="a \"b\" c\\",x="}{"} 1"#) else {
            panic!()
        };
        assert_eq!(s.label("path").as_deref(), Some(r#"a "b" c\"#));
        assert_eq!(s.label("x").as_deref(), Some("}{"));
        for bad in ["m{a=\"1\" 2", "m 1 2 3", "m{a=1} 2", "m abc", "9m 1", "m"] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn comments() {
        assert_eq!(
            parse_line("# TYPE vllm:num_requests_running gauge").unwrap(),
            Line::Type {
                name: "vllm:num_requests_running",
                kind: MetricType::Gauge
            }
        );
        assert_eq!(
            parse_line("# HELP sglang:x Multiprocess metric").unwrap(),
            Line::Help { name: "sglang:x" }
        );
        assert_eq!(
            parse_line("# scrape 2026-05-10T00:00:10Z").unwrap(),
            Line::Scrape(iso("2026-05-10 00:00:10"))
        );
        assert_eq!(
            parse_line("# scrape: 1778371210").unwrap(),
            Line::Scrape(Some(Ts(1_778_371_210_000)))
        );
        assert_eq!(iso("20260510T000010"), iso("2026-05-10T00:00:10.000"));
        assert_eq!(parse_line("# anything").unwrap(), Line::Comment);
        // found by fuzzing: a compact-looking time with a multi-byte character
        assert_eq!(scrape_time(".4匜}..4"), None);
        assert_eq!(scrape_time("2026051匜T000010"), None);
        assert_eq!(parse_line("").unwrap(), Line::Comment);
    }
}
