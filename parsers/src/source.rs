//! Opening inputs: files, folders, globs and stdin; sniffing compression; whole-line chunks.
//!
//! Plain regular files are memory-mapped (an `unsafe` call, as is dropping the pages of a
//! worked-on piece, see [`release`]), so records can borrow the file's bytes; if mapping
//! fails (a pipe, a special file, a filesystem without mmap) the file is read into memory.
//! gzip and zstd are recognised by their magic bytes — never by the file name — and streamed
//! through a decoder on a reader thread, cut into chunks that end on a newline. Mapped and
//! read files are cut by a [`Grid`], each chunk by the worker that takes it.

use crate::guard::Guard;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// An I/O problem with one input, naming it.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("cannot open {path}: {source}")]
    Open { path: String, source: io::Error },
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: io::Error },
    #[error("{pattern}: invalid glob pattern ({msg})")]
    Glob { pattern: String, msg: String },
    #[error("{0}: no such file or directory, and no file matches it as a glob")]
    NotFound(String),
}

/// A mapped file found shorter than when it was opened, part way through a read (truncated
/// by log rotation, say): what lay before `at` was read, the rest was gone.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the file shrank while it was read: {len} bytes when opened, gone from byte {at} on")]
pub struct Shrank {
    /// Where the first missing page began.
    pub at: u64,
    /// The file's size when opened.
    pub len: u64,
}

impl Shrank {
    /// As an I/O error, for readers that return one (find it again with [`Shrank::of`]).
    pub fn error(at: usize, len: usize) -> io::Error {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            Shrank {
                at: at as u64,
                len: len as u64,
            },
        )
    }

    /// The shrink an I/O error stands for, if it does.
    pub fn of(e: &io::Error) -> Option<Shrank> {
        e.get_ref()?.downcast_ref::<Shrank>().copied()
    }
}

/// Compression found from the first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// Recognises gzip (`1f 8b`) and zstd (`28 b5 2f fd`) frames.
    pub fn sniff(head: &[u8]) -> Compression {
        if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else {
            Compression::None
        }
    }
}

/// One input as named on the command line or found in a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Path(PathBuf),
    Stdin,
}

impl Input {
    /// The name shown in reports (`-` for stdin).
    pub fn display(&self) -> String {
        match self {
            Input::Path(p) => p.display().to_string(),
            Input::Stdin => "-".to_string(),
        }
    }

    /// The file stem, used as the default instance name (`gpu3` for `logs/gpu3.log.zst`).
    pub fn stem(&self) -> String {
        match self {
            Input::Stdin => "stdin".to_string(),
            Input::Path(p) => {
                let name = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let mut stem = name.as_str();
                // compression, a rotation number (`gpu0.log.1`), then the kind of file
                loop {
                    let before = stem;
                    for ext in [
                        ".zst", ".zstd", ".gz", ".log", ".txt", ".jsonl", ".json", ".out", ".err",
                    ] {
                        if let Some(s) = stem.strip_suffix(ext) {
                            if !s.is_empty() {
                                stem = s;
                            }
                        }
                    }
                    // `gpu0.log.1`, not `v0.5`
                    if let Some((s, n)) = stem.rsplit_once('.') {
                        let rotated = [".log", ".txt", ".out", ".err", ".jsonl", ".json"]
                            .iter()
                            .any(|e| s.ends_with(e));
                        if rotated && !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()) {
                            stem = s;
                        }
                    }
                    if stem == before {
                        break;
                    }
                }
                stem.to_string()
            }
        }
    }
}

