//! Scanning log inputs: open each file, complete its stamps, visit its lines on all cores,
//! and account for every line (parsed, other, malformed) in a [`Tally`].

use crate::cli::InputArgs;
use anyhow::{bail, Context, Result};
use std::borrow::Cow;
use std::time::SystemTime;
use tokstat_parsers::detect;
use tokstat_parsers::record::{Body, Engine, Gauges, Line, StepKind};
use tokstat_parsers::scan::{self, lines, str_lines, text_lines, Chunk};
use tokstat_parsers::sglang::Keep;
use tokstat_parsers::source::{self, Input, Source};
use tokstat_parsers::stamp::{civil_from_days, days_from_civil, Calendar, Stamp, Ts};
use tokstat_parsers::Quick;

/// How many malformed line numbers a tally keeps to show.
pub const SAMPLES: usize = 5;

/// Line accounting for one file: `total = parsed + other + malformed`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    pub total: u64,
    pub parsed: u64,
    pub other: u64,
    pub malformed: u64,
    /// First malformed lines: `(line number, what was wrong)`.
    #[serde(skip)]
    pub samples: Vec<(u64, &'static str)>,
}

impl Tally {
    fn count(&mut self, line_no: u64, body: &Body<'_>) {
        self.total += 1;
        match body {
            Body::Other => self.other += 1,
            Body::Malformed(why) => {
                self.malformed += 1;
                if self.samples.len() < SAMPLES {
                    self.samples.push((line_no, why));
                }
            }
            _ => self.parsed += 1,
        }
    }

    /// Adds a later part of the same file (or another file, for totals).
    pub fn merge(&mut self, o: &Tally) {
        self.total += o.total;
        self.parsed += o.parsed;
        self.other += o.other;
        self.malformed += o.malformed;
        for s in &o.samples {
            if self.samples.len() < SAMPLES {
                self.samples.push(*s);
            }
        }
    }
}

/// A file being scanned.
#[derive(Debug, Clone)]
pub struct FileCtx {
    /// The path as given (or `-`).
    pub source: String,
    /// The instance name of the file's lines ([`source::instance_names`]): the file stem,
    /// with its folder when stems clash.
    pub stem: String,
}

impl FileCtx {
    /// The instance a line belongs to: the file stem, plus `#DP{n}` for a DP rank. vLLM's
    /// engine 0 keeps the bare stem, since every vLLM since 0.8.3 prints `Engine 000:` even
    /// with a single engine.
    pub fn instance(&self, line: &Line<'_>) -> Cow<'_, str> {
        self.instance_of(instance_rank(line))
    }

    /// The instance name for a rank found by [`instance_rank`].
    pub fn instance_of(&self, dp: Option<u32>) -> Cow<'_, str> {
        match dp {
            Some(n) => Cow::Owned(format!("{}#DP{n}", self.stem)),
            None => Cow::Borrowed(&self.stem),
        }
    }
}

/// The rank that tells instances of one file apart (see [`FileCtx::instance`]).
pub fn instance_rank(line: &Line<'_>) -> Option<u32> {
    match &line.body {
        Body::Step(s) if s.engine == Some(Engine::Vllm) => s.engine_index.filter(|&i| i > 0),
        _ => line.prefix.ranks.dp,
    }
}

impl FileCtx {}

/// One line as handed to a visitor.
pub struct Visit<'a, 'l> {
    pub file: &'a FileCtx,
    /// 1-based line number.
    pub line_no: u64,
    pub ts: Option<Ts>,
    pub line: &'a Line<'l>,
}

/// An SGLang stats line read only as far as its gauges (see [`Visitor::QUICK`]).
pub struct Stats<'a> {
    pub ts: Option<Ts>,
    /// The DP rank of the line's prefix ([`instance_rank`]).
    pub dp: Option<u32>,
    pub kind: StepKind,
    pub gauges: &'a Gauges,
}

