//! A collector's file as the plain log of one identity: the bytes the engines' parsers read,
//! made by the scan's workers a cell of rows each, into buffers they parse at once
//! ([`Unwrap`], a [`MadeLines`]), so that the lines are copied once, on every core, and memory
//! stays bounded whatever the file's size.
//!
//! Each record's line is given as the engine wrote it, its pieces joined. A line with no
//! stamp of its own (SGLang before 0.2.14, uvicorn's access lines, a traceback) is given the
//! collector's time, put on the server's clock ([`Clock`]), in the docker `--timestamps`
//! form the prefix reader takes off (`2026-05-09T22:00:00.123Z `). A line with its own
//! stamp is given bare: its figures are the plain log's, to the last digit.

#[cfg(target_arch = "x86_64")]
use super::blocks::Avx2;
use super::blocks::{self, Blocks, Sse2};
use super::docker::{self, DockerRow};
use super::{record, row, row_in, Collector, Piece, Row, Stream, UtcMs, When, Who};
use crate::source::{MadeLines, WRAPPED_ROWS};
use crate::stamp::{civil_from_days, days_from_civil, Stamp, Ts, DAY_MS};
use crate::wrappers::prefix::trim_cr;
use crate::wrappers::wrapped::opens_a_line;
use rayon::prelude::*;
use std::sync::{Arc, Mutex};

/// The bytes of a collector's file, shared by the readers of its identities.
pub type Shared = Arc<dyn RowBytes>;

/// A collector's file's bytes, and how rows read are let go of: a mapped file's pages are
/// dropped once their cell's lines are made (see [`crate::source::release`]), so that the
/// memory a file's reading holds stays bounded as for a plain log's map, whatever the
/// file's size; bytes in memory stay as they are.
pub trait RowBytes: AsRef<[u8]> + Send + Sync {
    /// `part` (of these bytes) has been read and will not be soon again.
    fn done_with(&self, _part: &[u8]) {}
}

impl RowBytes for memmap2::Mmap {
    fn done_with(&self, part: &[u8]) {
        crate::source::release(self, part);
    }
}

impl RowBytes for Vec<u8> {}

/// Bytes of the file unwrapped at a time by [`rows_of_lines`].
const WINDOW: usize = 8 << 20;

/// Malformed rows kept to show, as the line tallies keep them.
const SAMPLES: usize = 5;

/// How one identity's plain log is made from a collector's file.
#[derive(Debug, Clone)]
pub struct Plan {
    pub collector: Collector,
    /// The identity whose records are kept (`None`: every record).
    pub who: Option<Who<'static>>,
    /// Milliseconds added to a collector's (UTC) time to put it on the server's clock, for
    /// the lines that carry no stamp of their own ([`Clock::offset_ms`]; 0 when the lines
    /// carry none: their times are the collector's, UTC).
    pub offset_ms: i64,
    /// Whether the rows no identity owns (broken, blank, holding no line) are counted by
    /// this plan (the first identity's), so that each is counted once.
    pub counts_unowned: bool,
}

/// What unwrapping counted beside the lines it gave: with the lines' own tally, every row
/// of the file is accounted for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    /// Rows of the file read.
    pub rows: u64,
    /// Plain lines given (a record's text with newlines in it is several).
    pub lines: u64,
    /// Pieces joined to the piece before them (Docker's and containerd's 16 KiB pieces).
    pub joined: u64,
    /// Rows holding no engine line (blank, or a record without text).
    pub other: u64,
    /// Rows that are no record of the collector (malformed).
    pub broken: u64,
    /// The first broken rows: 1-based row number, and why.
    pub broken_rows: Vec<(u64, &'static str)>,
    /// Rows of other identities (read by their own plans).
    pub foreign: u64,
    /// Lines given the collector's time, having no stamp of their own.
    pub stamped: u64,
}

impl Counts {
    fn merge(&mut self, o: Counts, rows_before: u64) {
        self.rows += o.rows;
        self.lines += o.lines;
        self.joined += o.joined;
        self.other += o.other;
        self.broken += o.broken;
        self.foreign += o.foreign;
        self.stamped += o.stamped;
        for (r, why) in o.broken_rows {
            if self.broken_rows.len() < SAMPLES {
                self.broken_rows.push((r + rows_before, why));
            }
        }
    }
}

