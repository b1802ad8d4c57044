//! Completion records (docs/formats.md §4): one JSON line in, one row per choice out.
//!
//! Shapes are recognised per record from the keys present — a folder may mix them:
//! OpenAI chat / text completions (`choices`, `usage`), SGLang `/generate` (`meta_info`),
//! vLLM `run-batch` lines (`response.body` holds an OpenAI response), pipeline records with a
//! top-level `finish_reason` and `usage`, and error records. Values are read lazily with the
//! [`json`](crate::json) scanner: the long texts are skipped, except for counting their
//! characters, which is what a record without token counts can still tell.

use crate::json::{JsonError, Scanner, Str};

/// Where a record's fields were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Shape {
    OpenaiChat,
    OpenaiCompletion,
    SglangGenerate,
    VllmBatch,
    /// Pipeline records (top-level `finish_reason` / `usage`) and `--*-path` pointers.
    #[default]
    Custom,
}

impl Shape {
    /// Every shape, in declaration order (`shape as usize` indexes it).
    pub const ALL: [Shape; 5] = [
        Shape::OpenaiChat,
        Shape::OpenaiCompletion,
        Shape::SglangGenerate,
        Shape::VllmBatch,
        Shape::Custom,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Shape::OpenaiChat => "openai_chat",
            Shape::OpenaiCompletion => "openai_completion",
            Shape::SglangGenerate => "sglang_generate",
            Shape::VllmBatch => "vllm_batch",
            Shape::Custom => "custom",
        }
    }
}

/// Why generation stopped, normalised across engines and versions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Finish {
    Stop,
    Length,
    Abort,
    Error,
    ToolCalls,
    ContentFilter,
    #[default]
    Unknown,
}

impl Finish {
    /// Every reason, in declaration order (`finish as usize` indexes it).
    pub const ALL: [Finish; 7] = [
        Finish::Stop,
        Finish::Length,
        Finish::Abort,
        Finish::Error,
        Finish::ToolCalls,
        Finish::ContentFilter,
        Finish::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Finish::Stop => "stop",
            Finish::Length => "length",
            Finish::Abort => "abort",
            Finish::Error => "error",
            Finish::ToolCalls => "tool_calls",
            Finish::ContentFilter => "content_filter",
            Finish::Unknown => "unknown",
        }
    }

    /// Reads a finish reason as engines print it: OpenAI strings, SGLang 0.1.18–0.3.0 strings
    /// (`FINISH_LENGTH: 128`, `FINISH_MATCHED_TOKEN: 2`, `FINISH_ABORT`, `None`).
    /// Returns the reason and, for `FINISH_LENGTH: N`, the cap N.
    pub fn from_text(s: &str) -> (Finish, Option<u64>) {
        let f = match s {
            "stop" | "eos" | "stop_sequence" | "end_turn" => Finish::Stop,
            "length" | "max_tokens" => Finish::Length,
            "abort" | "cancelled" => Finish::Abort,
            "error" => Finish::Error,
            "tool_calls" | "function_call" => Finish::ToolCalls,
            "content_filter" => Finish::ContentFilter,
            _ if s.starts_with("FINISH_LENGTH") => {
                let cap = s
                    .split_once(": ")
                    .and_then(|(_, n)| crate::num::uint(n.trim()));
                return (Finish::Length, cap);
            }
            _ if s.starts_with("FINISH_MATCHED") => Finish::Stop,
            _ if s.starts_with("FINISH_ABORT") => Finish::Abort,
            _ => Finish::Unknown,
        };
        (f, None)
    }
}

/// One output (one choice of a record).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Completion<'a> {
    pub shape: Shape,
    pub id: Option<Str<'a>>,
    /// Choice index within the record (0 when there is one).
    pub choice: u32,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub reasoning_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
    pub finish: Finish,
    /// The finish reason as written (`type` of SGLang's dict form).
    pub finish_raw: Option<Str<'a>>,
    /// A cap the record itself states (SGLang `{"type": "length", "length": 128}`).
    pub cap_hint: Option<u64>,
    pub latency_s: Option<f64>,
    pub created: Option<f64>,
    /// Characters of output text (content plus reasoning), decoded — counted only for rows
    /// without a token count, the one case where they are the measure of length.
    pub output_chars: Option<u64>,
    /// The output texts seen (content, reasoning, text), kept as spans until needed.
    pub texts: [Option<Str<'a>>; 3],
    pub error: Option<Str<'a>>,
}