/// What the lines of a chunk are handed to.
pub trait Visitor {
    /// Whether SGLang stats lines may come as [`Stats`] instead of whole lines: true for
    /// aggregates, which read a few values of each, false for writers of whole records.
    const QUICK: bool = false;
    /// The gauges of a quickly read stats line the visitor reads (the others are checked,
    /// not read).
    const KEEP: Keep = Keep::ALL;
    /// Takes a line that is a record (not `Other`, not `Malformed`).
    fn line(&mut self, v: Visit<'_, '_>);
    /// Takes a stats line read quickly (only called when [`Visitor::QUICK`]).
    fn stats(&mut self, _s: Stats<'_>) {}
}

/// Result of a chunk: the visitor's state and the chunk's tally.
pub struct ChunkOut<R> {
    pub tally: Tally,
    pub out: R,
}

/// Visits every line of a chunk: parse, complete the stamp, tally, then hand it to `state`.
pub fn visit_chunk<V: Visitor>(
    file: &FileCtx,
    chunk: Chunk<'_>,
    state: V,
) -> (ChunkOut<V>, Calendar) {
    let mut acc = Acc {
        file,
        cal: chunk.calendar,
        tally: Tally::default(),
        state,
    };
    let mut scratch = String::new();
    let line_no = |i: usize| chunk.first_line + i as u64 + 1;
    if V::QUICK {
        // lines read quickly are checked as UTF-8 one by one as they are found (nearly all are
        // ASCII, known from the newline search), and searched for colour codes only when
        // they might hold one: most logs have none
        for (i, raw) in text_lines(chunk.bytes).enumerate() {
            match raw {
                Ok(raw) => tokstat_parsers::visit_quick_line_split(
                    raw,
                    &mut scratch,
                    V::KEEP,
                    &mut acc,
                    |acc, q| match q {
                        Quick::Line(line) => acc.line(line_no(i), line),
                        Quick::Other(stamp) => acc.other(stamp),
                        Quick::Stats(stamp, dp, kind, gauges) => {
                            acc.tally.total += 1;
                            acc.tally.parsed += 1;
                            let ts = acc.cal.resolve(stamp);
                            acc.state.stats(Stats {
                                ts,
                                dp,
                                kind,
                                gauges,
                            })
                        }
                    },
                    |acc, stamp| acc.other(stamp),
                ),
                Err(raw) => tokstat_parsers::visit_line(raw, &mut scratch, |line| {
                    acc.line(line_no(i), line)
                }),
            }
        }
    } else {
        // validating the whole chunk once is much cheaper than each line; a chunk with
        // invalid bytes falls back to per-line validation (and replacement)
        match tokstat_parsers::text::utf8(chunk.bytes) {
            Some(text) => {
                // and one search for colour codes: most logs have none
                let ansi = tokstat_parsers::prefix::has_ansi(chunk.bytes);
                for (i, raw) in str_lines(text).enumerate() {
                    tokstat_parsers::visit_str_line(raw, &mut scratch, ansi, |line| {
                        acc.line(line_no(i), line)
                    });
                }
            }
            None => {
                for (i, raw) in lines(chunk.bytes).enumerate() {
                    tokstat_parsers::visit_line(raw, &mut scratch, |line| {
                        acc.line(line_no(i), line)
                    });
                }
            }
        }
    }
    let out = ChunkOut {
        tally: acc.tally,
        out: acc.state,
    };
    (out, acc.cal)
}

/// What a chunk's lines add to as they are visited.
struct Acc<'a, V> {
    file: &'a FileCtx,
    cal: Calendar,
    tally: Tally,
    state: V,
}

impl<V: Visitor> Acc<'_, V> {
    /// A line that holds no record.
    #[inline]
    fn other(&mut self, stamp: Stamp) {
        self.cal.resolve(stamp);
        self.tally.total += 1;
        self.tally.other += 1;
    }

    /// A line parsed whole (lent by reference: a line is a few hundred bytes, not worth a
    /// copy per call).
    #[inline]
    fn line(&mut self, line_no: u64, line: &Line<'_>) {
        let ts = self.cal.resolve(line.prefix.stamp);
        self.tally.count(line_no, &line.body);
        if !matches!(line.body, Body::Other | Body::Malformed(_)) {
            self.state.line(Visit {
                file: self.file,
                line_no,
                ts,
                line,
            });
        }
    }
}

/// Options for completing stamps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dates {
    pub year: Option<i32>,
    /// Days since the epoch.
    pub date: Option<i32>,
}

