//! Prometheus text exposition: one scrape a file, files of scrapes separated by `# scrape`
//! lines, or folders of scrapes timed by their names, read by [`crate::ingest::scrapes`].
//! Its part of the read: `scrapes`, placed in time when finished.

use super::{InOrder, Reader};
use crate::ingest::inputs::Skipped;
use crate::ingest::read::{FileRead, Ingested};
use crate::ingest::scan::FileCtx;
use crate::ingest::scrapes::Scrapes;
use polars::prelude::*;
use tokstat_parsers::detect::Kind;
use tokstat_parsers::source::{Input, Source};

pub struct PrometheusReader;

impl Reader for PrometheusReader {
    fn reads(&self, kind: Kind) -> bool {
        kind == Kind::Prometheus
    }

    fn read(&self, into: &mut Ingested, input: &Input, src: Source, _: &mut InOrder<'_, '_>) {
        let read = into.scrapes.read_input(input, src);
        into.warnings.append(&mut into.scrapes.notes);
        match read {
            Ok(tally) => into.files.push(FileRead {
                file: FileCtx {
                    source: input.display(),
                    stem: input.stem(),
                },
                tally,
                kind: Kind::Prometheus,
                envelope: None,
            }),
            // another tool's Parquet: listed as a binary file is, not a failure
            Err(e) if e.kind() == std::io::ErrorKind::Unsupported => into.skipped.push(Skipped {
                source: input.display(),
                why: e.to_string(),
                failed: false,
                partly_read: false,
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
        read.warnings.append(&mut read.scrapes.notes);
    }

    fn tables(&self, read: &Ingested) -> PolarsResult<Vec<(&'static str, DataFrame)>> {
        Ok(vec![("metrics", metrics(&read.scrapes)?)])
    }
}

/// Prometheus samples, long format.
pub fn metrics(s: &Scrapes) -> PolarsResult<DataFrame> {
    let rows = s
        .scrapes
        .iter()
        .enumerate()
        .flat_map(|(k, sc)| sc.samples.iter().map(move |x| (k, sc, x)));
    let ts: Vec<Option<i64>> = rows.clone().map(|r| r.1.placed.map(|t| t.0)).collect();
    DataFrame::new_infer_height(vec![
        Column::new(
            "source".into(),
            rows.clone()
                .map(|r| r.1.source.as_str())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "scrape".into(),
            rows.clone().map(|r| r.0 as u64).collect::<Vec<_>>(),
        ),
        Column::new("ts".into(), ts).cast(&DataType::Datetime(TimeUnit::Milliseconds, None))?,
        Column::new(
            "name".into(),
            rows.clone().map(|r| r.2.name.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "labels".into(),
            rows.clone()
                .map(|r| r.2.labels.as_str())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "value".into(),
            rows.clone().map(|r| r.2.value).collect::<Vec<_>>(),
        ),
        Column::new(
            "type".into(),
            rows.map(|r| s.kind(&r.2.name).map_or("untyped", |k| k.as_str()))
                .collect::<Vec<_>>(),
        ),
    ])
}
