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
        crate::record::Body::Other if line.prefix.style == crate::prefix::Style::Bare => {
            return memchr::memchr2(b'\r', b'|', b).is_some();
        }
        // an SGLang line of no record with another SGLang stamp inside (an access line with
        // a decode line pasted onto it); such lines have a `[` in their message, so the
        // common access lines, read without one, never get here
        crate::record::Body::Other
            if line.prefix.style == crate::prefix::Style::Sglang
                && b.len() > 1
                && memchr::memmem::find(&b[1..], b"[20").is_some() =>
        {
            return true;
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
        // SGLang: `[2026-05-09 22:29:22`
        b'[' => is_date_time(&rest[1..]).then_some(i),
        // another logging configuration: `2025-11-04 17:40:09 INFO`
        b'2' if b[i - 1] != b'[' => {
            let after = rest.get(19..)?;
            (is_date_time(rest) && after.first() == Some(&b' ')).then_some(i)
        }
        _ => None,
    }
}

/// `(Name pid=N) ` right before `i`: the start of that tag.
fn ray_tag_before(b: &[u8], i: usize) -> Option<usize> {
    let before = &b[..i];
    let before = before.strip_suffix(b" ")?;
    let before = before.strip_suffix(b")")?;
    let open = before.iter().rposition(|&c| c == b'(')?;
    let tag = &before[open + 1..];
    let (_, pid) = split_once(tag, b" pid=")?;
    (!pid.is_empty() && pid.iter().all(u8::is_ascii_digit)).then_some(open)
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