impl Dates {
    pub fn from_args(a: &InputArgs) -> Result<Dates> {
        let date = match &a.date {
            None => None,
            Some(d) => {
                Some(parse_date(d).with_context(|| format!("--date {d}: expected YYYY-MM-DD"))?)
            }
        };
        Ok(Dates { year: a.year, date })
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
    if !tokstat_parsers::stamp::valid_date(y, m, d) {
        bail!("no such day");
    }
    Ok(days_from_civil(y, m, d))
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

/// Scans one opened log. `work` runs on chunks in parallel; `sink` receives the results in
/// file order. Returns the file's tally, and a read error if one cut the scan short.
///
/// With `Lines::Relative` the chunks are not counted ahead: line numbers seen by `work` are
/// relative to the chunk (only the tally's malformed samples use them, and they are made
/// absolute here); `parse`, which writes line numbers while working, asks for `Absolute`.
pub fn scan_log<R, W, S>(
    input: &Input,
    instance: String,
    src: Source,
    dates: Dates,
    lines: LineNumbers,
    work: &W,
    sink: &mut S,
) -> (FileCtx, Tally, Option<Skipped>)
where
    R: Send,
    W: Fn(&FileCtx, Chunk<'_>) -> (ChunkOut<R>, Calendar) + Sync,
    S: FnMut(&FileCtx, R),
{
    let file = FileCtx {
        source: input.display(),
        stem: instance,
    };
    let calendar = dates.calendar(src.modified);
    let mut tally = Tally::default();
    let each = |c: Chunk<'_>| work(&file, c);
    let absorb = |mut o: ChunkOut<R>| {
        if lines == LineNumbers::Relative {
            for s in &mut o.tally.samples {
                s.0 += tally.total;
            }
        }
        tally.merge(&o.tally);
        sink(&file, o.out);
    };
    let result = match lines {
        LineNumbers::Absolute => scan::scan(src.data, calendar, scan::Mode::LOG, each, absorb),
        LineNumbers::Relative => {
            scan::scan(src.data, calendar, scan::Mode::LOG_RELATIVE, each, absorb)
        }
    };
    let err = result.err().map(|e| Skipped {
        source: file.source.clone(),
        why: format!("read error after {} lines: {e}", tally.total),
        failed: true,
    });
    (file, tally, err)
}

/// Whether chunk workers need absolute line numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineNumbers {
    Absolute,
    Relative,
}

/// Scans every log among `inputs`; other kinds of input are skipped with a reason.
pub fn scan_logs<R, W, S>(
    inputs: &[Input],
    dates: Dates,
    work: W,
    mut sink: S,
) -> (Vec<(FileCtx, Tally)>, Vec<Skipped>)
where
    R: Send,
    W: Fn(&FileCtx, Chunk<'_>) -> (ChunkOut<R>, Calendar) + Sync,
    S: FnMut(&FileCtx, R),
{
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let names = source::instance_names(inputs);
    for (input, name) in inputs.iter().zip(names) {
        let opened = open(input);
        let src = match opened.source {
            Ok(s) => s,
            Err(sk) => {
                skipped.push(sk);
                continue;
            }
        };
        if !matches!(opened.kind, detect::Kind::Log | detect::Kind::Empty) {
            skipped.push(Skipped {
                source: input.display(),
                why: format!("{} content, not a server log", opened.kind.as_str()),
                failed: false,
            });
            continue;
        }
        let (file, tally, err) = scan_log(
            input,
            name,
            src,
            dates,
            LineNumbers::Absolute,
            &work,
            &mut sink,
        );
        skipped.extend(err);
        files.push((file, tally));
    }
    (files, skipped)
}

/// Expands the input arguments, with a clear message when nothing matches.
pub fn inputs(args: &InputArgs) -> Result<Vec<Input>> {
    let v = source::expand(&args.inputs)?;
    if v.is_empty() {
        bail!("no input files found in {}", args.inputs.join(" "));
    }
    Ok(v)
}

/// Writes the accounting summary (stderr) for each file and the skipped inputs.
pub fn write_accounting(
    err: &mut dyn std::io::Write,
    files: &[(FileCtx, Tally)],
    skipped: &[Skipped],
) -> std::io::Result<()> {
    use crate::render::num::group;
    for (f, t) in files {
        write!(
            err,
            "{}: {} lines: {} parsed, {} other, {} malformed",
            f.source,
            group(t.total),
            group(t.parsed),
            group(t.other),
            group(t.malformed)
        )?;
        if let Some((first, why)) = t.samples.first() {
            let nums: Vec<String> = t.samples.iter().map(|(n, _)| n.to_string()).collect();
            write!(
                err,
                " (lines {}{}; line {first}: {why})",
                nums.join(", "),
                if t.malformed > t.samples.len() as u64 {
                    ", …"
                } else {
                    ""
                }
            )?;
        }
        writeln!(err)?;
    }
    for s in skipped {
        writeln!(err, "{}: skipped: {}", s.source, s.why)?;
    }
    Ok(())
}