/// JSON pointers (RFC 6901) to fields of records of an unknown shape.
#[derive(Debug, Clone, Default)]
pub struct Paths {
    pub tokens: Option<Vec<String>>,
    pub finish: Option<Vec<String>>,
}

impl Paths {
    /// Splits `/meta/ntok` into `["meta", "ntok"]` (with `~1` → `/`, `~0` → `~`).
    pub fn pointer(p: &str) -> Vec<String> {
        p.trim_start_matches('/')
            .split('/')
            .map(|s| s.replace("~1", "/").replace("~0", "~"))
            .collect()
    }
}

/// Most choices kept per record; more are counted in [`Record::dropped_choices`].
pub const MAX_CHOICES: usize = 256;

/// The rows of one record.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub rows: Vec<Completion<'a>>,
    pub dropped_choices: usize,
}

impl<'a> Record<'a> {
    pub fn rows(&self) -> &[Completion<'a>] {
        &self.rows
    }
}

#[derive(Default, Clone, Copy)]
struct Usage {
    prompt: Option<u64>,
    completion: Option<u64>,
    reasoning: Option<u64>,
    cached: Option<u64>,
}

fn as_u64(v: Option<f64>) -> Option<u64> {
    v.filter(|x| x.is_finite() && *x >= 0.0).map(|x| x as u64)
}

/// Reads the value of `k` into `u` if `k` is a token count (the names OpenAI `usage` and
/// SGLang `meta_info` share). Returns false, with the value untouched, for any other key.
fn usage_key(sc: &mut Scanner<'_>, k: &Str<'_>, u: &mut Usage) -> Result<bool, JsonError> {
    if k.is("prompt_tokens") {
        u.prompt = as_u64(sc.opt_number()?);
    } else if k.is("completion_tokens") {
        u.completion = as_u64(sc.opt_number()?);
    } else if k.is("reasoning_tokens") {
        u.reasoning = as_u64(sc.opt_number()?).or(u.reasoning);
    } else if k.is("cached_tokens") {
        u.cached = as_u64(sc.opt_number()?);
    } else {
        return Ok(false);
    }
    Ok(true)
}

fn read_usage<'a>(sc: &mut Scanner<'a>, u: &mut Usage) -> Result<(), JsonError> {
    if sc.peek() != Some(b'{') {
        return sc.skip();
    }
    sc.object(|sc, k| {
        if usage_key(sc, &k, u)? {
            Ok(())
        } else if k.is("completion_tokens_details") || k.is("prompt_tokens_details") {
            read_usage(sc, u)
        } else {
            sc.skip()
        }
    })
}

/// A finish reason value: string, SGLang dict `{type, length|matched|message}`, or null.
fn read_finish<'a>(sc: &mut Scanner<'a>, c: &mut Completion<'a>) -> Result<(), JsonError> {
    match sc.peek() {
        Some(b'"') => {
            let s = sc.string()?;
            let (f, cap) = Finish::from_text(&s.decode());
            c.finish = f;
            c.cap_hint = cap.or(c.cap_hint);
            c.finish_raw = Some(s);
        }
        Some(b'{') => sc.object(|sc, k| {
            if k.is("type") {
                if let Some(s) = sc.opt_string()? {
                    c.finish = Finish::from_text(&s.decode()).0;
                    c.finish_raw = Some(s);
                }
            } else if k.is("length") {
                c.cap_hint = as_u64(sc.opt_number()?);
            } else if k.is("message") {
                c.error = sc.opt_string()?.or(c.error);
            } else {
                sc.skip()?;
            }
            Ok(())
        })?,
        _ => {
            sc.skip()?;
            c.finish = Finish::Unknown;
        }
    }
    Ok(())
}

