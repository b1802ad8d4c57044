//! Server logs (SGLang, vLLM, or text of no known engine): scanned in parallel whole-line
//! chunks into each instance's aggregates and digest ([`crate::ingest::instance`]); the
//! serving benchmark summaries a log holds become benchmark runs. Its part of the read:
//! `logs`, and the runs of its consoles.

use super::{InOrder, Reader};
use crate::ingest::instance::ChunkSummary;
use crate::ingest::read::{FileRead, Ingested};
use crate::ingest::scan::{scan_log, visit_chunk, ChunkOut, FileCtx, LineNumbers};
use tokstat_parsers::detect::Kind;
use tokstat_parsers::scan::Chunk;
use tokstat_parsers::source::{Data, Input, Source};
use tokstat_parsers::stamp::Calendar;

pub struct LogReader;

/// A chunk of a log into its instances' aggregates and series.
fn log_work(file: &FileCtx, chunk: Chunk<'_>) -> (ChunkOut<ChunkSummary>, Calendar) {
    thread_local! {
        /// The size of the last chunk this thread read (see [`ChunkSummary::sized_like`]).
        static LAST: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
    }
    let (out, calendar) = visit_chunk(file, chunk, ChunkSummary::sized_like(LAST.get()));
    LAST.set(out.out.size());
    (out, calendar)
}

impl Reader for LogReader {
    fn reads(&self, kind: Kind) -> bool {
        matches!(kind, Kind::Log | Kind::Empty)
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, at: &mut InOrder<'_, '_>) {
        // chunks of a plain file count as they are read (a stream's decompressed bytes are
        // not its size on disk: it counts when done)
        let plain = matches!(src.data, Data::Mapped(_) | Data::Owned(_));
        let kind = at.kind;
        let progress = at.opts.progress.as_deref();
        let counted = at.counted;
        let logs = &mut into.logs;
        let steps = &mut at.steps;
        let work = |f: &FileCtx, c: Chunk<'_>| {
            if let (Some(p), true) = (progress, plain) {
                let n = c.bytes.len() as u64;
                p.read(n);
                counted.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            }
            log_work(f, c)
        };
        let (file, tally, err) = scan_log(
            input,
            std::mem::take(&mut at.instance),
            src,
            at.opts.dates,
            LineNumbers::Relative,
            &work,
            &mut |f: &FileCtx, s: ChunkSummary, before: u64| {
                logs.absorb(f, s, before, steps.as_deref_mut())
            },
        );
        into.skipped.extend(err);
        into.files.push(FileRead { file, tally, kind });
        // its serving benchmark summaries are runs, as result files are (named by their
        // line when the file holds several)
        let several = into.logs.consoles.len() > 1;
        into.runs
            .extend(into.logs.consoles.drain(..).map(|(line, mut run)| {
                if several {
                    run.name = format!("{} (line {line})", run.name);
                }
                run
            }));
    }

    fn extend(&self, into: &mut Ingested, other: &mut Ingested) {
        into.logs.extend(std::mem::take(&mut other.logs));
    }

    fn finish(&self, read: &mut Ingested, _interval_s: Option<f64>) {
        for i in read.logs.instances.values_mut() {
            i.digest.finish();
        }
    }
}
