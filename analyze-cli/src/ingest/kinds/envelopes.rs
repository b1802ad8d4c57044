//! Server logs inside log collectors' records (see `tokstat_parsers::wrappers::envelope`):
//! each identity a file names (a pod, a host, a log stream) is read as a log of its own,
//! an instance, by the server logs' scan: its records unwrapped into the plain log the
//! engine wrote, dated by the collector where the engine's stamps lack a year (or any
//! stamp), its clock against the collector's stated. Its part of the read: the logs'
//! (`logs`), and each file's [`EnvelopeRead`].

use super::logs::LogReader;
use super::{InOrder, Reader};
use crate::ingest::inputs::{Dates, Skipped};
use crate::ingest::read::{EnvelopeRead, Ingested};
use crate::ingest::scan::{Tally, SAMPLES};
use std::sync::Arc;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Compression, Data, Input, MadeLines, Source};
use tokstat_parsers::stamp::{civil_from_days, DAY_MS};
use tokstat_parsers::wrappers::envelope::unwrap::{self, Clock, Counts, Plan, Shared, Unwrap};
use tokstat_parsers::wrappers::envelope::{documents, row, Collector, Piece, Row, Who};

pub struct EnvelopeReader;

/// A collector's file opened: what accounting its logs needs once they are read (see
/// [`Opened::account`]); the logs themselves are handed out beside it ([`Unwrapped`]).
pub struct Opened {
    pub collector: Collector,
    bytes: Shared,
    /// The file listed the newest record first (its records were put in time order).
    newest_first: bool,
    /// Rows no identity owns (read whole: a document's, a newest-first file's).
    unowned: Counts,
    /// Each log's plan, clock and counts.
    parts: Vec<(Plan, Option<Clock>, Counted)>,
}

/// A log's unwrapping counts: known when it was made whole, else kept by its unwrapping as
/// the scan makes it.
enum Counted {
    Whole(Counts),
    Made(Arc<Unwrap>),
}

/// One identity's log, ready for the logs' scan.
pub struct Unwrapped {
    /// Its instance name.
    pub name: String,
    /// The plain log, as a stream (or in memory, for files read whole).
    pub src: Source,
    /// The dates that complete its engine's stamps.
    pub dates: Dates,
}

/// Instance names for a file's identities: the pod (or host) where each pod is named once,
/// else `pod/container`; the file's own name when the records name no one.
fn names(whos: &[Who<'static>], stem: &str) -> Vec<String> {
    whos.iter()
        .map(|w| {
            let twice = w.name.is_some() && whos.iter().filter(|x| x.name == w.name).count() > 1;
            match (&w.name, &w.container) {
                (Some(n), _) if !twice => n.to_string(),
                (None, None) => stem.to_string(),
                _ => w.label(),
            }
        })
        .collect()
}

/// The dates that complete the engine's stamps (vLLM's without a year, SGLang's without a
/// date): the flags' where given, else the collector's time of the first record, on the
/// server's clock.
fn dates(given: Dates, first: Option<i64>, offset_ms: i64) -> Dates {
    let Some(t) = first else {
        return given;
    };
    let days = (t + offset_ms).div_euclid(i64::from(DAY_MS)) as i32;
    Dates {
        year: given.year.or(Some(civil_from_days(days).0)),
        date: given.date.or(Some(days)),
    }
}

/// A newest-first line file's records in time order (a stable sort: records of one time
/// keep their order), its rows that hold none counted in `unowned`.
fn in_time_order<'a>(c: Collector, data: &'a [u8], unowned: &mut Counts) -> Vec<Piece<'a>> {
    let mut pieces = Vec::new();
    for (i, raw) in tokstat_parsers::scan::lines(data).enumerate() {
        unowned.rows += 1;
        match row(c, raw) {
            Row::Piece(p) => pieces.push(p),
            Row::Other => unowned.other += 1,
            Row::Broken(why) => {
                unowned.broken += 1;
                if unowned.broken_rows.len() < SAMPLES {
                    unowned.broken_rows.push((i as u64 + 1, why));
                }
            }
        }
    }
    pieces.sort_by_cached_key(|p| p.time.ms());
    pieces
}

