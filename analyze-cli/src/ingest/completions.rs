//! Reading JSON inputs (completions JSONL, or a single JSON document) into compact rows,
//! with every line accounted for: parsed, other (blank lines, JSON that holds no completion
//! fields), malformed (invalid JSON, non-UTF-8, a truncated last line).

use crate::ingest::inputs::Skipped;
use crate::ingest::scan::{Tally, SAMPLES};
use rayon::prelude::*;
use tokstat_parsers::completion::{
    read_record_into, read_record_line, Finish, Paths, Record, Shape,
};
use tokstat_parsers::guard::Guard;
use tokstat_parsers::json::Scanner;
use tokstat_parsers::loadgen::{self, Layout, Run};
use tokstat_parsers::scan::{self, lines, Chunk};
use tokstat_parsers::source::{Data, Input, Shrank, Source};
use tokstat_parsers::stamp::Calendar;
use tokstat_parsers::text::{without_bom, BOM};

/// A count that is usually present, in 4 bytes (`u32::MAX` = absent). Token counts and
/// character counts of one output fit easily; a row stays 32 bytes, so a million
/// completions cost 28 MB whatever the length of their texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Count(u32);

impl Count {
    pub const NONE: Count = Count(u32::MAX);

    pub fn new(v: Option<u64>) -> Count {
        v.map_or(
            Count::NONE,
            |x| Count(x.min(u64::from(u32::MAX - 1)) as u32),
        )
    }

    pub fn get(self) -> Option<u64> {
        (self != Count::NONE).then_some(u64::from(self.0))
    }
}

/// One completion (one choice), owned and small: what the analyses need.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct CompletionRow {
    pub shape: Shape,
    pub finish: Finish,
    pub prompt_tokens: Count,
    pub completion_tokens: Count,
    pub reasoning_tokens: Count,
    pub output_chars: Count,
    pub cap_hint: Count,
    /// Seconds (NaN = absent).
    pub latency_s: f32,
    /// When the request was created, Unix seconds (`created` of OpenAI responses).
    pub created: Count,
}

impl CompletionRow {
    /// `created`, Unix seconds.
    pub fn created(&self) -> Option<u64> {
        self.created.get()
    }

    pub fn latency(&self) -> Option<f64> {
        (!self.latency_s.is_nan()).then_some(f64::from(self.latency_s))
    }
}

/// Rows and tally of a chunk (or a file).
#[derive(Debug, Default)]
pub struct JsonPart {
    pub rows: Vec<CompletionRow>,
    pub tally: Tally,
    /// Choices beyond the per-record limit, counted rather than dropped silently.
    pub dropped_choices: u64,
    /// Benchmark runs (when the input is a benchmark result file).
    pub runs: Vec<Run>,
    /// JSON records of no shape tokstat knows (counted as `other` lines): the user may point
    /// at their fields with `--tokens-path` / `--finish-path`.
    pub unknown: u64,
}

impl JsonPart {
    /// Adds a later part of the same input.
    pub fn append(&mut self, p: JsonPart) {
        self.tally.merge(&p.tally);
        self.rows.extend(p.rows);
        self.dropped_choices += p.dropped_choices;
        self.runs.extend(p.runs);
        self.unknown += p.unknown;
    }
}

fn malformed(t: &mut Tally, line: u64, why: &'static str) {
    t.total += 1;
    t.malformed += 1;
    if t.samples.len() < SAMPLES {
        t.samples.push((line, why));
    }
}

/// Reads one record line into `part`.
fn record<'a>(
    part: &mut JsonPart,
    rec: &mut Record<'a>,
    raw: &'a [u8],
    line_no: u64,
    last: bool,
    paths: &Paths,
) {
    let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
    if raw.iter().all(u8::is_ascii_whitespace) {
        part.tally.total += 1;
        part.tally.other += 1;
        return;
    }
    // the scanner checks the UTF-8 of every string it passes, and JSON allows only ASCII
    // outside strings: a line it accepts is UTF-8, and one it rejects is looked at again
    match read_record_into(raw, paths, rec) {
        Err(_) if tokstat_parsers::text::utf8(raw).is_none() => {
            malformed(&mut part.tally, line_no, "not UTF-8")
        }
        Err(e) => {
            let why = if last
                && matches!(
                    e.what,
                    "unexpected end"
                        | "unterminated string"
                        | "expected `,` or `}`"
                        | "expected `,` or `]`"
                ) {
                "truncated last line (a writer still running?)"
            } else {
                e.what
            };
            malformed(&mut part.tally, line_no, why)
        }
        Ok(()) => add_rows(part, rec),
    }
}

