//! Several records on one physical line. Copy-paste loses newlines and tqdm progress bars end
//! in `\r`, so one line of a file can hold a progress bar and then a log record, or two
//! records one after the other:
//!
//! `(_AsyncLLMEngine pid=3310) INFO 02-11 08:02:10 llm_engine.py:706] Avg prompt throughput:
//! 12.4 tokens/s, … (_AsyncLLMEngine pid=3310) INFO 02-11 08:02:15 llm_engine.py:706] Avg
//! prompt throughput: 0.0 tokens/s, …`
//!
//! Read whole, such a line is malformed (its keys repeat) or other (it starts with a bar):
//! readers then ask [`record_starts`] where records begin in it, and read each piece with its
//! own values and stamp. Normal lines never get here, so the search costs nothing on them.

/// Whether `raw`, read whole as `line`, may hold several records: malformed (its keys repeat,
/// a value runs into the next record), other with no logger prefix and a progress bar's `|`
/// or a `\r` in it (a bar before a record), or other with an SGLang prefix and another SGLang
/// stamp inside. Only such lines are searched, so normal lines
/// (uvicorn's access lines have no logger prefix either) cost one vector search at most.
///
/// A long line (over 256 bytes) with a `\r` inside is searched too, whatever its reading: a
/// file whose lines end in a lone `\r` is one physical line, whose first record (a
/// configuration dump, say) would otherwise take in all the others.
pub fn worth_splitting(line: &crate::record::Line<'_>, raw: &str) -> bool {
    let b = raw.as_bytes();
    match line.body {
        crate::record::Body::Malformed(_) => return true,
        crate::record::Body::Other if line.prefix.style == crate::wrappers::prefix::Style::Bare => {
            return memchr::memchr2(b'\r', b'|', b).is_some();
        }
        // an SGLang line of no record with another SGLang stamp inside (an access line with
        // a decode line pasted onto it); such lines have a `[` in their message, so the
        // common access lines, read without one, never get here
        crate::record::Body::Other
            if line.prefix.style == crate::wrappers::prefix::Style::Sglang
                && b.len() > 1
                && memchr::memmem::find(&b[1..], b"[20").is_some() =>
        {
            return true;
        }
        // a vLLM record whose last field took in the next record (a record's unmodelled
        // pairs are kept, so nothing repeats): a second `] ` past the prefix's own. vLLM
        // records are a few lines a minute; its other lines are not searched
        crate::record::Body::Step(_)
        | crate::record::Body::Event(_)
        | crate::record::Body::Config(_)
            if line.prefix.style == crate::wrappers::prefix::Style::Vllm =>
        {
            return memchr::memmem::find_iter(b, b"] ").nth(1).is_some()
                && !record_starts(raw).is_empty();
        }
        _ => {}
    }
    b.len() > 256 && memchr::memchr(b'\r', &b[..b.len() - 1]).is_some()
}

/// Where records begin inside `line`, in order: after each `\r`, and at each logger prefix
/// met past the line's start (vLLM's `LEVEL MM-DD HH:MM:SS`, with a Ray actor's
/// `(Name pid=N) ` before it; SGLang's `[YYYY-MM-DD HH:MM:SS`; `YYYY-MM-DD HH:MM:SS LEVEL`).
/// The first start is 0 when the line itself starts a record. Empty when the line holds at
/// most one record, at its start.
pub fn record_starts(line: &str) -> Vec<usize> {
    let b = line.as_bytes();
    let mut starts = Vec::new();
    let push = |at: usize, starts: &mut Vec<usize>| {
        if at > 0 && starts.last().is_none_or(|&l| l < at) {
            starts.push(at);
        }
    };
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\r' {
            if i + 1 < b.len() {
                push(i + 1, &mut starts);
            }
        } else if i > 0 {
            if let Some(at) = prefix_at(b, i) {
                push(at, &mut starts);
            }
        }
        i += 1;
    }
    if starts.is_empty() {
        return starts;
    }
    starts.insert(0, 0);
    starts.dedup();
    starts
}

/// The pieces of `line` between its [`record_starts`], trimmed, empty ones left out. The
/// first may be a bar or other text before the first record.
pub fn pieces(line: &str) -> Vec<&str> {
    let starts = record_starts(line);
    let mut out = Vec::with_capacity(starts.len());
    for (k, &a) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(line.len());
        let p = line[a..end].trim_matches(|c: char| c == '\r' || c == ' ');
        if !p.is_empty() {
            out.push(p);
        }
    }
    out
}

