//! A read saved beside an export, and read back: `tokstat report DIR` on an exported dataset
//! merges the reads its writers saved and runs the analyses on them, so that its report is
//! the report of the raw inputs, to the last digit, and one machine reports on the logs that
//! many machines exported.
//!
//! What is saved is a writer's [`Ingested`] before any analysis: per instance its aggregates
//! and digest (239 KB for the 1.1 GB benchmark log, whose per-line rows are the `steps`
//! table),
//! the completion rows, the benchmark runs, the scrapes, and every input's line accounting.
//! The tables alone would not give the same figures: a report's sums are made chunk by
//! chunk as the logs are read, and the float sums of the same rows added in another order
//! differ in their last digits.
//!
//! The file (`_tokstat/…/read-WRITER.bin`, a folder query engines leave out) is one line of
//! JSON, the [`Header`] (readable with `head -1`), then the read, encoded by `postcard` and
//! compressed by zstd. The encoding follows the in-memory layout, so a file is read back only
//! by the tokstat version that wrote it; another says so and asks for the export again.

use crate::ingest::read::Ingested;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// The folder of an export that holds its saved reads.
pub const DIR: &str = "_tokstat";

/// Bumped when the layout of a saved read changes within a version.
const FORMAT: u32 = 1;

/// What a saved read says of itself.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Header {
    pub format: u32,
    /// The tokstat version that wrote it.
    pub tokstat: String,
    /// The run's label (`--run`).
    pub run: String,
    /// The writer: host, process and start time.
    pub writer: String,
    /// The inputs as given to `export`.
    pub inputs: Vec<String>,
}

impl Header {
    pub fn new(run: &str, writer: &str, inputs: &[String]) -> Header {
        Header {
            format: FORMAT,
            tokstat: env!("CARGO_PKG_VERSION").to_string(),
            run: run.to_string(),
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
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        serde_json::to_writer(&mut out, header)?;
        out.write_all(b"\n")?;
        let mut z = zstd::Encoder::new(out, 3)?;
        postcard::to_io(read, &mut z)?;
        z.finish()?.flush()?;
        Ok(())
    };
    write().with_context(|| format!("cannot write {}", path.display()))
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

/// Reads a saved read back.
pub fn load(path: &Path) -> Result<(Header, Ingested)> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    let cut = memchr::memchr(b'\n', &bytes).unwrap_or(bytes.len());
    let header: Header = serde_json::from_slice(&bytes[..cut])
        .with_context(|| format!("{}: not a read saved by tokstat export", path.display()))?;
    if header.format != FORMAT || header.tokstat != env!("CARGO_PKG_VERSION") {
        bail!(
            "{}: saved by tokstat {} (format {}); this is tokstat {} (format {FORMAT}): \
             export the logs again with this version",
            path.display(),
            header.tokstat,
            header.format,
            env!("CARGO_PKG_VERSION")
        );
    }
    let raw = zstd::decode_all(bytes.get(cut + 1..).unwrap_or_default())
        .with_context(|| format!("{}: the saved read is damaged", path.display()))?;
    let read: Ingested = postcard::from_bytes(&raw)
        .with_context(|| format!("{}: the saved read is damaged", path.display()))?;
    Ok((header, read))
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
) -> Result<Vec<Ingested>> {
    let mut out = Vec::new();
    for path in of_run(dir, found, run)? {
        let (_, read) = load(&path)?;
        if read.logs.bucket != bucket_ms && !read.logs.instances.is_empty() {
            bail!(
                "{}: exported with {}; report it with the same (its timeline cells are summed at that length)",
                path.display(),
                read.logs
                    .bucket
                    .map_or("no --bucket".to_string(), |b| format!("--bucket {b}ms"))
            );
        }
        out.push(read);
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

    /// A saved read comes back; one cut short, one of another version and a foreign file
    /// each get a message naming the file and what to do.
    #[test]
    fn damaged_or_foreign_reads_say_so() {
        let dir = std::env::temp_dir().join(format!("tokstat-saved-{}", std::process::id()));
        let path = dir.join("read.bin");
        let read = Ingested {
            dropped_choices: 7,
            ..Ingested::default()
        };
        let header = Header::new("c128", "host-1-ab", &["logs/".to_string()]);
        save(&path, &header, &read).unwrap();
        let (h, back) = load(&path).unwrap();
        assert_eq!((h, back.dropped_choices), (header.clone(), 7));
        let err = |p: &Path| match load(p) {
            Ok(_) => panic!("{} read back", p.display()),
            Err(e) => format!("{e:#}"),
        };
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
        let e = err(&path);
        assert!(e.contains("read.bin: the saved read is damaged"), "{e}");
        let old = Header {
            tokstat: "0.0.1".into(),
            ..header
        };
        save(&path, &old, &read).unwrap();
        let e = err(&path);
        assert!(
            e.contains("saved by tokstat 0.0.1 (format 1)")
                && e.contains("export the logs again with this version"),
            "{e}"
        );
        std::fs::write(&path, "steps,rows\n1,2\n").unwrap();
        assert!(err(&path).contains("read.bin: not a read saved by tokstat export"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
