//! Line normalisation and the prefixes engines, loggers and wrappers put before a message.
//!
//! What reaches us is rarely the engine's line alone: `\r\n` endings, ANSI colour codes (as
//! real escapes, or half-stripped by a copy-paste as `[1;36m`, `^[[1;36m`, `#033[1;36m`),
//! docker `2026-05-12T07:51:36.069569496Z ` stamps, compose `service  | ` wrappers, vLLM's
//! `(APIServer pid=1) ` process tags, and sometimes two SGLang prefixes in a row. This module
//! removes all of it and returns the stamp, the rank tags and the message, borrowing the line
//! whenever no byte had to change.

use crate::stamp::{days_from_civil, Stamp};
use memchr::memchr2_iter;
use nom::bytes::complete::{tag, take_while1};
use nom::character::complete::char;
use nom::combinator::opt;
use nom::{IResult, Parser};

type Res<'a, O> = IResult<&'a str, O, ()>;

/// Length of an ANSI colour sequence whose `[` is at `i`, counting what comes before the `[`
/// (`ESC`, `^[`, `#033`, `\033`, `\x1b`, `\u001b`). Returns `(start, end)`.
fn ansi_at(s: &[u8], i: usize) -> Option<(usize, usize)> {
    // the `[` of most lines opens a `[2026-…` stamp: four digits and a dash, in one word test
    if let Some(&[a, b, c, d, b'-']) = s.get(i + 1..i + 6) {
        let w = u32::from_le_bytes([a, b, c, d]);
        if w & 0xf0f0_f0f0 == 0x3030_3030 && (w + 0x0606_0606) & 0xf0f0_f0f0 == 0x3030_3030 {
            return None;
        }
    }
    let mut j = i + 1;
    let params = j;
    while j < s.len() && (s[j].is_ascii_digit() || s[j] == b';') {
        j += 1;
    }
    let fin = *s.get(j)?;
    // every spelling ends in a letter: reject the common `[2026-…` stamp before looking back
    if !fin.is_ascii_alphabetic() {
        return None;
    }
    let before = &s[..i];
    let esc_start = if before.last() == Some(&0x1b) {
        Some(i - 1)
    } else {
        [&b"^["[..], b"#033", b"\\033", b"\\x1b", b"\\u001b", b"\\e"]
            .iter()
            .find(|p| before.ends_with(p))
            .map(|p| i - p.len())
    };
    match esc_start {
        // a real (or spelled-out) escape: any CSI final letter (`m`, `K`, …)
        Some(start) if fin.is_ascii_alphabetic() => Some((start, j + 1)),
        // a bare `[1;36m`, the escape byte already lost: digits required, `m` required
        None if fin == b'm' && j > params => Some((i, j + 1)),
        _ => None,
    }
}

/// Removes ANSI colour sequences; `None` when the line has none (the common case).
fn strip_ansi(line: &[u8]) -> Option<Vec<u8>> {
    let mut cleaned: Option<Vec<u8>> = None;
    let mut copied_to = 0;
    for i in memchr2_iter(b'[', 0x1b, line) {
        if line[i] != b'[' || i < copied_to {
            continue;
        }
        if let Some((start, end)) = ansi_at(line, i) {
            let buf = cleaned.get_or_insert_with(|| Vec::with_capacity(line.len()));
            buf.extend_from_slice(&line[copied_to..start.max(copied_to)]);
            copied_to = end;
        }
    }
    let mut buf = cleaned?;
    buf.extend_from_slice(&line[copied_to..]);
    Some(buf)
}

pub(crate) fn trim_cr(mut line: &[u8]) -> &[u8] {
    while let Some((b'\r', rest)) = line.split_last() {
        line = rest;
    }
    line
}

fn into_scratch(buf: Vec<u8>, scratch: &mut String) -> &str {
    match String::from_utf8(buf) {
        Ok(s) => *scratch = s,
        Err(e) => {
            scratch.clear();
            scratch.push_str(&String::from_utf8_lossy(e.as_bytes()));
        }
    }
    scratch.as_str()
}

/// Turns raw line bytes into text: drops a trailing `\r`, removes ANSI colour codes, and
/// replaces invalid UTF-8. Borrows `line` when nothing changes; otherwise writes to `scratch`.
pub fn normalize<'a>(line: &'a [u8], scratch: &'a mut String) -> &'a str {
    let line = trim_cr(line);
    match strip_ansi(line) {
        Some(buf) => into_scratch(buf, scratch),
        None => match std::str::from_utf8(line) {
            Ok(s) => s,
            Err(_) => {
                scratch.clear();
                scratch.push_str(&String::from_utf8_lossy(line));
                scratch.as_str()
            }
        },
    }
}