/// Whether a line lacks a stamp of its own: it does not open with an SGLang stamp
/// (`[2026-…`, `[22:29:22`), an SGLang logging stamp (`2026-05-09 …`) or a vLLM level and
/// `MM-DD` (after a process tag perhaps). A quick test of the first bytes: a line it
/// misjudges is read right all the same (the prefix reader keeps the engine's stamp over a
/// wrapper's), only more slowly.
#[inline]
pub fn needs_stamp(line: &[u8]) -> bool {
    // (patterns of fixed places: the loops of digit tests they replace were a twentieth of
    // a Docker file's reading)
    let d = |c: u8| c.is_ascii_digit();
    let month_day =
        |rest: &[u8]| matches!(*rest, [a, b, b'-', c, e, ..] if d(a) && d(b) && d(c) && d(e));
    match *line {
        [b'[', a, b, c, e, b'-', ..] if d(a) && d(b) && d(c) && d(e) => false,
        [b'[', a, b, b':', ..] if d(a) && d(b) => false,
        [b'[', ..] => true,
        [a, b, c, e, b'-', ..] if d(a) && d(b) && d(c) && d(e) => false,
        [b'(', ..] => after_process_tag(line),
        [b'I', b'N', b'F', b'O', b' ', ref rest @ ..]
        | [b'W', b'A', b'R', b'N', b'I', b'N', b'G', b' ', ref rest @ ..]
        | [b'W', b'A', b'R', b'N', b' ', ref rest @ ..]
        | [b'E', b'R', b'R', b'O', b'R', b' ', ref rest @ ..]
        | [b'D', b'E', b'B', b'U', b'G', b' ', ref rest @ ..]
        | [b'C', b'R', b'I', b'T', b'I', b'C', b'A', b'L', b' ', ref rest @ ..] => !month_day(rest),
        _ => true,
    }
}

/// [`needs_stamp`] of a line opening with `(`: of what follows a process tag
/// (`(APIServer pid=1) `), if one closes within its first bytes. Apart, so that the
/// judgement of other lines is inlined.
#[inline(never)]
fn after_process_tag(line: &[u8]) -> bool {
    match memchr::memmem::find(&line[..line.len().min(120)], b") ") {
        Some(i) => needs_stamp(&line[i + 2..]),
        None => true,
    }
}

/// The bytes [`needs_stamp`] reads of a line that does not open with `(`: `CRITICAL ` and
/// `MM-DD`.
const STAMP_LOOK: usize = 14;

/// A line whose pieces are being joined: its text so far, time and first row.
type UnderWay = (Vec<u8>, Option<UtcMs>, u64);

/// Joins pieces and writes plain lines.
struct Emitter<'p> {
    plan: &'p Plan,
    /// A line under way per stream.
    pending: [Option<UnderWay>; 3],
}

