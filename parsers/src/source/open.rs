//! Opening an input: mapped, read or streamed through a decoder (compression sniffed
//! from the first bytes), and whether it changed since it was opened.

use super::error::{Shrank, SourceError};
use super::input::Input;
use super::pipe::open_pipe;
use crate::guard::Guard;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;
use std::time::SystemTime;

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
pub enum FileChange {
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
    pub fn change(&self, path: &Path) -> Option<FileChange> {
        let now = match std::fs::metadata(path) {
            Ok(m) => AtOpen::of(&m),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Some(FileChange::Deleted),
            Err(_) => return None,
        };
        if (now.dev, now.ino) != (self.dev, self.ino) {
            Some(FileChange::Replaced)
        } else if now.len > self.len {
            Some(FileChange::Grew { len: now.len })
        } else if now.len < self.len {
            Some(FileChange::Shrank { len: now.len })
        } else {
            None
        }
    }
}

/// The bytes of an input: all at once, or a stream.
pub enum Data {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
    /// Bytes handed over in memory ([`Input::Bytes`]).
    Shared(std::sync::Arc<Vec<u8>>),
    Stream(Box<dyn Read + Send>),
    /// Lines made from another file's rows (a collector's records unwrapped: see
    /// `wrappers::envelope::unwrap`), by the scan's workers, a cell of rows each.
    Made(std::sync::Arc<dyn MadeLines>),
}

/// Lines made from the rows of other bytes (a collector's records, unwrapped into the plain
/// log the engine wrote): the scan cuts the rows into cells ([`MadeLines::cut`]) and each
/// worker makes its cell's lines into a buffer of its own and parses them there, so that
/// the lines are copied once, on every core, and memory stays bounded by the cells in work.
pub trait MadeLines: Send + Sync {
    /// The rows.
    fn rows(&self) -> &[u8];
    /// The first place at or after `at` where a cell may start: a row's start after which
    /// no line goes on from the rows before (`rows().len()` at the end).
    fn cut(&self, at: usize) -> usize;
    /// Appends the lines of the rows `rows()[from..to]` (a cell: both ends cuts) to `out`.
    fn make(&self, from: usize, to: usize, out: &mut Vec<u8>);

    /// Cell `k` of cells of `size` bytes of rows: the rows from the cut at `k * size` to the
    /// cut at `(k + 1) * size` (empty where both are one).
    fn cell(&self, k: usize, size: usize) -> (usize, usize) {
        let size = size.max(1);
        (
            self.cut(k.saturating_mul(size)),
            self.cut(k.saturating_add(1).saturating_mul(size)),
        )
    }

    /// All the lines, made on this thread in cells of `size` bytes of rows.
    fn make_in_cells(&self, size: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for k in 0..self.rows().len().div_ceil(size.max(1)) {
            let (a, b) = self.cell(k, size);
            if a < b {
                self.make(a, b, &mut out);
            }
        }
        out
    }

    /// All the lines, made on this thread.
    fn make_all(&self) -> Vec<u8> {
        self.make_in_cells(8 << 20)
    }
}

impl Data {
    /// All the bytes, copied (or decompressed) into memory: for small inputs read whole,
    /// like Prometheus scrapes.
    pub fn read_all(self) -> io::Result<Vec<u8>> {
        match self {
            Data::Mapped(m) => guarded_copy(&m, ..),
            Data::Owned(v) => Ok(v),
            Data::Shared(v) => Ok(std::sync::Arc::unwrap_or_clone(v)),
            Data::Stream(mut r) => {
                let mut v = Vec::new();
                r.read_to_end(&mut v)?;
                Ok(v)
            }
            Data::Made(m) => Ok(m.make_all()),
        }
    }

    /// The bytes, where they are all at hand (a map, or in memory): not a stream.
    pub fn at_hand(&self) -> Option<&[u8]> {
        match self {
            Data::Mapped(m) => Some(m),
            Data::Owned(v) => Some(v),
            Data::Shared(v) => Some(v),
            Data::Stream(_) | Data::Made(_) => None,
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
            Input::Bytes(named) => {
                let bytes = &named.bytes;
                let compression = Compression::sniff(bytes);
                let data = if compression != Compression::None {
                    let r = io::Cursor::new(SharedBytes(bytes.clone()));
                    Data::Stream(decoder(compression, Box::new(r)).map_err(read_err)?)
                } else {
                    let end = limit.map_or(bytes.len(), |l| bytes.len().min(l as usize));
                    if end < bytes.len() {
                        Data::Owned(bytes[..end].to_vec())
                    } else {
                        Data::Shared(bytes.clone())
                    }
                };
                Ok(Source {
                    input: input.clone(),
                    compression,
                    modified: None,
                    at_open: None,
                    data,
                })
            }
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
            Data::Shared(v) => Ok(v[..v.len().min(HEAD)].to_vec()),
            // (made by a reader that knows what it makes: never sniffed)
            Data::Made(_) => Ok(Vec::new()),
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

/// Shared bytes as a slice, for a cursor over them.
struct SharedBytes(std::sync::Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
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