/// [`normalize`] for a line already known to be UTF-8 (a whole chunk validated at once is
/// cheaper than each line on its own). `ansi`: whether the line's chunk holds any colour
/// code at all ([`has_ansi`]); most logs have none, and then no line is searched for one.
pub fn normalize_str<'a>(line: &'a str, scratch: &'a mut String, ansi: bool) -> &'a str {
    let trimmed = trim_cr(line.as_bytes());
    let line = &line[..trimmed.len()];
    match if ansi { strip_ansi(trimmed) } else { None } {
        Some(buf) => into_scratch(buf, scratch),
        None => line,
    }
}

/// Whether `bytes` (a chunk of lines) holds an ANSI colour code in any spelling: one pass over
/// the chunk instead of one search per line.
pub fn has_ansi(bytes: &[u8]) -> bool {
    // every spelling has a `[` (a bare ESC is no colour code: `ansi_at` starts at the `[`).
    // Most lines hold one, their stamp's: the `[`s of 64 bytes are found by one vector
    // compare each 16 bytes, cheaper than a search restarted after each of them
    use wide::u8x16;
    let open = u8x16::splat(b'[');
    let mut blocks = bytes.chunks_exact(64);
    let mut base = 0;
    for block in &mut blocks {
        let mut m = 0u64;
        for (k, part) in block.chunks_exact(16).enumerate() {
            let v = u8x16::new(part.try_into().unwrap_or([0; 16]));
            m |= u64::from(v.cmp_eq(open).move_mask() as u16) << (16 * k);
        }
        while m != 0 {
            if ansi_at(bytes, base + m.trailing_zeros() as usize).is_some() {
                return true;
            }
            m &= m - 1;
        }
        base += 64;
    }
    memchr::memchr_iter(b'[', blocks.remainder()).any(|i| ansi_at(bytes, base + i).is_some())
}

/// Rank tags of the SGLang scheduler prefix (`DP0 PP0 ATTN_CP0 MOE_DP0 TP0 EP0`, any order),
/// and vLLM's engine index (`Engine 001:`), kept as `dp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Ranks {
    pub dp: Option<u32>,
    pub tp: Option<u32>,
    pub pp: Option<u32>,
    pub ep: Option<u32>,
    pub attn_cp: Option<u32>,
    pub moe_dp: Option<u32>,
}

impl Ranks {
    fn set(&mut self, name: &str, n: u32) {
        match name {
            "DP" => self.dp = Some(n),
            "TP" => self.tp = Some(n),
            "PP" => self.pp = Some(n),
            "EP" => self.ep = Some(n),
            "ATTN_CP" => self.attn_cp = Some(n),
            "MOE_DP" => self.moe_dp = Some(n),
            _ => {} // ranks we do not model (DCP, PCP, …) are still accepted
        }
    }
}

/// Which logger wrote the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// No logger prefix (SGLang before 0.2.14, `print` output, continuation lines).
    #[default]
    Bare,
    /// SGLang `[date time RANKS] `, `[gpu=0] ` or `[gpu_id=0] `.
    Sglang,
    /// vLLM `LEVEL MM-DD HH:MM:SS [file.py:NNN] `.
    Vllm,
}

/// A vLLM log level (SGLang does not print one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Debug,
    Info,
    Warning,
    Error,
    Critical,
}

/// What came before the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Prefix<'a> {
    pub style: Style,
    pub stamp: Stamp,
    pub ranks: Ranks,
    pub level: Option<Level>,
    /// vLLM process tag, e.g. `APIServer` or `EngineCore_DP0`.
    pub process: Option<&'a str>,
}

fn digits<'a>(n: usize) -> impl Parser<&'a str, Output = u32, Error = ()> {
    move |i: &'a str| match fixed_digits(i.as_bytes(), n) {
        Some(v) => Ok((&i[n..], v)),
        None => Err(nom::Err::Error(())),
    }
}

/// `n` ASCII digits at the start of `b` as a number. Stamps are fixed-width, so this is the
/// whole of their number parsing (a hot path: every line has a stamp).
#[inline]
fn fixed_digits(b: &[u8], n: usize) -> Option<u32> {
    let d = b.get(..n)?;
    let mut v = 0u32;
    for &c in d {
        let x = c.wrapping_sub(b'0');
        if x > 9 {
            return None;
        }
        v = v * 10 + u32::from(x);
    }
    Some(v)
}

