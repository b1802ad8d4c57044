//! Whole-line chunks: the grid of cells over a mapped or read file, each worker finding its
//! own ends, and the chunks of a stream cut on a newline by a reader thread; pages of
//! finished chunks handed back.

use std::io::{self, Read};

/// Cells of `size` bytes over a buffer, each standing for the lines that start in it: cell
/// `k` holds the lines whose first byte is in `k * size..(k + 1) * size` (none when a line
/// longer than a cell spans it). Where a cell's lines begin and end follows from the grid and
/// the newline before each edge, so the worker that takes a cell finds its own ends: no
/// thread walks the file first to cut it (that walk faulted in a page of the mapped file per
/// chunk, one after the other, 8–19 ms before a 1.1 GB scan could start).
///
/// Over a log ([`ChunkGrid::logs`]), a cell's edge moves on past the rows after it that open
/// no line of their own (no logger prefix: [`crate::wrappers::wrapped::opens_a_line`]), up to
/// [`WRAPPED_ROWS`] of them: the rows a terminal wrapped a record into stay in the cell of
/// the record's first row, which joins them.
#[derive(Debug, Clone, Copy)]
pub struct ChunkGrid<'a> {
    data: &'a [u8],
    size: usize,
    logs: bool,
}

/// Rows without a prefix kept with the row before a chunk's edge: more than a stats line of
/// 1,000 characters wrapped at 80 columns.
pub const WRAPPED_ROWS: usize = 16;