/// Opens a collector's file (`src`, detected as `c`): its identities, each one's clock and
/// dates, and its plain log. `stem` names the log of records that name no one.
pub fn open(
    c: Collector,
    input: &Input,
    src: Source,
    given: Dates,
    stem: &str,
) -> Result<(Opened, Vec<Unwrapped>), Skipped> {
    let fail = |why: String| Skipped {
        source: input.display(),
        why,
        failed: true,
        partly_read: false,
    };
    let modified = src.modified;
    let bytes: Shared = match src.data {
        Data::Mapped(m) => Arc::new(m),
        Data::Owned(v) => Arc::new(v),
        Data::Shared(v) => v,
        stream @ (Data::Stream(_) | Data::Made(_)) => Arc::new(
            stream
                .read_all()
                .map_err(|e| fail(format!("cannot read: {e}")))?,
        ),
    };
    let source = |data: Data| Source {
        input: input.clone(),
        compression: Compression::None,
        modified,
        at_open: None,
        data,
    };
    let data: &[u8] = (*bytes).as_ref();
    let mut unowned = Counts::default();
    // what is read whole: documents, and line files whose newest record comes first
    let whole: Result<Vec<Piece<'_>>, Vec<Who<'static>>> = if c.per_line() {
        let s = unwrap::survey(c, data);
        match (s.first, s.last) {
            (Some(a), Some(b)) if b < a => Ok(in_time_order(c, data, &mut unowned)),
            _ => Err(s.whos.into_iter().map(|w| w.0).collect()),
        }
    } else {
        let (pieces, other) = documents::read(c, data)
            .map_err(|e| fail(format!("not a whole {} document: {e}", c.as_str())))?;
        unowned.rows += other;
        unowned.other += other;
        Ok(pieces)
    };
    let newest_first = c.per_line() && whole.is_ok();
    let mut logs = Vec::new();
    let mut parts = Vec::new();
    match whole {
        Ok(pieces) => {
            let mut whos: Vec<Who<'static>> = Vec::new();
            for p in &pieces {
                if !whos.contains(&p.who) {
                    whos.push(p.who.owned());
                }
            }
            for (who, name) in whos.iter().zip(names(&whos, stem)) {
                let mine = || pieces.iter().filter(|p| p.who == *who).cloned();
                let clock = unwrap::clock(mine());
                let plan = Plan {
                    collector: c,
                    who: Some(who.clone()),
                    offset_ms: clock.map_or(0, |k| k.offset_ms),
                    counts_unowned: logs.is_empty(),
                };
                let first = mine().find_map(|p| p.time.ms());
                let (plain, counts) = unwrap::plain(mine(), &plan);
                logs.push(Unwrapped {
                    name,
                    src: source(Data::Owned(plain)),
                    dates: dates(given, first, plan.offset_ms),
                });
                parts.push((plan, clock, Counted::Whole(counts)));
            }
        }
        Err(whos) => {
            let several = whos.len() > 1;
            for (who, name) in whos.iter().zip(names(&whos, stem)) {
                let who = several.then(|| who.clone());
                let clock = unwrap::clock(unwrap::first_pieces(c, data, who.as_ref()));
                let first = unwrap::first_pieces(c, data, who.as_ref()).find_map(|p| p.time.ms());
                let plan = Plan {
                    collector: c,
                    who,
                    offset_ms: clock.map_or(0, |k| k.offset_ms),
                    counts_unowned: logs.is_empty(),
                };
                let u = Arc::new(Unwrap::new(Arc::clone(&bytes), plan.clone()));
                logs.push(Unwrapped {
                    name,
                    src: source(Data::Made(Arc::clone(&u) as Arc<dyn MadeLines>)),
                    dates: dates(given, first, plan.offset_ms),
                });
                parts.push((plan, clock, Counted::Made(u)));
            }
        }
    }
    if logs.is_empty() {
        // a collector's file with no line in it: its rows are all other
        let plan = Plan {
            collector: c,
            who: None,
            offset_ms: 0,
            counts_unowned: true,
        };
        logs.push(Unwrapped {
            name: stem.to_string(),
            src: source(Data::Owned(Vec::new())),
            dates: given,
        });
        parts.push((plan, None, Counted::Whole(Counts::default())));
    }
    let opened = Opened {
        collector: c,
        bytes,
        newest_first,
        unowned,
        parts,
    };
    Ok((opened, logs))
}