/// `HH:MM:SS` with optional `.mmm` (or more fraction digits, truncated to ms).
#[inline]
fn time_of_day(i: &str) -> Res<'_, u32> {
    let b = i.as_bytes();
    let err = || nom::Err::Error(());
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return Err(err());
    }
    let (h, m, s) = (
        fixed_digits(b, 2).ok_or_else(err)?,
        fixed_digits(&b[3..], 2).ok_or_else(err)?,
        fixed_digits(&b[6..], 2).ok_or_else(err)?,
    );
    if h > 23 || m > 59 || s > 60 {
        return Err(err());
    }
    let mut end = 8;
    let mut ms = 0;
    if b.get(8) == Some(&b'.') {
        let n = b[9..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return Err(err());
        }
        let take = n.min(3);
        ms = fixed_digits(&b[9..], take).ok_or_else(err)? * 10u32.pow(3 - take as u32);
        end = 9 + n;
    }
    Ok((&i[end..], (h * 3600 + m * 60 + s.min(59)) * 1000 + ms))
}

/// `YYYY-MM-DD` as days since the epoch.
#[inline]
fn date(i: &str) -> Res<'_, i32> {
    let b = i.as_bytes();
    let err = || nom::Err::Error(());
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return Err(err());
    }
    // consecutive lines carry the same date: remember the last one read on this thread
    let key: [u8; 10] = b[..10].try_into().unwrap_or([0; 10]);
    if let Some(days) = LAST_DATE.with(|c| c.get().filter(|(k, _)| *k == key).map(|(_, d)| d)) {
        return Ok((&i[10..], days));
    }
    let (y, m, d) = (
        fixed_digits(b, 4).ok_or_else(err)?,
        fixed_digits(&b[5..], 2).ok_or_else(err)?,
        fixed_digits(&b[8..], 2).ok_or_else(err)?,
    );
    let days = days_from_civil(y as i32, m as u8, d as u8).ok_or_else(err)?;
    LAST_DATE.with(|c| c.set(Some((key, days))));
    Ok((&i[10..], days))
}

thread_local! {
    /// The last `YYYY-MM-DD HH:MM` text of an SGLang prefix read (as a number), its day
    /// number and the minute's milliseconds.
    static LAST_MINUTE: std::cell::Cell<Option<(u128, i32, u32)>> = const { std::cell::Cell::new(None) };
    /// The last `YYYY-MM-DD` text read, and its day number.
    static LAST_DATE: std::cell::Cell<Option<([u8; 10], i32)>> = const { std::cell::Cell::new(None) };
}

/// Docker / k8s RFC3339 stamp: `2026-05-12T07:51:36.069569496Z ` (or `+02:00`).
fn docker_stamp(i: &str) -> Res<'_, Stamp> {
    let (i, (days, _, ms)) = (date, char('T'), time_of_day).parse(i)?;
    let (i, _) = if let Some(r) = i.strip_prefix('Z') {
        (r, ())
    } else {
        let (r, _) = (
            nom::character::complete::one_of("+-"),
            digits(2),
            char(':'),
            digits(2),
        )
            .parse(i)?;
        (r, ())
    };
    let (i, _) = char(' ').parse(i)?;
    Ok((i, Stamp::Full { days, ms }))
}

/// docker compose `service-1  | `.
fn compose_wrapper(i: &str) -> Res<'_, ()> {
    let (i, _) = take_while1(|c: char| c.is_ascii_alphanumeric() || "_.-".contains(c)).parse(i)?;
    let (i, _) = take_while1(|c: char| c == ' ').parse(i)?;
    let (i, _) = tag("| ").parse(i)?;
    Ok((i, ()))
}

/// The syslog / `journalctl` wrapper of a service's log: `Nov 30 18:13:09 host ident[1234]: `
/// (the identifier's `[pid]` optional). Its stamp has no year, as vLLM's has none; it
/// dates the lines of engines that print no stamp (SGLang 0.1.x–0.2.x).
fn journal_wrapper(i: &str) -> Res<'_, Stamp> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let err = || nom::Err::Error(());
    let month = MONTHS
        .iter()
        .position(|m| i.starts_with(m))
        .ok_or_else(err)?;
    // the day is padded with a space (`Nov  3`), or not
    let rest = i[3..].strip_prefix(' ').ok_or_else(err)?;
    let rest = rest.strip_prefix(' ').unwrap_or(rest);
    let n = rest.bytes().take_while(u8::is_ascii_digit).count();
    let day: u8 = rest[..n.min(2)].parse().map_err(|_| err())?;
    if n > 2 || !(1..=31).contains(&day) {
        return Err(err());
    }
    let (i, ms) = time_of_day(rest[n..].strip_prefix(' ').ok_or_else(err)?)?;
    let (i, _) = char(' ').parse(i)?;
    let (i, _) = take_while1(|c: char| c != ' ' && c != ':').parse(i)?;
    let (i, _) = char(' ').parse(i)?;
    let (i, _) = take_while1(|c: char| c != ' ' && c != ':' && c != '[').parse(i)?;
    let i = match i.strip_prefix('[') {
        Some(r) => {
            let (r, _) = take_while1(|c: char| c.is_ascii_digit()).parse(r)?;
            r.strip_prefix(']').ok_or_else(err)?
        }
        None => i,
    };
    let (i, _) = tag(": ").parse(i)?;
    Ok((
        i,
        Stamp::MonthDay {
            month: month as u8 + 1,
            day,
            ms,
        },
    ))
}