const LEVELS: [&[u8]; 5] = [b"INFO ", b"WARNING ", b"ERROR ", b"DEBUG ", b"CRITICAL "];

/// The start of a record whose logger prefix begins at `i` (or just before it, for a Ray
/// actor's tag), if one does.
fn prefix_at(b: &[u8], i: usize) -> Option<usize> {
    let rest = &b[i..];
    match b[i] {
        // vLLM: `INFO 02-11 08:02:15 ` (or `INFO 02-11 08:02:15.123 `)
        b'I' | b'W' | b'E' | b'D' | b'C' => {
            let level = LEVELS.iter().find(|l| rest.starts_with(l))?;
            if !is_month_day_time(&rest[level.len()..]) {
                return None;
            }
            Some(ray_tag_before(b, i).unwrap_or(i))
        }
        // SGLang: `[2026-05-09 22:29:22`, `[22:29:22 ` (0.2.14–0.3.3, no date), `[gpu_id=0] `
        // (0.1.18), `[gpu=0] ` (0.2.0–0.2.12)
        b'[' => {
            let r = &rest[1..];
            let time_only = shape(r, b"dd:dd:dd") && matches!(r.get(8), Some(b' ' | b']' | b'.'));
            let gpu = ["gpu_id=", "gpu="].iter().any(|t| {
                r.strip_prefix(t.as_bytes()).is_some_and(|d| {
                    let n = d.iter().take_while(|c| c.is_ascii_digit()).count();
                    n > 0 && d.get(n) == Some(&b']')
                })
            });
            (is_date_time(r) || time_only || gpu).then_some(i)
        }
        // another logging configuration: `2025-11-04 17:40:09 INFO`
        b'2' if b[i - 1] != b'[' => {
            let after = rest.get(19..)?;
            (is_date_time(rest) && after.first() == Some(&b' ')).then_some(i)
        }
        _ => None,
    }
}

/// `(Name pid=N) ` right before `i`: the start of that tag (and of the colour code before
/// it, where vLLM colours it: `\x1b[1;36m(APIServer pid=N)\x1b[0;0m `).
fn ray_tag_before(b: &[u8], i: usize) -> Option<usize> {
    let before = &b[..i];
    let before = before.strip_suffix(b" ")?;
    let before = strip_colour(before);
    let before = before.strip_suffix(b")")?;
    let open = before.iter().rposition(|&c| c == b'(')?;
    let tag = &before[open + 1..];
    let (_, pid) = split_once(tag, b" pid=")?;
    if pid.is_empty() || !pid.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // (a colour code opening the tag belongs to it)
    let head = &b[..open];
    let coloured = strip_colour(head);
    Some(coloured.len())
}

/// `b` without the colour codes (`ESC [ … m`) it ends with.
fn strip_colour(mut b: &[u8]) -> &[u8] {
    while b.ends_with(b"m") {
        let Some(esc) = b.iter().rposition(|&c| c == 0x1b) else {
            break;
        };
        let code = &b[esc + 1..b.len() - 1];
        if code.first() != Some(&b'[')
            || !code[1..].iter().all(|c| c.is_ascii_digit() || *c == b';')
        {
            break;
        }
        b = &b[..esc];
    }
    b
}

fn split_once<'a>(b: &'a [u8], pat: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
    let at = b.windows(pat.len()).position(|w| w == pat)?;
    Some((&b[..at], &b[at + pat.len()..]))
}

/// `MM-DD HH:MM:SS`.
fn is_month_day_time(b: &[u8]) -> bool {
    shape(b, b"dd-dd dd:dd:dd")
}

/// `YYYY-MM-DD HH:MM:SS`.
fn is_date_time(b: &[u8]) -> bool {
    shape(b, b"dddd-dd-dd dd:dd:dd")
}