fn add_chars<'a>(c: &mut Completion<'a>, s: Option<Str<'a>>) {
    if let Some(s) = s {
        match c.texts.iter_mut().find(|t| t.is_none()) {
            Some(slot) => *slot = Some(s),
            // a fourth text: count now rather than lose it
            None => c.output_chars = Some(c.output_chars.unwrap_or(0) + s.char_count() as u64),
        }
    }
}

/// Counts the characters of the texts of a row that has no token count.
fn count_chars(c: &mut Completion<'_>) {
    let texts = c.texts.iter().flatten();
    if c.completion_tokens.is_none() && (c.output_chars.is_some() || c.texts[0].is_some()) {
        c.output_chars =
            Some(c.output_chars.unwrap_or(0) + texts.map(|t| t.char_count() as u64).sum::<u64>());
    }
}

/// One choice object of an OpenAI response.
fn read_choice<'a>(
    sc: &mut Scanner<'a>,
    c: &mut Completion<'a>,
    chat: &mut bool,
) -> Result<(), JsonError> {
    if sc.peek() != Some(b'{') {
        return sc.skip();
    }
    sc.object(|sc, k| {
        if k.is("finish_reason") {
            read_finish(sc, c)
        } else if k.is("index") {
            c.choice = as_u64(sc.opt_number()?).unwrap_or(0) as u32;
            Ok(())
        } else if k.is("text") {
            add_chars(c, sc.opt_string()?);
            Ok(())
        } else if k.is("message") {
            *chat = true;
            if sc.peek() != Some(b'{') {
                return sc.skip();
            }
            // vLLM 0.11.1–0.15 prints the reasoning twice (`reasoning` and its deprecated copy
            // `reasoning_content`): count it once
            let mut reasoning_seen = false;
            sc.object(|sc, k| {
                if k.is("content") {
                    add_chars(c, sc.opt_string()?);
                    Ok(())
                } else if k.is("reasoning_content") || k.is("reasoning") {
                    let s = sc.opt_string()?;
                    if !reasoning_seen && s.is_some() {
                        reasoning_seen = true;
                        add_chars(c, s);
                    }
                    Ok(())
                } else {
                    sc.skip()
                }
            })
        } else {
            sc.skip()
        }
    })
}

/// Walks one record (a JSON object) and returns its rows. `paths` adds user pointers.
pub fn read_record<'a>(line: &'a [u8], paths: &Paths) -> Result<Record<'a>, JsonError> {
    let mut rec = Record {
        rows: Vec::new(),
        dropped_choices: 0,
    };
    read_record_into(line, paths, &mut rec)?;
    Ok(rec)
}

/// [`read_record`] into a record the caller reuses line after line, so that reading a chunk
/// allocates nothing per record (the rows vector keeps its capacity).
pub fn read_record_into<'a>(
    line: &'a [u8],
    paths: &Paths,
    rec: &mut Record<'a>,
) -> Result<(), JsonError> {
    read_with(Scanner::new(line), paths, rec).map(|_| ())
}

/// [`read_record_into`] for the record on the first line of `rest` (the rest of a chunk):
/// returns the line's length, found by the parse itself ([`Scanner::line`]). On an error the
/// line's end is at or after the error's position.
pub fn read_record_line<'a>(
    rest: &'a [u8],
    paths: &Paths,
    rec: &mut Record<'a>,
) -> Result<usize, JsonError> {
    read_with(Scanner::line(rest), paths, rec)
}

