//! Inputs as the user names them: paths, folders and globs expanded, each opened and sniffed
//! (log, JSON, Prometheus), and the calendar that completes stamps without a year or date.

use anyhow::{bail, Context, Result};
use std::time::SystemTime;
use tokstat_parsers::detect;
use tokstat_parsers::source::{self, Input, Source};
use tokstat_parsers::stamp::{civil_from_days, days_from_civil, Calendar};

/// Options for completing stamps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dates {
    pub year: Option<i32>,
    /// Days since the epoch.
    pub date: Option<i32>,
}

impl Dates {
    /// From `--year` and `--date` (`YYYY-MM-DD`).
    pub fn new(year: Option<i32>, date: Option<&str>) -> Result<Dates> {
        let date = match date {
            None => None,
            Some(d) => {
                Some(parse_date(d).with_context(|| format!("--date {d}: expected YYYY-MM-DD"))?)
            }
        };
        Ok(Dates { year, date })
    }

    /// The calendar for a file: flags first, else the file's modification time, else now.
    pub fn calendar(&self, modified: Option<SystemTime>) -> Calendar {
        let when = modified.unwrap_or_else(SystemTime::now);
        let secs = when
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let mdays = (secs / 86_400) as i32;
        let year = self.year.unwrap_or_else(|| civil_from_days(mdays).0);
        let date = self.date.unwrap_or(mdays);
        Calendar::new(year, date)
    }
}

fn parse_date(s: &str) -> Result<i32> {
    let mut it = s.split('-');
    let (Some(y), Some(m), Some(d), None) = (it.next(), it.next(), it.next(), it.next()) else {
        bail!("not a date");
    };
    let (y, m, d): (i32, u8, u8) = (y.parse()?, m.parse()?, d.parse()?);
    match days_from_civil(y, m, d) {
        Some(days) => Ok(days),
        None => bail!("no such day"),
    }
}

/// An input that could not be read, or was not a log.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Skipped {
    pub source: String,
    pub why: String,
    /// An I/O failure (exit code 1), rather than a kind of input this command does not read.
    pub failed: bool,
    /// Part of it was read and is in the report (a read cut short, a file that changed).
    pub partly_read: bool,
}

impl Skipped {
    /// An input whose reading failed part way: what was read before is in the report.
    pub fn read_error(source: &str, lines: u64, e: &std::io::Error) -> Skipped {
        let why = match source::Shrank::of(e) {
            Some(s) => format!(
                "file shrank while read (truncated by log rotation?): {lines} lines read \
                 before byte {} are kept; the {} bytes after it were gone",
                s.at,
                s.len - s.at
            ),
            None if lines > 0 => {
                format!("read error after {lines} lines (they are in the report): {e}")
            }
            None => format!("read error before the first line: {e}"),
        };
        Skipped {
            source: source.to_string(),
            why,
            failed: true,
            partly_read: lines > 0,
        }
    }

    /// A file that changed while it was read (`at_open` is how it was when opened), if it did.
    /// The report holds the bytes it had when opened; a file that shrank is an I/O failure.
    pub fn changed(input: &Input, at_open: Option<source::AtOpen>) -> Option<Skipped> {
        let (Input::Path(path), Some(o)) = (input, at_open) else {
            return None;
        };
        let (why, failed) = match o.change(path)? {
            source::FileChange::Grew { len } => (
                format!(
                    "grew while read: the {} bytes it held when opened are in the report, the {} \
                     appended since are not (run again, or `tokstat watch`, to follow it)",
                    o.len,
                    len - o.len
                ),
                false,
            ),
            source::FileChange::Shrank { len } => (
                format!(
                    "shrank while read, from {} to {len} bytes (truncated by log rotation?): \
                     lines past byte {len} may be cut",
                    o.len
                ),
                true,
            ),
            source::FileChange::Replaced => (
                "replaced while read (renamed over by log rotation?): the report reads the file \
                 that was opened, not the new one at this path"
                    .to_string(),
                false,
            ),
            source::FileChange::Deleted => (
                "deleted while read: the report reads the file as it was when opened".to_string(),
                false,
            ),
        };
        Some(Skipped {
            source: input.display(),
            why,
            failed,
            partly_read: true,
        })
    }
}

/// Why a binary input is not read.
pub const BINARY: &str =
    "binary content, not read (no text in its first 64 KiB: an image, an archive, UTF-16?)";

/// An input, opened and sniffed (or why it could not be).
pub struct Opened {
    pub input: Input,
    pub source: Result<Source, Skipped>,
    pub kind: detect::Kind,
}

/// Opens an input and sniffs what it holds.
pub fn open(input: &Input) -> Opened {
    open_upto(input, None)
}

/// [`open`], a plain file read only up to byte `limit`.
pub fn open_upto(input: &Input, limit: Option<u64>) -> Opened {
    let name = input.display();
    let fail = |why: String| Skipped {
        source: name.clone(),
        why,
        failed: true,
        partly_read: false,
    };
    match Source::open_upto(input, limit) {
        Err(e) => Opened {
            input: input.clone(),
            source: Err(fail(e.to_string())),
            kind: detect::Kind::Empty,
        },
        Ok(mut src) => match src.head() {
            Ok(head) => Opened {
                input: input.clone(),
                kind: detect::sniff(&head),
                source: Ok(src),
            },
            Err(e) => Opened {
                input: input.clone(),
                source: Err(fail(format!("cannot read: {e}"))),
                kind: detect::Kind::Empty,
            },
        },
    }
}

/// Expands the input arguments, with a clear message when nothing matches; what was met but
/// not read (a link that loops, a folder that cannot be listed) comes back as skipped.
pub fn expand(paths: &[String]) -> Result<(Vec<Input>, Vec<Skipped>)> {
    let e = source::expand(paths)?;
    let skipped: Vec<Skipped> = e
        .unread
        .into_iter()
        .map(|u| Skipped {
            source: u.path,
            why: u.why,
            failed: u.lost,
            partly_read: false,
        })
        .collect();
    if e.inputs.is_empty() {
        let why: Vec<String> = skipped
            .iter()
            .map(|s| format!("{}: {}", s.source, s.why))
            .collect();
        match why.is_empty() {
            true => bail!("no input files found in {}", paths.join(" ")),
            false => bail!(
                "no input files found in {} ({})",
                paths.join(" "),
                why.join("; ")
            ),
        }
    }
    Ok((e.inputs, skipped))
}