impl<'p> Emitter<'p> {
    fn new(plan: &'p Plan) -> Emitter<'p> {
        Emitter {
            plan,
            pending: [None, None, None],
        }
    }

    /// A piece of row `row` (`one_line` when its text is known to hold no newline): joined
    /// to the line under way in its stream, or written.
    fn piece(
        &mut self,
        p: Piece<'_>,
        row: u64,
        one_line: bool,
        out: &mut Vec<u8>,
        c: &mut Counts,
        each: &mut impl FnMut(u64),
    ) {
        let slot = &mut self.pending[p.stream.index()];
        match slot {
            Some((buf, _, _)) => {
                buf.extend_from_slice(&p.text);
                c.joined += 1;
                if p.ends {
                    if let Some((buf, t, r)) = slot.take() {
                        self.write(&buf, t.into(), r, false, out, c, each);
                    }
                }
            }
            None if !p.ends => *slot = Some((p.text.into_owned(), p.time.ms(), row)),
            None => self.write(&p.text, p.time, row, one_line, out, c, each),
        }
    }

    /// The lines still under way (the file ended inside them).
    fn flush(&mut self, out: &mut Vec<u8>, c: &mut Counts, each: &mut impl FnMut(u64)) {
        let mut left: Vec<_> = self.pending.iter_mut().filter_map(Option::take).collect();
        left.sort_by_key(|l| l.2);
        for (buf, t, r) in left {
            self.write(&buf, t.into(), r, false, out, c, each);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        text: &[u8],
        time: When<'_>,
        row: u64,
        one_line: bool,
        out: &mut Vec<u8>,
        c: &mut Counts,
        each: &mut impl FnMut(u64),
    ) {
        // (one line nearly always: one search, where a split goes byte by byte)
        if one_line || memchr::memchr(b'\n', text).is_none() {
            self.line(text, time, out, c);
            each(row);
            return;
        }
        for line in text.split(|&b| b == b'\n') {
            self.line(line, time, out, c);
            each(row);
        }
    }

    #[inline(always)]
    fn line(&self, line: &[u8], time: When<'_>, out: &mut Vec<u8>, c: &mut Counts) {
        // (the collector's time read only for the lines that take it)
        if time.is_some() && needs_stamp(line) {
            self.stamp(time, out, c);
        }
        out.extend_from_slice(line);
        out.push(b'\n');
        c.lines += 1;
    }

    /// The collector's time, if the record has one, before a line without a stamp of its own.
    #[inline]
    fn stamp(&self, time: When<'_>, out: &mut Vec<u8>, c: &mut Counts) {
        // (on the collector's clock, a stamp's own text where it is what would be written)
        if let (0, When::Text(b)) = (self.plan.offset_ms, time) {
            if let Some(text) = super::time::iso_ms_text(b) {
                out.extend_from_slice(text);
                out.extend_from_slice(b"Z ");
                c.stamped += 1;
                return;
            }
        }
        if let Some(t) = time.ms() {
            Ts(t + self.plan.offset_ms).write_iso(out);
            out.extend_from_slice(b"Z ");
            c.stamped += 1;
        }
    }

    /// Whether no line is under way in `stream`: a whole line of it can be written at once.
    #[inline]
    fn idle(&self, stream: Stream) -> bool {
        self.pending[stream.index()].is_none()
    }

    /// A Docker row's whole line (its text ends it, and no line is under way in its stream)
    /// written at once, its escapes decoded into `out` itself: `false`, and nothing written,
    /// where the text is no valid JSON string, holds a newline, or was misjudged for a stamp
    /// (an escape within the bytes [`needs_stamp`] looks at): the row then takes the way of
    /// any row. (Pieces built, decoded into a scratch buffer and copied again were a tenth of
    /// a Docker file's reading.)
    #[inline]
    fn docker_line(&self, d: &DockerRow<'_>, out: &mut Vec<u8>, c: &mut Counts) -> bool {
        let time = When::Text(d.stamp);
        if !d.escaped {
            self.line(d.body, time, out, c);
            return true;
        }
        let start = out.len();
        let stamped = c.stamped;
        // (an escape seldom falls in the first bytes: the raw text is judged, and the
        // decoded one checked)
        let guess = needs_stamp(d.body);
        if guess {
            self.stamp(time, out, c);
        }
        let text = out.len();
        // (the judgement reads the first bytes of a line not opening with `(`: where the
        // decoded ones are the raw ones, it stands)
        let judged = |decoded: &[u8]| match (decoded.get(..STAMP_LOOK), d.body.get(..STAMP_LOOK)) {
            (Some(a), Some(b)) if a == b && b[0] != b'(' => guess,
            _ => needs_stamp(decoded),
        };
        if d.decode(out) == Some(false) && judged(&out[text..]) == guess {
            out.push(b'\n');
            c.lines += 1;
            return true;
        }
        out.truncate(start);
        c.stamped = stamped;
        false
    }
}

/// Unwraps whole rows: the plain lines of `plan`'s identity into `out`. `each` is called
/// with the (0-based, within `rows`) row of every line given.
fn decode_rows(
    rows: &[u8],
    plan: &Plan,
    out: &mut Vec<u8>,
    c: &mut Counts,
    mut each: impl FnMut(u64),
) {
    let mut em = Emitter::new(plan);
    let mut scratch = Vec::new();
    // (the rows of Docker and CRI files name no identity: all are the plan's)
    let all_mine = plan.who.as_ref().is_none_or(|w| *w == Who::default());
    if matches!(plan.collector, Collector::DockerJson | Collector::Cri) {
        let rows_in = RowsIn {
            rows,
            all_mine,
            em: &mut em,
            scratch: &mut scratch,
            out,
            c,
        };
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = Avx2::detect() {
            // SAFETY: the processor has AVX2 (an `Avx2` says so)
            unsafe { line_rows_avx2(rows_in, avx2, &mut each) };
        } else {
            line_rows(rows_in, Sse2, &mut each);
        }
        #[cfg(not(target_arch = "x86_64"))]
        line_rows(rows_in, Sse2, &mut each);
    } else {
        for (i, raw) in crate::scan::lines(rows).enumerate() {
            let row = row_in(plan.collector, raw, &mut scratch);
            take(&mut em, i as u64, raw, row, out, c, &mut each);
        }
    }
    em.flush(out, c, &mut each);
}

/// A cell's rows and what their reading writes to.
struct RowsIn<'r, 'p, 'o> {
    rows: &'r [u8],
    /// Whether every record is the plan's (its identity is no one's).
    all_mine: bool,
    em: &'r mut Emitter<'p>,
    scratch: &'r mut Vec<u8>,
    out: &'o mut Vec<u8>,
    c: &'o mut Counts,
}

/// A Docker or CRI file's rows, their blocks looked at by `blocks`: whole lines, in a stream
/// with none under way, written at once ([`Emitter::docker_line`], [`Emitter::line`]), the
/// rest the way of any row ([`take`]). Docker rows are read in one pass each where they can
/// be (see [`docker::rows`]). (No iterators: the compiler kept `Enumerate`'s `next` apart,
/// and the blocks' AVX2 compares with it, in code not compiled for AVX2.)
#[inline(always)]
fn line_rows<B: Blocks>(r: RowsIn<'_, '_, '_>, blocks: B, each: &mut impl FnMut(u64)) {
    let RowsIn {
        rows,
        all_mine,
        em,
        scratch,
        out,
        c,
    } = r;
    let collector = em.plan.collector;
    let mut rest = rows;
    let mut i = 0u64;
    if collector == Collector::DockerJson {
        loop {
            // a whole line of its stream with a stamp of its own, read and written at once
            if all_mine && rest.len() >= docker::FUSED_ROOM {
                let start = out.len();
                if let Some((end, stream, _)) = docker::fused_line(rest, blocks, out) {
                    if em.idle(stream) && !needs_stamp(&out[start..out.len() - 1]) {
                        c.lines += 1;
                        c.rows += 1;
                        each(i);
                        i += 1;
                        rest = &rest[end + 1..];
                        continue;
                    }
                    out.truncate(start);
                }
            }
            let Some((raw, read)) = docker::next_row(&mut rest, blocks) else {
                break;
            };
            let row = match read {
                Some(d) => {
                    if all_mine && d.newline && em.idle(d.stream) && em.docker_line(&d, out, c) {
                        c.rows += 1;
                        each(i);
                        i += 1;
                        continue;
                    }
                    match d.piece_in(scratch) {
                        Some(p) => Row::Piece(p),
                        None => row(collector, raw),
                    }
                }
                None => row_in(collector, raw, scratch),
            };
            take(em, i, raw, row, out, c, each);
            i += 1;
        }
        return;
    }
    while let Some(raw) = blocks::next_line(&mut rest, blocks) {
        let row = match record::cri_row(trim_cr(raw)) {
            Ok(r) if all_mine && r.ends && em.idle(r.stream) => {
                em.line(r.text, When::Text(r.stamp), out, c);
                c.rows += 1;
                each(i);
                i += 1;
                continue;
            }
            // (a piece, or no CRI row: the general reading)
            _ => row(collector, raw),
        };
        take(em, i, raw, row, out, c, each);
        i += 1;
    }
}

/// [`line_rows`] compiled for AVX2, its blocks looked at by one vector each.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn line_rows_avx2(r: RowsIn<'_, '_, '_>, blocks: Avx2, each: &mut impl FnMut(u64)) {
    line_rows(r, blocks, each)
}

