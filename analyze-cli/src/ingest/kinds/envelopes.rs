//! Server logs inside log collectors' records (see `tokstat_parsers::wrappers::envelope`):
//! each identity a file names (a pod, a host, a log stream) is read as a log of its own,
//! an instance, through the server logs' reader: its records unwrapped into the plain log
//! the engines wrote, dated by the collector where the engine's stamps lack a year (or
//! any stamp), its clock offset against the collector's stated. Its part of the read: the
//! logs' (`logs`), and each file's [`EnvelopeRead`].

use super::logs::LogReader;
use super::{InOrder, Reader};
use crate::ingest::inputs::{Dates, Skipped};
use crate::ingest::read::{EnvelopeRead, Ingested, ReadOptions};
use crate::ingest::scan::SAMPLES;
use std::sync::Arc;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Compression, Data, Input, Source};
use tokstat_parsers::stamp::{civil_from_days, DAY_MS};
use tokstat_parsers::wrappers::envelope::unwrap::{self, Counts, Plan, Shared, Unwrap};
use tokstat_parsers::wrappers::envelope::{documents, row, Collector, Piece, Row, Who};

pub struct EnvelopeReader;

/// One identity of a file, to be read as an instance.
struct Part<'a> {
    who: Option<Who<'static>>,
    /// Its instance name.
    name: String,
    /// Its records, when the file is read whole (a document, a newest-first export).
    pieces: Option<Vec<Piece<'a>>>,
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
fn dates(opts: &ReadOptions, first: Option<i64>, offset_ms: i64) -> Dates {
    let Some(t) = first else {
        return opts.dates;
    };
    let days = (t + offset_ms).div_euclid(i64::from(DAY_MS)) as i32;
    Dates {
        year: opts.dates.year.or(Some(civil_from_days(days).0)),
        date: opts.dates.date.or(Some(days)),
    }
}

