//! The parallel scan: whole-line chunks through rayon, results back in file order.
//!
//! Two things are sequential in a log — line numbers and the calendar that completes
//! year-less stamps — yet the work must run on all cores. Each batch of chunks therefore goes
//! through a cheap pre-scan (count newlines; read the first and last stamped line) that gives
//! every chunk its first line number and an estimate of the calendar at its start. Chunks
//! are then parsed in parallel. In file order, the calendar each chunk ended with is checked
//! against the one the next chunk assumed; on the rare mismatch (two midnights inside one
//! chunk) that chunk is parsed again with the right start. The result is exact, and costs one
//! extra pass only where a log is odd.

use crate::guard::Guard;
use crate::source::{release, ChunkGrid, Data, Filled, MadeLines, Shrank, StreamChunks};
use crate::stamp::{Calendar, Stamp};
use crate::wrappers::prefix::stamp_of;
use rayon::prelude::*;
use std::io;

/// Target chunk size: big enough to amortise scheduling, small enough to balance two cores.
pub const CHUNK: usize = 1 << 20;

/// Chunks per batch and thread when reading a stream (see [`Mode::batch`] for files).
const STREAM_BATCH: usize = 8;

/// A chunk handed to the work function.
#[derive(Debug, Clone, Copy)]
pub struct Chunk<'a> {
    /// Whole lines (the file's last line may lack its newline).
    pub bytes: &'a [u8],
    /// Zero-based number of the chunk's first line in the file.
    pub first_line: u64,
    /// The calendar as it stands before the chunk's first line.
    pub calendar: Calendar,
}

/// Iterator over the lines of a chunk, without their `\n`.
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    rest: &'a [u8],
}

/// The lines of `bytes`.
pub fn lines(bytes: &[u8]) -> Lines<'_> {
    Lines { rest: bytes }
}

impl<'a> Lines<'a> {
    /// The bytes after the line given last: the next lines (readers peek at the next one).
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        if self.rest.is_empty() {
            return None;
        }
        match newline(self.rest) {
            Some(i) => {
                let line = &self.rest[..i];
                self.rest = &self.rest[i + 1..];
                Some(line)
            }
            None => Some(std::mem::take(&mut self.rest)),
        }
    }
}

/// Iterator over the lines of a chunk already validated as UTF-8.
#[derive(Debug, Clone)]
pub struct StrLines<'a> {
    rest: &'a str,
}

/// The lines of `text`, without their `\n`.
pub fn str_lines(text: &str) -> StrLines<'_> {
    StrLines { rest: text }
}

impl<'a> StrLines<'a> {
    /// The bytes after the line given last: the next lines (readers peek at the next one).
    pub fn rest(&self) -> &'a [u8] {
        self.rest.as_bytes()
    }
}

impl<'a> Iterator for StrLines<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        match newline(self.rest.as_bytes()) {
            Some(i) => {
                let line = &self.rest[..i];
                self.rest = &self.rest[i + 1..];
                Some(line)
            }
            None => Some(std::mem::take(&mut self.rest)),
        }
    }
}

/// Iterator over the lines of a chunk not validated beforehand: each comes as text when it
/// is UTF-8 and as bytes when not (see [`text_lines`]).
#[derive(Debug, Clone)]
pub struct TextLines<'a> {
    rest: &'a [u8],
}

/// The lines of `bytes`, without their `\n`, each checked as it is found: `Ok` holds a line
/// that is UTF-8, `Err` one that is not. The newline search also collects the bytes' high
/// bits, so an ASCII line (nearly every log line) is known to be text at no extra pass; the
/// others are checked alone. Before, a whole chunk was validated first: one more pass over
/// every byte, and a chunk with one bad byte lost the quick reading for all its lines.
pub fn text_lines(bytes: &[u8]) -> TextLines<'_> {
    TextLines { rest: bytes }
}

impl<'a> TextLines<'a> {
    /// The bytes after the line given last: the next lines (readers peek at the next one).
    pub fn rest(&self) -> &'a [u8] {
        self.rest
    }
}

impl<'a> Iterator for TextLines<'a> {
    type Item = Result<&'a str, &'a [u8]>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, ascii) = match newline_ascii(self.rest) {
            (Some(i), ascii) => {
                let line = &self.rest[..i];
                self.rest = &self.rest[i + 1..];
                (line, ascii)
            }
            (None, ascii) => (std::mem::take(&mut self.rest), ascii),
        };
        Some(if ascii {
            // SAFETY: every byte of the line is below 0x80 (checked by `newline_ascii`), and
            // ASCII is UTF-8
            Ok(unsafe { std::str::from_utf8_unchecked(line) })
        } else {
            std::str::from_utf8(line).map_err(|_| line)
        })
    }
}

