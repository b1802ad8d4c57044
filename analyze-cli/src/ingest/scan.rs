//! The parallel scan of a log: each file's lines visited chunk by chunk on all cores, their
//! stamps completed, and every line accounted for (parsed, other, malformed) in a [`Tally`].

use crate::ingest::inputs::{Dates, Skipped};
use std::borrow::Cow;
use tokstat_parsers::bench_console::{self, Block};
use tokstat_parsers::record::{Body, Engine, Gauges, Line, StepKind};
use tokstat_parsers::scan::{self, lines, str_lines, text_lines, Chunk};
use tokstat_parsers::sglang::Keep;
use tokstat_parsers::source::{Input, Source};
use tokstat_parsers::stamp::{Calendar, Stamp, Ts};
use tokstat_parsers::wrappers::prefix::Style;
use tokstat_parsers::wrappers::{glued, wrapped};
use tokstat_parsers::Quick;

/// How many malformed line numbers a tally keeps to show.
pub const SAMPLES: usize = 5;

/// Line accounting for one file: `total = parsed + other + malformed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Tally {
    pub total: u64,
    pub parsed: u64,
    pub other: u64,
    pub malformed: u64,
    /// Of the parsed lines, those cut short: their fields before the cut were read.
    pub partial: u64,
    /// First malformed lines: `(line number, what was wrong)`.
    #[serde(deserialize_with = "reasons")]
    pub samples: Vec<(u64, &'static str)>,
}

impl Tally {
    fn count(&mut self, line_no: u64, body: &Body<'_>) {
        self.total += 1;
        match body {
            Body::Other => self.other += 1,
            Body::Malformed(why) => {
                self.malformed += 1;
                if self.samples.len() < SAMPLES {
                    self.samples.push((line_no, why));
                }
            }
            Body::Step(s) if s.partial => {
                self.parsed += 1;
                self.partial += 1;
            }
            _ => self.parsed += 1,
        }
    }

    /// Adds a later part of the same file (or another file, for totals).
    pub fn merge(&mut self, o: &Tally) {
        self.total += o.total;
        self.parsed += o.parsed;
        self.other += o.other;
        self.malformed += o.malformed;
        self.partial += o.partial;
        for s in &o.samples {
            if self.samples.len() < SAMPLES {
                self.samples.push(*s);
            }
        }
    }
}

/// A file being scanned.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct FileCtx {
    /// The path as given (or `-`).
    pub source: String,
    /// The instance name of the file's lines ([`source::instance_names`]): the file stem,
    /// with its folder when stems clash.
    pub stem: String,
}

impl FileCtx {
    /// The instance a line belongs to: the file stem, plus `#DP{n}` for a DP rank. vLLM's
    /// engine 0 keeps the bare stem, since every vLLM since 0.8.3 prints `Engine 000:` even
    /// with a single engine.
    pub fn instance(&self, line: &Line<'_>) -> Cow<'_, str> {
        self.instance_of(instance_rank(line))
    }

    /// The instance name for a rank found by [`instance_rank`].
    pub fn instance_of(&self, dp: Option<u32>) -> Cow<'_, str> {
        match dp {
            Some(n) => Cow::Owned(format!("{}#DP{n}", self.stem)),
            None => Cow::Borrowed(&self.stem),
        }
    }
}

/// The rank that tells instances of one file apart (see [`FileCtx::instance`]).
pub fn instance_rank(line: &Line<'_>) -> Option<u32> {
    match &line.body {
        Body::Step(s) if s.engine == Some(Engine::Vllm) => s.engine_index.filter(|&i| i > 0),
        _ => line.prefix.ranks.dp,
    }
}

/// One line as handed to a visitor.
pub struct Visit<'a, 'l> {
    pub file: &'a FileCtx,
    /// 1-based line number.
    pub line_no: u64,
    pub ts: Option<Ts>,
    pub line: &'a Line<'l>,
}

/// An SGLang stats line read only as far as its gauges (see [`Visitor::QUICK`]).
pub struct Stats<'a> {
    pub ts: Option<Ts>,
    /// The DP rank of the line's prefix ([`instance_rank`]).
    pub dp: Option<u32>,
    pub kind: StepKind,
    pub gauges: &'a Gauges,
}

