//! Where growing files stand, and the bytes appended between two such marks, copied out to
//! be read like any input.
//!
//! A mark is the offset just after a file's last newline: a line still being written (no
//! newline yet) is never counted, and is read in full once its newline arrives.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use tokstat_parsers::source::Input;

/// Each plain input's end of whole lines at one moment (`None`: not a regular file, or
/// unreadable, or compressed — such inputs are read once, not followed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marks(pub Vec<Option<u64>>);

impl Marks {
    /// The marks of `inputs` now.
    pub fn now(inputs: &[Input]) -> Marks {
        Marks(
            inputs
                .iter()
                .map(|i| match i {
                    Input::Path(p) => whole_lines_end(p).ok().flatten(),
                    Input::Stdin | Input::Bytes(_) => None,
                })
                .collect(),
        )
    }

    /// Bytes between these marks and `later`, over all inputs.
    pub fn bytes_to(&self, later: &Marks) -> u64 {
        self.0
            .iter()
            .zip(&later.0)
            .map(|(a, b)| match (a, b) {
                (Some(a), Some(b)) => b.saturating_sub(*a),
                _ => 0,
            })
            .sum()
    }
}

/// The offset after the last newline of the file at `path`; `None` for what is not a plain,
/// uncompressed regular file.
fn whole_lines_end(path: &Path) -> std::io::Result<Option<u64>> {
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    let mut head = [0u8; 4];
    let n = f.read(&mut head)?;
    if tokstat_parsers::source::Compression::sniff(&head[..n])
        != tokstat_parsers::source::Compression::None
    {
        return Ok(None);
    }
    let mut end = meta.len();
    let mut buf = vec![0u8; 64 * 1024];
    while end > 0 {
        let from = end.saturating_sub(buf.len() as u64);
        let len = (end - from) as usize;
        f.seek(SeekFrom::Start(from))?;
        f.read_exact(&mut buf[..len])?;
        if let Some(i) = memchr::memrchr(b'\n', &buf[..len]) {
            return Ok(Some(from + i as u64 + 1));
        }
        end = from;
    }
    Ok(Some(0))
}

/// A folder of the bytes appended to each input between two marks, each in a file of the
/// same name (and parent folder name, so instance names stay those of the inputs). Removed
/// when dropped.
pub struct Appended {
    pub dir: PathBuf,
    /// The files written (only inputs that grew).
    pub files: Vec<String>,
}

impl Appended {
    /// Copies out what each input gained from `from` to `to`. A file that shrank between the
    /// marks (truncated, rotated) gives what it holds up to `to`.
    pub fn between(inputs: &[Input], from: &Marks, to: &Marks) -> std::io::Result<Appended> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tokstat-pulse-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir)?;
        let mut out = Appended {
            dir,
            files: Vec::new(),
        };
        for (k, ((input, a), b)) in inputs.iter().zip(&from.0).zip(&to.0).enumerate() {
            let (Input::Path(p), Some(b)) = (input, b) else {
                continue;
            };
            // rotated or truncated since: what it holds now, from its start
            let a = a.filter(|a| a <= b).unwrap_or(0);
            if *b == a {
                continue;
            }
            let parent = p
                .parent()
                .and_then(Path::file_name)
                .map_or_else(|| "_".into(), |n| n.to_string_lossy().into_owned());
            let name = p
                .file_name()
                .map_or_else(|| format!("input{k}"), |n| n.to_string_lossy().into_owned());
            let sub = out.dir.join(k.to_string()).join(parent);
            std::fs::create_dir_all(&sub)?;
            let target = sub.join(name);
            let mut f = std::fs::File::open(p)?;
            f.seek(SeekFrom::Start(a))?;
            let mut w = std::fs::File::create(&target)?;
            std::io::copy(&mut f.take(b - a), &mut w)?;
            w.flush()?;
            out.files.push(target.display().to_string());
        }
        Ok(out)
    }
}

impl Drop for Appended {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mark stops at the last newline: a line being written is not counted until it ends.
    #[test]
    fn marks_end_at_whole_lines_and_copies_hold_what_was_appended() {
        let dir = std::env::temp_dir().join(format!("tokstat-marks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.jsonl");
        std::fs::write(&p, "a\nb\npart").unwrap();
        let inputs = [Input::Path(p.clone())];
        let m0 = Marks::now(&inputs);
        assert_eq!(m0, Marks(vec![Some(4)]));
        std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .unwrap()
            .write_all(b"ial\nc\nd")
            .unwrap();
        let m1 = Marks::now(&inputs);
        assert_eq!(m1, Marks(vec![Some(14)]));
        assert_eq!(m0.bytes_to(&m1), 10);
        let got = Appended::between(&inputs, &m0, &m1).unwrap();
        assert_eq!(got.files.len(), 1);
        assert_eq!(std::fs::read(&got.files[0]).unwrap(), b"partial\nc\n");
        assert!(got.files[0].ends_with(&format!(
            "{}/out.jsonl",
            dir.file_name().unwrap().to_string_lossy()
        )));
        drop(got);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
