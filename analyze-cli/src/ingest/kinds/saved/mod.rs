//! A read saved beside an export, and read back: `tokstat report DIR` on an exported dataset
//! merges the reads its writers saved and runs the analyses on them, so that its report is
//! the report of the raw inputs, to the last digit, and one machine reports on the logs that
//! many machines exported.
//!
//! What is saved is a writer's [`Ingested`] before any analysis: per instance its aggregates
//! and digest (239 KB for the 1.1 GB benchmark log, whose per-line rows are the `steps`
//! table), the completion rows, the benchmark runs, the scrapes, and every input's line
//! accounting. The tables alone would not give the same figures: a report's sums are made
//! chunk by chunk as the logs are read, and the float sums of the same rows added in another
//! order differ in their last digits.
//!
//! The file (`_tokstat/…/read-WRITER.bin`, a folder query engines leave out) is one line of
//! JSON, the [`Header`] (readable with `head -1`), then the read, encoded by `postcard` and
//! compressed by zstd. Its layout has a version of its own, [`FORMAT`], independent of
//! tokstat's: every later tokstat reads every format since the first (format 1, tokstat
//! 0.1.0), and refuses a newer one, naming both (`tests/tests/export.rs` reads the frozen
//! files of `fixtures/saved/`). How reads are merged, in an order of their own: [`merge`].

mod merge;

pub use merge::merge;

use crate::ingest::read::Ingested;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// The folder of an export that holds its saved reads.
pub const DIR: &str = "_tokstat";

/// The layout of saved reads this tokstat writes. Format 1 (tokstat 0.1.0) has the header
/// without `node`; format 2 adds it, the read's layout unchanged; format 3 adds a benchmark
/// run's `server` (the server's side a load generator summarised), absent in 1 and 2 and
/// read as none. A change of the read's layout is a new format, with the reading of the one
/// before kept beside it.
pub const FORMAT: u32 = 3;

/// The formats this tokstat reads.
const READS: std::ops::RangeInclusive<u32> = 1..=FORMAT;

/// What a saved read says of itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Header {
    pub format: u32,
    /// The tokstat version that wrote it.
    pub tokstat: String,
    /// The run's label (`--run`).
    pub run: String,
    /// The node that read the inputs (`--node`; the host name by default): instances of
    /// one name read by two nodes are two instances (see [`merge`]). None in format 1.
    #[serde(default)]
    pub node: Option<String>,
    /// The writer: host, process and start time.
    pub writer: String,
    /// The inputs as given to `export`.
    pub inputs: Vec<String>,
}

impl Header {
    pub fn new(run: &str, node: Option<&str>, writer: &str, inputs: &[String]) -> Header {
        Header {
            format: FORMAT,
            tokstat: env!("CARGO_PKG_VERSION").to_string(),
            run: run.to_string(),
            node: node.map(str::to_string),
            writer: writer.to_string(),
            inputs: inputs.to_vec(),
        }
    }
}

/// Writes a read to `path` (its folder made if need be).
pub fn save(path: &Path, header: &Header, read: &Ingested) -> Result<()> {
    let write = || -> Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut out = std::io::BufWriter::new(Recording {
            file: std::fs::File::create(path)?,
            first: None,
        });
        let wrote = write(&mut out, header, read).and_then(|()| Ok(out.flush()?));
        // (the encoder says "The serialize buffer is full" for a disk that is: the
        // operating system's words are the file's own error)
        match (wrote, out.get_mut().first.take()) {
            (Err(_), Some(os)) => Err(os.into()),
            (wrote, _) => wrote,
        }
    };
    write().with_context(|| format!("cannot write {}", path.display()))
}

/// A file that keeps the first error a write met.
struct Recording {
    file: std::fs::File,
    first: Option<std::io::Error>,
}

impl Write for Recording {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf).map_err(|e| {
            let again = std::io::Error::new(e.kind(), e.to_string());
            self.first.get_or_insert(e);
            again
        })
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A read as the bytes of a saved read's file (what the Python package's `Read.to_bytes`
/// gives).
pub fn to_bytes(header: &Header, read: &Ingested) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(&mut out, header, read)?;
    Ok(out)
}

fn write(out: &mut impl Write, header: &Header, read: &Ingested) -> Result<()> {
    serde_json::to_writer(&mut *out, header)?;
    out.write_all(b"\n")?;
    let mut z = zstd::Encoder::new(out, 3)?;
    postcard::to_io(read, &mut z)?;
    z.finish()?;
    Ok(())
}