/// Tallies a record read whole, and keeps its rows.
fn add_rows(part: &mut JsonPart, rec: &Record<'_>) {
    part.tally.total += 1;
    part.dropped_choices += rec.dropped_choices as u64;
    let rows = rec.rows();
    let empty = rows.iter().all(|c| {
        c.finish == Finish::Unknown
            && c.completion_tokens.is_none()
            && c.output_chars.is_none()
            && c.error.is_none()
            && c.prompt_tokens.is_none()
    });
    if empty {
        part.tally.other += 1;
        part.unknown += 1;
        return;
    }
    part.tally.parsed += 1;
    for c in rows {
        part.rows.push(CompletionRow {
            shape: c.shape,
            finish: c.finish,
            prompt_tokens: Count::new(c.prompt_tokens),
            completion_tokens: Count::new(c.completion_tokens),
            reasoning_tokens: Count::new(c.reasoning_tokens),
            output_chars: Count::new(c.output_chars),
            cap_hint: Count::new(c.cap_hint),
            latency_s: c.latency_s.map_or(f32::NAN, |x| x as f32),
            created: Count::new(
                c.created
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .map(|t| t as u64),
            ),
        });
    }
}

/// Reads the record on the first line of `rest` (the rest of a chunk) into `part` and
/// returns the line's length. The parse finds the line's end itself, so the bytes are not
/// searched for the newline first; a line that is not a record is read again on its own, so
/// that its tally and message are exactly those of [`record`].
fn record_at<'a>(
    part: &mut JsonPart,
    rec: &mut Record<'a>,
    rest: &'a [u8],
    line_no: u64,
    unterminated: bool,
    paths: &Paths,
) -> usize {
    // a byte order mark can only begin a file, but no record begins with one either
    if let Some(r) = rest.strip_prefix(BOM) {
        return BOM.len() + record_at(part, rec, r, line_no, unterminated, paths);
    }
    let first = rest
        .iter()
        .position(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\x0c'));
    let blank = match first {
        None => Some(rest.len()),
        Some(k) if rest[k] == b'\n' => Some(k),
        Some(_) => None,
    };
    if let Some(len) = blank {
        part.tally.total += 1;
        part.tally.other += 1;
        return len;
    }
    match read_record_line(rest, paths, rec) {
        Ok(len) => {
            add_rows(part, rec);
            len
        }
        Err(e) => {
            // no newline lies before the error: the line ends at the next one
            let at = e.at.min(rest.len());
            let len = memchr::memchr(b'\n', &rest[at..]).map_or(rest.len(), |k| at + k);
            let last = unterminated && len == rest.len();
            record(part, rec, &rest[..len], line_no, last, paths);
            len
        }
    }
}

fn chunk_rows(chunk: Chunk<'_>, paths: &Paths) -> JsonPart {
    let mut part = JsonPart::default();
    // only the file's last line can lack its newline: that is where a running writer stops
    let unterminated = !chunk.bytes.ends_with(b"\n");
    let mut rec = Record {
        rows: Vec::new(),
        dropped_choices: 0,
    };
    let (bytes, mut pos, mut n) = (chunk.bytes, 0, 0);
    while pos < bytes.len() {
        n += 1;
        let line_no = chunk.first_line + n;
        pos += record_at(
            &mut part,
            &mut rec,
            &bytes[pos..],
            line_no,
            unterminated,
            paths,
        ) + 1;
    }
    part
}

/// The bytes of a stream sniffed before it is read (`Source::head`).
const HEAD: usize = 64 * 1024;

/// Whether a JSON value stands alone on the line.
fn whole_value(line: &[u8]) -> bool {
    let mut sc = Scanner::new(line);
    sc.skip().and_then(|_| sc.end()).is_ok()
}

/// Whether the input is one JSON document spread over lines (a pretty-printed response, a
/// bench result) rather than one record per line, from its first lines (`text`; `cut`: the
/// text is the head of a longer stream, and its last line may be cut). A first line that
/// is no whole value starts a document, unless the next two lines are whole records: a JSONL
/// file cut at the front (`tail -c`). A first line longer than the head of a stream is a
/// record (a document's first line is short), or an array of them written on one line.
fn is_document(text: &[u8], cut: bool) -> bool {
    let text = without_bom(text);
    let mut lines = text
        .split(|&c| c == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    if cut && !text.contains(&b'\n') {
        return first.starts_with(b"[");
    }
    if whole_value(first) {
        return false;
    }
    let next: Vec<&[u8]> = lines.take(2).collect();
    !(next.len() == 2 && next.iter().all(|l| l.starts_with(b"{") && whole_value(l)))
}

/// Reads a JSON input into rows. JSONL is scanned in parallel chunks; a single document is
/// read whole (an array of records, or one record).
pub fn read_json(input: &Input, mut src: Source, paths: &Paths) -> (JsonPart, Option<Skipped>) {
    let name = input.display();
    let head = src.head().unwrap_or_default();
    // the first lines whole where the file is at hand: a first record may be longer than the
    // head (long reasoning outputs); a stream has only its head
    let (text, cut): (&[u8], bool) = match src.data.at_hand() {
        Some(all) => (all, false),
        None => (&head, head.len() >= HEAD),
    };
    if let Some(layout) = loadgen::yaml::sniff(text) {
        return read_results(&name, &input.stem(), layout, Text::Yaml, src);
    }
    if let Some(layout) = loadgen::csv::sniff(text) {
        return read_results(&name, &input.stem(), layout, Text::Csv, src);
    }
    let document = is_document(text, cut);
    let first = without_bom(text)
        .split(|&c| c == b'\n')
        .map(<[u8]>::trim_ascii)
        .find(|l| !l.is_empty())
        .unwrap_or(b"");
    if let Some(layout) = loadgen::sniff(if document { &head } else { first }) {
        return read_results(&name, &input.stem(), layout, Text::Json, src);
    }
    if document {
        return read_document(&name, src, paths);
    }
    let mut part = JsonPart::default();
    let result = scan::scan(
        src.data,
        Calendar::new(1970, 0),
        scan::Mode::RECORDS,
        |c| (chunk_rows(c, paths), c.calendar),
        |mut p: JsonPart| {
            // chunk line numbers are relative: add the lines before this chunk
            for s in &mut p.tally.samples {
                s.0 += part.tally.total;
            }
            part.append(p);
        },
    );
    let err = result
        .err()
        .map(|e| Skipped::read_error(&name, part.tally.total, &e));
    (part, err)
}

fn all_bytes(name: &str, src: Source) -> Result<Vec<u8>, Skipped> {
    src.data.read_all().map_err(|e| Skipped {
        source: name.to_string(),
        why: format!("cannot read: {e}"),
        failed: true,
        partly_read: false,
    })
}

/// How a result file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Text {
    Json,
    Yaml,
    Csv,
}

/// A load generator's result file of `layout` (see [`tokstat_parsers::loadgen`]): vLLM's
/// and SGLang's one run per line or per file, AIPerf's records one request per line, every
/// other tool's one document (written as `text_kind`: JSON, YAML, CSV). Every line is accounted for: a document read is all parsed
/// lines; one that cannot be read is all malformed, and the file is listed as skipped with
/// the reason (a result file from which nothing can be read is never a run of 0 requests).
fn read_results(
    name: &str,
    stem: &str,
    layout: Layout,
    text_kind: Text,
    src: Source,
) -> (JsonPart, Option<Skipped>) {
    let bytes = match all_bytes(name, src) {
        Ok(b) => b,
        Err(sk) => return (JsonPart::default(), Some(sk)),
    };
    let mut part = JsonPart::default();
    let total_lines = scan::count_lines(&bytes);
    let text = without_bom(&bytes);
    let whole = text.trim_ascii();
    let tool = layout.tool().name();
    if let Some(what) = layout.unread() {
        // recognised: every line is accounted for as other, and the report says what it is
        part.tally.total = total_lines;
        part.tally.other = total_lines;
        return (
            part,
            Some(Skipped {
                source: name.to_string(),
                why: format!("recognised, not read: {what}"),
                failed: false,
                partly_read: false,
            }),
        );
    }
    if layout == Layout::Vllm && !is_document(whole, false) {
        for (i, l) in lines(text).enumerate() {
            let l = l.trim_ascii();
            if l.is_empty() {
                continue;
            }
            match loadgen::vllm::read_run(l) {
                Ok(run) => {
                    part.tally.parsed += 1;
                    part.runs.push(run);
                }
                Err(e) => sample(&mut part.tally, i as u64 + 1, e.what),
            }
        }
    } else if layout.per_line() {
        let mut run = Run::new(layout.tool(), stem);
        // AIPerf's records stamp nanoseconds since the epoch
        run.epoch = true;
        for (i, l) in lines(text).enumerate() {
            let l = l.trim_ascii();
            if l.is_empty() {
                continue;
            }
            let Ok(v) = tokstat_parsers::json::value::parse(l) else {
                sample(&mut part.tally, i as u64 + 1, "not JSON");
                continue;
            };
            match loadgen::aiperf::record(&v, run.requests.len() as u64) {
                Ok(loadgen::aiperf::Record::Request(r)) => {
                    part.tally.parsed += 1;
                    run.requests.push(r);
                }
                // a warm-up request: recognised, not counted (`other`)
                Ok(loadgen::aiperf::Record::OtherPhase) => {}
                Err(_) => sample(&mut part.tally, i as u64 + 1, "not an AIPerf record"),
            }
        }
        if !run.requests.is_empty() {
            part.runs.push(run);
        }
    } else {
        let runs = match text_kind {
            Text::Yaml => loadgen::yaml::parse(whole)
                .map_err(|e| format!("not YAML: {e}"))
                .and_then(|v| loadgen::read_value(layout, &v, stem).map_err(|e| e.to_string())),
            Text::Csv => loadgen::csv::read(layout, whole).map_err(|e| e.to_string()),
            Text::Json => loadgen::read(layout, whole, stem).map_err(|e| e.to_string()),
        };
        // a file of a tool's layout of which no figure is read is refused with what it was
        // taken for, never shown as a run of dashes
        let read_any = |r: &Run| {
            !r.requests.is_empty()
                || r.server.as_ref().is_some_and(|s| s.measured())
                || r.scalars
                    .iter()
                    .any(|(n, _)| loadgen::FIGURES.iter().any(|(f, _)| f == n))
        };
        if let Ok(runs) = &runs {
            if !runs.is_empty() && !runs.iter().any(read_any) {
                part.tally = Tally {
                    total: total_lines,
                    other: total_lines,
                    ..Tally::default()
                };
                return (
                    part,
                    Some(Skipped {
                        source: name.to_string(),
                        why: if runs.iter().any(|r| r.server.is_some()) {
                            format!(
                                "taken for {tool}'s summary of the server's metrics, but every figure in it is 0 or NaN, which is what {tool} writes where a query found no series (was Prometheus scraping the server, under the names it queries?): not read"
                            )
                        } else {
                            format!(
                                "taken for a {tool} result file, but it holds none of the figures tokstat reads (request counts, throughput, latencies): not read"
                            )
                        },
                        failed: true,
                        partly_read: false,
                    }),
                );
            }
        }
        match runs {
            Ok(runs) => {
                part.tally.parsed = total_lines;
                // a run the file gives no name is named after the file
                let own = stem.strip_suffix("_genai_perf").unwrap_or(stem);
                part.runs.extend(runs.into_iter().map(|mut r| {
                    if r.name.is_empty() {
                        r.name = own.to_string();
                    }
                    r
                }));
            }
            Err(e) => {
                part.tally = Tally {
                    total: total_lines,
                    malformed: total_lines,
                    samples: vec![(1, "a result file that cannot be read")],
                    ..Tally::default()
                };
                return (
                    part,
                    Some(Skipped {
                        source: name.to_string(),
                        why: format!("{tool} result file, not read: {e}"),
                        failed: true,
                        partly_read: false,
                    }),
                );
            }
        }
    }
    // every line belongs to a run, a blank, a recognised line with no result, or a bad run
    part.tally.total = total_lines;
    if part.tally.parsed == 1
        && part.tally.malformed == 0
        && part.runs.len() == 1
        && !layout.per_line()
    {
        part.tally.parsed = total_lines;
    }
    part.tally.other = total_lines.saturating_sub(part.tally.parsed + part.tally.malformed);
    (part, None)
}

fn sample(t: &mut Tally, line: u64, why: &'static str) {
    t.malformed += 1;
    if t.samples.len() < SAMPLES {
        t.samples.push((line, why));
    }
}

/// A single JSON document: an array of records (a pretty-printed `json.dump` of a whole
/// job can be hundreds of megabytes: read where it is mapped, its records on all cores), or
/// one record.
fn read_document(name: &str, src: Source, paths: &Paths) -> (JsonPart, Option<Skipped>) {
    let (mapped, mut owned, shared);
    let bytes: &[u8] = match src.data {
        Data::Mapped(m) => {
            mapped = m;
            &mapped
        }
        Data::Owned(v) => {
            owned = v;
            &owned
        }
        Data::Shared(v) => {
            shared = v;
            &shared
        }
        Data::Made(m) => {
            owned = m.make_all();
            &owned
        }
        Data::Stream(mut r) => {
            owned = Vec::new();
            if let Err(e) = std::io::Read::read_to_end(&mut r, &mut owned) {
                return (
                    JsonPart::default(),
                    Some(Skipped {
                        source: name.to_string(),
                        why: format!("cannot read: {e}"),
                        failed: true,
                        partly_read: false,
                    }),
                );
            }
            &owned
        }
    };
    let guard = Guard::new(bytes);
    let mut part = JsonPart::default();
    let lines_in_file = scan::count_lines(bytes);
    let text = without_bom(bytes.trim_ascii()).trim_ascii();
    let read = |spans: &[(usize, usize)]| {
        let mut part = JsonPart::default();
        let mut rec = Record {
            rows: Vec::new(),
            dropped_choices: 0,
        };
        for &(a, b) in spans {
            record(&mut part, &mut rec, &text[a..b], 1, false, paths);
        }
        part
    };
    if text.first() == Some(&b'[') {
        let mut sc = Scanner::new(text);
        let mut spans = Vec::new();
        let ok = sc.array(|sc, _| {
            let start = sc.pos();
            sc.skip()?;
            spans.push((start, sc.pos()));
            Ok(())
        });
        if ok.and_then(|_| sc.end()).is_err() {
            malformed(&mut part.tally, 1, "invalid JSON document");
        }
        let parts: Vec<JsonPart> = spans.par_chunks(256).map(read).collect();
        for p in parts {
            part.append(p);
        }
    } else {
        part = read(&[(0, text.len())]);
    }
    if let Some(at) = guard.fault() {
        let why = Shrank::error(at, bytes.len()).to_string();
        return (
            JsonPart::default(),
            Some(Skipped {
                source: name.to_string(),
                why: format!("not read: {why}"),
                failed: true,
                partly_read: false,
            }),
        );
    }
    // the document's lines are one record: count them all as its lines
    let extra = lines_in_file.saturating_sub(part.tally.total);
    part.tally.total += extra;
    if part.tally.parsed > 0 {
        part.tally.parsed += extra;
    } else if part.tally.malformed > 0 {
        part.tally.malformed += extra;
    } else {
        part.tally.other += extra;
    }
    (part, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: split at every newline first, then read each line on its own.
    fn line_by_line(bytes: &[u8], paths: &Paths) -> JsonPart {
        let mut part = JsonPart::default();
        let mut rec = Record {
            rows: Vec::new(),
            dropped_choices: 0,
        };
        let unterminated = !bytes.ends_with(b"\n");
        let mut it = lines(bytes).enumerate().peekable();
        while let Some((i, raw)) = it.next() {
            let last = unterminated && it.peek().is_none();
            record(&mut part, &mut rec, raw, i as u64 + 1, last, paths);
        }
        part
    }

    /// Chunks read by the parse's own line ends give the same rows, tally and messages as
    /// splitting at newlines first, on every kind of awkward line.
    #[test]
    fn parse_found_line_ends_equal_newline_splitting() {
        let good = r#"{"finish_reason": "stop", "usage": {"completion_tokens": 5}}"#;
        let lines = [
            good,
            "",
            "   ",
            "\t\r",
            "\x0c",
            r#"{"finish_reason": "length", "usage": {"completion_tokens": 9}}  "#,
            r#"{"finish_reason": "stop",    "usage": {"completion_tokens": 3}}"#,
            r#"{"a": "#,
            r#"1}"#,
            r#"{"a": "unterminated"#,
            r#"{"x": 1} trailing"#,
            r#"{"text": "tab	inside"}"#,
            "{\"bad\": \"\u{7f}\\q\"}",
            r#"[1, 2"#,
            "not json",
            r#"{"finish_reason": "stop", "usage": {"completion_tokens": 7}}"#,
        ];
        let paths = Paths::default();
        for ending in ["\n", "\r\n"] {
            for cut in [0usize, 1, 12] {
                let mut text = lines.join(ending).into_bytes();
                // with and without a final newline, and a last line cut short
                text.truncate(text.len() - cut);
                for bytes in [text.clone(), [text.as_slice(), b"\n"].concat()] {
                    let chunk = Chunk {
                        bytes: &bytes,
                        first_line: 0,
                        calendar: Calendar::new(1970, 0),
                    };
                    let ours = chunk_rows(chunk, &paths);
                    let want = line_by_line(&bytes, &paths);
                    assert_eq!(
                        ours.tally,
                        want.tally,
                        "{:?}",
                        String::from_utf8_lossy(&bytes)
                    );
                    assert_eq!(ours.tally.samples, want.tally.samples);
                    // (as text: an absent latency is NaN, never equal to itself)
                    assert_eq!(format!("{:?}", ours.rows), format!("{:?}", want.rows));
                    assert!(ours.tally.malformed >= 7 && ours.tally.parsed >= 3);
                }
            }
        }
    }
}