/// Row `i` of a cell, `raw`, read as `row`: counted, and its piece given to the emitter
/// when it is of the plan's identity.
#[inline]
fn take(
    em: &mut Emitter<'_>,
    i: u64,
    raw: &[u8],
    row: Row<'_>,
    out: &mut Vec<u8>,
    c: &mut Counts,
    each: &mut impl FnMut(u64),
) {
    c.rows += 1;
    let plan = em.plan;
    match row {
        Row::Piece(p) => {
            if plan.who.as_ref().is_some_and(|w| *w != p.who) {
                c.foreign += 1;
                return;
            }
            // a text read where the row holds it has no newline in it (rows are cut at
            // theirs): the search for one is left out
            let at = (p.text.as_ptr() as usize).wrapping_sub(raw.as_ptr() as usize);
            let in_row = at <= raw.len() && p.text.len() <= raw.len() - at;
            em.piece(p, i, in_row, out, c, each);
        }
        _ if !plan.counts_unowned => c.foreign += 1,
        Row::Other => c.other += 1,
        Row::Broken(why) => {
            c.broken += 1;
            if c.broken_rows.len() < SAMPLES {
                c.broken_rows.push((i + 1, why));
            }
        }
    }
}

/// The plain lines of pieces read from a document (in order), and their counts.
pub fn plain<'a>(pieces: impl Iterator<Item = Piece<'a>>, plan: &Plan) -> (Vec<u8>, Counts) {
    let mut out = Vec::new();
    let mut c = Counts::default();
    let mut em = Emitter::new(plan);
    for (i, p) in pieces.enumerate() {
        c.rows += 1;
        em.piece(p, i as u64, false, &mut out, &mut c, &mut |_| {});
    }
    em.flush(&mut out, &mut c, &mut |_| {});
    (out, c)
}