/// Reads the header of a saved read.
pub fn header(path: &Path) -> Result<Header> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut line = Vec::new();
    std::io::BufReader::new(file).read_until(b'\n', &mut line)?;
    serde_json::from_slice(&line)
        .with_context(|| format!("{}: not a read saved by tokstat export", path.display()))
}

/// A saved read, read back.
pub struct Saved {
    pub path: PathBuf,
    pub header: Header,
    /// The read as encoded: what tells two reads of the same inputs apart, or not.
    pub encoded: Vec<u8>,
    pub read: Ingested,
}

/// Reads a saved read back: any format from 1 to [`FORMAT`].
pub fn load(path: &Path) -> Result<Saved> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    from_bytes(&bytes, path)
}

/// A saved read from its file's bytes, `path` naming it in messages: any format from 1 to
/// [`FORMAT`].
pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Saved> {
    let cut = memchr::memchr(b'\n', bytes).unwrap_or(bytes.len());
    let header: Header = serde_json::from_slice(&bytes[..cut])
        .with_context(|| format!("{}: not a read saved by tokstat export", path.display()))?;
    if !READS.contains(&header.format) {
        bail!(
            "{}: saved by tokstat {} in saved-read format {}; this is tokstat {}, which reads \
             formats {} to {FORMAT}: report on it with tokstat {} or later",
            path.display(),
            header.tokstat,
            header.format,
            env!("CARGO_PKG_VERSION"),
            READS.start(),
            header.tokstat,
        );
    }
    let damaged = || format!("{}: the saved read is damaged", path.display());
    let encoded =
        zstd::decode_all(bytes.get(cut + 1..).unwrap_or_default()).with_context(damaged)?;
    // (a read is its bytes exactly: one that leaves bytes over is of another layout)
    let read = match postcard::take_from_bytes::<Ingested>(&encoded) {
        Ok((read, [])) => read,
        Ok(_) => bail!(
            "{}: the saved read has bytes past its end: damaged, or written by a development \
             build of tokstat {} in another layout; export the logs again",
            path.display(),
            header.tokstat
        ),
        Err(e) => return Err(anyhow::Error::new(e).context(damaged())),
    };
    Ok(Saved {
        path: path.to_path_buf(),
        header,
        encoded,
        read,
    })
}

/// The saved reads of an export folder, in name order; `None` when `dir` is not one.
pub fn find(dir: &Path) -> Option<Vec<PathBuf>> {
    let root = dir.join(DIR);
    if !root.is_dir() {
        return None;
    }
    let mut found = Vec::new();
    let mut todo = vec![root];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "bin") {
                found.push(p);
            }
        }
    }
    found.sort();
    Some(found)
}

/// Whether `dir` looks like a folder an earlier `tokstat export` wrote, with no saved read:
/// a report beside a table of the schema.
pub fn is_earlier_export(dir: &Path) -> bool {
    let report = dir.join("report.json").is_file() || dir.join("report").is_dir();
    report
        && ["steps", "timeline", "completions", "requests", "metrics"]
            .iter()
            .any(|t| {
                dir.join(t).is_dir()
                    || ["parquet", "csv", "jsonl"]
                        .iter()
                        .any(|x| dir.join(format!("{t}.{x}")).is_file())
            })
        && !dir.join(DIR).exists()
}

/// An export folder given as input, and the saved reads found in it.
pub type Export = (String, Vec<PathBuf>);

/// The inputs split into export folders (with the saved reads found in each) and the rest,
/// in the order given. A folder an earlier export wrote, with no saved read, is refused, as
/// is `--run` (`run`) with no export folder among the inputs.
pub fn split(inputs: &[String], run: bool) -> Result<(Vec<Export>, Vec<String>)> {
    let mut exports = Vec::new();
    let mut files = Vec::new();
    for input in inputs {
        match find(Path::new(input)) {
            Some(found) => exports.push((input.clone(), found)),
            None => files.push(input.clone()),
        }
    }
    if let Some(old) = files.iter().find(|i| is_earlier_export(Path::new(i))) {
        bail!(
            "{old} was written by a `tokstat export` that saved no read to report from \
             (no {DIR}/ folder in it): export the logs again with this version"
        );
    }
    if run && exports.is_empty() {
        bail!("--run chooses a run of an exported dataset, and no input is one (a folder `tokstat export` wrote)");
    }
    Ok((exports, files))
}

