//! One log line into a [`Line`]: its prefix stripped and its message classified; and the
//! quick reading of SGLang stats lines, which reads only the gauges a report needs.

use crate::record::{Body, EventKind, Gauges, Line, StepKind};
use crate::stamp::Stamp;
use crate::wrappers::prefix::{self, Style};
use crate::{record, scan, sglang, vllm};

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

/// A line as [`visit_quick_line`] hands it over.
pub enum Quick<'l, 'a> {
    /// Parsed whole, as [`visit_str_line`] parses it.
    Line(&'l Line<'a>),
    /// An SGLang decode or prefill batch read only as far as its [`Gauges`]: the step
    /// [`visit_str_line`] would give has this stamp, DP rank, kind and gauges (and more), of
    /// which those not kept ([`sglang::Keep`]) are left out.
    Stats(Stamp, Option<u32>, StepKind, &'l Gauges),
    /// A line with this stamp that holds no record: [`visit_str_line`] would give it
    /// [`Body::Other`]. Most lines of a log are such (access lines), and are told apart
    /// without building a line.
    Other(Stamp),
}

/// [`visit_quick_line`] for a line of a chunk searched for colour codes (`ansi`: it may hold
/// some).
#[inline]
fn visit_quick_str_line<'a, R>(
    raw: &'a str,
    scratch: &'a mut String,
    ansi: bool,
    keep: sglang::Keep,
    f: impl FnOnce(Quick<'_, 'a>) -> R,
) -> R {
    let text = prefix::normalize_str(raw, scratch, ansi);
    let (prefix, msg) = prefix::split(text);
    if matches!(prefix.style, Style::Sglang | Style::Bare) {
        let mut g = Gauges::default();
        if let Some(kind) = sglang::quick_gauges_kept(msg, &mut g, keep) {
            return f(Quick::Stats(prefix.stamp, prefix.ranks.dp, kind, &g));
        }
    }
    let mut line = Line {
        prefix,
        body: Body::Other,
    };
    classify(prefix.style, prefix.level, msg, &mut line.body);
    f(Quick::Line(&line))
}

/// [`visit_str_line`] for readers that aggregate, on a line of a chunk not searched for
/// colour codes. An SGLang stats line in the layout of the last one is read into its gauges
/// without building a step (a few hundred bytes, most of them never read by a report);
/// everything else is parsed whole. The lines of most SGLang logs, in the scheduler's or the
/// HTTP server's usual prefix, are read with no search for colour codes when they cannot
/// hold one — a stats body read against a layout with no `[` in its keys, or a message with
/// no `[` after the stamp's (every spelling of a colour code has one). Others are searched
/// first. Of a stats line's gauges, those of `keep` are read.
#[inline]
pub fn visit_quick_line<'a, R>(
    raw: &'a str,
    scratch: &'a mut String,
    keep: sglang::Keep,
    f: impl FnOnce(Quick<'_, 'a>) -> R,
) -> R {
    visit_quick_line_split(
        raw,
        scratch,
        keep,
        f,
        |f, q| f(q),
        |f, stamp| f(Quick::Other(stamp)),
    )
}

