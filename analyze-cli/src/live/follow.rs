//! Following growing inputs: each look reads only what was appended since the last one
//! (whole lines: a line without its newline waits for it), and notices files that were
//! truncated (`copytruncate`), replaced (rename and re-create), or that appeared in a
//! followed folder (a new batch file, a compressed rotated part, read whole once).

use super::window::{Appended, Marks};
use crate::report;
use anyhow::Result;
use std::collections::HashMap;
use std::path::PathBuf;
use tokstat_parsers::source::Input;

/// A device and inode: a file, whatever its name (rotation renames files).
type Id = (u64, u64);

/// The inputs as named, and where each file was left.
pub struct Follower {
    args: Vec<String>,
    opts: report::Options,
    /// Each file's end of whole lines when last read (`None`: compressed, read whole once).
    marks: HashMap<Id, Option<u64>>,
    /// The file last seen under each name.
    names: HashMap<PathBuf, Id>,
}

/// What one look found.
#[derive(Default)]
pub struct Look {
    /// What was appended (or new), read like any input; `None` when nothing was.
    pub read: Option<report::Built>,
    /// Rotations, truncations and new files, in words.
    pub notes: Vec<String>,
}

impl Follower {
    /// Follows `opts.inputs`; the first look reads everything they hold.
    pub fn new(opts: &report::Options) -> Follower {
        Follower {
            args: opts.inputs.clone(),
            opts: opts.clone(),
            marks: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// Reads what is new since the last look.
    pub fn look(&mut self) -> Result<Look> {
        use std::os::unix::fs::MetadataExt;
        // folders are listed again: new batch files, rotated parts
        let (inputs, _) = crate::ingest::inputs::expand(&self.args)?;
        let paths: Vec<Input> = inputs
            .into_iter()
            .filter(|i| matches!(i, Input::Path(_)))
            .collect();
        let now = Marks::now(&paths);
        let first = self.marks.is_empty();
        // marks as the last look left them (this loop updates them as it goes)
        let before = self.marks.clone();
        // a rotated copy's length, by the followed file it copies: that much of the file is
        // read through the copy
        let mut covered: HashMap<Id, u64> = HashMap::new();
        let mut at: HashMap<Id, usize> = HashMap::new();
        let mut truncated: std::collections::HashSet<Id> = Default::default();
        let mut from = Vec::with_capacity(paths.len());
        let mut whole = Vec::new();
        let mut notes = Vec::new();
        for (input, mark) in paths.iter().zip(&now.0) {
            let Input::Path(p) = input else { continue };
            let Ok(meta) = std::fs::metadata(p) else {
                from.push(None);
                continue;
            };
            let id = (meta.dev(), meta.ino());
            let known = self.names.insert(p.clone(), id);
            if known.is_some_and(|old| old != id) {
                notes.push(format!(
                    "{}: replaced (rotated by rename?): the new file is read from its start",
                    p.display()
                ));
            }
            // a new name holding a part of a followed file (`out.jsonl.1` from copytruncate,
            // `out.jsonl.1.gz` compressed later): its lines were read as they were written
            let rotated = !first
                && known.is_none()
                && !self.marks.contains_key(&id)
                && self
                    .names
                    .keys()
                    .any(|q| q != p && Input::Path(q.clone()).stem() == input.stem());
            if rotated {
                // the followed file it is a copy of, and how far that was read
                // (the one truncated in this look, else the live name: the shortest)
                let source = self
                    .names
                    .iter()
                    .filter(|(q, _)| *q != p && Input::Path((*q).clone()).stem() == input.stem())
                    .filter_map(|(q, qid)| Some((q, *qid, before.get(qid).copied().flatten()?)))
                    .min_by_key(|(q, qid, _)| {
                        (!truncated.contains(qid), q.as_os_str().len(), (*q).clone())
                    })
                    .map(|(_, qid, m)| (qid, m));
                if let (Some((qid, _)), Some(len)) = (source, mark) {
                    covered.insert(qid, *len);
                }
                let start = match (source, mark) {
                    (Some((qid, read)), Some(len)) if *len > read => {
                        covered.insert(qid, *len);
                        notes.push(format!(
                            "{}: a rotated copy of a followed file: its {} bytes not read yet \
                             are read, the rest were read as they were written",
                            p.display(),
                            len - read
                        ));
                        Some(read)
                    }
                    _ => {
                        notes.push(format!(
                            "{}: a rotated part of a followed file, whose lines were read as \
                             they were written: not read again",
                            p.display()
                        ));
                        *mark
                    }
                };
                self.marks.insert(id, *mark);
                from.push(start);
                continue;
            }
            at.insert(id, from.len());
            let start = match (self.marks.get(&id).copied(), mark) {
                // a file not seen before: from its start
                (None, Some(_)) => {
                    if !first
                        && !notes
                            .iter()
                            .any(|n| n.starts_with(&p.display().to_string()))
                    {
                        notes.push(format!("{}: new file, read from its start", p.display()));
                    }
                    Some(0)
                }
                (None, None) => {
                    if !first {
                        notes.push(format!(
                            "{}: new compressed file, read whole once",
                            p.display()
                        ));
                    }
                    whole.push(p.display().to_string());
                    None
                }
                (Some(Some(old)), Some(m)) if *m < old => {
                    notes.push(format!(
                        "{}: truncated (copytruncate?), read again from its start",
                        p.display()
                    ));
                    at.remove(&id);
                    truncated.insert(id);
                    Some(0)
                }
                (Some(old), _) => old,
            };
            from.push(start);
            self.marks.insert(id, *mark);
        }
        // what a rotated copy holds of a file still followed is not read twice
        for (id, len) in covered {
            if let Some(&i) = at.get(&id) {
                if let (Some(f), Some(Some(to))) = (from[i], now.0.get(i)) {
                    from[i] = Some(f.max(len).min(*to));
                }
            }
        }
        let appended = Appended::between(&paths, &Marks(from), &now)?;
        let mut files = appended.files.clone();
        files.extend(whole);
        let read = if files.is_empty() {
            None
        } else {
            Some(report::build_full(&report::Options {
                inputs: files,
                progress: None,
                limits: None,
                ..self.opts.clone()
            })?)
        };
        drop(appended);
        Ok(Look { read, notes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn rows(l: &Look) -> usize {
        l.read.as_ref().map_or(0, |b| b.read.completions.len())
    }

    /// Appended lines are read once, a line waits for its newline, and truncation and
    /// rotation by rename are noticed and read from the start.
    #[test]
    fn follows_appends_truncation_and_rotation() {
        let dir = std::env::temp_dir().join(format!("tokstat-follow-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("out.jsonl");
        let rec = |i: u32| {
            format!("{{\"finish_reason\": \"stop\", \"usage\": {{\"completion_tokens\": {i}}}}}\n")
        };
        std::fs::write(&p, rec(1) + &rec(2)).unwrap();
        let opts = report::Options {
            inputs: vec![dir.display().to_string()],
            ..Default::default()
        };
        let mut f = Follower::new(&opts);
        let first = f.look().unwrap();
        assert_eq!((rows(&first), first.notes.len()), (2, 0));
        let mut w = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
        let third = rec(3);
        w.write_all(&third.as_bytes()[..10]).unwrap();
        assert_eq!(rows(&f.look().unwrap()), 0);
        w.write_all(&third.as_bytes()[10..]).unwrap();
        assert_eq!(rows(&f.look().unwrap()), 1);
        // copytruncate: emptied, then written again
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(0)
            .unwrap();
        std::fs::write(&p, rec(4)).unwrap();
        let l = f.look().unwrap();
        assert_eq!(rows(&l), 1);
        assert!(l.notes[0].contains("truncated"), "{:?}", l.notes);
        // rename and re-create, with the old part compressed beside it
        std::fs::rename(&p, dir.join("out.jsonl.1")).unwrap();
        std::fs::write(&p, rec(5) + &rec(6)).unwrap();
        let gz = dir.join("old.jsonl.zst");
        std::fs::write(&gz, zstd::encode_all(rec(7).as_bytes(), 3).unwrap()).unwrap();
        let l = f.look().unwrap();
        // the renamed part is the file followed so far (nothing new in it), the new file
        // holds 2 records, the compressed part 1
        assert_eq!(rows(&l), 3, "{:?}", l.notes);
        assert!(
            l.notes.iter().any(|n| n.contains("replaced")),
            "{:?}",
            l.notes
        );
        assert!(
            l.notes.iter().any(|n| n.contains("compressed")),
            "{:?}",
            l.notes
        );
        assert_eq!(rows(&f.look().unwrap()), 0);
        // copytruncate's copy, and a copy compressed: parts of what was read, not again
        std::fs::copy(&p, dir.join("out.jsonl.2")).unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(0)
            .unwrap();
        std::fs::write(
            dir.join("out.jsonl.3.zst"),
            zstd::encode_all(rec(8).as_bytes(), 3).unwrap(),
        )
        .unwrap();
        let l = f.look().unwrap();
        assert_eq!(rows(&l), 0, "{:?}", l.notes);
        let parts = l.notes.iter().filter(|n| n.contains("rotated")).count();
        assert_eq!(parts, 2, "{:?}", l.notes);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
