//! How far reading has come: bytes and files done against the total, counted by the scan
//! (one addition per chunk of a megabyte) for whoever shows it, such as a progress bar.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Counters shared between the reading threads and a display.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bytes on disk of all inputs (regular files; a pipe's are not known).
    pub total_bytes: AtomicU64,
    pub bytes: AtomicU64,
    pub total_files: AtomicU64,
    pub files: AtomicU64,
}

impl Progress {
    pub(crate) fn start(&self, files: u64, bytes: u64) {
        self.total_files.fetch_add(files, Relaxed);
        self.total_bytes.fetch_add(bytes, Relaxed);
    }

    /// Bytes read of a file being scanned.
    pub(crate) fn read(&self, n: u64) {
        self.bytes.fetch_add(n, Relaxed);
    }

    /// A file done: what of its `size` on disk was not counted as read yet is added.
    pub(crate) fn file_done(&self, size: u64, counted: u64) {
        self.bytes.fetch_add(size.saturating_sub(counted), Relaxed);
        self.files.fetch_add(1, Relaxed);
    }

    /// `(bytes, total bytes, files, total files)` now.
    pub fn get(&self) -> (u64, u64, u64, u64) {
        (
            self.bytes.load(Relaxed),
            self.total_bytes.load(Relaxed),
            self.files.load(Relaxed),
            self.total_files.load(Relaxed),
        )
    }
}