/// The instance name of each input: its [`Input::stem`], so that rotated parts of one log
/// (`gpu0.log`, `gpu0.log.1.gz`) are one instance; where inputs in different folders share
/// a stem (`node1/gpu0.log`, `node2/gpu0.log`) the folder name is put in front.
pub fn instance_names(inputs: &[Input]) -> Vec<String> {
    use std::collections::{HashMap, HashSet};
    let parent = |i: &Input| match i {
        Input::Path(p) => p.parent().map(Path::to_path_buf),
        Input::Stdin => None,
    };
    let stems: Vec<String> = inputs.iter().map(Input::stem).collect();
    let mut dirs: HashMap<&str, HashSet<Option<PathBuf>>> = HashMap::new();
    for (input, stem) in inputs.iter().zip(&stems) {
        dirs.entry(stem).or_default().insert(parent(input));
    }
    inputs
        .iter()
        .zip(&stems)
        .map(|(input, stem)| {
            let dir = parent(input);
            let name = dir.as_deref().and_then(Path::file_name);
            match name {
                Some(d) if dirs[stem.as_str()].len() > 1 => {
                    format!("{}/{stem}", d.to_string_lossy())
                }
                _ => stem.clone(),
            }
        })
        .collect()
}

/// A path met while expanding the arguments that is not read: a link that loops back to a
/// folder above it, or an entry that could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unread {
    pub path: String,
    pub why: String,
    /// Whether files may be missing because of it (a folder not listed), rather than a link
    /// not followed twice.
    pub lost: bool,
}

/// The inputs the arguments name, and what was met but not read.
#[derive(Debug, Default)]
pub struct Expanded {
    pub inputs: Vec<Input>,
    pub unread: Vec<Unread>,
}

/// Expands command-line arguments into inputs: `-` is stdin, folders are walked recursively
/// (sorted, hidden entries skipped), anything that is not a path is tried as a glob.
pub fn expand(args: &[String]) -> Result<Expanded, SourceError> {
    let mut out = Expanded::default();
    for arg in args {
        if arg == "-" {
            out.inputs.push(Input::Stdin);
            continue;
        }
        let path = Path::new(arg);
        if path.is_dir() {
            walk(path, &mut out);
        } else if path.exists() || path.symlink_metadata().is_ok() {
            // a dangling link or an unreadable file is named, to fail with its reason
            out.inputs.push(Input::Path(path.to_path_buf()));
        } else {
            let paths = glob::glob(arg).map_err(|e| SourceError::Glob {
                pattern: arg.clone(),
                msg: e.msg.to_string(),
            })?;
            let mut found: Vec<PathBuf> = paths.filter_map(Result::ok).collect();
            if found.is_empty() {
                return Err(SourceError::NotFound(arg.clone()));
            }
            found.sort();
            for p in found {
                if p.is_dir() {
                    walk(&p, &mut out);
                } else {
                    out.inputs.push(Input::Path(p));
                }
            }
        }
    }
    Ok(out)
}

/// The files under `dir`, depth first in name order, hidden ones (`.name`) left out. Links
/// are followed; a link back to a folder above it is noted once and not followed (not a walk
/// forty levels deep), and a folder that cannot be listed is noted with its reason.
fn walk(dir: &Path, out: &mut Expanded) {
    let entries = walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
    for e in entries {
        match e {
            Ok(e) if !e.file_type().is_dir() => out.inputs.push(Input::Path(e.into_path())),
            Ok(_) => {}
            Err(err) => {
                let path = err
                    .path()
                    .map_or_else(|| dir.display().to_string(), |p| p.display().to_string());
                let (why, lost) = match err.loop_ancestor() {
                    Some(up) => (
                        format!("a link back to {}, not followed again", up.display()),
                        false,
                    ),
                    None => match err.io_error() {
                        Some(io) => (format!("cannot list: {io}"), true),
                        None => (err.to_string(), true),
                    },
                };
                out.unread.push(Unread { path, why, lost });
            }
        }
    }
}

/// An opened input.
pub struct Source {
    pub input: Input,
    pub compression: Compression,
    /// Modification time (completes year-less stamps when `--year` is not given).
    pub modified: Option<SystemTime>,
    /// A regular file's identity and size when opened, to tell afterwards whether it changed
    /// while it was read ([`AtOpen::change`]).
    pub at_open: Option<AtOpen>,
    pub data: Data,
}

