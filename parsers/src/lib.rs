//! `tokstat-parsers`: zero-copy, version-tolerant parsers for what LLM inference runs leave
//! behind — SGLang and vLLM server logs first.
//!
//! The path of a byte: [`source`] opens an input (mmap, or a gzip / zstd / stdin stream) and
//! cuts it into whole-line chunks; [`scan`] runs a parser over the chunks on all cores and
//! hands results back in file order; [`parse_line`] turns one line into a [`record::Line`]
//! that borrows the line: [`prefix`] strips what loggers and wrappers put in front,
//! [`sglang`] and [`vllm`] read the message. Nothing here knows about tables or reports.

pub mod bench;
pub mod completion;
pub mod detect;
pub mod json;
pub mod kv;
pub mod num;
pub mod prefix;
pub mod prometheus;
pub mod record;
pub mod scan;
pub mod sglang;
pub mod source;
pub mod stamp;
pub mod text;
pub mod vllm;

use prefix::{Prefix, Style};
use record::{Body, EventKind, Gauges, Line, StepKind};

/// Parses one raw line (without its `\n`). `scratch` holds the text when the line had to be
/// changed (ANSI codes, invalid UTF-8); the result borrows the line or `scratch`.
pub fn parse_line<'a>(raw: &'a [u8], scratch: &'a mut String) -> Line<'a> {
    let text = prefix::normalize(raw, scratch);
    line_of(text)
}

/// [`parse_line`] for text already known to be UTF-8. `ansi`: whether the line's chunk holds
/// colour codes at all ([`prefix::has_ansi`]; pass `true` when unsure).
pub fn parse_str_line<'a>(raw: &'a str, scratch: &'a mut String, ansi: bool) -> Line<'a> {
    let text = prefix::normalize_str(raw, scratch, ansi);
    line_of(text)
}

/// [`parse_line`], handing the line to `f` where it was built instead of returning it: a
/// step is a few hundred bytes, and the copy into the caller's frame cost more than
/// reading one of its numbers.
#[inline]
pub fn visit_line<'a, R>(
    raw: &'a [u8],
    scratch: &'a mut String,
    f: impl FnOnce(&Line<'a>) -> R,
) -> R {
    let text = prefix::normalize(raw, scratch);
    line_with(text, f)
}

/// [`parse_str_line`], handing the line to `f` (see [`visit_line`]).
#[inline]
pub fn visit_str_line<'a, R>(
    raw: &'a str,
    scratch: &'a mut String,
    ansi: bool,
    f: impl FnOnce(&Line<'a>) -> R,
) -> R {
    let text = prefix::normalize_str(raw, scratch, ansi);
    line_with(text, f)
}

/// A line as [`visit_quick_str_line`] hands it over.
pub enum Quick<'l, 'a> {
    /// Parsed whole, as [`visit_str_line`] parses it.
    Line(&'l Line<'a>),
    /// An SGLang decode or prefill batch read only as far as its [`Gauges`]: the step
    /// [`visit_str_line`] would give has this prefix, kind and gauges (and more fields).
    Stats(&'l Prefix<'a>, StepKind, &'l Gauges),
}

/// [`visit_str_line`] for readers that aggregate: an SGLang stats line in the layout of the
/// last one is read into its gauges without building a step (a few hundred bytes, most of
/// them never read by a report); everything else is parsed whole.
#[inline]
pub fn visit_quick_str_line<'a, R>(
    raw: &'a str,
    scratch: &'a mut String,
    ansi: bool,
    f: impl FnOnce(Quick<'_, 'a>) -> R,
) -> R {
    let text = prefix::normalize_str(raw, scratch, ansi);
    let (prefix, msg) = prefix::split(text);
    if matches!(prefix.style, Style::Sglang | Style::Bare) {
        let mut g = Gauges::default();
        if let Some(kind) = sglang::quick_gauges(msg, &mut g) {
            return f(Quick::Stats(&prefix, kind, &g));
        }
    }
    let mut line = Line {
        prefix,
        body: Body::Other,
    };
    classify(prefix.style, prefix.level, msg, &mut line.body);
    f(Quick::Line(&line))
}

/// The line of a normalised text.
fn line_of(text: &str) -> Line<'_> {
    line_with(text, |l| *l)
}

/// The line of a normalised text, lent to `f` from the frame it was built in. Its body is
/// written where it ends up: each copy on the way (through an `Option`, into the line)
/// cost more than reading one of its numbers.
#[inline(always)]
fn line_with<'a, R>(text: &'a str, f: impl FnOnce(&Line<'a>) -> R) -> R {
    let (prefix, msg) = prefix::split(text);
    let mut line = Line {
        prefix,
        body: Body::Other,
    };
    classify(prefix.style, prefix.level, msg, &mut line.body);
    f(&line)
}

fn classify<'a>(style: Style, level: Option<prefix::Level>, msg: &'a str, out: &mut Body<'a>) {
    if matches!(style, Style::Sglang | Style::Bare) && sglang::parse_into(msg, out) {
        return;
    }
    if matches!(style, Style::Vllm | Style::Bare) {
        if let Some(b) = vllm::parse(msg, level) {
            *out = b;
            return;
        }
    }
    // uvicorn: `INFO:     Application startup complete.`
    if msg.starts_with("INFO:") && msg.trim_end().ends_with("Application startup complete.") {
        *out = Body::Event(record::Event {
            engine: None,
            kind: EventKind::ServerReady,
            message: msg,
            count: None,
        });
    }
}