/// The saved reads of one export folder (`found` in it) of the run asked for, or of its only
/// run, read back; each must have been exported with the bucket asked for (`bucket_ms`),
/// as its timeline cells are summed at that length.
pub fn reads(
    dir: &str,
    found: Vec<PathBuf>,
    run: Option<&str>,
    bucket_ms: Option<i64>,
) -> Result<Vec<Saved>> {
    let mut out = Vec::new();
    for path in of_run(dir, found, run)? {
        let saved = load(&path)?;
        let read = &saved.read;
        if read.logs.bucket != bucket_ms && !read.logs.instances.is_empty() {
            bail!(
                "{}: exported with {}; report it with the same (its timeline cells are summed at that length)",
                path.display(),
                read.logs
                    .bucket
                    .map_or("no --bucket".to_string(), |b| format!("--bucket {b}ms"))
            );
        }
        out.push(saved);
    }
    Ok(out)
}

/// Of the saved reads `found` in an export folder, those of the run asked for (or of its
/// only run).
fn of_run(
    dir: &str,
    found: Vec<std::path::PathBuf>,
    run: Option<&str>,
) -> Result<Vec<std::path::PathBuf>> {
    let mut runs = Vec::new();
    let mut by_run = Vec::new();
    for path in found {
        let h = header(&path)?;
        if !runs.contains(&h.run) {
            runs.push(h.run.clone());
        }
        by_run.push((h.run, path));
    }
    runs.sort();
    let chosen = match run {
        Some(r) if runs.iter().any(|x| x == r) => r.to_string(),
        Some(r) => bail!(
            "{dir} holds no run labelled {r:?}; its runs: {}",
            list(&runs)
        ),
        None => match runs.as_slice() {
            [one] => one.clone(),
            [] => bail!(
                "{dir} holds no saved read: export the logs again with this version of tokstat"
            ),
            _ => bail!(
                "{dir} holds {} runs ({}): choose one with --run LABEL",
                runs.len(),
                list(&runs)
            ),
        },
    };
    Ok(by_run
        .into_iter()
        .filter(|(r, _)| *r == chosen)
        .map(|(_, p)| p)
        .collect())
}

fn list(runs: &[String]) -> String {
    runs.iter()
        .map(|r| format!("{r:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A saved read comes back; one cut short, one of a newer format and a foreign file
    /// each get a message naming the file and what to do; one of format 1 (no node) is read.
    #[test]
    fn damaged_or_foreign_reads_say_so() {
        let dir = std::env::temp_dir().join(format!("tokstat-saved-{}", std::process::id()));
        let path = dir.join("read.bin");
        let read = Ingested {
            dropped_choices: 7,
            ..Ingested::default()
        };
        let header = Header::new("c128", Some("nodeA"), "host-1-ab", &["logs/".to_string()]);
        save(&path, &header, &read).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(
            (back.header, back.read.dropped_choices),
            (header.clone(), 7)
        );
        let err = |p: &Path| match load(p) {
            Ok(_) => panic!("{} read back", p.display()),
            Err(e) => format!("{e:#}"),
        };
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        let e = err(&path);
        assert!(e.contains("read.bin: the saved read is damaged"), "{e}");
        let newer = Header {
            tokstat: "9.0.0".into(),
            format: FORMAT + 1,
            ..header.clone()
        };
        save(&path, &newer, &read).unwrap();
        let e = err(&path);
        assert!(
            e.contains(&format!(
                "saved by tokstat 9.0.0 in saved-read format {}; this is tokstat {}, which reads formats 1 to {FORMAT}: report on it with tokstat 9.0.0 or later",
                FORMAT + 1,
                env!("CARGO_PKG_VERSION")
            )),
            "{e}"
        );
        // format 1: the header had no node
        let mut v1 = serde_json::to_value(&header).unwrap();
        v1.as_object_mut().unwrap().remove("node");
        v1["format"] = 1.into();
        let mut file = serde_json::to_vec(&v1).unwrap();
        file.push(b'\n');
        file.extend(zstd::encode_all(&postcard::to_stdvec(&read).unwrap()[..], 3).unwrap());
        std::fs::write(&path, file).unwrap();
        let back = load(&path).unwrap();
        assert_eq!((back.header.node, back.header.format), (None, 1));
        std::fs::write(&path, "steps,rows\n1,2\n").unwrap();
        assert!(err(&path).contains("read.bin: not a read saved by tokstat export"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