impl Opened {
    /// Completes the tally of log `k` (its scan counted the plain lines): the rows that
    /// hold no line, broken rows as malformed with their row numbers, and the lines'
    /// malformed samples named by the file's rows. Returns what the records said.
    pub fn account(&self, k: usize, tally: &mut Tally) -> EnvelopeRead {
        let Some((plan, clock, counts)) = self.parts.get(k) else {
            return EnvelopeRead::default();
        };
        let counts = match counts {
            Counted::Whole(c) => c.clone(),
            Counted::Made(u) => u.counts(),
        };
        // (a file read in place: numbered by its rows; a document's records by their order)
        if !self.newest_first && self.collector.per_line() && !tally.samples.is_empty() {
            let lines: Vec<u64> = tally.samples.iter().map(|s| s.0).collect();
            let rows = unwrap::rows_of_lines((*self.bytes).as_ref(), plan, &lines);
            for (s, r) in tally.samples.iter_mut().zip(rows) {
                s.0 = r;
            }
        }
        let mut rows = counts.rows - counts.foreign;
        add(tally, &counts);
        if k == 0 {
            add(tally, &self.unowned);
            rows += self.unowned.rows;
        }
        EnvelopeRead {
            collector: self.collector.as_str(),
            identity: plan.who.as_ref().map(Who::label).filter(|l| !l.is_empty()),
            rows,
            joined: counts.joined,
            stamped: counts.stamped,
            clock: *clock,
            newest_first: self.newest_first,
        }
    }
}

/// Adds rows counted apart from the lines (blank or textless records as other, broken
/// records as malformed, with their row numbers) to a tally.
fn add(t: &mut Tally, c: &Counts) {
    t.total += c.other + c.broken;
    t.other += c.other;
    t.malformed += c.broken;
    t.samples.extend(c.broken_rows.iter().copied());
    t.samples.sort_by_key(|s| s.0);
    t.samples.truncate(SAMPLES);
}

impl Reader for EnvelopeReader {
    fn reads(&self, kind: Kind) -> bool {
        matches!(kind, Kind::Envelope(_))
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, at: &mut InOrder<'_, '_>) {
        let Kind::Envelope(c) = at.kind else {
            return;
        };
        let stem = std::mem::take(&mut at.instance);
        let (opened, logs) = match open(c, input, src, at.opts.dates, &stem) {
            Ok(o) => o,
            Err(skipped) => return into.skipped.push(skipped),
        };
        for (k, log) in logs.into_iter().enumerate() {
            let mut opts = at.opts.clone();
            opts.dates = log.dates;
            let mut sub = InOrder {
                opts: &opts,
                kind: Kind::Log,
                instance: log.name,
                steps: at.steps.as_deref_mut(),
                counted: at.counted,
            };
            LogReader.read(into, input, log.src, &mut sub);
            if let Some(f) = into.files.last_mut() {
                f.kind = at.kind;
                f.envelope = Some(opened.account(k, &mut f.tally));
            }
        }
    }

    fn extend(&self, _into: &mut Ingested, _other: &mut Ingested) {
        // (its part is the logs': merged by their reader)
    }
}