impl Reader for EnvelopeReader {
    fn reads(&self, kind: Kind) -> bool {
        matches!(kind, Kind::Envelope(_))
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, at: &mut InOrder<'_, '_>) {
        let Kind::Envelope(c) = at.kind else {
            return;
        };
        let modified = src.modified;
        let bytes: Shared = match src.data {
            Data::Mapped(m) => Arc::new(m),
            Data::Owned(v) => Arc::new(v),
            Data::Shared(v) => v,
            Data::Stream(r) => match Data::Stream(r).read_all() {
                Ok(v) => Arc::new(v),
                Err(e) => {
                    return into.skipped.push(Skipped {
                        source: input.display(),
                        why: format!("cannot read: {e}"),
                        failed: true,
                        partly_read: false,
                    })
                }
            },
        };
        let data: &[u8] = (*bytes).as_ref();
        let stem = std::mem::take(&mut at.instance);
        // what is read whole: documents, and line files whose newest record comes first
        let mut unowned = Counts::default();
        let (whole, line_whos): (Option<Vec<Piece<'_>>>, Vec<Who<'static>>) = if c.per_line() {
            let s = unwrap::survey(c, data);
            let newest_first = matches!((s.first, s.last), (Some(a), Some(b)) if b < a);
            if newest_first {
                (Some(in_time_order(c, data, &mut unowned)), Vec::new())
            } else {
                (None, s.whos.into_iter().map(|w| w.0).collect())
            }
        } else {
            match documents::read(c, data) {
                Ok((pieces, other)) => {
                    unowned.rows += other;
                    unowned.other += other;
                    (Some(pieces), Vec::new())
                }
                Err(e) => {
                    return into.skipped.push(Skipped {
                        source: input.display(),
                        why: format!("not a whole {} document: {e}", c.as_str()),
                        failed: true,
                        partly_read: false,
                    })
                }
            }
        };
        let newest_first = c.per_line() && whole.is_some();
        let in_place = whole.is_none();
        let parts: Vec<Part<'_>> = match whole {
            Some(pieces) => {
                let mut whos: Vec<Who<'static>> = Vec::new();
                for p in &pieces {
                    if !whos.iter().any(|w| *w == p.who) {
                        whos.push(p.who.owned());
                    }
                }
                let names = names(&whos, &stem);
                let mut parts: Vec<Part<'_>> = whos
                    .into_iter()
                    .zip(names)
                    .map(|(w, name)| Part {
                        who: Some(w),
                        name,
                        pieces: Some(Vec::new()),
                    })
                    .collect();
                for p in pieces {
                    if let Some(part) = parts.iter_mut().find(|x| x.who.as_ref() == Some(&p.who)) {
                        if let Some(v) = part.pieces.as_mut() {
                            v.push(p);
                        }
                    }
                }
                parts
            }
            None => {
                let whos = line_whos;
                let names = names(&whos, &stem);
                let several = whos.len() > 1;
                whos.into_iter()
                    .zip(names)
                    .map(|(w, name)| Part {
                        who: several.then_some(w),
                        name,
                        pieces: None,
                    })
                    .collect()
            }
        };
        if parts.is_empty() {
            // a collector's file with no line in it: its rows are all other
            let src = Source {
                input: input.clone(),
                compression: Compression::None,
                modified,
                at_open: None,
                data: Data::Owned(Vec::new()),
            };
            at.instance = stem;
            LogReader.read(into, input, src, at);
            if let Some(f) = into.files.last_mut() {
                add_unowned(&mut f.tally, &unowned);
                f.kind = at.kind;
                f.envelope = Some(EnvelopeRead {
                    collector: c.as_str(),
                    rows: unowned.rows,
                    ..EnvelopeRead::default()
                });
            }
            return;
        }
        for (k, part) in parts.into_iter().enumerate() {
            let first_part = k == 0;
            let mut plan = Plan {
                collector: c,
                who: part.who.clone(),
                offset_ms: 0,
                counts_unowned: first_part,
            };
            let (clock, first_time) = match &part.pieces {
                Some(v) => (
                    unwrap::clock(v.iter().cloned().take(unwrap::CLOCK_LINES * 8)),
                    v.iter().find_map(|p| p.time),
                ),
                None => (
                    unwrap::clock(unwrap::first_pieces(c, data, part.who.as_ref())),
                    unwrap::first_pieces(c, data, part.who.as_ref()).find_map(|p| p.time),
                ),
            };
            plan.offset_ms = clock.map_or(0, |k| k.offset_ms);
            let mut opts = at.opts.clone();
            opts.dates = dates(at.opts, first_time, plan.offset_ms);
            let (data_of_part, counts) = match part.pieces {
                Some(v) => {
                    let (plain, counts) = unwrap::plain(v.into_iter(), &plan);
                    (Data::Owned(plain), Arc::new(std::sync::Mutex::new(counts)))
                }
                None => {
                    let (u, counts) = Unwrap::new(Arc::clone(&bytes), plan.clone());
                    (Data::Stream(Box::new(u)), counts)
                }
            };
            let src = Source {
                input: input.clone(),
                compression: Compression::None,
                modified,
                at_open: None,
                data: data_of_part,
            };
            let mut sub = InOrder {
                opts: &opts,
                kind: Kind::Log,
                instance: part.name.clone(),
                steps: at.steps.as_deref_mut(),
                counted: at.counted,
            };
            LogReader.read(into, input, src, &mut sub);
            let counts = match counts.lock() {
                Ok(g) => g.clone(),
                Err(p) => p.into_inner().clone(),
            };
            if let Some(f) = into.files.last_mut() {
                f.kind = at.kind;
                // the lines' malformed samples named by the file's rows
                // (read in place: a document's records were put in order first)
                if in_place && !f.tally.samples.is_empty() {
                    let lines: Vec<u64> = f.tally.samples.iter().map(|s| s.0).collect();
                    let rows = unwrap::rows_of_lines(data, &plan, &lines);
                    for (s, r) in f.tally.samples.iter_mut().zip(rows) {
                        s.0 = r;
                    }
                }
                add_unowned(&mut f.tally, &counts);
                if first_part {
                    add_unowned(&mut f.tally, &unowned);
                }
                f.envelope = Some(EnvelopeRead {
                    collector: c.as_str(),
                    identity: part.who.as_ref().map(Who::label).filter(|l| !l.is_empty()),
                    rows: counts.rows - counts.foreign + if first_part { unowned.rows } else { 0 },
                    joined: counts.joined,
                    stamped: counts.stamped,
                    clock,
                    newest_first,
                });
            }
        }
    }

    fn extend(&self, _into: &mut Ingested, _other: &mut Ingested) {
        // (its part is the logs': merged by their reader)
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
    pieces.sort_by_key(|p| p.time);
    pieces
}

/// Adds the rows unwrapping counted apart from the lines (blank or textless records as
/// other, broken records as malformed with their row numbers) to a file's tally.
fn add_unowned(t: &mut crate::ingest::scan::Tally, c: &Counts) {
    t.total += c.other + c.broken;
    t.other += c.other;
    t.malformed += c.broken;
    t.samples.extend(c.broken_rows.iter().copied());
    t.samples.sort_by_key(|s| s.0);
    t.samples.truncate(SAMPLES);
}