/// The first newline of `b` (or `None`), and whether every byte before it (or of `b`) is
/// ASCII. 32 bytes a step: the two halves' newline compares are tested with one mask, and
/// their high bits gathered in a vector until the line's end (16-byte steps took a third
/// more instructions on log lines of a hundred-odd bytes).
#[inline]
fn newline_ascii(b: &[u8]) -> (Option<usize>, bool) {
    #[cfg(target_arch = "x86_64")]
    let (at, mut high) = {
        use std::arch::x86_64::*;
        let mut at = 0;
        // SAFETY: SSE2 is part of x86_64; each load reads 16 bytes inside `b`
        unsafe {
            let want = _mm_set1_epi8(b'\n' as i8);
            let mut hi = _mm_setzero_si128();
            while at + 32 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(at).cast());
                let w = _mm_loadu_si128(b.as_ptr().add(at + 16).cast());
                let (mv, mw) = (_mm_cmpeq_epi8(v, want), _mm_cmpeq_epi8(w, want));
                if _mm_movemask_epi8(_mm_or_si128(mv, mw)) != 0 {
                    let m = _mm_movemask_epi8(mv) as u32 | (_mm_movemask_epi8(mw) as u32) << 16;
                    let k = m.trailing_zeros();
                    let h = _mm_movemask_epi8(v) as u32 | (_mm_movemask_epi8(w) as u32) << 16;
                    let before = (h & ((1u32 << k) - 1)) | _mm_movemask_epi8(hi) as u32;
                    return (Some(at + k as usize), before == 0);
                }
                hi = _mm_or_si128(hi, _mm_or_si128(v, w));
                at += 32;
            }
            let mut h = _mm_movemask_epi8(hi) as u32;
            if at + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(at).cast());
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, want)) as u32;
                let hv = _mm_movemask_epi8(v) as u32;
                if m != 0 {
                    let k = m.trailing_zeros();
                    return (Some(at + k as usize), (h | (hv & ((1u32 << k) - 1))) == 0);
                }
                h |= hv;
                at += 16;
            }
            (at, h != 0)
        }
    };
    #[cfg(not(target_arch = "x86_64"))]
    let (at, mut high) = (0, false);
    for (k, &x) in b[at..].iter().enumerate() {
        if x == b'\n' {
            return (Some(at + k), !high);
        }
        high |= x >= 0x80;
    }
    (None, !high)
}

/// The first newline of `b` (see [`find_short`]).
#[inline]
fn newline(b: &[u8]) -> Option<usize> {
    find_short(b'\n', b)
}

/// The first `c` in `b`, for searches that end within a line: log lines are a hundred-odd
/// bytes, and 16 bytes at a time inline cost less than a `memchr` call set up for long
/// searches (8% of a log report's time).
#[inline]
pub fn find_short(c: u8, b: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut at = 0;
        // SAFETY: SSE2 is part of x86_64; each load reads 16 bytes inside `b`
        unsafe {
            let want = _mm_set1_epi8(c as i8);
            // 32 bytes a step, the two halves tested with one mask
            while at + 32 <= b.len() {
                let v = _mm_cmpeq_epi8(_mm_loadu_si128(b.as_ptr().add(at).cast()), want);
                let w = _mm_cmpeq_epi8(_mm_loadu_si128(b.as_ptr().add(at + 16).cast()), want);
                if _mm_movemask_epi8(_mm_or_si128(v, w)) != 0 {
                    let m = _mm_movemask_epi8(v) as u32 | (_mm_movemask_epi8(w) as u32) << 16;
                    return Some(at + m.trailing_zeros() as usize);
                }
                at += 32;
            }
            if at + 16 <= b.len() {
                let v = _mm_loadu_si128(b.as_ptr().add(at).cast());
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, want)) as u32;
                if m != 0 {
                    return Some(at + m.trailing_zeros() as usize);
                }
                at += 16;
            }
            // the last bytes: the text's last 16, whose first ones were searched already
            // (and hold no `c`)
            if at < b.len() && b.len() >= 16 {
                let end = b.len() - 16;
                let v = _mm_loadu_si128(b.as_ptr().add(end).cast());
                let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, want)) as u32;
                return (m != 0).then(|| end + m.trailing_zeros() as usize);
            }
        }
        b[at..].iter().position(|&x| x == c).map(|k| at + k)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memchr(c, b)
    }
}

/// The first `a` or `b` in `hay`, for searches that end within a line (see [`find_short`]):
/// a JSON string's next quote or backslash, where `memchr2`'s set-up cost more than the
/// search (three calls an access line).
#[inline]
pub fn find2_short(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut at = 0;
        // SAFETY: SSE2 is part of x86_64; each load reads 16 bytes inside `hay`
        unsafe {
            let (wa, wb) = (_mm_set1_epi8(a as i8), _mm_set1_epi8(b as i8));
            let hit = |v: __m128i| _mm_or_si128(_mm_cmpeq_epi8(v, wa), _mm_cmpeq_epi8(v, wb));
            while at + 16 <= hay.len() {
                let v = _mm_loadu_si128(hay.as_ptr().add(at).cast());
                let m = _mm_movemask_epi8(hit(v)) as u32;
                if m != 0 {
                    return Some(at + m.trailing_zeros() as usize);
                }
                at += 16;
            }
            // the last bytes: the text's last 16, whose first ones were searched already
            if at < hay.len() && hay.len() >= 16 {
                let end = hay.len() - 16;
                let v = _mm_loadu_si128(hay.as_ptr().add(end).cast());
                let m = _mm_movemask_epi8(hit(v)) as u32 & (u32::MAX << (at - end));
                return (m != 0).then(|| end + m.trailing_zeros() as usize);
            }
        }
        hay[at..]
            .iter()
            .position(|&x| x == a || x == b)
            .map(|k| at + k)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        memchr::memchr2(a, b, hay)
    }
}