/// A regular file as it was when opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtOpen {
    pub len: u64,
    dev: u64,
    ino: u64,
}

/// How a file changed between its opening and the end of its reading. A report reads the
/// bytes the file held when opened; these say what it may have missed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// Bytes were appended (a server still writing): `len` now.
    Grew { len: u64 },
    /// The file is shorter now, with no read past its new end (that is [`Shrank`]).
    Shrank { len: u64 },
    /// Another file now has its name (rotation by rename and re-create).
    Replaced,
    /// Its name is gone.
    Deleted,
}

impl AtOpen {
    fn of(meta: &std::fs::Metadata) -> AtOpen {
        use std::os::unix::fs::MetadataExt;
        AtOpen {
            len: meta.len(),
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }

    /// What happened to the file at `path` since it was opened, if anything.
    pub fn change(&self, path: &Path) -> Option<Change> {
        let now = match std::fs::metadata(path) {
            Ok(m) => AtOpen::of(&m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(Change::Deleted),
            Err(_) => return None,
        };
        if (now.dev, now.ino) != (self.dev, self.ino) {
            Some(Change::Replaced)
        } else if now.len > self.len {
            Some(Change::Grew { len: now.len })
        } else if now.len < self.len {
            Some(Change::Shrank { len: now.len })
        } else {
            None
        }
    }
}

/// The bytes of an input: all at once, or a stream.
pub enum Data {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
    Stream(Box<dyn Read + Send>),
}

impl Data {
    /// All the bytes, copied (or decompressed) into memory: for small inputs read whole,
    /// like Prometheus scrapes.
    pub fn read_all(self) -> io::Result<Vec<u8>> {
        match self {
            Data::Mapped(m) => guarded_copy(&m, ..),
            Data::Owned(v) => Ok(v),
            Data::Stream(mut r) => {
                let mut v = Vec::new();
                r.read_to_end(&mut v)?;
                Ok(v)
            }
        }
    }
}

impl Source {
    /// Opens an input and sniffs its compression.
    pub fn open(input: &Input) -> Result<Source, SourceError> {
        Source::open_upto(input, None)
    }

    /// [`Source::open`], reading a plain file only up to byte `limit` (where a growing file
    /// stood at some moment: `pulse` reads the job up to where its window starts).
    pub fn open_upto(input: &Input, limit: Option<u64>) -> Result<Source, SourceError> {
        let name = input.display();
        let read_err = |source| SourceError::Read {
            path: name.clone(),
            source,
        };
        match input {
            Input::Stdin => stream(input, io::stdin(), None).map_err(read_err),
            Input::Path(path) => {
                let open_err = |source| SourceError::Open {
                    path: name.clone(),
                    source,
                };
                let fifo = std::fs::metadata(path).is_ok_and(|m| {
                    use std::os::unix::fs::FileTypeExt;
                    m.file_type().is_fifo()
                });
                let file = if fifo {
                    open_pipe(path).map_err(open_err)?
                } else {
                    File::open(path).map_err(open_err)?
                };
                let meta = file.metadata().map_err(read_err)?;
                let modified = meta.modified().ok();
                if !meta.is_file() {
                    // a named pipe (`<(zcat …)`) or a device: read once, as it comes
                    return stream(input, file, modified).map_err(read_err);
                }
                let at_open = Some(AtOpen::of(&meta));
                let mut head = [0u8; 4];
                let n = read_head(&file, &mut head).map_err(read_err)?;
                let compression = Compression::sniff(&head[..n]);
                let data = if compression != Compression::None {
                    let r = BufReader::with_capacity(1 << 20, file);
                    Data::Stream(decoder(compression, Box::new(r)).map_err(read_err)?)
                } else if let Some(limit) = limit.filter(|&l| l < meta.len()) {
                    // SAFETY: as below, over the first `limit` bytes only
                    match unsafe { memmap2::MmapOptions::new().len(limit as usize).map(&file) } {
                        Ok(m) if limit > 0 => Data::Mapped(m),
                        _ => {
                            let mut v = Vec::new();
                            (&file).take(limit).read_to_end(&mut v).map_err(read_err)?;
                            Data::Owned(v)
                        }
                    }
                } else if meta.len() > 0 {
                    // SAFETY: the map is read-only and lives as long as the records that borrow
                    // it. A file truncated by another process while mapped can raise SIGBUS;
                    // that is the accepted trade of every mmap-based reader (ripgrep, hl).
                    match unsafe { memmap2::Mmap::map(&file) } {
                        Ok(m) => Data::Mapped(m),
                        Err(_) => Data::Owned(std::fs::read(path).map_err(read_err)?),
                    }
                } else {
                    Data::Stream(Box::new(file))
                };
                Ok(Source {
                    input: input.clone(),
                    compression,
                    modified,
                    at_open,
                    data,
                })
            }
        }
    }
}

/// How long [`Source::open`] waits for a writer on a named pipe, in milliseconds (`u64::MAX`:
/// for ever). Set once from the command line (`--timeout`).
static PIPE_TIMEOUT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

/// Gives up on a named pipe that no process writes to after `t`.
pub fn set_pipe_timeout(t: std::time::Duration) {
    let ms = u64::try_from(t.as_millis()).unwrap_or(u64::MAX);
    PIPE_TIMEOUT_MS.store(ms, std::sync::atomic::Ordering::Relaxed);
}

/// Opens a named pipe for reading without blocking on its `open` (which waits, silently and
/// for ever, for a writer), then waits for its first bytes or its end: for the time set by
/// [`set_pipe_timeout`], saying on stderr after a second that it waits.
fn open_pipe(path: &Path) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let limit = PIPE_TIMEOUT_MS.load(std::sync::atomic::Ordering::Relaxed);
    let start = std::time::Instant::now();
    let mut said = false;
    loop {
        let waited = start.elapsed().as_millis() as u64;
        if waited >= limit {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "a named pipe with no writer after {:.1}s (--timeout)",
                    limit as f64 / 1000.0
                ),
            ));
        }
        if waited >= 1000 && !said {
            eprintln!(
                "tokstat: waiting for a process to write to the named pipe {} (--timeout to give up)",
                path.display()
            );
            said = true;
        }
        let step = (limit - waited).min(250) as libc::c_int;
        let mut fd = libc::pollfd {
            fd: file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd for a descriptor this function owns
        let n = unsafe { libc::poll(&mut fd, 1, step) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        } else if n > 0 {
            break;
        }
    }
    // blocking reads from here on
    // SAFETY: fcntl on a descriptor this function owns
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(file)
}