/// [`visit_quick_line`] with the SGLang-prefixed HTTP access lines ending in `" 200 OK`
/// (most lines of an access-heavy log, and never a record) handed to `ok` instead of `f`,
/// each with `ctx`: `ok` (a count) is small enough to be inlined where `f` (which adds a
/// stats line to its series) is a call. (Other access lines come to `f` as lines: see
/// [`crate::access`].)
#[inline]
pub fn visit_quick_line_split<'a, C, R>(
    raw: &'a str,
    scratch: &'a mut String,
    keep: sglang::Keep,
    ctx: C,
    f: impl FnOnce(C, Quick<'_, 'a>) -> R,
    ok: impl FnOnce(C, Stamp) -> R,
) -> R {
    let text = &raw[..prefix::trim_cr(raw.as_bytes()).len()];
    if let Some((prefix, msg)) = prefix::common_sglang(text) {
        // (the call with its gauges to set up cost a tenth of an access line's reading)
        if sglang::may_be_batch(msg) {
            let mut g = Gauges::default();
            if let Some(kind) = sglang::quick_raw_gauges(msg, &mut g, keep) {
                return f(ctx, Quick::Stats(prefix.stamp, prefix.ranks.dp, kind, &g));
            }
        }
        // the stamp's `[` opens no colour code: it is followed by a date
        if scan::find_short(b'[', msg.as_bytes()).is_none() {
            if !sglang::may_be_message(msg)
                && !server_ready_candidate(msg)
                && !may_be_incident(msg)
                && !crate::access::may_have_failed(msg)
            {
                // (what is left of the tests: a line ending in `" 200 OK`)
                return ok(ctx, prefix.stamp);
            }
            let mut line = Line {
                prefix,
                body: Body::Other,
            };
            classify(prefix.style, prefix.level, msg, &mut line.body);
            return f(ctx, Quick::Line(&line));
        }
    }
    visit_quick_str_line(raw, scratch, true, keep, |q| f(ctx, q))
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
    if server_ready_candidate(msg) && msg.trim_end().ends_with("Application startup complete.") {
        *out = Body::Event(record::Event {
            engine: None,
            kind: EventKind::ServerReady,
            message: msg,
            count: None,
        });
        return;
    }
    if !may_be_incident(msg) {
        return;
    }
    if let Some(kind) = crate::incident::classify(msg) {
        *out = Body::Event(record::Event {
            engine: None,
            kind,
            message: msg,
            count: None,
        });
    }
}

/// Whether `msg` may report an incident ([`crate::incident`]): uvicorn's lines, access
/// lines among them, do not.
#[inline]
fn may_be_incident(msg: &str) -> bool {
    !msg.starts_with("INFO:")
}

/// Whether `msg` may be uvicorn's `INFO:     Application startup complete.`: its access
/// lines (most lines of many logs) end in another ASCII byte, seen first.
#[inline]
fn server_ready_candidate(msg: &str) -> bool {
    let last = msg.as_bytes().last().copied().unwrap_or(b'.');
    // (`trim_end` trims `\t`..=`\r`, space, and non-ASCII spaces)
    let may_end = matches!(last, b'.' | b'\t'..=b'\r' | b' ') || !last.is_ascii();
    may_end && msg.starts_with("INFO:")
}