impl<'a> ChunkGrid<'a> {
    /// The grid of a file of records (JSON lines): every line start may be an edge.
    pub fn new(data: &'a [u8], size: usize) -> ChunkGrid<'a> {
        ChunkGrid {
            data,
            size: size.max(1),
            logs: false,
        }
    }

    /// The grid of a log: an edge never falls before a wrapped record's later rows.
    pub fn logs(data: &'a [u8], size: usize) -> ChunkGrid<'a> {
        ChunkGrid {
            logs: true,
            ..ChunkGrid::new(data, size)
        }
    }

    /// The number of cells.
    pub fn len(&self) -> usize {
        self.data.len().div_ceil(self.size)
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The lines that start in cell `k` (the last may lack its newline).
    pub fn cell(&self, k: usize) -> &'a [u8] {
        let from = k.saturating_mul(self.size);
        let to = k.saturating_add(1).saturating_mul(self.size);
        // the search for the first line start stops at the cell's end: inside a line longer
        // than many cells, each cell searching on to the line's end made a 200 MB line cost
        // 200 searches of 100 MB on average
        match self.line_start_within(from, to) {
            Some(start) => {
                let (start, end) = (self.edge(start), self.edge(self.line_start(to)));
                if start < end {
                    &self.data[start..end]
                } else {
                    &[]
                }
            }
            None => &[],
        }
    }

    /// The edge at line start `s`: `s`, or over a log the start of the first row after it
    /// that opens a line, at most [`WRAPPED_ROWS`] rows on. (Monotone in `s`, so the cells
    /// stay in order and cover the data.)
    fn edge(&self, s: usize) -> usize {
        let d = self.data;
        let mut s = s;
        if !self.logs || s == 0 {
            return s;
        }
        for _ in 0..WRAPPED_ROWS {
            if s >= d.len() || crate::wrappers::wrapped::opens_a_line(&d[s..]) {
                break;
            }
            s = memchr::memchr(b'\n', &d[s..]).map_or(d.len(), |i| s + i + 1);
        }
        s
    }

    /// The first line start in `x..limit`, if any.
    fn line_start_within(&self, x: usize, limit: usize) -> Option<usize> {
        let d = self.data;
        if x == 0 {
            return Some(0);
        }
        if x >= d.len() {
            return None;
        }
        memchr::memchr(b'\n', &d[x - 1..limit.min(d.len())]).map(|i| x + i)
    }

    /// The first line start at or after `x`, or the end of the data.
    pub(crate) fn line_start(&self, x: usize) -> usize {
        let d = self.data;
        if x == 0 || x >= d.len() {
            return x.min(d.len());
        }
        memchr::memchr(b'\n', &d[x - 1..]).map_or(d.len(), |i| x + i)
    }
}

/// Drops the page mappings of `part`, a worked-on piece of `map` (its whole pages only). The
/// file's pages stay in the page cache, and touching them again only maps them again. The
/// point is the unmapping: tearing down the mapping of a whole file at its end took one
/// thread 32–35 ms per 1.1 GB while the other core idled; dropped piece by piece, by the
/// workers, it is spread over all cores.
pub fn release(map: &memmap2::Mmap, part: &[u8]) {
    const PAGE: usize = 4096;
    let base = map.as_ptr() as usize;
    let Some(from) = (part.as_ptr() as usize).checked_sub(base) else {
        return;
    };
    if from + part.len() > map.len() {
        return;
    }
    let (start, end) = (
        from.next_multiple_of(PAGE),
        (from + part.len()) / PAGE * PAGE,
    );
    if end > start {
        // SAFETY: the map is shared and read-only, so after `MADV_DONTNEED` a read of these
        // pages maps the file's pages again: the bytes any slice of the map sees do not
        // change (with larger pages, memmap2 rounds the range out to them, same reasoning).
        // Failure only means the pages stay mapped.
        let _ = unsafe {
            map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
        };
    }
}

/// Buffers of streams that have ended, for the next ones to read into (see
/// [`StreamChunks`]): a folder of compressed batch files is hundreds of short streams, two
/// read at a time, and giving each new buffers cost ten times the page faults (28 k instead
/// of 2.7 k for 100 files of 275 KB).
static SPARE: std::sync::Mutex<Vec<Vec<u8>>> = std::sync::Mutex::new(Vec::new());

/// Keeps `bufs` for later streams, up to `most` in all, and none longer than `longest` (a
/// buffer grown around one very long line is not worth keeping).
pub fn keep_spare(bufs: Vec<Vec<u8>>, most: usize, longest: usize) {
    if let Ok(mut spare) = SPARE.lock() {
        spare.extend(bufs.into_iter().filter(|b| b.len() <= longest));
        spare.truncate(most);
    }
}

/// Reads a stream into owned chunks of about `target` bytes ending on a newline.
///
/// Buffers the consumer is done with can be handed back through [`StreamChunks::recycle`]
/// (or [`keep_spare`] for later streams): their bytes are already initialised, so the next
/// chunk is read over them instead of into a zeroed new buffer. The zeroing was a `memset`
/// of the whole stream on the reading thread — the decompressor's, the slowest stage — 7%
/// of a `.zst` report's samples.
pub struct StreamChunks {
    reader: Box<dyn Read + Send>,
    /// The start of a line the last chunk cut off.
    carry: Vec<u8>,
    target: usize,
    /// A log: a cut never falls before a wrapped record's later rows (see [`ChunkGrid`]).
    logs: bool,
    done: bool,
    /// A read error held back until the bytes read before it are handed out.
    failed: Option<io::Error>,
    spare: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
}

impl StreamChunks {
    pub fn new(reader: Box<dyn Read + Send>, target: usize) -> StreamChunks {
        StreamChunks {
            reader,
            carry: Vec::new(),
            target: target.max(1),
            logs: false,
            done: false,
            failed: None,
            spare: None,
        }
    }

    /// Cuts a log's chunks before a row that opens a line where one is near (see
    /// [`ChunkGrid::logs`]).
    pub fn logs(mut self) -> StreamChunks {
        self.logs = true;
        self
    }

    /// Takes buffers to read into from `spare` when it has some (any length, any contents).
    pub fn recycle(mut self, spare: std::sync::mpsc::Receiver<Vec<u8>>) -> StreamChunks {
        self.spare = Some(spare);
        self
    }

    /// The buffers handed back and not read into.
    pub fn into_spare(self) -> Vec<Vec<u8>> {
        self.spare
            .map(|r| r.try_iter().collect())
            .unwrap_or_default()
    }
}

/// A chunk read from a stream: the first `len` bytes of `buf`. All of `buf` is initialised
/// (the chunk is cut from a longer read), and stays whole, so that it can be read into again
/// without zeroing any of it.
#[derive(Debug)]
pub struct Filled {
    buf: Vec<u8>,
    len: usize,
}

impl Filled {
    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// The buffer, to hand back through [`StreamChunks::recycle`] or [`keep_spare`].
    pub fn into_buf(self) -> Vec<u8> {
        self.buf
    }
}

/// A cut at line start `cut` moved back before the wrapped rows it would split from their
/// record: while the row at the cut opens no line, to the line start before it (not before
/// `floor`, at most [`WRAPPED_ROWS`] rows).
fn back_to_an_opening_row(buf: &[u8], cut: usize, floor: usize) -> usize {
    let mut cut = cut;
    for _ in 0..WRAPPED_ROWS {
        if crate::wrappers::wrapped::opens_a_line(&buf[cut..]) || cut <= floor + 1 {
            break;
        }
        match memchr::memrchr(b'\n', &buf[floor..cut - 1]) {
            Some(i) => cut = floor + i + 1,
            None => break,
        }
    }
    cut
}

impl Iterator for StreamChunks {
    type Item = io::Result<Filled>;

    fn next(&mut self) -> Option<io::Result<Filled>> {
        if self.done {
            return None;
        }
        if let Some(e) = self.failed.take() {
            self.done = true;
            return Some(Err(e));
        }
        // the whole of `buf` is initialised; `len` bytes of it are the chunk so far
        let mut buf = self
            .spare
            .as_ref()
            .and_then(|r| r.try_recv().ok())
            .or_else(|| SPARE.lock().ok()?.pop())
            .unwrap_or_default();
        let full = self.target + 64 * 1024;
        let mut len = self.carry.len();
        // bytes past `half` already searched for a newline, in vain: a line longer than a
        // chunk is searched once, not once per read
        let mut searched = 0;
        if buf.len() < len {
            buf.resize(len, 0);
        }
        buf[..len].copy_from_slice(&self.carry);
        loop {
            if len >= self.target {
                let half = self.target / 2;
                let from = half.max(searched);
                searched = len;
                if let Some(i) = memchr::memrchr(b'\n', &buf[from..len]) {
                    let mut cut = from + i + 1;
                    if self.logs {
                        cut = back_to_an_opening_row(&buf[..len], cut, half);
                    }
                    self.carry.clear();
                    self.carry.extend_from_slice(&buf[cut..len]);
                    return Some(Ok(Filled { buf, len: cut }));
                }
            }
            let want = full.saturating_sub(len).max(64 * 1024);
            if buf.len() < len + want {
                // zeroes only what the buffer never held
                buf.resize(len + want, 0);
            }
            match self.reader.read(&mut buf[len..len + want]) {
                Ok(0) => {
                    self.done = true;
                    return (len > 0).then_some(Ok(Filled { buf, len }));
                }
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if len > 0 => {
                    // what came before the error (a cut or corrupt compressed stream) is a
                    // chunk of its own, the error comes next
                    self.failed = Some(e);
                    self.carry.clear();
                    return Some(Ok(Filled { buf, len }));
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