/// What the lines of a chunk are handed to.
pub trait Visitor {
    /// Whether SGLang stats lines may come as [`Stats`] instead of whole lines: true for
    /// aggregates, which read a few values of each, false for writers of whole records.
    const QUICK: bool = false;
    /// The gauges of a quickly read stats line the visitor reads (the others are checked,
    /// not read).
    const KEEP: Keep = Keep::ALL;
    /// Takes a line that is a record (not `Other`, not `Malformed`).
    fn line(&mut self, v: Visit<'_, '_>);
    /// Takes a stats line read quickly (only called when [`Visitor::QUICK`]).
    fn stats(&mut self, _s: Stats<'_>) {}
    /// Takes an HTTP access line whose status is 400 or more (read without building a
    /// record).
    fn access(&mut self, _a: Access<'_>) {}
    /// Takes the chunk's HTTP access lines that were answered (status below 400) and
    /// stamped, as `(second, lines)` in the order read (the second's start, ms): read
    /// without building a record, and handed once a chunk (they are most lines of an
    /// access-heavy log).
    fn answered(&mut self, _stamped: &[(i64, u32)]) {}
    /// Takes `n` answered access lines with no stamp, which follow the lines handed before
    /// them.
    fn answered_unstamped(&mut self, _n: u32) {}
    /// Takes a serving benchmark's console summary whose header is line `line_no` of `file`
    /// (its lines are counted as parsed: see [`tokstat_parsers::bench_console`]).
    fn console(&mut self, _file: &FileCtx, _line_no: u64, _block: Block) {}
}

/// An HTTP access line that did not succeed (see [`Visitor::access`]).
pub struct Access<'a> {
    pub file: &'a FileCtx,
    pub line_no: u64,
    pub ts: Option<Ts>,
    pub status: u16,
    /// The message, past the logger's prefix.
    pub msg: &'a str,
}

/// Result of a chunk: the visitor's state and the chunk's tally.
pub struct ChunkOut<R> {
    pub tally: Tally,
    pub out: R,
}

/// Visits every line of a chunk: parse, complete the stamp, tally, then hand it to `state`.
pub fn visit_chunk<V: Visitor>(
    file: &FileCtx,
    chunk: Chunk<'_>,
    state: V,
) -> (ChunkOut<V>, Calendar) {
    let mut acc = Acc {
        file,
        cal: chunk.calendar,
        tally: Tally::default(),
        answered: Answered::default(),
        console: None,
        held: None,
        next: &[],
        state,
    };
    let mut scratch = String::new();
    let line_no = |i: usize| chunk.first_line + i as u64 + 1;
    if V::QUICK {
        // lines read quickly are checked as UTF-8 one by one as they are found (nearly all are
        // ASCII, known from the newline search), and searched for colour codes only when
        // they might hold one: most logs have none
        let mut rows = text_lines(chunk.bytes);
        let mut i = 0;
        while let Some(raw) = rows.next() {
            acc.next = rows.rest();
            i += 1;
            let i = i - 1;
            match raw {
                Ok(raw) => tokstat_parsers::visit_quick_line_split(
                    raw,
                    &mut scratch,
                    V::KEEP,
                    &mut acc,
                    |acc, q| match q {
                        Quick::Line(line) => acc.line(line_no(i), line, Some(raw)),
                        Quick::Other(stamp) => acc.other_text(line_no(i), stamp, raw),
                        // a stats row as wide as a terminal may go on in the next row: read
                        // whole, where it can be held
                        Quick::Stats(..)
                            if wrapped::may_be_full_row(raw.len())
                                && wrapped::is_full_row(raw)
                                && acc.next_may_continue() =>
                        {
                            tokstat_parsers::visit_str_line(raw, &mut String::new(), true, |line| {
                                acc.line(line_no(i), line, Some(raw))
                            })
                        }
                        Quick::Stats(stamp, dp, kind, gauges) => {
                            if acc.held.is_some() {
                                acc.release_held();
                            }
                            acc.hand_unstamped();
                            acc.tally.total += 1;
                            acc.tally.parsed += 1;
                            let ts = acc.cal.resolve(stamp);
                            acc.state.stats(Stats {
                                ts,
                                dp,
                                kind,
                                gauges,
                            })
                        }
                    },
                    |acc, stamp| acc.answered(stamp),
                ),
                Err(raw) => tokstat_parsers::visit_line(raw, &mut scratch, |line| {
                    acc.line(line_no(i), line, None)
                }),
            }
        }
    } else {
        // validating the whole chunk once is much cheaper than each line; a chunk with
        // invalid bytes falls back to per-line validation (and replacement)
        match tokstat_parsers::text::utf8(chunk.bytes) {
            Some(text) => {
                // and one search for colour codes: most logs have none
                let ansi = tokstat_parsers::wrappers::prefix::has_ansi(chunk.bytes);
                let mut rows = str_lines(text);
                let mut i = 0;
                while let Some(raw) = rows.next() {
                    acc.next = rows.rest();
                    tokstat_parsers::visit_str_line(raw, &mut scratch, ansi, |line| {
                        acc.line(line_no(i), line, Some(raw))
                    });
                    i += 1;
                }
            }
            None => {
                let mut rows = lines(chunk.bytes);
                let mut i = 0;
                while let Some(raw) = rows.next() {
                    acc.next = rows.rest();
                    // (the lines that are UTF-8 are read as text, as above)
                    let text = std::str::from_utf8(raw).ok();
                    tokstat_parsers::visit_line(raw, &mut scratch, |line| {
                        acc.line(line_no(i), line, text)
                    });
                    i += 1;
                }
            }
        }
    }
    acc.release_held();
    acc.hand_answered();
    acc.end_console();
    let out = ChunkOut {
        tally: acc.tally,
        out: acc.state,
    };
    (out, acc.cal)
}

/// What a chunk's lines add to as they are visited.
struct Acc<'a, 'c, V> {
    file: &'a FileCtx,
    cal: Calendar,
    tally: Tally,
    answered: Answered,
    /// A benchmark summary under way: its header's line number and the lines after it.
    console: Option<(u64, Vec<String>)>,
    /// A record line cut short, waiting for the next line (see [`Held`]).
    held: Option<Held>,
    /// The chunk's bytes after the line being read (the next line first).
    next: &'c [u8],
    state: V,
}

/// Answered access lines not yet handed to the visitor (see [`Visitor::answered`]): those of
/// the current second counted, the seconds before it kept for the end of the chunk; those
/// with no stamp counted apart, and handed before any other line goes to the visitor (they
/// follow the stamp it saw last).
struct Answered {
    /// The current second's start, ms (`i64::MIN` before the first).
    sec: i64,
    n: u32,
    unstamped: u32,
    stamped: Vec<(i64, u32)>,
}

impl Default for Answered {
    fn default() -> Answered {
        Answered {
            sec: i64::MIN,
            n: 0,
            unstamped: 0,
            stamped: Vec::new(),
        }
    }
}

impl<V: Visitor> Acc<'_, '_, V> {
    /// A line that holds no record: its stamp.
    #[inline]
    fn other(&mut self, stamp: Stamp) -> Option<Ts> {
        self.tally.total += 1;
        self.tally.other += 1;
        self.cal.resolve(stamp)
    }

