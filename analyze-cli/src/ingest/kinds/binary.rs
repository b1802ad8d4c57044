//! Inputs that are not text (images, archives, UTF-16, random bytes): listed as skipped,
//! never read. No part of the read is theirs.

use super::{InOrder, Reader};
use crate::ingest::inputs::{Skipped, BINARY};
use crate::ingest::read::Ingested;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Input, Source};

pub struct BinaryReader;

impl Reader for BinaryReader {
    fn reads(&self, kind: Kind) -> bool {
        kind == Kind::Binary
    }

    fn read(&self, into: &mut Ingested, input: &Input, _: Source, _: &mut InOrder<'_, '_>) {
        into.skipped.push(Skipped {
            source: input.display(),
            why: BINARY.to_string(),
            failed: false,
            partly_read: false,
        });
    }

    fn extend(&self, _: &mut Ingested, _: &mut Ingested) {}
}