/// What the parser tests share: the fixture lines, and lines with one character changed.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{fixture_lines, mutations};

    /// What the quick reading of a line gives is what the general reading gives: the same
    /// line, or a step with the same stamp, rank, kind and gauges. Every fixture line (colour
    /// codes in every spelling among them) and each with one byte changed, each read after
    /// itself (its layout cached) and after other layouts.
    #[test]
    fn quick_lines_read_like_the_general_reading() {
        let mut lines: Vec<String> = vec![
            "[2026-05-10 00:00:01] INFO:     127.0.0.1:48925 - \"POST /v1 HTTP/1.1\" 200 OK".into(),
            "[2026-05-10 00:00:02 TP0] Decode batch, #running-req: 64, #token: 67873, token usage: 0.06, cuda graph: True, gen throughput (token/s): 790.97, #queue-req: 490\r".into(),
            "[2026-05-10 00:00:02 TP0] Decode batch, #running-req: 64, #token: 67873, token usage: 0.06, cuda graph: True, gen throughput (token/s): 790.97, #queue-req: 490".into(),
            "[2026-05-10 00:00:02 TP0] Decode batch, #running-req: 64, #to[1mken: 67873".into(),
            "[2026-05-10 00:00:02 TP0] \u{1b}[32mDecode batch, #running-req: 64\u{1b}[0m".into(),
            "[2026-05-10 00:00:03 TP1] Prefill batch, #new-seq: 3, #new-token: 3056, #cached-token: 472, token usage: 0.00, #running-req: 1, #queue-req: 496".into(),
            "[2026-05-10 00:00:03] INFO:     Application startup complete.[0m".into(),
            "[2026-05-10 00:00:03 DP1 TP0] Decode batch, #running-req: 64, #token: 1".into(),
        ];
        lines.extend(fixture_lines(&["sglang", "vllm", "messy"]));
        use record::GaugeSet as G;
        // what a reading keeping `set` gives of whole gauges
        let kept = |g: Gauges, set: G| Gauges {
            running: g.running.filter(|_| set.has(G::RUNNING)),
            waiting: g.waiting.filter(|_| set.has(G::WAITING)),
            gen_tps: g.gen_tps.filter(|_| set.has(G::GEN_TPS)),
            prompt_tps: g.prompt_tps.filter(|_| set.has(G::PROMPT_TPS)),
            kv_usage: g.kv_usage.filter(|_| set.has(G::KV_USAGE)),
            accept_len: g.accept_len.filter(|_| set.has(G::ACCEPT_LEN)),
            new_seq: g.new_seq.filter(|_| set.has(G::NEW_SEQ)),
            new_tokens: g.new_tokens.filter(|_| set.has(G::NEW_TOKENS)),
            preemptions: g.preemptions,
        };
        // everything, a report's choice, nothing, and each gauge alone
        let mut keeps = vec![
            (G::ALL, G::ALL),
            (G::ALL, G::NEW_TOKENS),
            (G::NONE, G::NONE),
        ];
        keeps.extend((0..8).map(|k| (G(1 << k), G(1 << k))));
        let (mut stats, mut others, mut checked) = (0, 0, 0);
        let mut check = |l: &str, (decode, prefill): (G, G)| {
            checked += 1;
            let mut scratch = String::new();
            let general = visit_str_line(l, &mut scratch, true, |line| *line);
            let mut scratch = String::new();
            let keep = sglang::Keep::new(decode, prefill);
            visit_quick_line(l, &mut scratch, keep, |q| match q {
                // by their text: NaN is a value of some fixtures
                Quick::Line(line) => assert_eq!(format!("{line:?}"), format!("{general:?}")),
                Quick::Other(stamp) => {
                    others += 1;
                    assert!(matches!(general.body, Body::Other), "{l:?}: {general:?}");
                    assert_eq!(stamp, general.prefix.stamp, "{l:?}");
                }
                Quick::Stats(stamp, dp, kind, g) => {
                    stats += 1;
                    let Body::Step(s) = general.body else {
                        panic!("{l:?}: {general:?}")
                    };
                    assert_eq!(
                        format!("{:?}", (stamp, dp, Some(kind), *g)),
                        format!(
                            "{:?}",
                            (
                                general.prefix.stamp,
                                general.prefix.ranks.dp,
                                s.kind,
                                kept(
                                    s.gauges(),
                                    if kind == StepKind::Decode {
                                        decode
                                    } else {
                                        prefill
                                    }
                                )
                            )
                        ),
                        "{l:?}"
                    );
                }
            });
        };
        for l in &lines {
            for &keep in &keeps {
                check(l, keep);
                check(l, keep);
            }
            for m in mutations(l, l.len(), &["[", " ", "0", ",", "\u{1b}", "é", "."]) {
                for &keep in &keeps[..3] {
                    check(&m, keep);
                }
            }
            // after another layout
            check(
                "[2026-05-10 00:00:02 TP0] Decode batch, #running-req: 1",
                keeps[0],
            );
            check(
                "[2026-05-10 00:00:02 TP0] Prefill batch, #new-seq: 1",
                keeps[0],
            );
        }
        // in the HTTP server's prefix: an access line, and records that are not stats lines
        for l in [
            "[2026-05-10 00:00:01] INFO:     127.0.0.1:48925 - \"POST /generate HTTP/1.1\" 200 OK",
            "[2026-05-10 00:00:01] INFO:     Application startup complete.",
            "[2026-05-10 00:00:01] INFO:     Application startup complete.  ",
            "[2026-05-10 00:00:01] The server is fired up and ready to roll!",
            "[2026-05-10 00:00:01 TP0] KV Cache is allocated. #tokens: 1048576, K size: 72.00 GB",
            "[2026-05-10 00:00:01 TP0] Decode out of memory happened. #retracted_reqs: 1",
        ] {
            check(l, keeps[1]);
        }
        assert!(stats > 1000 && checked > 5 * stats, "{stats} of {checked}");
        assert!(others > 1000, "{others} of {checked}");
    }

    /// uvicorn's start line is an event whatever whitespace trails it (access lines, read
    /// by their last byte first, are not).
    #[test]
    fn uvicorn_start_with_any_trailing_space() {
        let kind = |l: &str| {
            let mut scratch = String::new();
            visit_str_line(l, &mut scratch, true, |line| match line.body {
                Body::Event(e) => Some(e.kind),
                _ => None,
            })
        };
        let start = "[2026-05-10 00:00:03] INFO:     Application startup complete.";
        for tail in [
            "", " ", "\t", "\u{b}", "\u{c}", "\r\r", "\u{85}", "\u{a0}", "\u{3000}",
        ] {
            assert_eq!(
                kind(&format!("{start}{tail}")),
                Some(EventKind::ServerReady),
                "{tail:?}"
            );
        }
        for other in [
            "[2026-05-10 00:00:03] INFO:     127.0.0.1:1 - \"GET /health HTTP/1.1\" 200 OK",
            "[2026-05-10 00:00:03] INFO:     Application startup complete.x",
            "[2026-05-10 00:00:03] INFO:     Application startup complete.\u{200b}",
        ] {
            assert_eq!(kind(other), None, "{other:?}");
        }
    }

    /// Regression: a log's first line behind a byte order mark lost its vLLM prefix (it read
    /// as an unrelated line). Every fixture line reads the same with one, quickly or not.
    #[test]
    fn a_byte_order_mark_changes_no_line() {
        let mut parsed = 0;
        for l in fixture_lines(&["sglang", "vllm", "messy"]) {
            let marked = format!("\u{feff}{l}");
            let mut scratch = String::new();
            let plain = visit_str_line(&l, &mut scratch, true, |line| format!("{line:?}"));
            let mut scratch = String::new();
            let with = visit_str_line(&marked, &mut scratch, true, |line| format!("{line:?}"));
            assert_eq!(with, plain, "{l:?}");
            let mut scratch = String::new();
            let quick = visit_quick_line(&marked, &mut scratch, sglang::Keep::ALL, |q| match q {
                Quick::Line(line) => format!("{line:?}"),
                Quick::Stats(..) => plain.clone(),
                Quick::Other(_) if plain.contains("body: Other") => plain.clone(),
                Quick::Other(_) => format!("not a record: {l:?}"),
            });
            assert_eq!(quick, plain, "{l:?}");
            parsed += usize::from(!plain.contains("body: Other"));
        }
        assert!(parsed > 100, "{parsed}");
    }

    /// A service's log as `journalctl` (syslog) keeps it reads as the log itself: every
    /// fixture line behind `Nov  3 18:13:09 host ident[pid]: ` gives the same body and
    /// ranks, and the journal's stamp where the engine printed none.
    #[test]
    fn a_journal_prefix_changes_no_body() {
        use crate::stamp::Stamp;
        let journal = Stamp::MonthDay {
            month: 11,
            day: 3,
            ms: (18 * 3600 + 13 * 60 + 9) * 1000,
        };
        let mut dated = 0;
        for l in fixture_lines(&["sglang", "vllm", "messy"]) {
            for wrapper in [
                "Nov  3 18:13:09 gpu-node-1 python3[12345]: ",
                "Nov  3 18:13:09 h vllm: ",
            ] {
                let wrapped = format!("{wrapper}{l}");
                let mut scratch = String::new();
                let plain = visit_str_line(&l, &mut scratch, true, |line| *line);
                let mut scratch2 = String::new();
                let with = visit_str_line(&wrapped, &mut scratch2, true, |line| *line);
                assert_eq!(
                    format!("{:?}", with.body),
                    format!("{:?}", plain.body),
                    "{l:?}"
                );
                assert_eq!(with.prefix.ranks, plain.prefix.ranks, "{l:?}");
                if plain.prefix.stamp.is_some() {
                    assert_eq!(with.prefix.stamp, plain.prefix.stamp, "{l:?}");
                } else {
                    assert_eq!(with.prefix.stamp, journal, "{l:?}");
                    dated += 1;
                }
            }
        }
        assert!(dated > 20, "{dated}");
    }
}