    /// A line that holds no record, of text `raw`: an access line's status is read.
    #[inline]
    fn other_text(&mut self, line_no: u64, stamp: Stamp, raw: &str) {
        if self.console.is_some() && self.console_line(raw) {
            return;
        }
        if self.held.is_some() {
            // (a line of no stamp and no record may carry a held record's rest)
            if stamp == Stamp::None && wrapped::may_continue(raw) && self.continue_held(raw) {
                return;
            }
            self.release_held();
        }
        let ts = self.other(stamp);
        self.status(line_no, ts, raw);
    }

    /// Reads a line with no record (counted as other): a benchmark summary's header, or an
    /// access line, whose status is counted or handed to the visitor if it failed.
    #[inline]
    fn status(&mut self, line_no: u64, ts: Option<Ts>, raw: &str) {
        if matches!(raw.as_bytes().first(), Some(b'=' | b' ')) && bench_console::is_header(raw) {
            return self.console_header(line_no);
        }
        match tokstat_parsers::access::status(raw) {
            Some(status) if status >= 400 => self.access(line_no, ts, status, raw),
            Some(_) => self.count_answered(ts),
            None => {}
        }
    }

    /// An access line ending in `" 200 OK`: a line that holds no record, counted.
    #[inline(always)]
    fn answered(&mut self, stamp: Stamp) {
        if self.held.is_some() {
            self.release_held();
        }
        let ts = self.other(stamp);
        self.count_answered(ts);
    }