/// Reads the record `sc` is on; returns where it ends.
fn read_with<'a>(
    mut sc: Scanner<'a>,
    paths: &Paths,
    rec: &mut Record<'a>,
) -> Result<usize, JsonError> {
    rec.rows.clear();
    rec.dropped_choices = 0;
    let mut top = Completion::default();
    let mut usage = Usage::default();
    let mut meta_usage = Usage::default();
    let mut has_choices = false;
    let mut chat = false;
    let mut object_kind: Option<Str<'a>> = None;
    let mut shape_hint: Option<Shape> = None;
    walk(
        &mut sc,
        rec,
        &mut top,
        &mut usage,
        &mut meta_usage,
        &mut has_choices,
        &mut chat,
        &mut object_kind,
        &mut shape_hint,
        0,
    )?;
    sc.end()?;
    let line = sc.taken();
    if paths.tokens.as_ref().is_some_and(|p| !p.is_empty())
        || paths.finish.as_ref().is_some_and(|p| !p.is_empty())
    {
        apply_paths(line, paths, &mut top)?;
        shape_hint = Some(Shape::Custom);
    }
    let shape = shape_hint.unwrap_or(if has_choices {
        if chat || object_kind.is_some_and(|o| o.is("chat.completion")) {
            Shape::OpenaiChat
        } else {
            Shape::OpenaiCompletion
        }
    } else {
        Shape::Custom
    });
    let u = if meta_usage.completion.is_some() || meta_usage.prompt.is_some() {
        meta_usage
    } else {
        usage
    };
    if !has_choices || rec.rows.is_empty() {
        rec.rows.clear();
        rec.rows.push(top);
    }
    let single = rec.rows.len() == 1;
    for c in &mut rec.rows {
        c.shape = shape;
        c.id = c.id.or(top.id);
        c.created = c.created.or(top.created);
        c.latency_s = c.latency_s.or(top.latency_s);
        c.error = c.error.or(top.error);
        c.prompt_tokens = c.prompt_tokens.or(u.prompt);
        c.cached_tokens = c.cached_tokens.or(u.cached);
        if single {
            // with n > 1 the usage sums all choices: no per-choice figure is made up
            c.completion_tokens = c.completion_tokens.or(u.completion);
            c.reasoning_tokens = c.reasoning_tokens.or(u.reasoning);
        }
        if c.error.is_some() && c.finish == Finish::Unknown {
            c.finish = Finish::Error;
        }
        count_chars(c);
    }
    Ok(line.len())
}

#[allow(clippy::too_many_arguments)]
fn walk<'a>(
    sc: &mut Scanner<'a>,
    rec: &mut Record<'a>,
    top: &mut Completion<'a>,
    usage: &mut Usage,
    meta: &mut Usage,
    has_choices: &mut bool,
    chat: &mut bool,
    object_kind: &mut Option<Str<'a>>,
    shape: &mut Option<Shape>,
    depth: u32,
) -> Result<(), JsonError> {
    if sc.peek() != Some(b'{') {
        return Err(JsonError {
            what: "a record is not a JSON object",
            at: sc.pos(),
        });
    }
    sc.object(|sc, k| {
        match k.raw.first() {
            Some(b'c') if k.is("choices") => {
                *has_choices = true;
                if sc.peek() != Some(b'[') {
                    return sc.skip();
                }
                rec.rows.clear();
                sc.array(|sc, _| {
                    if rec.rows.len() < MAX_CHOICES {
                        let mut c = Completion::default();
                        read_choice(sc, &mut c, chat)?;
                        rec.rows.push(c);
                        Ok(())
                    } else {
                        rec.dropped_choices += 1;
                        sc.skip()
                    }
                })
            }
            Some(b'u') if k.is("usage") => read_usage(sc, usage),
            Some(b'm') if k.is("meta_info") => {
                *shape = Some(Shape::SglangGenerate);
                if sc.peek() != Some(b'{') {
                    return sc.skip();
                }
                sc.object(|sc, k| {
                    if usage_key(sc, &k, meta)? {
                        // a token count, read as in `usage`
                    } else if k.is("finish_reason") {
                        read_finish(sc, top)?;
                    } else if k.is("e2e_latency") {
                        top.latency_s = sc.opt_number()?;
                    } else if k.is("id") {
                        top.id = sc.opt_string()?;
                    } else {
                        sc.skip()?;
                    }
                    Ok(())
                })
            }
            Some(b'r') if k.is("response") && depth == 0 => {
                // vLLM run-batch: {"response": {"status_code", "body": <OpenAI response>}}
                if sc.peek() != Some(b'{') {
                    return add_or_skip(sc, top);
                }
                *shape = Some(Shape::VllmBatch);
                sc.object(|sc, k| {
                    if k.is("body") && sc.peek() == Some(b'{') {
                        let mut inner_shape = None;
                        walk(
                            sc,
                            rec,
                            top,
                            usage,
                            meta,
                            has_choices,
                            chat,
                            object_kind,
                            &mut inner_shape,
                            depth + 1,
                        )
                    } else if k.is("status_code") {
                        let code = sc.opt_number()?;
                        if code.is_some_and(|c| c >= 400.0) && top.error.is_none() {
                            top.finish = Finish::Error;
                        }
                        Ok(())
                    } else {
                        sc.skip()
                    }
                })
            }
            Some(b'f') if k.is("finish_reason") => read_finish(sc, top),
            Some(b'e') if k.is("error") => {
                match sc.peek() {
                    Some(b'{') => sc.object(|sc, k| {
                        if k.is("message") {
                            top.error = sc.opt_string()?.or(top.error);
                            Ok(())
                        } else {
                            sc.skip()
                        }
                    })?,
                    Some(b'"') => top.error = Some(sc.string()?),
                    _ => sc.skip()?,
                }
                Ok(())
            }
            Some(b'i') if k.is("id") => {
                top.id = sc.opt_string()?.or(top.id);
                Ok(())
            }
            Some(b'c') if k.is("created") => {
                top.created = sc.opt_number()?;
                Ok(())
            }
            Some(b'o') if k.is("object") => {
                *object_kind = sc.opt_string()?;
                Ok(())
            }
            // output text of SGLang /generate and pipeline records
            Some(b't' | b'c' | b'r' | b'o')
                if k.is("text")
                    || k.is("content")
                    || k.is("reasoning")
                    || k.is("reasoning_content")
                    || k.is("output") =>
            {
                add_or_skip(sc, top)
            }
            _ => sc.skip(),
        }
    })
}