/// SGLang `[2026-05-09 22:29:22.104 DP0 TP0] `, `[22:29:22 TP0] `, `[2025-07-06 10:00:06] `.
///
/// Every line of an SGLang log starts with this, so it is read byte by byte rather than
/// through combinators.
#[inline]
fn sglang_prefix(i: &str) -> Res<'_, (Stamp, Ranks)> {
    let b = i.as_bytes();
    let err = || nom::Err::Error(());
    if b.first() != Some(&b'[') {
        return Err(err());
    }
    let (rest, day) = if b.get(5) == Some(&b'-') {
        let (r, days) = date(&i[1..])?;
        (r.strip_prefix(' ').ok_or_else(err)?, Some(days))
    } else {
        (&i[1..], None)
    };
    let (rest, ms) = time_of_day(rest)?;
    let stamp = match day {
        Some(days) => Stamp::Full { days, ms },
        None => Stamp::TimeOnly { ms },
    };
    let mut ranks = Ranks::default();
    let r = rest.as_bytes();
    let mut pos = 0;
    while r.get(pos) == Some(&b' ') {
        let name_start = pos + 1;
        let mut j = name_start;
        while j < r.len() && (r[j].is_ascii_uppercase() || r[j] == b'_') {
            j += 1;
        }
        let num_start = j;
        while j < r.len() && r[j].is_ascii_digit() {
            j += 1;
        }
        if num_start == name_start || j == num_start || j - num_start > 6 {
            return Err(err());
        }
        let n = fixed_digits(&r[num_start..], j - num_start).ok_or_else(err)?;
        ranks.set(&rest[name_start..num_start], n);
        pos = j;
    }
    if r.get(pos) != Some(&b']') {
        return Err(err());
    }
    pos += 1;
    if r.get(pos) == Some(&b' ') {
        pos += 1;
    }
    Ok((&rest[pos..], (stamp, ranks)))
}

/// SGLang 0.1.18–0.2.12 `[gpu_id=0] ` / `[gpu=0] `.
fn sglang_gpu_tag(i: &str) -> Res<'_, u32> {
    let (i, _) = char('[').parse(i)?;
    let (i, _) = (tag("gpu"), opt(tag("_id")), char('=')).parse(i)?;
    let (i, n) = take_while1(|c: char| c.is_ascii_digit()).parse(i)?;
    let (i, _) = tag("] ").parse(i)?;
    Ok((i, n.parse().map_err(|_| nom::Err::Error(()))?))
}

/// vLLM process tag `(APIServer pid=31337) ` / `(RayWorkerWrapper pid=12, ip=10.0.0.1) `.
/// SGLang under Python's logging with its own format (docs/formats.md §1, other logging
/// configurations): `2025-11-04 17:40:09 INFO 20457 [DP1 TP1 EP1 scheduler_metrics_mixin.py:222] `
/// — date and time (milliseconds after `,` or `.`), level, process id, and in brackets the
/// rank tags and the source file.
#[cold]
#[inline(never)]
fn logging_prefix(i: &str) -> Res<'_, (Stamp, Level, Ranks)> {
    let err = || nom::Err::Error(());
    let (r, days) = date(i)?;
    let r = r.strip_prefix(' ').ok_or_else(err)?;
    // Python's default `%(asctime)s` puts a comma before the milliseconds
    let (r, mut ms) = time_of_day(r)?;
    let r = match r.strip_prefix(',') {
        Some(frac) => {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            let take = n.min(3);
            if take == 0 {
                return Err(err());
            }
            ms += fixed_digits(frac.as_bytes(), take).ok_or_else(err)? * 10u32.pow(3 - take as u32);
            &frac[n..]
        }
        None => r,
    };
    let (r, lvl) = (char(' '), level, char(' '))
        .parse(r)
        .map(|(r, (_, l, _))| (r, l))?;
    let (r, _) = take_while1(|c: char| c.is_ascii_digit()).parse(r)?;
    let r = r.strip_prefix(" [").ok_or_else(err)?;
    let close = r.find("] ").ok_or_else(err)?;
    let mut ranks = Ranks::default();
    let mut file = false;
    for tag in r[..close].split(' ') {
        let name_len = tag.bytes().take_while(|c| c.is_ascii_uppercase()).count();
        let num = &tag[name_len..];
        if name_len > 0
            && !num.is_empty()
            && num.len() <= 6
            && num.bytes().all(|c| c.is_ascii_digit())
        {
            ranks.set(
                &tag[..name_len],
                fixed_digits(num.as_bytes(), num.len()).ok_or_else(err)?,
            );
        } else if tag.contains(".py:") {
            file = true;
        } else {
            return Err(err());
        }
    }
    if !file {
        return Err(err());
    }
    Ok((&r[close + 2..], (Stamp::Full { days, ms }, lvl, ranks)))
}