/// Number of lines in a chunk (a last line without newline counts).
pub fn count_lines(bytes: &[u8]) -> u64 {
    let n = memchr::memchr_iter(b'\n', bytes).count() as u64;
    n + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"))
}

const PRESCAN_LINES: usize = 256;

struct Pre {
    lines: u64,
    first: Stamp,
    last: Stamp,
}

fn prescan(bytes: &[u8], stamps: bool, count: bool) -> Pre {
    let n = if count { count_lines(bytes) } else { 0 };
    if !stamps {
        return Pre {
            lines: n,
            first: Stamp::None,
            last: Stamp::None,
        };
    }
    let mut scratch = String::new();
    let first = lines(bytes)
        .take(PRESCAN_LINES)
        .map(|l| stamp_of(l, &mut scratch))
        .find(Stamp::is_some)
        .unwrap_or_default();
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let last = body
        .rsplit(|&c| c == b'\n')
        .take(PRESCAN_LINES)
        .map(|l| stamp_of(l, &mut scratch))
        .find(Stamp::is_some)
        .unwrap_or_default();
    Pre {
        lines: n,
        first,
        last,
    }
}

/// Where the scan stands between batches.
#[derive(Debug, Clone, Copy)]
struct Cursor {
    line: u64,
    calendar: Calendar,
}

/// A batch of chunks worked on, waiting to be handed to the sink in file order.
struct Done<'a, R> {
    chunks: Vec<Held<'a>>,
    /// Each chunk's first line and the calendar its work assumed.
    starts: Vec<(u64, Calendar)>,
    /// Each chunk's first and last stamp, as its pre-scan read them.
    stamps: Vec<(Stamp, Stamp)>,
    results: Vec<(R, Calendar)>,
}

/// A chunk's bytes: the input's own, or lines made into a buffer of the scan's (see
/// [`MadeLines`]).
enum Held<'a> {
    In(&'a [u8]),
    Made(Vec<u8>),
}

impl std::ops::Deref for Held<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Held::In(b) => b,
            Held::Made(v) => v,
        }
    }
}

/// Buffers that made lines were handed in, for the next cells.
type Spare = std::sync::Mutex<Vec<Vec<u8>>>;

/// The chunks of a batch: a stream's, already cut; a run of a [`ChunkGrid`]'s cells over a
/// file, cut by the workers; or a run of cells of rows whose lines the workers make.
#[derive(Clone, Copy)]
enum Batch<'a> {
    Cut(&'a [&'a [u8]]),
    Cells {
        grid: ChunkGrid<'a>,
        from: usize,
        to: usize,
    },
    Made {
        made: &'a dyn MadeLines,
        spare: &'a Spare,
        /// Bytes of rows a cell.
        size: usize,
        from: usize,
        to: usize,
    },
}

impl<'a> Batch<'a> {
    fn len(&self) -> usize {
        match self {
            Batch::Cut(c) => c.len(),
            Batch::Cells { from, to, .. } | Batch::Made { from, to, .. } => to - from,
        }
    }

    fn get(&self, i: usize) -> Held<'a> {
        match *self {
            Batch::Cut(c) => Held::In(c[i]),
            Batch::Cells { grid, from, .. } => Held::In(grid.cell(from + i)),
            Batch::Made {
                made,
                spare,
                size,
                from,
                ..
            } => {
                let (a, b) = made.cell(from + i, size);
                if a >= b {
                    return Held::In(&[]);
                }
                // room for the cell's lines and a little more (lines without a stamp of their
                // own are given one): a buffer that grew as it was written was copied by
                // `realloc` and faulted in twice, a seventh of a CRI log's reading
                let room = (b - a) + (b - a) / 4;
                let mut buf = spare
                    .lock()
                    .ok()
                    .and_then(|mut s| s.pop())
                    .filter(|v| v.capacity() >= room)
                    .unwrap_or_else(|| Vec::with_capacity(room + room / 8));
                buf.clear();
                made.make(a, b, &mut buf);
                Held::Made(buf)
            }
        }
    }
}

/// Called with each chunk once it has been worked on (see [`release`]).
type Release<'r> = Option<&'r (dyn Fn(&[u8]) + Sync)>;

/// How many bytes at the start of a chunk were still in the file when read (see
/// [`Guard::intact`]); `None` for inputs that cannot shrink underneath.
type Intact<'r> = Option<&'r (dyn Fn(&[u8]) -> usize + Sync)>;

