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

    /// A `# TYPE` line's word (anything else is untyped).
    pub fn parse(s: &str) -> MetricType {
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

/// A sample value: Python `repr` / Go float text. The infinities and NaN in every spelling
/// Go's `ParseFloat` takes and the reference parsers accept (`NaN`, `nan`, `+Inf`, `-Inf`,
/// `inf`, `Infinity`, any case, signed).
pub fn value(s: &str) -> Option<f64> {
    let digits = s
        .bytes()
        .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c));
    let word = s.trim_start_matches(['+', '-']);
    let special = ["nan", "inf", "infinity"]
        .iter()
        .any(|w| word.eq_ignore_ascii_case(w));
    if s.is_empty() || !(digits || special) {
        return None;
    }
    s.parse().ok()
}

/// A sample's timestamp in milliseconds since the epoch. The Prometheus text format writes
/// integer milliseconds; OpenMetrics writes seconds with a fraction (`1520879607.789`). An
/// integer is read as the text format defines it, milliseconds: OpenMetrics' integer seconds
/// cannot be told from them on one line.
pub fn timestamp_ms(t: &str) -> Option<i64> {
    if let Ok(n) = t.parse::<i64>() {
        return Some(n);
    }
    let secs: f64 = t.parse().ok().filter(|v: &f64| v.is_finite())?;
    Some((secs * 1000.0).round() as i64)
}

/// A quoted name (Prometheus 3.x: UTF-8 metric and label names): the text between the
/// quotes, escapes kept, and what follows the closing quote.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let r = s.strip_prefix('"')?;
    let end = closing_quote(r)?;
    Some((&r[..end], &r[end + 1..]))
}

/// A metric or label name, plain or quoted, and what follows it.
fn any_name(s: &str) -> Option<(&str, &str)> {
    match metric_name(s) {
        Ok((rest, name)) => Some((name, rest)),
        Err(_) => quoted(s),
    }
}

fn sample(line: &str) -> Result<Sample<'_>, &'static str> {
    // `name{…}`, `name {…}` (a blank before the brace is allowed), or `{"name", …}`
    let (name, rest) = if line.starts_with('{') {
        (None, line)
    } else {
        let (rest, name) = metric_name(line).map_err(|_| "not a metric name")?;
        (Some(name), rest)
    };
    let braced = rest.trim_start_matches([' ', '\t']);
    let (labels, rest) = if braced.starts_with('{') {
        label_block(braced)?
    } else {
        ("", rest)
    };
    // Prometheus 3.x: the quoted name may stand anywhere in the braces, once
    let named = label_set(labels).ok_or("bad label set")?;
    let name = match (name, named) {
        (Some(n), None) => n,
        (None, Some(n)) => n,
        (Some(_), Some(_)) => return Err("two metric names"),
        (None, None) => return Err("not a metric name"),
    };
    // OpenMetrics: an exemplar after ` # ` (`# {trace_id="…"} 0.5 [time]`)
    let (rest, exemplar) = match rest.split_once('#') {
        Some((r, e)) => (r, Some(e)),
        None => (rest, None),
    };
    if let Some(e) = exemplar {
        let e = e.trim_start();
        let (l, after) = e
            .starts_with('{')
            .then(|| label_block(e).ok())
            .flatten()
            .ok_or("bad exemplar")?;
        let mut parts = after.split_ascii_whitespace();
        let ok = labels_valid(l)
            && parts.next().and_then(value).is_some()
            && parts.next().is_none_or(|t| timestamp_ms(t).is_some())
            && parts.next().is_none();
        if !ok {
            return Err("bad exemplar");
        }
    }
    let mut parts = rest.split_ascii_whitespace();
    let v = parts.next().ok_or("no value")?;
    let value = value(v).ok_or("bad value")?;
    let timestamp_ms = match parts.next() {
        None => None,
        Some(t) => Some(timestamp_ms(t).ok_or("bad timestamp")?),
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

/// One `name="value"` item at the start of `s` (blanks allowed around `=`; the name plain
/// or quoted): the name, the raw value and what follows.
fn label_item(s: &str) -> Option<(&str, &str, &str)> {
    let (key, r) = any_name(s)?;
    let r = r.trim_start().strip_prefix('=')?.trim_start();
    let (val, r) = quoted(r)?;
    Some((key, val, r))
}

/// One item of a label block: a label, or (Prometheus 3.x) the quoted metric name alone.
enum Item<'a> {
    Label(&'a str, &'a str),
    Name(&'a str),
}

/// The item at the start of `s` and what follows it.
fn item(s: &str) -> Option<(Item<'_>, &str)> {
    if let Some((key, val, r)) = label_item(s) {
        // `promtool tsdb dump` and the HTTP API name the metric as a label:
        // `{__name__="vllm_generation_tokens_total", engine="0"} 5900 1796479669338`
        if key == "__name__" {
            return Some((Item::Name(val), r));
        }
        return Some((Item::Label(key, val), r));
    }
    let (name, r) = quoted(s)?;
    Some((Item::Name(name), r))
}

/// Checks a label block: items separated by commas (a trailing comma is allowed, as the text
/// format permits), no label named twice (its value would be ambiguous), at most one quoted
/// metric name. `None` when the block is malformed; else the metric name it holds, if any.
fn label_set(s: &str) -> Option<Option<&str>> {
    let mut name = None;
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let (it, r) = item(rest)?;
        match it {
            Item::Name(n) if name.is_none() => name = Some(n),
            Item::Name(_) => return None,
            Item::Label(key, _) => {
                let before = &s[..s.len() - rest.len()];
                if labels(before).any(|(k, _)| k == key) {
                    return None;
                }
            }
        }
        rest = r.trim_start();
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start();
        } else if !rest.is_empty() {
            return None;
        }
    }
    Some(name)
}