/// Whether a line may be under way at byte `at` of `data` (a row end): the last piece of a
/// stream among the 64 rows before it does not end its line.
fn under_way(data: &[u8], at: usize, c: Collector) -> bool {
    if !matches!(c, Collector::DockerJson | Collector::Cri) {
        return false;
    }
    let mut seen = [false; 3];
    let mut end = at;
    for _ in 0..64 {
        if end == 0 {
            return false;
        }
        let start = memchr::memrchr(b'\n', &data[..end - 1]).map_or(0, |i| i + 1);
        if let Row::Piece(p) = row(c, &data[start..end - 1]) {
            let k = p.stream.index();
            if !seen[k] {
                if !p.ends {
                    return true;
                }
                seen[k] = true;
            }
        }
        end = start;
    }
    false
}

/// The first row end at or after `at` where no line is under way (or the end of `data`).
fn cut(data: &[u8], at: usize, c: Collector) -> usize {
    let mut at = at.min(data.len());
    for _ in 0..4096 {
        if at >= data.len() {
            return data.len();
        }
        at = match memchr::memchr(b'\n', &data[at..]) {
            Some(i) => at + i + 1,
            None => return data.len(),
        };
        if !under_way(data, at, c) {
            return at;
        }
    }
    at
}

/// [`cut`], moved on past the rows after it whose lines open no line of their own (a record
/// a terminal wrapped into rows: see [`crate::wrappers::wrapped`]), at most [`WRAPPED_ROWS`]:
/// they stay with the row before, which joins them. `0` at `0`.
fn cell_edge(data: &[u8], at: usize, c: Collector) -> usize {
    if at == 0 {
        return 0;
    }
    let mut at = cut(data, at, c);
    for _ in 0..WRAPPED_ROWS {
        if at >= data.len() {
            break;
        }
        let end = memchr::memchr(b'\n', &data[at..]).map_or(data.len(), |i| at + i);
        let opens = match row(c, &data[at..end]) {
            Row::Piece(p) => opens_a_line(&p.text) || (p.time.is_some() && needs_stamp(&p.text)),
            _ => true,
        };
        if opens {
            break;
        }
        at = cut(data, end, c);
    }
    at
}

/// The edges of about `n` parts of `data`, each cut where no line is under way ([`cut`]):
/// `0`, the inner edges in order, `data.len()`.
fn cuts(data: &[u8], n: usize, c: Collector) -> Vec<usize> {
    let mut cuts = vec![0];
    for k in 1..n {
        let at = cut(data, data.len() * k / n, c);
        if at > *cuts.last().unwrap_or(&0) && at < data.len() {
            cuts.push(at);
        }
    }
    cuts.push(data.len());
    cuts
}

/// One identity's plain log, made from a collector's file by the scan's workers (see
/// [`MadeLines`]), each cell's counts kept by its first byte.
pub struct Unwrap {
    bytes: Shared,
    plan: Plan,
    cells: Mutex<Vec<(usize, Counts)>>,
}

impl Unwrap {
    pub fn new(bytes: Shared, plan: Plan) -> Unwrap {
        Unwrap {
            bytes,
            plan,
            cells: Mutex::new(Vec::new()),
        }
    }

    /// What the cells made so far counted, in file order (complete once the file's lines
    /// have all been made): broken rows numbered by the file's rows.
    pub fn counts(&self) -> Counts {
        let mut cells = match self.cells.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        };
        cells.sort_by_key(|c| c.0);
        let mut total = Counts::default();
        for (_, c) in cells {
            let before = total.rows;
            total.merge(c, before);
        }
        total
    }
}