/// What a scan does besides the work: over a mapped file, drop the pages of chunks worked
/// on and keep only what the file still held when read; over made lines, keep the buffers
/// of chunks handed to the sink for the next cells. Other inputs have neither.
#[derive(Clone, Copy, Default)]
struct Hooks<'r> {
    done_with: Release<'r>,
    intact: Intact<'r>,
    spare: Option<&'r Spare>,
}

/// The whole lines of `bytes[..valid]`: a chunk cut where its file ended.
fn whole_lines(bytes: &[u8], valid: usize) -> &[u8] {
    if valid >= bytes.len() {
        return bytes;
    }
    memchr::memrchr(b'\n', &bytes[..valid]).map_or(&[][..], |i| &bytes[..=i])
}

/// Works on a batch of chunks in parallel, from where the batch before left `at` (by its
/// pre-scan: the real calendar is checked when the batch is drained). Chunks no line starts
/// in (cells inside a line longer than a cell) are left out.
fn work_batch<'a, R, W>(
    batch: Batch<'a>,
    at: &mut Cursor,
    mode: Mode,
    work: &W,
    done_with: Release<'_>,
) -> Done<'a, R>
where
    R: Send,
    W: Fn(Chunk<'_>) -> (R, Calendar) + Sync,
{
    // without stamps or counts there is nothing sequential to pre-compute: chunks get
    // relative line numbers (from 0) and the caller adds the lines of the chunks before (see
    // `Mode::count`), and each worker cuts its own chunk as it takes it
    let chunks = || {
        (0..batch.len())
            .into_par_iter()
            .map(|i| batch.get(i))
            .filter(|c| !c.is_empty())
    };
    let pre: Vec<(Held<'a>, Pre)> = if mode.stamps || mode.count {
        chunks()
            .map(|c| {
                let p = prescan(&c, mode.stamps, mode.count);
                (c, p)
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut starts = Vec::with_capacity(pre.len());
    for (_, p) in &pre {
        starts.push((at.line, at.calendar));
        at.line += p.lines;
        at.calendar.resolve(p.first);
        at.calendar.resolve(p.last);
    }
    let stamps = pre.iter().map(|(_, p)| (p.first, p.last)).collect();
    let run = |held: Held<'a>, (first_line, calendar)| {
        let r = work(Chunk {
            bytes: &held,
            first_line,
            calendar,
        });
        if let (Some(f), Held::In(bytes)) = (done_with, &held) {
            f(bytes);
        }
        (held, r)
    };
    let worked: Vec<(Held<'a>, (R, Calendar))> = if pre.is_empty() {
        let start = (at.line, at.calendar);
        chunks().map(|c| run(c, start)).collect()
    } else {
        pre.into_par_iter()
            .zip(starts.par_iter())
            .map(|((c, _), &start)| run(c, start))
            .collect()
    };
    let (chunks, results): (Vec<_>, Vec<_>) = worked.into_iter().unzip();
    if starts.is_empty() {
        starts = vec![(at.line, at.calendar); chunks.len()];
    }
    Done {
        chunks,
        starts,
        stamps,
        results,
    }
}

/// Hands a batch's results to the sink in file order. `real` is the calendar as the lines
/// before the batch really left it; a chunk that assumed another one is worked on again. A
/// chunk its file no longer held when read (`intact`) is worked on again up to where the file
/// ended, and the chunks after it are left out.
fn drain<R, W, S>(done: Done<'_, R>, real: &mut Calendar, work: &W, sink: &mut S, hooks: Hooks<'_>)
where
    W: Fn(Chunk<'_>) -> (R, Calendar) + Sync,
    S: FnMut(R),
{
    for ((result, end), (bytes, &(first_line, assumed))) in done
        .results
        .into_iter()
        .zip(done.chunks.iter().zip(&done.starts))
    {
        let bytes: &[u8] = bytes;
        let valid = hooks.intact.map_or(bytes.len(), |f| f(bytes));
        let (result, end) = if valid < bytes.len() {
            let cut = whole_lines(bytes, valid);
            if cut.is_empty() {
                continue;
            }
            work(Chunk {
                bytes: cut,
                first_line,
                calendar: *real,
            })
        } else if assumed == *real {
            (result, end)
        } else {
            work(Chunk {
                bytes,
                first_line,
                calendar: *real,
            })
        };
        sink(result);
        *real = end;
    }
    if let Some(Ok(mut spare)) = hooks.spare.map(|s| s.lock()) {
        spare.extend(done.chunks.into_iter().filter_map(|c| match c {
            Held::Made(v) => Some(v),
            Held::In(_) => None,
        }));
    }
}

/// Works on `groups` of chunks batch by batch, draining each batch into the sink on this
/// thread while the pool (`pool`, else rayon's global one) works on the next one, so the
/// sink's serial work (merging a chunk's series, say) overlaps the parallel scan instead of
/// leaving the cores idle.
fn pipeline<'a, R, W, S>(
    groups: impl Iterator<Item = Batch<'a>>,
    at: &mut Cursor,
    mode: Mode,
    work: &W,
    sink: &mut S,
    pool: Option<&rayon::ThreadPool>,
    hooks: Hooks<'_>,
) where
    R: Send,
    W: Fn(Chunk<'_>) -> (R, Calendar) + Sync,
    S: FnMut(R),
{
    let mut real = at.calendar;
    let mut pending: Option<Done<'a, R>> = None;
    for group in groups {
        let mut next = None;
        // the same body in the given pool's scope or the global one
        macro_rules! batch {
            ($($scope:tt)+) => {
                $($scope)+(|s| {
                    let (next, at) = (&mut next, &mut *at);
                    s.spawn(move |_| *next = Some(work_batch(group, at, mode, work, hooks.done_with)));
                    if let Some(done) = pending.take() {
                        drain(done, &mut real, work, sink, hooks);
                    }
                })
            };
        }
        match pool {
            Some(p) => batch!(p.in_place_scope),
            None => batch!(rayon::in_place_scope),
        }
        // the batch just worked on started from a prediction; if the batch before really
        // ended elsewhere (two midnights in one chunk, unseen by its pre-scan), its chunks are
        // worked again as it drains, and the next batch must not inherit the error: its
        // start is predicted again from where the lines really are
        if let Some(done) = &next {
            if done
                .starts
                .first()
                .is_some_and(|&(_, assumed)| assumed != real)
            {
                let mut cal = real;
                for &(first, last) in &done.stamps {
                    cal.resolve(first);
                    cal.resolve(last);
                }
                at.calendar = cal;
            }
        }
        pending = next;
    }
    if let Some(done) = pending {
        drain(done, &mut real, work, sink, hooks);
    }
    at.calendar = real;
}

/// What a scan pre-computes per batch, and how big its chunks are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mode {
    /// Read the first and last stamp of each chunk, so that chunks start with the calendar
    /// the lines before them leave (logs).
    pub stamps: bool,
    /// Count each chunk's lines ahead, so that `first_line` is absolute. Without, every chunk
    /// has `first_line` 0, line numbers are relative to the chunk, and the caller — which
    /// sees the results in order and every line — adds the lines of the chunks before; the
    /// scan then returns 0 lines. That saves a pass where numbers are not needed while chunks
    /// are worked on (a report, unlike `parse` output).
    pub count: bool,
    /// Target chunk size in bytes (tests use tiny chunks to exercise the boundaries).
    pub chunk: usize,
    /// Chunks per batch and thread, for mapped or owned input. A batch ends in a barrier (the
    /// slowest chunk) and its results wait in memory for the sink: more chunks idle less,
    /// fewer hold less (`parse` holds its output text). Streams always use small batches.
    pub batch: usize,
}

impl Mode {
    /// Logs with absolute line numbers (`parse`).
    pub const LOG: Mode = Mode {
        stamps: true,
        count: true,
        chunk: CHUNK,
        batch: 8,
    };
    /// Logs, line numbers made absolute by the caller (`report`).
    pub const LOG_RELATIVE: Mode = Mode {
        stamps: true,
        count: false,
        chunk: CHUNK,
        batch: 32,
    };
    /// JSON records: no stamps, relative line numbers.
    pub const RECORDS: Mode = Mode {
        stamps: false,
        count: false,
        chunk: CHUNK,
        batch: 256,
    };
}

/// Runs `work` over whole-line chunks of `data` in parallel and feeds the results to `sink`
/// in file order. Returns the number of lines (0 when `mode.count` is off). Streams are read
/// on a separate thread, so decompression overlaps with parsing, and memory stays bounded by
/// a batch of chunks.
pub fn scan<R, W, S>(
    data: Data,
    calendar: Calendar,
    mode: Mode,
    work: W,
    mut sink: S,
) -> io::Result<u64>
where
    R: Send,
    W: Fn(Chunk<'_>) -> (R, Calendar) + Sync,
    S: FnMut(R),
{
    let chunk = mode.chunk.max(1);
    let threads = rayon::current_num_threads().max(1);
    let per_batch = mode.batch.max(1) * threads;
    // a stream's chunks are copies held in memory until worked on: few at a time, whatever
    // the mode, so that reading from a pipe stays within a few tens of megabytes
    let per_stream_batch = STREAM_BATCH * threads;
    let mut at = Cursor { line: 0, calendar };
    let mut whole = |bytes: &[u8], at: &mut Cursor, hooks: Hooks<'_>| {
        let grid = if mode.stamps {
            ChunkGrid::logs(bytes, chunk)
        } else {
            ChunkGrid::new(bytes, chunk)
        };
        if grid.len() == 1 {
            // one chunk is worked on here: no batch, and no wait in which this thread (maybe
            // a worker reading many small files side by side) would take up other work
            let start = Chunk {
                bytes,
                first_line: at.line,
                calendar: at.calendar,
            };
            let (mut r, mut calendar) = work(start);
            let valid = hooks.intact.map_or(bytes.len(), |f| f(bytes));
            let bytes = whole_lines(bytes, valid);
            if valid < start.bytes.len() {
                if bytes.is_empty() {
                    return;
                }
                (r, calendar) = work(Chunk { bytes, ..start });
            }
            if mode.count {
                at.line += count_lines(bytes);
            }
            at.calendar = calendar;
            sink(r);
            return;
        }
        let batches = (0..grid.len()).step_by(per_batch).map(|from| Batch::Cells {
            grid,
            from,
            to: (from + per_batch).min(grid.len()),
        });
        pipeline(batches, at, mode, &work, &mut sink, None, hooks);
    };
    match data {
        Data::Mapped(m) => {
            let guard = Guard::new(&m);
            let done_with = |part: &[u8]| release(&m, part);
            // a chunk before the map's end ends on a newline: one that does not was cut by
            // a shrink (its edge was found before; past the file's new end its last page
            // reads as zeros, which hold no newline, without faulting), and keeps its whole
            // lines only
            let intact = |part: &[u8]| {
                let n = guard.intact(part);
                let end = part.as_ptr() as usize + part.len() - m.as_ptr() as usize;
                if n == part.len() && end < m.len() && !part.ends_with(b"\n") {
                    n.saturating_sub(1)
                } else {
                    n
                }
            };
            let hooks = Hooks {
                done_with: Some(&done_with),
                intact: Some(&intact),
                spare: None,
            };
            whole(&m, &mut at, hooks);
            if let Some(at) = guard.fault() {
                return Err(Shrank::error(at, m.len()));
            }
        }
        Data::Owned(v) => whole(&v, &mut at, Hooks::default()),
        Data::Shared(v) => whole(&v, &mut at, Hooks::default()),
        Data::Made(made) => {
            // cells of rows about a chunk and a half (the rows of a collector's records are
            // longer than the lines they hold), a stream's few at a time: memory stays
            // bounded by two batches of made lines
            let spare = Spare::default();
            let size = chunk + chunk / 2;
            let cells = made.rows().len().div_ceil(size);
            let made: &dyn MadeLines = &*made;
            let spare_ref = &spare;
            let batches = (0..cells)
                .step_by(per_stream_batch)
                .map(|from| Batch::Made {
                    made,
                    spare: spare_ref,
                    size,
                    from,
                    to: (from + per_stream_batch).min(cells),
                });
            let hooks = Hooks {
                spare: Some(&spare),
                ..Hooks::default()
            };
            pipeline(batches, &mut at, mode, &work, &mut sink, None, hooks);
        }
        Data::Stream(reader) => {
            let (tx, rx) = std::sync::mpsc::sync_channel::<io::Result<Filled>>(per_stream_batch);
            // the reading thread (a decompressor, often the slowest stage) keeps a core of
            // its own: parsing on every core made it wait (1.16x `zstd -dc` instead of 1.02x)
            let pool = (threads > 1)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads - 1)
                        .build()
                        .ok()
                })
                .flatten();
            // worked-on chunks go back to the reader to be read over (see `StreamChunks`), and
            // what is left at the end to the next stream
            let (back, spare) = std::sync::mpsc::channel::<Vec<u8>>();
            std::thread::scope(|s| -> io::Result<()> {
                let reading = s.spawn(move || {
                    let mut chunks = StreamChunks::new(reader, chunk).recycle(spare);
                    if mode.stamps {
                        chunks = chunks.logs();
                    }
                    for chunk in &mut chunks {
                        let stop = chunk.is_err();
                        if tx.send(chunk).is_err() || stop {
                            break;
                        }
                    }
                    chunks.into_spare()
                });
                // a batch of the stream's chunks through the pipeline
                let mut run = |pending: &[Filled]| {
                    let refs: Vec<&[u8]> = pending.iter().map(Filled::bytes).collect();
                    let group = [Batch::Cut(&refs)].into_iter();
                    let hooks = Hooks::default();
                    pipeline(group, &mut at, mode, &work, &mut sink, pool.as_ref(), hooks);
                };
                let mut pending: Vec<Filled> = Vec::with_capacity(per_stream_batch);
                let mut kept = Vec::new();
                let mut failed = None;
                for chunk in rx.iter() {
                    match chunk {
                        Ok(c) => pending.push(c),
                        Err(e) => {
                            failed = Some(e);
                            break;
                        }
                    }
                    if pending.len() == per_stream_batch {
                        run(&pending);
                        for c in pending.drain(..) {
                            // a reader at its end takes no more
                            if let Err(std::sync::mpsc::SendError(c)) = back.send(c.into_buf()) {
                                kept.push(c);
                            }
                        }
                    }
                }
                // what was read before an error is still reported
                run(&pending);
                drop(rx);
                drop(back);
                kept.extend(reading.join().unwrap_or_default());
                kept.extend(pending.into_iter().map(Filled::into_buf));
                crate::source::keep_spare(kept, per_stream_batch + 2, 2 * chunk + (64 << 10));
                failed.map_or(Ok(()), Err)
            })?;
        }
    }
    Ok(at.line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stamp::days_from_civil;

    proptest::proptest! {
        /// The inline newline search finds what `memchr` finds, at any length and place.
        #[test]
        fn newline_finds_what_memchr_finds(
            len in 0usize..80,
            at in proptest::option::of(0usize..80),
            fill in proptest::sample::select(vec![b'a', b'\r', 0u8, 0xffu8, b'\n' ^ 0x80]),
        ) {
            let mut b = vec![fill; len];
            if let Some(at) = at.filter(|&a| a < len) {
                b[at] = b'\n';
                if at + 3 < len {
                    b[at + 3] = b'\n';
                }
            }
            proptest::prop_assert_eq!(newline(&b), memchr::memchr(b'\n', &b));
        }

        /// The inline search for either of two bytes finds what `memchr2` finds.
        #[test]
        fn find2_finds_what_memchr2_finds(
            len in 0usize..80,
            at in proptest::collection::vec(0usize..80, 0..3),
            which in proptest::sample::select(vec![b'"', b'\\']),
        ) {
            let mut b = vec![b'a'; len];
            for &k in at.iter().filter(|&&k| k < len) {
                b[k] = which;
            }
            proptest::prop_assert_eq!(
                find2_short(b'"', b'\\', &b),
                memchr::memchr2(b'"', b'\\', &b)
            );
        }

        /// Lines checked one by one as they are found are the lines of the text, each text
        /// exactly when it is UTF-8 — whatever the bytes, and wherever a multi-byte character
        /// or a bad byte falls against the 16-byte steps and the line ends.
        #[test]
        fn text_lines_are_the_lines_checked_one_by_one(
            parts in proptest::collection::vec(
                proptest::sample::select(vec![
                    &b"a"[..], b"\n", b"\xc3\xa9", b"\xe4\xb8\x96", b"\xf0\x9f\x98\x80",
                    b"\xff", b"\xc3", b"\x80", b"0123456789abcde", b"\r\n",
                ]),
                0..60,
            ),
        ) {
            let b: Vec<u8> = parts.concat();
            let want: Vec<Result<&str, &[u8]>> = lines(&b)
                .map(|l| std::str::from_utf8(l).map_err(|_| l))
                .collect();
            let got: Vec<Result<&str, &[u8]>> = text_lines(&b).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    /// Regression: batches are worked on from a predicted calendar while the one before
    /// drains; a chunk with two midnights (its pre-scan sees one) made every later
    /// prediction a day off, and every later chunk was worked twice, on one thread. The
    /// next batch is re-predicted from the real calendar: only the batches in flight repeat.
    #[test]
    fn a_missed_midnight_costs_a_batch_not_the_file() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        // one chunk crossing midnight twice, then 600 lines of one day
        let mut text = String::new();
        for t in ["23:00:00", "01:00:00", "23:30:00", "01:30:00"] {
            text.push_str(&format!("[{t} TP0] Decode batch. #running-req: 1\n"));
        }
        for k in 0..600 {
            let (h, m) = (2 + k / 60, k % 60);
            text.push_str(&format!(
                "[{h:02}:{m:02}:00 TP0] Decode batch. #running-req: 1\n"
            ));
        }
        let mode = Mode {
            chunk: 180,
            ..Mode::LOG
        };
        let calls = AtomicUsize::new(0);
        let mut chunks = 0;
        let mut last = String::new();
        scan(
            Data::Owned(text.into_bytes()),
            Calendar::new(2024, days_from_civil(2024, 9, 1).unwrap()),
            mode,
            |c: Chunk<'_>| {
                calls.fetch_add(1, Ordering::SeqCst);
                let mut cal = c.calendar;
                let mut scratch = String::new();
                let stamps: Vec<String> = lines(c.bytes)
                    .map(|l| cal.resolve(stamp_of(l, &mut scratch)).unwrap().to_string())
                    .collect();
                (stamps, cal)
            },
            |r| {
                chunks += 1;
                last = r.last().cloned().unwrap_or_default();
            },
        )
        .unwrap();
        assert_eq!(last, "2024-09-03T11:59:00");
        let batch = mode.batch * rayon::current_num_threads();
        let calls = calls.into_inner();
        assert!(
            calls <= chunks + 2 * batch,
            "{calls} pieces of work for {chunks} chunks (a batch is {batch})"
        );
    }

    /// Regression: a stream was read in batches of the mode's size (256 chunks a thread for
    /// records), holding half a gigabyte of a pipe in memory. Results must come back while
    /// the stream is still being read, a few batches in.
    #[test]
    fn streams_are_worked_on_in_small_batches() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        struct Counting(Arc<AtomicUsize>, usize);
        impl io::Read for Counting {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = buf.len().min(self.1).min(4096);
                for b in &mut buf[..n] {
                    *b = if self.0.fetch_add(1, Ordering::SeqCst) % 64 == 63 {
                        b'\n'
                    } else {
                        b'x'
                    };
                }
                self.1 -= n;
                Ok(n)
            }
        }
        let read = Arc::new(AtomicUsize::new(0));
        let total = 4000 * 1024;
        let data = Data::Stream(Box::new(Counting(read.clone(), total)));
        let mut read_at_first = None;
        scan(
            data,
            Calendar::new(2026, 0),
            Mode {
                chunk: 1024,
                ..Mode::RECORDS
            },
            |c: Chunk<'_>| (c.bytes.len(), c.calendar),
            |_| {
                read_at_first.get_or_insert(read.load(Ordering::SeqCst));
            },
        )
        .unwrap();
        let threads = rayon::current_num_threads();
        // a batch, the next one read ahead, and the channel's chunks
        let bound = (4 * STREAM_BATCH * threads + 8) * 1024 * 2;
        let first = read_at_first.unwrap();
        assert!(
            first <= bound,
            "{first} bytes read before the first result (bound {bound})"
        );
        assert_eq!(read.load(Ordering::SeqCst), total);
    }

    /// Lines made from rows, for the scan's tests: a row `~` holds no line, a row `a|b` holds
    /// two, any other row is its line.
    struct TestRows(Vec<u8>);

    impl MadeLines for TestRows {
        fn rows(&self) -> &[u8] {
            &self.0
        }
        fn cut(&self, at: usize) -> usize {
            ChunkGrid::new(&self.0, 1).line_start(at)
        }
        fn make(&self, from: usize, to: usize, out: &mut Vec<u8>) {
            for row in lines(&self.0[from..to]).filter(|r| *r != b"~") {
                out.extend(row.iter().map(|&c| if c == b'|' { b'\n' } else { c }));
                out.push(b'\n');
            }
        }
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Made lines scanned in cells of any size give each line the stamp the lines read
        /// in order give it, and (counted) its number: across midnights, empty cells and
        /// rows of two lines.
        #[test]
        fn made_cells_see_the_calendar_of_the_lines_before(
            rows in proptest::collection::vec(
                proptest::prop_oneof![
                    (0u32..24).prop_map(|h| format!("[{h:02}:00:00 TP0] Decode")),
                    (0u32..24).prop_map(|h| format!("[{h:02}:30:00 TP0] a|[{h:02}:31:00] b")),
                    proptest::strategy::Just("no stamp".to_string()),
                    proptest::strategy::Just("~".to_string()),
                ],
                0..120,
            ),
            chunk in 8usize..400,
            count in proptest::bool::ANY,
        ) {
            let file: String = rows.iter().map(|r| format!("{r}\n")).collect();
            let made = TestRows(file.into_bytes());
            let lines_made = made.make_all();
            let calendar = Calendar::new(2024, days_from_civil(2024, 9, 1).unwrap());
            let mut cal = calendar;
            let mut scratch = String::new();
            let want: Vec<(u64, String)> = lines(&lines_made)
                .enumerate()
                .map(|(i, l)| (i as u64, format!("{:?}", cal.resolve(stamp_of(l, &mut scratch)))))
                .collect();
            let mode = Mode { chunk, ..if count { Mode::LOG } else { Mode::LOG_RELATIVE } };
            let mut got = Vec::new();
            let n = scan(
                Data::Made(std::sync::Arc::new(made)),
                calendar,
                mode,
                |c: Chunk<'_>| {
                    let mut cal = c.calendar;
                    let mut scratch = String::new();
                    let out: Vec<(u64, String)> = lines(c.bytes)
                        .enumerate()
                        .map(|(i, l)| {
                            let s = cal.resolve(stamp_of(l, &mut scratch));
                            (c.first_line + i as u64, format!("{s:?}"))
                        })
                        .collect();
                    (out, cal)
                },
                |r| got.push(r),
            )
            .unwrap();
            let mut before = 0;
            let got: Vec<(u64, String)> = got
                .into_iter()
                .flat_map(|r| {
                    let add = if count { 0 } else { before };
                    before += r.len() as u64;
                    r.into_iter().map(move |(i, s)| (i + add, s))
                })
                .collect();
            proptest::prop_assert_eq!(n, if count { want.len() as u64 } else { 0 });
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn line_numbers_and_midnights_across_chunks() {
        // many time-only lines crossing midnight twice, in small chunks
        let mut text = String::new();
        for day in 0..3 {
            for h in [1, 9, 17, 23] {
                text.push_str(&format!(
                    "[{h:02}:00:00 TP0] Decode batch. #running-req: {day}\n"
                ));
            }
        }
        let data = Data::Owned(text.into_bytes());
        let base = days_from_civil(2024, 9, 1).unwrap();
        let mut seen = Vec::new();
        let n = scan(
            data,
            Calendar::new(2024, base),
            Mode {
                chunk: 40,
                ..Mode::LOG
            },
            |c: Chunk<'_>| {
                let mut cal = c.calendar;
                let mut scratch = String::new();
                let out: Vec<_> = lines(c.bytes)
                    .enumerate()
                    .map(|(i, l)| {
                        (
                            c.first_line + i as u64,
                            cal.resolve(stamp_of(l, &mut scratch)).unwrap().to_string(),
                        )
                    })
                    .collect();
                (out, cal)
            },
            |r| seen.extend(r),
        )
        .unwrap();
        assert_eq!(n, 12);
        assert_eq!(seen[0], (0, "2024-09-01T01:00:00".to_string()));
        assert_eq!(seen[4], (4, "2024-09-02T01:00:00".to_string()));
        assert_eq!(seen[11], (11, "2024-09-03T23:00:00".to_string()));
    }
}