/// A source read once from where it stands (stdin, a pipe): compression is sniffed from
/// the bytes buffered first, which stay in the buffer for the scan.
fn stream(
    input: &Input,
    r: impl Read + Send + 'static,
    modified: Option<SystemTime>,
) -> io::Result<Source> {
    let mut r = BufReader::with_capacity(1 << 20, r);
    let compression = Compression::sniff(r.fill_buf()?);
    Ok(Source {
        input: input.clone(),
        compression,
        modified,
        at_open: None,
        data: Data::Stream(decoder(compression, Box::new(r))?),
    })
}

impl Source {
    /// The first bytes of the input (up to 64 KiB), for content sniffing. A stream is read
    /// ahead and put back together, so nothing is lost for the scan that follows.
    pub fn head(&mut self) -> io::Result<Vec<u8>> {
        const HEAD: usize = 64 * 1024;
        match &mut self.data {
            Data::Mapped(m) => guarded_copy(m, ..m.len().min(HEAD)),
            Data::Owned(v) => Ok(v[..v.len().min(HEAD)].to_vec()),
            Data::Stream(r) => {
                let mut head = Vec::with_capacity(HEAD);
                let mut limited = r.take(HEAD as u64);
                // a stream that fails within its first bytes (a truncated or corrupt gzip or
                // zstd file) keeps what it gave before, and fails after it, in the scan
                let failed = limited.read_to_end(&mut head).err();
                let rest = std::mem::replace(&mut self.data, Data::Owned(Vec::new()));
                // justified: `self.data` is the stream matched above, moved out to be chained
                #[allow(clippy::unreachable)]
                let Data::Stream(reader) = rest
                else {
                    unreachable!("matched a stream above")
                };
                let replay = io::Cursor::new(head.clone());
                self.data = Data::Stream(match failed {
                    None => Box::new(replay.chain(reader)),
                    Some(e) => Box::new(replay.chain(Failed(Some(e)))),
                });
                Ok(head)
            }
        }
    }
}