impl MadeLines for Unwrap {
    fn rows(&self) -> &[u8] {
        (*self.bytes).as_ref()
    }

    fn cut(&self, at: usize) -> usize {
        cell_edge(self.rows(), at, self.plan.collector)
    }

    fn make(&self, from: usize, to: usize, out: &mut Vec<u8>) {
        let mut counts = Counts::default();
        out.reserve(to - from);
        let rows = &self.rows()[from..to];
        decode_rows(rows, &self.plan, out, &mut counts, |_| {});
        self.bytes.done_with(rows);
        if let Ok(mut cells) = self.cells.lock() {
            cells.push((from, counts));
        }
    }
}

/// The rows (1-based) of a plan's plain lines (1-based numbers, ascending): for the
/// malformed lines a tally shows, named by the file's rows. One pass up to the last asked.
pub fn rows_of_lines(data: &[u8], plan: &Plan, lines: &[u64]) -> Vec<u64> {
    let mut rows = Vec::with_capacity(lines.len());
    let Some(&last) = lines.iter().max() else {
        return rows;
    };
    let mut sorted: Vec<u64> = lines.to_vec();
    sorted.sort_unstable();
    let mut found = std::collections::HashMap::new();
    let mut line = 0u64;
    let mut out = Vec::new();
    let mut c = Counts::default();
    let mut next = 0;
    // row by row: a window at a time would need the rows before each window
    let mut pos = 0;
    let mut row_base = 0u64;
    while pos < data.len() && line < last {
        let end = cut(data, pos + WINDOW, plan.collector);
        decode_rows(&data[pos..end], plan, &mut out, &mut c, |r| {
            line += 1;
            while next < sorted.len() && sorted[next] == line {
                found.insert(line, row_base + r + 1);
                next += 1;
            }
        });
        out.clear();
        row_base = c.rows;
        pos = end;
    }
    rows.extend(lines.iter().map(|l| found.get(l).copied().unwrap_or(*l)));
    rows
}

/// The identities a file's records name, in the order they first appear, with their rows;
/// and the collector's first and last times (a file whose last time is before its first
/// is newest first).
#[derive(Debug, Clone, Default)]
pub struct Survey {
    pub whos: Vec<(Who<'static>, u64)>,
    pub first: Option<UtcMs>,
    pub last: Option<UtcMs>,
}

/// Surveys a one-record-a-line file on all cores (Docker and CRI name no identity: only
/// their first and last rows are read).
pub fn survey(c: Collector, data: &[u8]) -> Survey {
    let whole = !matches!(c, Collector::DockerJson | Collector::Cri);
    let one = |part: &[u8]| {
        let mut s = Survey::default();
        for raw in crate::scan::lines(part) {
            if let Row::Piece(p) = row(c, raw) {
                if s.first.is_none() {
                    s.first = p.time.ms();
                }
                s.last = p.time.ms().or(s.last);
                match s.whos.iter_mut().find(|(w, _)| *w == p.who) {
                    Some((_, n)) => *n += 1,
                    None => s.whos.push((p.who.owned(), 1)),
                }
            }
        }
        s
    };
    let parts: Vec<&[u8]> = if whole {
        let n = rayon::current_num_threads().max(1) * 4;
        let cuts = cuts(data, n, Collector::Shipper);
        cuts.windows(2).map(|w| &data[w[0]..w[1]]).collect()
    } else {
        let head = cut(data, 1 << 20, c);
        let tail = cut(data, data.len().saturating_sub(1 << 20), c).max(head);
        vec![&data[..head], &data[tail..]]
    };
    let done: Vec<Survey> = parts.par_iter().map(|p| one(p)).collect();
    let mut all = Survey::default();
    for s in done {
        all.first = all.first.or(s.first);
        all.last = s.last.or(all.last);
        for (w, n) in s.whos {
            match all.whos.iter_mut().find(|(x, _)| *x == w) {
                Some((_, m)) => *m += n,
                None => all.whos.push((w, n)),
            }
        }
    }
    if !whole {
        all.whos = vec![(Who::default(), 0)];
    }
    all
}

/// The server's clock against the collector's, from the lines that carry both stamps: the
/// engine's (naive local time, vLLM's without a year) less the collector's (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// The median difference, ms: a server logging UTC+8 behind a UTC collector is about
    /// 8 h, plus the seconds of skew and the stamps' truncation (vLLM's to whole seconds).
    pub offset_ms: i64,
    /// Lines read for it.
    pub pairs: u64,
    /// The 10th and 90th percentiles of the differences, ms.
    pub low_ms: i64,
    pub high_ms: i64,
}