    #[inline(always)]
    fn count_answered(&mut self, ts: Option<Ts>) {
        let a = &mut self.answered;
        match ts {
            // (one compare: within the current second)
            Some(t) if (t.0.wrapping_sub(a.sec) as u64) < 1000 => a.n += 1,
            Some(t) => self.next_second(t.0),
            None => a.unstamped += 1,
        }
    }

    /// Keeps the current second's count, and starts one for `t`'s.
    #[inline(never)]
    fn next_second(&mut self, t: i64) {
        let a = &mut self.answered;
        if a.n > 0 {
            a.stamped.push((a.sec, a.n));
        }
        a.sec = t - t.rem_euclid(1000);
        a.n = 1;
    }

    /// Hands the unstamped answered lines counted so far to the visitor, before another line.
    #[inline(always)]
    fn hand_unstamped(&mut self) {
        if self.answered.unstamped > 0 {
            self.hand_unstamped_now();
        }
    }

    #[cold]
    fn hand_unstamped_now(&mut self) {
        let n = std::mem::take(&mut self.answered.unstamped);
        self.state.answered_unstamped(n);
    }

    /// Hands every answered line counted to the visitor: at the end of the chunk.
    fn hand_answered(&mut self) {
        self.hand_unstamped();
        let a = &mut self.answered;
        if a.n > 0 {
            a.stamped.push((a.sec, a.n));
            a.n = 0;
        }
        if !a.stamped.is_empty() {
            self.state.answered(&self.answered.stamped);
        }
    }

    #[cold]
    fn access(&mut self, line_no: u64, ts: Option<Ts>, status: u16, msg: &str) {
        self.hand_unstamped();
        self.state.access(Access {
            file: self.file,
            line_no,
            ts,
            status,
            msg,
        });
    }

    /// A line parsed whole (lent by reference: a line is a few hundred bytes, not worth a
    /// copy per call). `raw` is its text, when it is UTF-8: a line read as malformed, or as
    /// other with no logger prefix, may hold several records glued together ([`glued`]), and
    /// is then read piece by piece.
    #[inline]
    fn line(&mut self, line_no: u64, line: &Line<'_>, raw: Option<&str>) {
        if self.console.is_some() && raw.is_some_and(|raw| self.console_line(raw)) {
            return;
        }
        if self.held.is_some() {
            let goes_on = line.prefix.style == Style::Bare
                && matches!(line.body, Body::Other | Body::Malformed(_))
                && raw.is_some_and(wrapped::may_continue);
            match raw.filter(|_| goes_on) {
                Some(raw) if self.continue_held(raw) => return,
                _ => self.release_held(),
            }
        }
        if let Some(raw) = raw.filter(|raw| glued::worth_splitting(line, raw)) {
            let pieces = glued::pieces(raw);
            if pieces.len() > 1 {
                return self.glued(line_no, &pieces);
            }
        }
        // a record cut short may go on in the next line (a terminal wrapped it): held
        // (the next line is looked at last: most lines are no candidate)
        let held = |raw: &&str| match line.body {
            Body::Step(_) | Body::Malformed(_) if cut_short(&line.body) => self.next_may_continue(),
            // (a record of a logger with no prefix, SGLang 0.1.x, wraps as well)
            Body::Step(_) => wrapped::is_full_row(raw) && self.next_may_continue(),
            Body::Other => {
                line.prefix.style != Style::Bare
                    && self.next_may_continue()
                    && (wrapped::is_full_row(raw) || wrapped::may_open_record(raw))
            }
            _ => false,
        };
        if let Some(raw) = raw.filter(held) {
            self.held = Some(Held {
                line_no,
                first: raw.to_string(),
                text: raw.to_string(),
                more: 0,
            });
            return;
        }
        self.take_line(line_no, line, raw);
    }