fn vllm_process(i: &str) -> Res<'_, &str> {
    let (i, _) = char('(').parse(i)?;
    let close = i.find(") ").ok_or(nom::Err::Error(()))?;
    let inner = &i[..close];
    let name_end = inner.find(" pid=").ok_or(nom::Err::Error(()))?;
    Ok((&i[close + 2..], &inner[..name_end]))
}

fn level(i: &str) -> Res<'_, Level> {
    let (rest, word) = take_while1(|c: char| c.is_ascii_uppercase()).parse(i)?;
    let l = match word {
        "INFO" => Level::Info,
        "WARNING" | "WARN" => Level::Warning,
        "ERROR" => Level::Error,
        "DEBUG" => Level::Debug,
        "CRITICAL" => Level::Critical,
        _ => return Err(nom::Err::Error(())),
    };
    Ok((rest, l))
}

/// vLLM `INFO 05-27 09:10:11 [loggers.py:116] ` (brackets optional, path allowed).
fn vllm_prefix(i: &str) -> Res<'_, (Level, Stamp)> {
    let (i, (lvl, _, month, _, day, _, ms, _)) = (
        level,
        char(' '),
        digits(2),
        char('-'),
        digits(2),
        char(' '),
        time_of_day,
        char(' '),
    )
        .parse(i)?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(nom::Err::Error(()));
    }
    let (i, _) = opt(char('[')).parse(i)?;
    let (i, _) = take_while1(|c: char| !matches!(c, ':' | ']' | ' ')).parse(i)?;
    let (i, _) = (
        char(':'),
        take_while1(|c: char| c.is_ascii_digit()),
        char(']'),
    )
        .parse(i)?;
    let i = i.strip_prefix(' ').unwrap_or(i);
    Ok((
        i,
        (
            lvl,
            Stamp::MonthDay {
                month: month as u8,
                day: day as u8,
                ms,
            },
        ),
    ))
}

/// Splits a normalised line into its prefix and message.
///
/// Wrappers (docker stamp, compose service) come off first; their stamp is kept only when
/// the engine prefix has none (SGLang before 0.2.14, uvicorn lines). Doubled SGLang prefixes
/// resolve to the innermost one, which is the engine's own.
pub fn split(line: &str) -> (Prefix<'_>, &str) {
    common_sglang(line).unwrap_or_else(|| split_from(line, true))
}

/// The two prefixes of nearly every line of an SGLang server log, `[YYYY-MM-DD HH:MM:SS] `
/// (the HTTP server's) and `[YYYY-MM-DD HH:MM:SS TPn] ` (the scheduler's), read at fixed
/// offsets; `None` for anything else, which the general reading then takes. They are the
/// same for every line of a log, and the general reading's tries (wrappers, doubled
/// prefixes, rank tags in any order) were a quarter of a log's reading time.
#[inline]
pub(crate) fn common_sglang(line: &str) -> Option<(Prefix<'_>, &str)> {
    let b = line.as_bytes();
    if b.first() != Some(&b'[') || b.get(11) != Some(&b' ') {
        return None;
    }
    // consecutive lines share their minute: `YYYY-MM-DD HH:MM` as the last one read on this
    // thread leaves only the seconds to read (as `time_of_day` reads them)
    let key = u128::from_le_bytes(b.get(1..17)?.try_into().ok()?);
    let cached = LAST_MINUTE.with(|c| c.get()).filter(|&(k, _, _)| k == key);
    let (days, ms, rest) = match cached {
        Some((_, days, minute)) if b.get(17) == Some(&b':') && b.get(20) != Some(&b'.') => {
            let s = fixed_digits(b.get(18..20)?, 2)?;
            if s > 60 {
                return None;
            }
            (days, minute + s.min(59) * 1000, &line[20..])
        }
        _ => {
            let (_, days) = date(line.get(1..)?).ok()?;
            let (rest, ms) = time_of_day(line.get(12..)?).ok()?;
            if b[17] == b':' {
                LAST_MINUTE.with(|c| c.set(Some((key, days, ms - ms % 60_000))));
            }
            (days, ms, rest)
        }
    };
    let r = rest.as_bytes();
    let mut ranks = Ranks::default();
    let mut i = 0;
    if r.get(..3) == Some(b" TP") {
        let n = r[3..]
            .iter()
            .take(4)
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 || n > 3 {
            return None;
        }
        ranks.tp = Some(fixed_digits(&r[3..], n)?);
        i = 3 + n;
    }
    // a second prefix or a `[gpu=0]` tag after this one: the general reading
    if r.get(i..i + 2) != Some(b"] ") || r.get(i + 2) == Some(&b'[') {
        return None;
    }
    let prefix = Prefix {
        style: Style::Sglang,
        stamp: Stamp::Full { days, ms },
        ranks,
        ..Prefix::default()
    };
    Some((prefix, rest.get(i + 2..)?))
}