/// A copy of `range` of a map, or [`Shrank`] if the file no longer held all of it.
fn guarded_copy(
    map: &[u8],
    range: impl std::slice::SliceIndex<[u8], Output = [u8]>,
) -> io::Result<Vec<u8>> {
    let guard = Guard::new(map);
    let v = map[range].to_vec();
    match guard.fault() {
        Some(at) => Err(Shrank::error(at, map.len())),
        None => Ok(v),
    }
}

/// A reader that fails with the error it holds, once, then ends.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

fn read_head(file: &File, head: &mut [u8]) -> io::Result<usize> {
    use std::os::unix::fs::FileExt;
    let mut n = 0;
    while n < head.len() {
        match file.read_at(&mut head[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn decoder(c: Compression, r: Box<dyn BufRead + Send>) -> io::Result<Box<dyn Read + Send>> {
    Ok(match c {
        Compression::None => Box::new(r),
        Compression::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(r)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(r)?),
    })
}

/// Cells of `size` bytes over a buffer, each standing for the lines that start in it: cell
/// `k` holds the lines whose first byte is in `k * size..(k + 1) * size` (none when a line
/// longer than a cell spans it). Where a cell's lines begin and end follows from the grid and
/// the newline before each edge, so the worker that takes a cell finds its own ends: no
/// thread walks the file first to cut it (that walk faulted in a page of the mapped file per
/// chunk, one after the other, 8–19 ms before a 1.1 GB scan could start).
#[derive(Debug, Clone, Copy)]
pub struct Grid<'a> {
    data: &'a [u8],
    size: usize,
}

impl<'a> Grid<'a> {
    pub fn new(data: &'a [u8], size: usize) -> Grid<'a> {
        Grid {
            data,
            size: size.max(1),
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
            Some(start) => &self.data[start..self.line_start(to)],
            None => &[],
        }
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
    fn line_start(&self, x: usize) -> usize {
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
            done: false,
            failed: None,
            spare: None,
        }
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
                    let cut = from + i + 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What happened to a file between its opening and the end of its reading: appended to,
    /// truncated, renamed over, deleted; nothing when it did not change.
    #[test]
    fn changes_after_opening() {
        use std::io::Write;
        let dir = std::env::temp_dir().join(format!("tokstat-change-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("gpu0.log");
        std::fs::write(&p, "a\nb\n").unwrap();
        let opened = || {
            Source::open(&Input::Path(p.clone()))
                .unwrap()
                .at_open
                .unwrap()
        };
        let o = opened();
        assert_eq!(o.len, 4);
        assert_eq!(o.change(&p), None);
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"c\n")
            .unwrap();
        assert_eq!(o.change(&p), Some(Change::Grew { len: 6 }));
        let o = opened();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(1)
            .unwrap();
        assert_eq!(o.change(&p), Some(Change::Shrank { len: 1 }));
        let o = opened();
        let new = dir.join("new.log");
        std::fs::write(&new, "x\n").unwrap();
        std::fs::rename(&new, &p).unwrap();
        assert_eq!(o.change(&p), Some(Change::Replaced));
        std::fs::remove_file(&p).unwrap();
        assert_eq!(o.change(&p), Some(Change::Deleted));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Folders are walked in name order, hidden names left out, links followed; a link back
    /// to a folder above it is noted once, naming the loop, and the files are still read (it
    /// used to recurse until the path was too long, then to fail the whole command).
    #[cfg(unix)]
    #[test]
    fn folders_walk_in_order_and_loops_are_noted_once() {
        let tmp = std::env::temp_dir().join(format!("tokstat-walk-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(tmp.join("b/inner")).unwrap();
        std::fs::create_dir_all(tmp.join(".hidden")).unwrap();
        for f in [
            "a.log",
            "b/inner/c.log",
            "b/z.log",
            ".hidden/x.log",
            ".dot.log",
        ] {
            std::fs::write(tmp.join(f), "x\n").unwrap();
        }
        let root = tmp.display().to_string();
        let names = |e: &Expanded| -> Vec<String> {
            e.inputs
                .iter()
                .map(|i| i.display()[root.len() + 1..].to_string())
                .collect()
        };
        let got = expand(std::slice::from_ref(&root)).unwrap();
        assert_eq!(names(&got), ["a.log", "b/inner/c.log", "b/z.log"]);
        assert!(got.unread.is_empty());
        std::os::unix::fs::symlink(&tmp, tmp.join("b/inner/up")).unwrap();
        let got = expand(std::slice::from_ref(&root)).unwrap();
        assert_eq!(names(&got), ["a.log", "b/inner/c.log", "b/z.log"]);
        assert_eq!(
            got.unread,
            [Unread {
                path: tmp.join("b/inner/up").display().to_string(),
                why: format!("a link back to {}, not followed again", tmp.display()),
                lost: false,
            }]
        );
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn chunks_end_on_newlines() {
        let data = b"aa\nbbbb\ncc\nd";
        let g = Grid::new(data, 3);
        let c: Vec<_> = (0..g.len()).map(|k| g.cell(k)).collect();
        assert_eq!(c, [&b"aa\n"[..], b"bbbb\n", b"cc\n", b"d"]);
        // a cell that no line starts in is empty
        let g = Grid::new(b"aaaaaaa\nb", 2);
        let c: Vec<_> = (0..g.len()).map(|k| g.cell(k)).collect();
        assert_eq!(c, [&b"aaaaaaa\n"[..], b"", b"", b"", b"b"]);
        let s: Vec<_> = StreamChunks::new(Box::new(&data[..]), 4)
            .map(|c| c.unwrap().bytes().to_vec())
            .collect();
        assert_eq!(s.concat(), data);
        assert!(s[..s.len() - 1].iter().all(|c| c.ends_with(b"\n")));
    }

    proptest::proptest! {
        /// Cells cover the data in order, each holds exactly the lines that start in it, and
        /// all but the last end on a newline.
        #[test]
        fn cells_hold_the_lines_that_start_in_them(
            lines in proptest::collection::vec(0usize..40, 0..30),
            last_newline in proptest::bool::ANY,
            size in 1usize..50,
        ) {
            let mut data = Vec::new();
            let mut starts = Vec::new();
            for (k, &len) in lines.iter().enumerate() {
                starts.push(data.len());
                data.extend(std::iter::repeat_n(b'a' + (k % 26) as u8, len));
                if k + 1 < lines.len() || last_newline {
                    data.push(b'\n');
                }
            }
            let g = Grid::new(&data, size);
            let mut at = 0;
            for k in 0..g.len() {
                let c = g.cell(k);
                // an empty cell has no place (the scan leaves it out)
                if !c.is_empty() {
                    proptest::prop_assert_eq!(c.as_ptr() as usize - data.as_ptr() as usize, at);
                }
                let cell = k * size..(k + 1) * size;
                let inside: Vec<usize> = starts
                    .iter()
                    .copied()
                    .filter(|s| cell.contains(s) && *s < data.len())
                    .collect();
                let found: Vec<usize> = std::iter::once(at)
                    .chain(c.iter().enumerate().filter(|x| *x.1 == b'\n').map(|x| at + x.0 + 1))
                    .filter(|&s| s < at + c.len())
                    .collect();
                proptest::prop_assert_eq!(if c.is_empty() { vec![] } else { found }, inside);
                at += c.len();
            }
            proptest::prop_assert_eq!(at, data.len());
        }
    }

    /// Released pieces of a mapped file read the same afterwards, and a piece that is not
    /// part of the map is left alone.
    #[test]
    fn released_pages_read_the_same() {
        let path = std::env::temp_dir().join(format!("tokstat-release-{}", std::process::id()));
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let map = unsafe { memmap2::Mmap::map(&File::open(&path).unwrap()).unwrap() };
        release(&map, &map[5_000..150_000]);
        release(&map, &data[..]);
        release(&map, &map[..]);
        assert!(map[..] == data[..]);
        drop(map);
        std::fs::remove_file(&path).unwrap();
    }

    proptest::proptest! {
        /// A stream's chunks end on newlines and join up to the stream, whether they are
        /// read into new buffers or into recycled ones full of other bytes.
        #[test]
        fn stream_chunks_join_up(
            lines in proptest::collection::vec(0usize..300, 0..40),
            target in 1usize..200,
            recycled in proptest::collection::vec(0usize..2000, 0..6),
        ) {
            let mut data = Vec::new();
            for (k, &len) in lines.iter().enumerate() {
                data.extend(std::iter::repeat_n(b'a' + (k % 26) as u8, len));
                data.push(b'\n');
            }
            data.pop();
            let (tx, rx) = std::sync::mpsc::channel();
            for &n in &recycled {
                tx.send(vec![b'Z'; n]).unwrap();
            }
            let chunks = StreamChunks::new(Box::new(io::Cursor::new(data.clone())), target)
                .recycle(rx);
            let mut joined = Vec::new();
            let mut count = 0;
            for c in chunks {
                let c = c.unwrap();
                joined.extend_from_slice(c.bytes());
                count += 1;
                if joined.len() < data.len() {
                    proptest::prop_assert!(c.bytes().ends_with(b"\n"));
                }
                // handed back at once: the next chunk is read over this one's bytes
                tx.send(c.into_buf()).unwrap();
            }
            proptest::prop_assert_eq!(&joined, &data);
            proptest::prop_assert_eq!(count == 0, data.is_empty());
        }
    }

    #[test]
    fn stems() {
        assert_eq!(Input::Path("logs/gpu3.log.zst".into()).stem(), "gpu3");
        assert_eq!(
            Input::Path("a/sglang_gpu0.log".into()).stem(),
            "sglang_gpu0"
        );
        assert_eq!(Input::Stdin.stem(), "stdin");
        // rotated parts are one instance; equal stems in different folders are told apart
        assert_eq!(Input::Path("l/gpu0.log.1.gz".into()).stem(), "gpu0");
        assert_eq!(Input::Path("l/gpu0.log.12".into()).stem(), "gpu0");
        assert_eq!(Input::Path("l/v0.5.log".into()).stem(), "v0.5");
        let names = instance_names(&[
            Input::Path("node1/gpu0.log".into()),
            Input::Path("node1/gpu0.log.1".into()),
            Input::Path("node2/gpu0.log".into()),
            Input::Path("node2/gpu1.log".into()),
        ]);
        assert_eq!(names, ["node1/gpu0", "node1/gpu0", "node2/gpu0", "gpu1"]);
    }

    #[test]
    fn sniff() {
        assert_eq!(Compression::sniff(&[0x1f, 0x8b, 8, 0]), Compression::Gzip);
        assert_eq!(
            Compression::sniff(&[0x28, 0xb5, 0x2f, 0xfd]),
            Compression::Zstd
        );
        assert_eq!(Compression::sniff(b"[202"), Compression::None);
    }
}