    /// A line read: counted, and handed to the visitor when it is a record.
    #[inline]
    fn take_line(&mut self, line_no: u64, line: &Line<'_>, raw: Option<&str>) {
        let ts = self.cal.resolve(line.prefix.stamp);
        self.tally.count(line_no, &line.body);
        if let (Body::Other, Some(raw)) = (&line.body, raw) {
            self.status(line_no, ts, raw);
        }
        if !matches!(line.body, Body::Other | Body::Malformed(_)) {
            self.hand_unstamped();
            self.state.line(Visit {
                file: self.file,
                line_no,
                ts,
                line,
            });
        }
    }
}

/// Whether a line read as `body` may be a record cut at a terminal's width: a step cut short,
/// or a malformed line.
fn cut_short(body: &Body<'_>) -> bool {
    match body {
        Body::Step(s) => s.partial,
        Body::Malformed(_) => true,
        _ => false,
    }
}

/// A record line held back: it was cut short, and the next lines may carry the rest.
struct Held {
    line_no: u64,
    /// Its own text, and the text with the lines joined to it so far.
    first: String,
    text: String,
    /// Lines joined after the first.
    more: u64,
}

/// Lines joined to a held record at most (a record wraps a few times at most).
const MAX_JOINED: u64 = 4;

impl<V: Visitor> Acc<'_, '_, V> {
    /// `raw`, a line with no logger prefix and no record, after a held record: true when it
    /// carries the record's rest (the two read as one record, or as one still cut short).
    #[cold]
    fn continue_held(&mut self, raw: &str) -> bool {
        let Some(held) = self.held.as_mut() else {
            return false;
        };
        if held.more >= MAX_JOINED {
            return false;
        }
        let joined = format!("{}{}", held.text, raw.trim_end_matches('\r'));
        let mut scratch = String::new();
        let line = tokstat_parsers::parse_str_line(&joined, &mut scratch, true);
        // (a row as wide as the terminal may go on still)
        let full = wrapped::is_full_row(raw);
        match &line.body {
            Body::Step(s) if !s.partial && !full => {
                let (line_no, more) = (held.line_no, held.more + 1);
                self.held = None;
                self.take_joined(line_no, more, &line, &joined);
                true
            }
            body if cut_short(body) || (full && matches!(body, Body::Step(_))) => {
                held.text = joined;
                held.more += 1;
                true
            }
            _ => false,
        }
    }

    /// A record read from `rows` physical lines joined: every one of them counted as parsed
    /// (the first is counted by [`Acc::take_line`]).
    fn take_joined(&mut self, line_no: u64, more: u64, line: &Line<'_>, text: &str) {
        self.tally.total += more;
        self.tally.parsed += more;
        self.take_line(line_no, line, Some(text));
    }

    /// The held record read as it is, and the lines joined to it as other.
    #[cold]
    fn release_held(&mut self) {
        let Some(held) = self.held.take() else {
            return;
        };
        let mut scratch = String::new();
        if held.more > 0 {
            // the rows joined so far, when they read as a whole record, or as a record cut
            // short whose first row is as wide as a terminal (a cut line that a terminal
            // wrapped: its rows hold more of it than the first alone)
            let line = tokstat_parsers::parse_str_line(&held.text, &mut scratch, true);
            if matches!(&line.body, Body::Step(s) if !s.partial || wrapped::is_full_row(&held.first))
            {
                return self.take_joined(held.line_no, held.more, &line, &held.text);
            }
        }
        let line = tokstat_parsers::parse_str_line(&held.first, &mut scratch, true);
        self.take_line(held.line_no, &line, Some(&held.first));
        self.tally.total += held.more;
        self.tally.other += held.more;
    }

    /// Whether the next line may carry the rest of a wrapped record: it has no logger prefix
    /// and is no line of its own.
    #[cold]
    fn next_may_continue(&self) -> bool {
        if self.next.is_empty() || wrapped::opens_a_line(self.next) {
            return false;
        }
        let row = &self.next[..memchr::memchr(b'\n', self.next).unwrap_or(self.next.len())];
        let Ok(row) = std::str::from_utf8(row) else {
            return false;
        };
        let row = row.trim_end_matches('\r');
        !row.is_empty()
            && wrapped::may_continue(row)
            && tokstat_parsers::wrappers::prefix::split(row).0.style == Style::Bare
    }

    /// A benchmark summary's header, counted as other: it is parsed, and the block starts.
    #[cold]
    fn console_header(&mut self, line_no: u64) {
        self.end_console();
        self.tally.other -= 1;
        self.tally.parsed += 1;
        self.console = Some((line_no, Vec::new()));
    }