/// [`split`]; `search`: whether to look for a prefix further into the line when none starts
/// it (not when already searching: that made a line of many `[1` exponential).
fn split_from(line: &str, search: bool) -> (Prefix<'_>, &str) {
    let mut p = Prefix::default();
    // a file's first line may begin with a byte order mark
    let mut rest = line.strip_prefix('\u{feff}').unwrap_or(line);
    let mut wrapper_stamp = Stamp::None;
    // wrappers start with a digit (docker stamp) or a service name; engine prefixes with
    // `[` or `(` — most lines skip this loop at their first byte
    for _ in 0..3 {
        if !rest
            .as_bytes()
            .first()
            .is_some_and(u8::is_ascii_alphanumeric)
        {
            break;
        }
        if let Ok((r, s)) = docker_stamp(rest) {
            wrapper_stamp = s;
            rest = r;
        } else if let Ok((r, s)) = journal_wrapper(rest) {
            wrapper_stamp = s;
            rest = r;
        } else if let Ok((r, ())) = compose_wrapper(rest) {
            rest = r;
        } else {
            break;
        }
    }
    if rest.starts_with('[') {
        while let Ok((r, (stamp, ranks))) = sglang_prefix(rest) {
            p.style = Style::Sglang;
            p.stamp = stamp;
            p.ranks = ranks;
            rest = r;
        }
        if let Ok((r, gpu)) = sglang_gpu_tag(rest) {
            p.style = Style::Sglang;
            p.ranks.tp.get_or_insert(gpu);
            rest = r;
        }
    }
    if p.style == Style::Bare && rest.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        if let Ok((r, (stamp, lvl, ranks))) = logging_prefix(rest) {
            p.style = Style::Sglang;
            p.stamp = stamp;
            p.level = Some(lvl);
            p.ranks = ranks;
            rest = r;
        }
    }
    if p.style == Style::Bare {
        let mut r = rest;
        while let Ok((after, name)) = vllm_process(r) {
            p.process = Some(name);
            r = after;
        }
        if let Ok((after, (lvl, stamp))) = vllm_prefix(r) {
            p.style = Style::Vllm;
            p.level = Some(lvl);
            p.stamp = stamp;
            rest = after;
        } else if p.process.is_some() {
            rest = r;
        } else if let Some((pre, msg)) = search.then(|| search_prefix(rest)).flatten() {
            // a prefix in the middle of the line (an unknown wrapper before it)
            return (pre, msg);
        }
    }
    if !p.stamp.is_some() {
        p.stamp = wrapper_stamp;
    }
    (p, rest)
}

/// Looks for an engine prefix after an unknown wrapper: `[` starting an SGLang stamp, or a
/// vLLM level word followed by `MM-DD`.
fn search_prefix(line: &str) -> Option<(Prefix<'_>, &str)> {
    let b = line.as_bytes();
    let limit = b.len().min(160);
    for i in 1..limit {
        let c = b[i];
        let after_space = b[i - 1] == b' ';
        if c == b'[' && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let (p, msg) = split_from(&line[i..], false);
            if p.style != Style::Bare {
                return Some((p, msg));
            }
        } else if after_space && matches!(c, b'I' | b'W' | b'E' | b'D' | b'C') {
            if let Ok((msg, (lvl, stamp))) = vllm_prefix(&line[i..]) {
                let p = Prefix {
                    style: Style::Vllm,
                    stamp,
                    level: Some(lvl),
                    ..Prefix::default()
                };
                return Some((p, msg));
            }
        }
    }
    None
}