impl Clock {
    /// The whole hours and quarter hours of the offset (a time zone), and the rest (skew).
    pub fn zone_and_skew(&self) -> (i64, i64) {
        const QUARTER: i64 = 15 * 60 * 1000;
        let zone = (self.offset_ms as f64 / QUARTER as f64).round() as i64 * QUARTER;
        (zone, self.offset_ms - zone)
    }

    /// The time zone the offset amounts to: `UTC`, `UTC+08:00`, `UTC-05:30`.
    pub fn zone_name(&self) -> String {
        match self.zone_and_skew().0 {
            0 => "UTC".to_string(),
            z => {
                let m = z.abs() / 60_000;
                let sign = if z < 0 { '-' } else { '+' };
                format!("UTC{sign}{:02}:{:02}", m / 60, m % 60)
            }
        }
    }

    /// The skew, the offset and its 10th and 90th percentiles, in seconds.
    pub fn seconds(&self) -> ClockSeconds {
        let s = |ms: i64| ms as f64 / 1000.0;
        ClockSeconds {
            skew: s(self.zone_and_skew().1),
            offset: s(self.offset_ms),
            low: s(self.low_ms),
            high: s(self.high_ms),
        }
    }
}

/// A [`Clock`]'s figures in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockSeconds {
    pub skew: f64,
    pub offset: f64,
    pub low: f64,
    pub high: f64,
}

/// Lines of a file read for its [`Clock`] at most.
pub const CLOCK_LINES: usize = 4096;

/// The engine stamp of `text` as naive ms, completed with the year (or date) that puts it
/// nearest the collector's time `utc` (a server's zone is at most 14 hours away).
fn naive_near(text: &[u8], utc: UtcMs, scratch: &mut String) -> Option<i64> {
    let stamp = crate::wrappers::prefix::stamp_of(text, scratch);
    let day = DAY_MS as i64;
    let nearest = |c: &mut dyn Iterator<Item = i64>| c.min_by_key(|n| (n - utc).abs());
    match stamp {
        Stamp::None => None,
        Stamp::Full { days, ms } => Some(i64::from(days) * day + i64::from(ms)),
        Stamp::MonthDay { month, day: d, ms } => {
            let (y, _, _) = civil_from_days(utc.div_euclid(day) as i32);
            nearest(&mut (y - 1..=y + 1).filter_map(|y| {
                days_from_civil(y, month, d).map(|n| i64::from(n) * day + i64::from(ms))
            }))
        }
        Stamp::TimeOnly { ms } => {
            let d = utc.div_euclid(day);
            nearest(&mut (d - 1..=d + 1).map(|d| d * day + i64::from(ms)))
        }
    }
}

/// The clock of the pieces given (the first [`CLOCK_LINES`] with both stamps are read);
/// `None` when no line has both.
pub fn clock<'a>(pieces: impl Iterator<Item = Piece<'a>>) -> Option<Clock> {
    let mut diffs = Vec::new();
    let mut scratch = String::new();
    for p in pieces {
        let Some(utc) = p.time.ms() else { continue };
        let line = p.text.split(|&b| b == b'\n').next().unwrap_or_default();
        if let Some(naive) = naive_near(line, utc, &mut scratch) {
            diffs.push(naive - utc);
            if diffs.len() >= CLOCK_LINES {
                break;
            }
        }
    }
    if diffs.is_empty() {
        return None;
    }
    diffs.sort_unstable();
    let at = |q: f64| diffs[((diffs.len() - 1) as f64 * q).round() as usize];
    Some(Clock {
        offset_ms: at(0.5),
        pairs: diffs.len() as u64,
        low_ms: at(0.1),
        high_ms: at(0.9),
    })
}

/// The pieces of one identity among a line file's first rows (for [`clock`]).
pub fn first_pieces<'a>(
    c: Collector,
    data: &'a [u8],
    who: Option<&'a Who<'static>>,
) -> impl Iterator<Item = Piece<'a>> + 'a {
    crate::scan::lines(data)
        .take(64 * CLOCK_LINES)
        .filter_map(move |raw| match row(c, raw) {
            Row::Piece(p) if who.is_none_or(|w| *w == p.who) => Some(p),
            _ => None,
        })
}
