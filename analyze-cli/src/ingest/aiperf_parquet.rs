//! AIPerf's `server_metrics_export.parquet` (0.10+, written when `--server-metrics-formats`
//! names `parquet`): the scrapes of its profiling window in long format, read as scrapes.
//!
//! Its writer (`aiperf/server_metrics/parquet_exporter.py`, 0.13.0) writes one row a
//! sample, histogram buckets a row each:
//!
//! ```text
//! endpoint_url, metric_name, metric_type, unit, description, timestamp_ns,
//! <one column a label: aiperf.label_columns>, value, sum, count, bucket_le, bucket_count
//! ```
//!
//! with the file's key-value metadata naming it (`aiperf.exporter:
//! ServerMetricsParquetExporter`, `aiperf.label_columns: ["engine",…]`). Families are named
//! as `prometheus_client`'s parser names them (a counter without `_total`); counters and
//! histograms are "cumulative deltas from the reference point" (their value less the one at
//! the window's start), gauges are raw. An increase over the window is what it is in the
//! raw scrapes; a counter's absolute value is not there.

use crate::ingest::scan::Tally;
use crate::ingest::scrapes::{joined_labels, with_label, MetricSample, Scrape, Scrapes};
use polars::prelude::*;
use std::collections::{BTreeMap, HashSet};
use tokstat_parsers::prometheus::{self, MetricType};
use tokstat_parsers::stamp::Ts;

/// What the file's metadata says of it.
const EXPORTER: (&str, &str) = ("aiperf.exporter", "ServerMetricsParquetExporter");

/// Whether a Parquet file's bytes are AIPerf's server-metrics export.
fn label_columns(meta: &[(String, String)]) -> Option<Vec<String>> {
    meta.iter()
        .any(|(k, v)| k == EXPORTER.0 && v == EXPORTER.1)
        .then(|| {
            meta.iter()
                .find(|(k, _)| k == "aiperf.label_columns")
                .and_then(|(_, v)| serde_json::from_str::<Vec<String>>(v).ok())
                .unwrap_or_default()
        })
}

fn strs<'a>(df: &'a DataFrame, name: &str) -> PolarsResult<&'a StringChunked> {
    df.column(name)?.str()
}

fn floats(df: &DataFrame, name: &str) -> PolarsResult<Float64Chunked> {
    Ok(df.column(name)?.cast(&DataType::Float64)?.f64()?.clone())
}

impl Scrapes {
    /// Reads a Parquet file: `Ok(None)` when it is not AIPerf's server-metrics export.
    /// Each row is a line of the tally (a bucket row is one); each (endpoint, timestamp) a
    /// scrape, labelled with the endpoint's `host:port` as `instance`.
    pub fn read_aiperf_parquet(
        &mut self,
        source: &str,
        bytes: Vec<u8>,
    ) -> PolarsResult<Option<Tally>> {
        let mut reader = ParquetReader::new(std::io::Cursor::new(bytes));
        let meta: Vec<(String, String)> = reader
            .get_metadata()?
            .key_value_metadata
            .iter()
            .flatten()
            .map(|kv| (kv.key.clone(), kv.value.clone().unwrap_or_default()))
            .collect();
        let Some(label_cols) = label_columns(&meta) else {
            return Ok(None);
        };
        let df = reader.finish()?;
        let name = strs(&df, "metric_name")?;
        let kind = strs(&df, "metric_type")?;
        let url = strs(&df, "endpoint_url")?;
        let ts = df.column("timestamp_ns")?.cast(&DataType::Int64)?;
        let ts = ts.i64()?;
        let value = floats(&df, "value")?;
        let sum = floats(&df, "sum")?;
        let count = floats(&df, "count")?;
        let le = strs(&df, "bucket_le")?;
        let bucket = floats(&df, "bucket_count")?;
        let labels: Vec<(&str, &StringChunked)> = label_cols
            .iter()
            .filter_map(|c| Some((c.as_str(), df.column(c).ok()?.str().ok()?)))
            .collect();

        let mut t = Tally::default();
        // (timestamp in ns, endpoint) → the scrape's samples
        let mut scrapes: BTreeMap<(i64, String), Vec<MetricSample>> = BTreeMap::new();
        // a histogram's sum and count, once a series and scrape (every bucket row holds them)
        let mut totals: HashSet<(i64, String, String, String)> = HashSet::new();
        for i in 0..df.height() {
            t.total += 1;
            let (Some(family), Some(at)) = (name.get(i), ts.get(i)) else {
                t.malformed += 1;
                if t.samples.len() < crate::ingest::scan::SAMPLES {
                    t.samples
                        .push((i as u64 + 1, "a row without metric_name or timestamp_ns"));
                }
                continue;
            };
            let ty = MetricType::parse(kind.get(i).unwrap_or(""));
            let endpoint = url.get(i).unwrap_or("");
            let mut ls = joined_labels(labels.iter().filter_map(|(k, c)| Some((*k, c.get(i)?))));
            if !endpoint.is_empty() {
                ls = with_label(ls, "instance", super::scrapes::endpoint_instance(endpoint));
            }
            let engine = prometheus::engine_name(family).into_owned();
            let out = scrapes.entry((at, endpoint.to_string())).or_default();
            let mut push = |suffix: &str, labels: String, v: f64| {
                out.push(MetricSample {
                    name: format!("{engine}{suffix}"),
                    labels,
                    value: v,
                })
            };
            match ty {
                MetricType::Histogram => {
                    let (Some(le), Some(n)) = (le.get(i), bucket.get(i)) else {
                        t.malformed += 1;
                        continue;
                    };
                    if totals.insert((at, endpoint.to_string(), family.to_string(), ls.clone())) {
                        if let Some(s) = sum.get(i) {
                            push("_sum", ls.clone(), s);
                        }
                        if let Some(c) = count.get(i) {
                            push("_count", ls.clone(), c);
                        }
                    }
                    push("_bucket", with_label(ls, "le", le), n);
                }
                _ => {
                    let Some(v) = value.get(i).filter(|v| !v.is_nan()) else {
                        t.other += 1;
                        continue;
                    };
                    push(
                        if ty == MetricType::Counter {
                            "_total"
                        } else {
                            ""
                        },
                        ls,
                        v,
                    );
                }
            }
            t.parsed += 1;
            self.types.entry(engine).or_insert(ty);
        }
        for ((at, _), samples) in scrapes {
            self.scrapes.push(Scrape {
                source: source.to_string(),
                ts: Some(Ts(at.div_euclid(1_000_000))),
                samples,
                ..Scrape::default()
            });
        }
        self.relative.push(source.to_string());
        Ok(Some(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_aiperf_files_are_claimed() {
        let ours = vec![
            (EXPORTER.0.to_string(), EXPORTER.1.to_string()),
            (
                "aiperf.label_columns".to_string(),
                r#"["engine","model_name"]"#.to_string(),
            ),
        ];
        assert_eq!(
            label_columns(&ours),
            Some(vec!["engine".to_string(), "model_name".to_string()])
        );
        assert_eq!(label_columns(&[]), None);
    }
}