/// The stamp of a line, for the calendar pre-scan of a chunk.
pub fn stamp_of(raw: &[u8], scratch: &mut String) -> Stamp {
    let line = normalize(raw, scratch);
    split(line).0.stamp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_wrappers() {
        let day = |d: u8, ms: u32| Stamp::MonthDay {
            month: 11,
            day: d,
            ms,
        };
        let t = (18 * 3600 + 13 * 60 + 9) * 1000;
        for (line, want) in [
            (
                "Nov  3 18:13:09 node-1 python3[12345]: x",
                Some(("x", day(3, t))),
            ),
            ("Nov 3 18:13:09 node-1 vllm: x", Some(("x", day(3, t)))),
            (
                "Nov 30 18:13:09.250 h sglang[7]: x",
                Some(("x", day(30, t + 250))),
            ),
            ("Nov 32 18:13:09 h a: x", None),
            ("Nov 300 18:13:09 h a: x", None),
            ("Nox  3 18:13:09 h a: x", None),
            ("Nov  3 18:13:09 h a[x]: x", None),
            ("Nov  3 18:13:09 h: x", None),
        ] {
            let got = journal_wrapper(line).ok();
            assert_eq!(got, want, "{line:?}");
        }
    }

    /// The fixed-offset reading of the common SGLang prefixes gives what the general one
    /// gives, whenever it answers: on every fixture line, and on those lines with each byte
    /// of their first 30 replaced by each of a set of look-alikes.
    #[test]
    fn common_prefixes_read_like_the_general_reading() {
        let mut lines: Vec<String> = vec![
            "[2026-05-10 00:00:01] INFO:     127.0.0.1:48925 - \"POST /v1 HTTP/1.1\" 200 OK".into(),
            "[2026-05-10 23:59:60 TP7] Decode batch, #running-req: 1".into(),
            "[2026-05-10 00:00:00 TP12] Prefill batch, #new-seq: 1".into(),
        ];
        lines.extend(crate::testing::fixture_lines(&["sglang", "vllm", "messy"]));
        let (mut answered, mut checked) = (0, 0);
        let mut check = |l: &str| {
            checked += 1;
            // read twice: the second reading finds its minute cached
            let first = common_sglang(l);
            assert_eq!(first, common_sglang(l), "{l:?}");
            if let Some(fast) = first {
                answered += 1;
                assert_eq!(fast, split_from(l, true), "{l:?}");
            }
        };
        for l in &lines {
            check(l);
            let with = [
                "[", "]", " ", "0", "6", "9", "-", ":", ".", "T", "P", "x", "é",
            ];
            for m in crate::testing::mutations(l, 30, &with) {
                check(&m);
            }
        }
        assert!(
            answered > 1000 && checked > 10 * answered,
            "{answered} of {checked}"
        );
    }

    /// Regression (found by the `log_line` fuzz target): searching for a prefix after an
    /// unknown wrapper searched again from every `[` followed by a digit, so a line of many
    /// `[1` took exponential time (a fuzzer input ran for minutes). One search per line now.
    #[test]
    fn many_brackets_are_searched_once() {
        let line = "x".to_string() + &"[1;3(A ".repeat(24);
        let t = std::time::Instant::now();
        let (p, msg) = split(&line);
        assert_eq!((p.style, msg), (Style::Bare, line.as_str()));
        // the whole search is a few thousand steps; the old one took 2^24
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
        // a wrapper before a real prefix is still found
        let (p, msg) =
            split("weird-wrapper [1] [2026-05-10 00:00:01 TP0] Decode batch. #running-req: 1");
        assert_eq!(p.style, Style::Sglang);
        assert!(msg.starts_with("Decode batch"));
    }

    fn norm(s: &[u8]) -> String {
        let mut scratch = String::new();
        normalize(s, &mut scratch).to_string()
    }

    #[test]
    fn ansi_spellings() {
        let want = "(APIServer pid=1) INFO 05-12 07:51:39 [loggers.py:271] x";
        for raw in [
            &b"\x1b[1;36m(APIServer pid=1)\x1b[0;0m INFO 05-12 07:51:39 [loggers.py:271] x\r"[..],
            b"[1;36m(APIServer pid=1)[0;0m INFO 05-12 07:51:39 [loggers.py:271] x",
            b"^[[1;36m(APIServer pid=1)^[[0;0m INFO 05-12 07:51:39 [loggers.py:271] x",
            b"#033[1;36m(APIServer pid=1)#033[0;0m INFO 05-12 07:51:39 [loggers.py:271] x",
            b"\\033[1;36m(APIServer pid=1)\\033[0;0m INFO 05-12 07:51:39 [loggers.py:271] x",
            b"(APIServer pid=1) \x1b[32mINFO\x1b[0m \x1b[90m05-12 07:51:39\x1b[0m [loggers.py:271] x",
        ] {
            assert_eq!(norm(raw), want, "{}", String::from_utf8_lossy(raw));
        }
        // things that look close but are not colour codes stay
        assert_eq!(
            norm(b"[22:29:22 TP0] a [m] [12]"),
            "[22:29:22 TP0] a [m] [12]"
        );
    }

    #[test]
    fn chunk_level_colour_detection() {
        assert!(!has_ansi(
            b"[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 4\n[22:29:22] x [m] [12]\n"
        ));
        for c in [
            &b"a\n\x1b[1;36m(APIServer pid=1)\n"[..],
            b"x [0;0m y",
            b"^[[32mINFO",
            b"#033[1;36m",
        ] {
            assert!(has_ansi(c), "{}", String::from_utf8_lossy(c));
        }
        let mut scratch = String::new();
        assert_eq!(
            normalize_str("[1;36m(A pid=1)[0;0m INFO\r", &mut scratch, true),
            "(A pid=1) INFO"
        );
        let mut scratch = String::new();
        assert_eq!(normalize_str("plain\r", &mut scratch, false), "plain");
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        assert_eq!(norm(b"ab\xffcd"), "ab\u{fffd}cd");
    }

    #[test]
    fn prefixes() {
        let (p, m) =
            split("[2026-05-09 22:29:22.104 DP1 PP0 ATTN_CP0 MOE_DP0 TP3 EP2] Decode batch");
        assert_eq!(m, "Decode batch");
        assert_eq!(p.style, Style::Sglang);
        assert_eq!(
            p.ranks,
            Ranks {
                dp: Some(1),
                tp: Some(3),
                pp: Some(0),
                ep: Some(2),
                attn_cp: Some(0),
                moe_dp: Some(0)
            }
        );
        assert_eq!(
            p.stamp,
            Stamp::Full {
                days: days_from_civil(2026, 5, 9).unwrap(),
                ms: 80_962_104
            }
        );

        let (p, m) = split("[22:29:22 TP0] Decode batch");
        assert_eq!(
            (p.stamp, p.ranks.tp, m),
            (Stamp::TimeOnly { ms: 80_962_000 }, Some(0), "Decode batch")
        );

        let (p, m) = split("[gpu_id=2] Decode batch.");
        assert_eq!(
            (p.style, p.ranks.tp, m),
            (Style::Sglang, Some(2), "Decode batch.")
        );

        let (p, m) = split("2026-05-12T07:51:36.069569496Z sglang-1  | [2025-03-11 16:44:27] [2025-03-11 01:44:27 TP0] Decode batch");
        assert_eq!(
            (p.stamp, p.ranks.tp, m),
            (
                Stamp::Full {
                    days: days_from_civil(2025, 3, 11).unwrap(),
                    ms: 6_267_000
                },
                Some(0),
                "Decode batch"
            )
        );

        let (p, m) = split("(EngineCore_DP0 pid=31401) INFO 09-13 09:10:02 [kv_cache_utils.py:864] GPU KV cache size");
        assert_eq!(
            (p.style, p.process, p.level, m),
            (
                Style::Vllm,
                Some("EngineCore_DP0"),
                Some(Level::Info),
                "GPU KV cache size"
            )
        );
        assert_eq!(
            p.stamp,
            Stamp::MonthDay {
                month: 9,
                day: 13,
                ms: 33_002_000
            }
        );

        let (p, m) = split("WARNING 06-01 09:10:12 scheduler.py:1077] Sequence group");
        assert_eq!((p.level, m), (Some(Level::Warning), "Sequence group"));

        let (p, m) = split("(APIServer pid=1) INFO:     172.17.0.1:53400 - \"POST\"");
        assert_eq!(
            (p.style, p.process, m),
            (
                Style::Bare,
                Some("APIServer"),
                "INFO:     172.17.0.1:53400 - \"POST\""
            )
        );

        let (p, m) = split("2026-05-12T07:51:36Z decode out of memory happened");
        assert_eq!(
            (p.stamp.is_some(), m),
            (true, "decode out of memory happened")
        );

        let (p, m) = split("node3 pod-x: INFO 05-12 07:51:39 [loggers.py:271] Engine 000: x");
        assert_eq!((p.style, m), (Style::Vllm, "Engine 000: x"));
    }
}