fn add_or_skip<'a>(sc: &mut Scanner<'a>, c: &mut Completion<'a>) -> Result<(), JsonError> {
    let s = sc.opt_string()?;
    add_chars(c, s);
    Ok(())
}

/// Resolves `--tokens-path` / `--finish-path` pointers (a second, targeted walk).
fn apply_paths<'a>(line: &'a [u8], paths: &Paths, c: &mut Completion<'a>) -> Result<(), JsonError> {
    if let Some(p) = &paths.tokens {
        let mut sc = Scanner::new(line);
        if follow(&mut sc, p)? {
            c.completion_tokens = as_u64(sc.opt_number()?);
        }
    }
    if let Some(p) = &paths.finish {
        let mut sc = Scanner::new(line);
        if follow(&mut sc, p)? {
            read_finish(&mut sc, c)?;
        }
    }
    Ok(())
}

/// Moves the cursor to the value at `path`; false when the path does not exist.
fn follow(sc: &mut Scanner<'_>, path: &[String]) -> Result<bool, JsonError> {
    let Some((head, rest)) = path.split_first() else {
        return Ok(true);
    };
    // the cursor at the member / element named by `head` (for objects the last occurrence,
    // as serde_json keeps the last duplicate)
    let mut found: Option<Scanner<'_>> = None;
    match sc.peek() {
        Some(b'{') => sc.object(|sc, k| {
            if k.is(head) {
                found = Some(sc.clone());
            }
            sc.skip()
        })?,
        Some(b'[') => {
            let Ok(want) = head.parse::<usize>() else {
                return Ok(false);
            };
            sc.array(|sc, i| {
                if i == want {
                    found = Some(sc.clone());
                }
                sc.skip()
            })?
        }
        _ => return Ok(false),
    }
    match found {
        Some(mut at) => {
            let ok = follow(&mut at, rest)?;
            *sc = at;
            Ok(ok)
        }
        None => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting by `as usize` relies on `ALL` being in declaration order.
    #[test]
    fn all_lists_are_in_declaration_order() {
        for (i, f) in Finish::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i);
        }
        for (i, s) in Shape::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
        }
    }
}
