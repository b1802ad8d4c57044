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
#[derive(Debug, Clone)]
pub struct Skipped {
    pub source: String,
    pub why: String,
    /// An I/O failure (exit code 1), rather than a kind of input this command does not read.
    pub failed: bool,
}

/// An input, opened and sniffed (or why it could not be).
pub struct Opened {
    pub input: Input,
    pub source: Result<Source, Skipped>,
    pub kind: detect::Kind,
}

/// Opens an input and sniffs what it holds.
pub fn open(input: &Input) -> Opened {
    let name = input.display();
    let fail = |why: String| Skipped {
        source: name.clone(),
        why,
        failed: true,
    };
    match Source::open(input) {
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

/// Expands the input arguments, with a clear message when nothing matches.
pub fn expand(paths: &[String]) -> Result<Vec<Input>> {
    let v = source::expand(paths)?;
    if v.is_empty() {
        bail!("no input files found in {}", paths.join(" "));
    }
    Ok(v)
}
