//! Every file of an export is written under a name query engines skip and renamed into
//! place once complete, as Spark and Hive stage their output: an export killed part-way (a
//! preempted task, a retried one) or failing (a full disk) leaves no file that looks like
//! data in a shared folder. The staging name starts with a `.` (skipped by Spark, Hive,
//! pyarrow's datasets and polars' scans) and ends in `.tmp-PID`, not in the table's
//! extension (so that `DIR/**/*.parquet` in DuckDB matches none). A write's failure is told
//! by the operating system's words (`No space left on device`), not by the encoder's
//! wrapping of them.

use anyhow::{Context, Result};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The first error the file met, kept for the message.
type FirstError = Arc<Mutex<Option<(io::ErrorKind, String)>>>;

/// A file being written to its staging name: [`Staged::commit`] puts it in place; dropped
/// uncommitted (an error on the way), the staged file is removed.
pub struct Staged {
    staging: PathBuf,
    path: PathBuf,
    error: FirstError,
    done: bool,
}

/// The writer of a staged file: the file, remembering the first error it met.
pub struct StagedFile {
    file: File,
    error: FirstError,
}

impl Write for StagedFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf).inspect_err(|e| self.keep(e))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush().inspect_err(|e| self.keep(e))
    }
}

impl StagedFile {
    fn keep(&self, e: &io::Error) {
        if let Ok(mut first) = self.error.lock() {
            first.get_or_insert_with(|| (e.kind(), e.to_string()));
        }
    }
}

/// Where `path` is written until it is complete: `DIR/.NAME.tmp-PID`.
pub fn staging_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.tmp-{}", std::process::id()))
}

/// Creates `path`'s folder and its staged file.
pub fn create(path: &Path) -> Result<(StagedFile, Staged)> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let staging = staging_name(path);
    let file =
        File::create(&staging).with_context(|| format!("cannot write {}", path.display()))?;
    let error = FirstError::default();
    Ok((
        StagedFile {
            file,
            error: Arc::clone(&error),
        },
        Staged {
            staging,
            path: path.to_path_buf(),
            error,
            done: false,
        },
    ))
}

impl Staged {
    /// The staging of `path` for a file another writer makes at [`Staged::staging`] (the
    /// saved read's): put in place by [`Staged::commit`], removed if dropped before.
    pub fn adopt(path: &Path) -> Staged {
        Staged {
            staging: staging_name(path),
            path: path.to_path_buf(),
            error: FirstError::default(),
            done: false,
        }
    }

    /// Where the file is written until it is put in place.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// Puts the complete file in place.
    pub fn commit(mut self) -> Result<()> {
        if let Some(e) = self.os_error() {
            anyhow::bail!("cannot write {}: {e}", self.path.display());
        }
        std::fs::rename(&self.staging, &self.path)
            .with_context(|| format!("cannot write {}", self.path.display()))?;
        self.done = true;
        Ok(())
    }

    /// The operating system's words for the first write that failed, if one did.
    pub fn os_error(&self) -> Option<String> {
        self.error.lock().ok()?.as_ref().map(|(_, m)| m.clone())
    }

    /// `e`, the writing's error, told by the operating system's words where a write failed
    /// (the encoders' messages wrap them: "The serialize buffer is full").
    pub fn explain(&self, e: anyhow::Error) -> anyhow::Error {
        match self.os_error() {
            Some(os) => anyhow::anyhow!("cannot write {}: {os}", self.path.display()),
            None => e.context(format!("cannot write {}", self.path.display())),
        }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.staging);
        }
    }
}

/// Writes a whole file to its staging name: `f` writes it; the file is flushed and left
/// staged, for [`Staged::commit`].
pub fn write_staged(path: &Path, f: impl FnOnce(&mut StagedFile) -> Result<()>) -> Result<Staged> {
    let (mut file, staged) = create(path)?;
    let wrote = f(&mut file).and_then(|()| Ok(file.flush()?));
    drop(file);
    match wrote {
        Ok(()) => Ok(staged),
        Err(e) => Err(staged.explain(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_in_place_only_when_complete() {
        let dir = std::env::temp_dir().join(format!("tokstat-staged-{}", std::process::id()));
        let path = dir.join("t/part-0.parquet");
        let (mut f, staged) = create(&path).unwrap();
        f.write_all(b"PAR1").unwrap();
        assert!(!path.exists());
        let staging = staging_name(&path);
        assert!(staging.exists());
        assert!(staging
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".part-0.parquet.tmp-"));
        staged.commit().unwrap();
        assert!(path.exists() && !staging.exists());
        // a failed write leaves nothing
        let other = dir.join("t/part-1.parquet");
        let e = write_staged(&other, |_| anyhow::bail!("the encoder failed"))
            .err()
            .unwrap();
        assert!(format!("{e:#}").contains("the encoder failed"));
        assert!(!other.exists() && !staging_name(&other).exists());
        // and one written but not put in place (the export failed later) is removed
        let third = dir.join("t/part-2.parquet");
        drop(write_staged(&third, |f| Ok(f.write_all(b"x")?)).unwrap());
        assert!(!third.exists() && !staging_name(&third).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
