//! PrometheusReader text exposition: one scrape a file, files of scrapes separated by `# scrape`
//! lines, or folders of scrapes timed by their names, read by [`crate::ingest::scrapes`].
//! Its part of the read: `scrapes`, placed in time when finished.

use super::{InOrder, Reader};
use crate::ingest::inputs::Skipped;
use crate::ingest::read::{FileRead, Ingested};
use crate::ingest::scan::FileCtx;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Input, Source};

pub struct PrometheusReader;

impl Reader for PrometheusReader {
    fn reads(&self, kind: Kind) -> bool {
        kind == Kind::Prometheus
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, _: &mut InOrder<'_, '_>) {
        match into.scrapes.read_input(input, src) {
            Ok(tally) => into.files.push(FileRead {
                file: FileCtx {
                    source: input.display(),
                    stem: input.stem(),
                },
                tally,
                kind: Kind::Prometheus,
            }),
            Err(e) => into.skipped.push(Skipped {
                source: input.display(),
                why: format!("cannot read: {e}"),
                failed: true,
                partly_read: false,
            }),
        }
    }

    fn extend(&self, into: &mut Ingested, other: &mut Ingested) {
        into.scrapes.extend(std::mem::take(&mut other.scrapes));
    }

    fn finish(&self, read: &mut Ingested, interval_s: Option<f64>) {
        read.scrapes.place(interval_s);
    }
}