    /// A line after a summary's header: true when it is part of the block (counted as
    /// parsed), false when the block ended before it.
    #[cold]
    fn console_line(&mut self, raw: &str) -> bool {
        let Some((_, lines)) = self.console.as_mut() else {
            return false;
        };
        let footer = bench_console::is_footer(raw);
        if !footer && bench_console::block_line(raw) == bench_console::BlockLine::Foreign {
            self.end_console();
            return false;
        }
        lines.push(raw.to_string());
        self.tally.total += 1;
        self.tally.parsed += 1;
        if footer || lines.len() >= bench_console::MAX_LINES {
            self.end_console();
        }
        true
    }

    /// Hands the summary read so far to the visitor.
    fn end_console(&mut self) {
        if let Some((line_no, lines)) = self.console.take() {
            let block = bench_console::read_block(lines.iter().map(String::as_str));
            self.state.console(self.file, line_no, block);
        }
    }

    /// The records of one physical line, each read with its own values and stamp, in order.
    /// The line counts once: parsed when any piece is a record, else malformed when one is,
    /// else other (a progress bar's own `\r` updates).
    #[cold]
    fn glued(&mut self, line_no: u64, pieces: &[&str]) {
        let mut scratch = String::new();
        let (mut records, mut malformed) = (0, None);
        for p in pieces {
            let line = tokstat_parsers::parse_str_line(p, &mut scratch, true);
            let ts = self.cal.resolve(line.prefix.stamp);
            match line.body {
                Body::Other => {}
                Body::Malformed(why) => malformed = malformed.or(Some(why)),
                _ => {
                    records += 1;
                    self.hand_unstamped();
                    self.state.line(Visit {
                        file: self.file,
                        line_no,
                        ts,
                        line: &line,
                    });
                }
            }
        }
        match (records, malformed) {
            (0, Some(why)) => self.tally.count(line_no, &Body::Malformed(why)),
            (0, None) => self.tally.count(line_no, &Body::Other),
            _ => {
                self.tally.total += 1;
                self.tally.parsed += 1;
            }
        }
    }
}

/// Scans one opened log. `work` runs on chunks in parallel; `sink` receives the results in
/// file order, with the number of lines before the chunk's first that its line numbers
/// leave out (see below). Returns the file's tally, and a read error if one cut the scan
/// short.
///
/// With `Lines::Relative` the chunks are not counted ahead: line numbers seen by `work` are
/// relative to the chunk (only the tally's malformed samples use them, and they are made
/// absolute here); `parse`, which writes line numbers while working, asks for `Absolute`.
pub fn scan_log<R, W, S>(
    input: &Input,
    instance: String,
    src: Source,
    dates: Dates,
    lines: LineNumbers,
    work: &W,
    sink: &mut S,
) -> (FileCtx, Tally, Option<Skipped>)
where
    R: Send,
    W: Fn(&FileCtx, Chunk<'_>) -> (ChunkOut<R>, Calendar) + Sync,
    S: FnMut(&FileCtx, R, u64),
{
    let file = FileCtx {
        source: input.display(),
        stem: instance,
    };
    let calendar = dates.calendar(src.modified);
    let mut tally = Tally::default();
    let each = |c: Chunk<'_>| work(&file, c);
    let absorb = |mut o: ChunkOut<R>| {
        // (with relative numbers, the lines before the chunk: what `sink` adds to the line
        // numbers `work` saw)
        let before = match lines {
            LineNumbers::Relative => tally.total,
            LineNumbers::Absolute => 0,
        };
        for s in &mut o.tally.samples {
            s.0 += before;
        }
        tally.merge(&o.tally);
        sink(&file, o.out, before);
    };
    let result = match lines {
        LineNumbers::Absolute => scan::scan(src.data, calendar, scan::Mode::LOG, each, absorb),
        LineNumbers::Relative => {
            scan::scan(src.data, calendar, scan::Mode::LOG_RELATIVE, each, absorb)
        }
    };
    let err = result
        .err()
        .map(|e| Skipped::read_error(&file.source, tally.total, &e));
    (file, tally, err)
}

/// Whether chunk workers need absolute line numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineNumbers {
    Absolute,
    Relative,
}

/// A tally's malformed samples read back: the reasons, `&'static str` where the parsers
/// give them, are made static (five per input at most).
fn reasons<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<(u64, &'static str)>, D::Error> {
    let v = <Vec<(u64, String)> as serde::Deserialize>::deserialize(d)?;
    Ok(v.into_iter()
        .map(|(line, why)| (line, &*Box::leak(why.into_boxed_str())))
        .collect())
}
