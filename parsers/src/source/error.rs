//! What can go wrong with one input: it cannot be opened or read, or it shrank while read.

use std::io;

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