/// Whether a label block is well formed and names no metric (see [`label_set`]).
fn labels_valid(s: &str) -> bool {
    label_set(s) == Some(None)
}

/// Index of the quote closing a label value that starts at `s[0]`.
fn closing_quote(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            // any escaped character: the text format has `\\`, `\"` and `\n`, and
            // OpenMetrics' parsers keep others (`\z`) as they are
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// The `(name, raw value)` pairs of a label block (values still escaped; a quoted name
/// without its quotes; a quoted metric name in the block left out).
pub fn labels(s: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut rest = s;
    std::iter::from_fn(move || loop {
        rest = rest.trim_start_matches([',', ' ', '\t']);
        let (it, r) = item(rest)?;
        rest = r;
        if let Item::Label(k, v) = it {
            return Some((k, v));
        }
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
        if let Some((name, rest)) = any_name(rest) {
            return Line::Type {
                name,
                kind: MetricType::parse(rest.trim()),
            };
        }
    }
    if let Ok((rest, _)) = word("HELP") {
        if let Some((name, _)) = any_name(rest) {
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

/// A metric name as the engines write it (`vllm:…`, `sglang:…`), whoever rewrote it on the way.
/// Exporters and bridges that allow no `:` in names write `sglang_num_running_reqs`,
/// `vllm_num_requests_running` (OpenTelemetry collectors, StatsD bridges; users of
/// inference-perf lost every SGLang metric to this, its issue 600); Ray puts `ray_` in front
/// of every metric it exports, so vLLM under Ray Serve LLM shows as `ray_vllm:…` or, with the
/// colon rewritten, `ray_vllm_…`, and SGLang as `ray_serve_sglang_…` / `ray_sglang_…`. Names
/// of other programs come back as they are.
pub fn engine_name(name: &str) -> std::borrow::Cow<'_, str> {
    use std::borrow::Cow;
    let bare = ["ray_serve_", "ray_"]
        .iter()
        .find_map(|p| {
            let rest = name.strip_prefix(p)?;
            (rest.starts_with("vllm") || rest.starts_with("sglang")).then_some(rest)
        })
        .unwrap_or(name);
    for engine in ["vllm", "sglang"] {
        if let Some(rest) = bare.strip_prefix(engine) {
            if rest.starts_with(':') {
                return if bare.len() == name.len() {
                    Cow::Borrowed(name)
                } else {
                    Cow::Borrowed(bare)
                };
            }
            if let Some(metric) = rest.strip_prefix('_').filter(|m| !m.is_empty()) {
                return Cow::Owned(format!("{engine}:{metric}"));
            }
        }
    }
    Cow::Borrowed(name)
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

    /// Forms the reference parsers (prometheus/common's text parser, OpenMetrics) accept.
    #[test]
    fn the_reference_parsers_forms() {
        fn one(l: &str) -> Sample<'_> {
            match parse_line(l) {
                Ok(Line::Sample(s)) => s,
                other => panic!("{l}: {other:?}"),
            }
        }
        // a blank between the name and the brace; blanks around `=`
        let s = one(r#"vllm:num_requests_running {engine = "0", model_name= "m"} 3"#);
        assert_eq!((s.name, s.value), ("vllm:num_requests_running", 3.0));
        assert_eq!(s.label("engine").as_deref(), Some("0"));
        assert_eq!(s.label("model_name").as_deref(), Some("m"));
        // quoted UTF-8 names (Prometheus 3.x), in the braces and in TYPE
        let s = one(r#"{"sglang.gen throughput", "gpu.id"="0"} 12.5"#);
        assert_eq!(s.name, "sglang.gen throughput");
        assert_eq!(s.label("gpu.id").as_deref(), Some("0"));
        assert_eq!(one(r#"{"température"} 1"#).name, "température");
        let s = one(r#"{labelname="value", "my.noncompliant.metric"} 1"#);
        assert_eq!(s.name, "my.noncompliant.metric");
        assert_eq!(s.label("labelname").as_deref(), Some("value"));
        assert_eq!(
            parse_line(r#"# TYPE "my.metric" gauge"#).unwrap(),
            Line::Type {
                name: "my.metric",
                kind: MetricType::Gauge
            }
        );
        // the float spellings
        for (t, v) in [
            ("inf", f64::INFINITY),
            ("+Infinity", f64::INFINITY),
            ("-inf", f64::NEG_INFINITY),
            ("INF", f64::INFINITY),
            ("1e3", 1000.0),
            (".5", 0.5),
        ] {
            assert_eq!(one(&format!("m {t}")).value, v, "{t}");
        }
        for t in ["nan", "NaN", "NAN"] {
            assert!(one(&format!("m {t}")).value.is_nan(), "{t}");
        }
        // OpenMetrics: float-second timestamps, exemplars, `# EOF`
        assert_eq!(
            one("m 1 1520879607.789").timestamp_ms,
            Some(1_520_879_607_789)
        );
        assert_eq!(
            one("m 1 1520879607789").timestamp_ms,
            Some(1_520_879_607_789)
        );
        let s = one(r#"x_bucket{le="0.5"} 3 # {trace_id="KOO5S4vxi0o"} 0.67 1520879607.789"#);
        assert_eq!((s.value, s.label("le").as_deref()), (3.0, Some("0.5")));
        assert_eq!(one(r#"x_total 4 # {} 1"#).value, 4.0);
        assert_eq!(parse_line("# EOF").unwrap(), Line::Comment);
        // `promtool tsdb dump-openmetrics` (2.48+): `%s%s %g %.3f`, labels without spaces,
        // `{}` for a series of no label but its name
        let s = one(
            r#"vllm_generation_tokens_total{engine="0",job="vllm"} 1.234567e+06 1778371200.338"#,
        );
        assert_eq!(
            (s.value, s.timestamp_ms),
            (1_234_567.0, Some(1_778_371_200_338))
        );
        assert_eq!(
            one("up{} 1 1778371200.000").timestamp_ms,
            Some(1_778_371_200_000)
        );
        for bad in [
            r#"x_bucket{le="0.5"} 3 # trace 0.67"#,
            r#"x_bucket{le="0.5"} 3 # {a="1"}"#,
            r#"{"a"="b"} 1"#,
            r#"a{a="1",a="2"} 1"#,
            r#"a{"b"} 1"#,
            r#"{"a", "b"} 1"#,
            "m infinit",
            "m 1 nan",
        ] {
            assert!(parse_line(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn engine_names_whoever_rewrote_them() {
        for (raw, name) in [
            ("vllm:num_requests_running", "vllm:num_requests_running"),
            ("sglang_num_running_reqs", "sglang:num_running_reqs"),
            ("sglang_gen_throughput", "sglang:gen_throughput"),
            (
                "vllm_generation_tokens_total",
                "vllm:generation_tokens_total",
            ),
            ("ray_vllm:num_requests_running", "vllm:num_requests_running"),
            ("ray_vllm_num_requests_running", "vllm:num_requests_running"),
            (
                "ray_serve_sglang_num_running_reqs",
                "sglang:num_running_reqs",
            ),
            ("ray_sglang:gen_throughput", "sglang:gen_throughput"),
            (
                "ray_serve_num_http_requests_total",
                "ray_serve_num_http_requests_total",
            ),
            ("process_cpu_seconds_total", "process_cpu_seconds_total"),
            ("vllmx_y", "vllmx_y"),
            ("vllm_", "vllm_"),
        ] {
            assert_eq!(engine_name(raw), name, "{raw}");
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