/// Whether `b` starts with `pattern`, `d` standing for any digit.
fn shape(b: &[u8], pattern: &[u8]) -> bool {
    b.len() >= pattern.len()
        && b.iter().zip(pattern).all(|(&c, &p)| match p {
            b'd' => c.is_ascii_digit(),
            _ => c == p,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_then_a_record() {
        let line = "Processed prompts:  12%|█▏        | 120/1000 [00:41<2:58, 4.93it/s, est. speed input: 512.08 toks/s, output: 6120.44 toks/s]INFO 03-02 09:14:05 metrics.py:341] Avg prompt throughput: 1904.2 tokens/s";
        let p = pieces(line);
        assert_eq!(p.len(), 2);
        assert!(p[0].starts_with("Processed prompts"));
        assert!(p[1].starts_with("INFO 03-02 09:14:05 metrics.py:341] Avg"));
    }

    /// Regressions found by the corpus test (tests/tests/corpus.rs): records glued after an
    /// SGLang line of no date (0.2.14–0.3.3) or of a `[gpu=N]` tag, and after a coloured Ray
    /// tag, split where the record begins; a vLLM record whose unmodelled pairs took in the
    /// next record is searched.
    #[test]
    fn glued_after_old_prefixes_and_colour() {
        let a = "[22:29:22 TP0] Prefill batch. #new-seq: 1, #new-token: 7";
        let b = "[22:29:24 TP0] Decode batch. #running-req: 7, #token: 4410";
        assert_eq!(pieces(&format!("{a}{b}")), [a, b]);
        let a = "[gpu=0] Prefill batch. #new-seq: 1, #new-token: 7";
        let b = "[gpu=0] Prefill batch. #new-seq: 63, #new-token: 16384";
        assert_eq!(pieces(&format!("{a}{b}")), [a, b]);
        let a = "\x1b[1;36m(APIServer pid=31337)\x1b[0;0m INFO 11-18 09:10:11 [loggers.py:236] Engine 000: Avg prompt throughput: 1.0 tokens/s";
        let b = "\x1b[0;36m(APIServer pid=31337)\x1b[0;0m INFO 12-19 09:10:11 [loggers.py:248] Engine 000: Avg prompt throughput: 2.0 tokens/s";
        assert_eq!(pieces(&format!("{a}{b}")), [a, b]);
        // `[00:41<2:58` of a progress bar is no stamp
        assert!(record_starts("x [00:41<2:58, 4.93it/s]").is_empty());
        let glued = "INFO 05-05 09:10:11 metrics.py:355] Speculative metrics: Draft acceptance rate: 0.612, System efficiency: 0.480, Number of speculative tokens: 5INFO 06-01 09:10:11 metrics.py:341] Avg prompt throughput: 1820.4 tokens/s, Avg generation throughput: 11.2 tokens/s";
        let mut scratch = String::new();
        let line = crate::parse_line(glued.as_bytes(), &mut scratch);
        assert!(
            matches!(line.body, crate::record::Body::Step(_)),
            "read whole, a step with the second record in its pairs"
        );
        assert!(worth_splitting(&line, glued));
        assert_eq!(pieces(glued).len(), 2);
    }

    #[test]
    fn two_ray_tagged_records() {
        let one = "(_AsyncLLMEngine pid=3310) INFO 02-11 08:02:10 llm_engine.py:706] Avg prompt throughput: 12.4 tokens/s, Running: 2 reqs.";
        let two = "(_AsyncLLMEngine pid=3310) INFO 02-11 08:02:15 llm_engine.py:706] Avg prompt throughput: 0.0 tokens/s, Running: 2 reqs.";
        let line = format!("{one} {two}");
        assert_eq!(pieces(&line), [one, two]);
    }

    #[test]
    fn carriage_returns_and_sglang_stamps() {
        let a = "[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 40";
        let b = "[2026-05-09 22:29:23 TP0] Decode batch, #running-req: 41";
        assert_eq!(pieces(&format!("{a}{b}")), [a, b]);
        assert_eq!(
            pieces(&format!("bar 1%\rbar 2%\r{a}")),
            ["bar 1%", "bar 2%", a]
        );
        let c =
            "2025-11-04 17:40:09 INFO 20457 [DP1 TP1 EP1 x.py:222] Decode batch. #running-req: 48";
        assert_eq!(pieces(&format!("{c} {c}")), [c, c]);
    }

    #[test]
    fn one_record_is_left_alone() {
        for line in [
            "[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 40",
            "INFO 03-02 09:14:05 metrics.py:341] Avg prompt throughput: 1.0 tokens/s",
            "(_AsyncLLMEngine pid=3310) INFO 02-11 08:02:10 llm_engine.py:706] Avg",
            "2025-11-04 17:40:09 INFO 20457 [DP1 TP1 EP1 x.py:222] Decode batch.",
            "a line ending in CR\r",
            "",
        ] {
            assert!(record_starts(line).is_empty(), "{line:?}");
        }
    }
}
