//! Records → polars DataFrames named and typed as the documented schema (`tokstat schema`):
//! `steps`, `events`, `config`, `metrics` and `timeline`, for notebooks and export.
//!
//! The frames hold what the analyses keep of each line ([`crate::series`]): the columns a
//! query of throughput, load and pressure needs, not the rarely used ones (`tokens`,
//! `cached_tokens`, `extra`, …) that `tokstat parse` writes. Prefill batches sharing a
//! stamp are one row (their tokens summed; their gauges are left to the decode rows). Times are naive datetimes in milliseconds, as
//! the engines log local time without a zone.

use crate::analysis::finite;
use crate::analysis::server::Server;
use crate::ingest::instance::Instance;
use crate::ingest::scrapes::Scrapes;
use crate::ingest::series::{PointKind, Step};
use polars::prelude::*;
use std::collections::BTreeMap;

fn datetime(name: &str, ms: Vec<i64>) -> PolarsResult<Column> {
    Column::new(name.into(), ms).cast(&DataType::Datetime(TimeUnit::Milliseconds, None))
}

fn opt32(v: f32) -> Option<f64> {
    finite(f64::from(v))
}

/// One row per stats line (decode / periodic stats, prefill, speculative metrics).
pub fn steps(instances: &BTreeMap<String, Instance>) -> PolarsResult<DataFrame> {
    let rows = instances.iter().flat_map(|(n, i)| {
        i.series
            .steps()
            .map(move |s| (n, i.engine, StepRow::of(&i.series, s)))
    });
    DataFrame::new_infer_height(vec![
        Column::new(
            "instance".into(),
            rows.clone().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "engine".into(),
            rows.clone().map(|r| r.1).collect::<Vec<Option<&str>>>(),
        ),
        Column::new(
            "kind".into(),
            rows.clone().map(|r| r.2.kind(r.1)).collect::<Vec<_>>(),
        ),
        datetime("ts", rows.clone().map(|r| r.2.ts).collect())?,
        Column::new(
            "running".into(),
            rows.clone()
                .map(|r| opt32(r.2.running).map(|v| v as u64))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "waiting".into(),
            rows.clone()
                .map(|r| opt32(r.2.waiting).map(|v| v as u64))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "gen_tps".into(),
            rows.clone()
                .map(|r| finite(r.2.gen_tps))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "prompt_tps".into(),
            rows.clone()
                .map(|r| finite(r.2.prompt_tps))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "kv_usage".into(),
            rows.clone()
                .map(|r| opt32(r.2.kv_usage))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "new_tokens".into(),
            rows.clone()
                .map(|r| r.2.new_tokens.map(u64::from))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            "accept_len".into(),
            rows.map(|r| opt32(r.2.accept_len)).collect::<Vec<_>>(),
        ),
    ])
}

/// The columns of a steps row, from a point or a prefill stamp.
#[derive(Clone, Copy)]
struct StepRow {
    kind: Option<PointKind>,
    ts: i64,
    running: f32,
    waiting: f32,
    gen_tps: f64,
    prompt_tps: f64,
    kv_usage: f32,
    accept_len: f32,
    new_tokens: Option<u32>,
}

impl StepRow {
    fn of(series: &crate::ingest::series::Series, s: Step<'_>) -> StepRow {
        match s {
            Step::Point(p, i) => StepRow {
                kind: Some(series.kind(i)),
                ts: p.ts,
                running: p.running,
                waiting: p.waiting,
                gen_tps: p.gen_tps,
                prompt_tps: series.prompt_tps(i),
                kv_usage: p.kv_usage,
                accept_len: p.accept_len,
                new_tokens: None,
            },
            Step::Prefill(p) => StepRow {
                kind: None,
                ts: p.ts,
                running: f32::NAN,
                waiting: f32::NAN,
                gen_tps: f64::NAN,
                prompt_tps: f64::NAN,
                kv_usage: f32::NAN,
                accept_len: f32::NAN,
                new_tokens: Some(p.new_tokens),
            },
        }
    }

    fn kind(&self, engine: Option<&str>) -> &'static str {
        match self.kind {
            Some(PointKind::Stats) if engine == Some("vllm") => "stats",
            Some(PointKind::Stats) => "decode",
            Some(PointKind::Spec) => "spec",
            None => "prefill",
        }
    }
}

/// Retractions, preemptions, errors, out-of-memory and server starts.
pub fn events(instances: &BTreeMap<String, Instance>) -> PolarsResult<DataFrame> {
    let rows = instances
        .iter()
        .flat_map(|(n, i)| i.series.events.iter().map(move |e| (n, e)));
    DataFrame::new_infer_height(vec![
        Column::new(
            "instance".into(),
            rows.clone().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ),
        datetime("ts", rows.clone().map(|r| r.1.ts).collect())?,
        Column::new(
            "kind".into(),
            rows.clone().map(|r| r.1.kind.as_str()).collect::<Vec<_>>(),
        ),
        Column::new("count".into(), rows.map(|r| r.1.count).collect::<Vec<_>>()),
    ])
}

/// Settings read from start-up lines.
pub fn config(instances: &BTreeMap<String, Instance>) -> PolarsResult<DataFrame> {
    let rows = instances
        .iter()
        .flat_map(|(n, i)| i.series.settings.iter().map(move |s| (n, s)));
    DataFrame::new_infer_height(vec![
        Column::new(
            "instance".into(),
            rows.clone().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        ),
        datetime("ts", rows.clone().map(|r| r.1.ts).collect())?,
        Column::new(
            "key".into(),
            rows.clone().map(|r| r.1.key.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "value".into(),
            rows.map(|r| r.1.value.as_str()).collect::<Vec<_>>(),
        ),
    ])
}

/// Prometheus samples, long format.
pub fn metrics(s: &Scrapes) -> PolarsResult<DataFrame> {
    let rows = s
        .scrapes
        .iter()
        .enumerate()
        .flat_map(|(k, sc)| sc.samples.iter().map(move |x| (k, sc, x)));
    let ts: Vec<Option<i64>> = rows.clone().map(|r| r.1.ts.map(|t| t.0)).collect();
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

/// The timeline: the run's total (`instance` null) and, with several instances, each one.
pub fn timeline(s: &Server) -> PolarsResult<DataFrame> {
    let tl = &s.timeline;
    let mut rows: Vec<(Option<&str>, usize, &crate::analysis::timeline::Bucket)> = tl
        .total
        .iter()
        .enumerate()
        .map(|(k, b)| (None, k, b))
        .collect();
    if tl.instances.len() > 1 {
        for (name, v) in &tl.instances {
            rows.extend(
                v.iter()
                    .enumerate()
                    .map(|(k, b)| (Some(name.as_str()), k, b)),
            );
        }
    }
    let f = |g: fn(&crate::analysis::timeline::Bucket) -> f64| -> Vec<Option<f64>> {
        rows.iter().map(|r| finite(g(r.2))).collect()
    };
    DataFrame::new_infer_height(vec![
        datetime("ts", rows.iter().map(|r| r.2.ts).collect())?,
        Column::new(
            "instance".into(),
            rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        ),
        Column::new("gen_tps".into(), f(|b| b.gen_tps)),
        Column::new("prompt_tps".into(), f(|b| b.prompt_tps)),
        Column::new("running".into(), f(|b| b.running)),
        Column::new("waiting".into(), f(|b| b.waiting)),
        Column::new("kv_usage".into(), f(|b| b.kv_usage)),
        Column::new("accept_len".into(), f(|b| b.accept_len)),
        Column::new("events".into(), f(|b| b.events)),
        Column::new(
            "steady".into(),
            rows.iter().map(|r| s.in_steady(r.1)).collect::<Vec<_>>(),
        ),
    ])
}

/// A frame as JSON objects, one per row (datetimes as ISO text, NaN / nulls as null).
pub fn json_rows(df: &DataFrame) -> PolarsResult<Vec<serde_json::Value>> {
    use serde_json::{json, Map, Value};
    let mut rows = vec![Map::new(); df.height()];
    for c in df.columns() {
        let name = c.name().to_string();
        let mut put = |vals: Vec<Value>| {
            for (r, v) in rows.iter_mut().zip(vals) {
                r.insert(name.clone(), v);
            }
        };
        match c.dtype() {
            DataType::Datetime(..) => {
                let v = c.cast(&DataType::Int64)?;
                put(v
                    .i64()?
                    .iter()
                    .map(|x| {
                        x.map_or(Value::Null, |ms| {
                            json!(tokstat_parsers::stamp::Ts(ms).to_string())
                        })
                    })
                    .collect());
            }
            DataType::String => put(c.str()?.iter().map(|x| json!(x)).collect()),
            DataType::Boolean => put(c.bool()?.iter().map(|x| json!(x)).collect()),
            DataType::UInt64 => put(c.u64()?.iter().map(|x| json!(x)).collect()),
            DataType::Float64 => put(c
                .f64()?
                .iter()
                .map(|x| {
                    x.filter(|v| v.is_finite())
                        .map_or(Value::Null, |v| json!(v))
                })
                .collect()),
            _ => {
                let v = c.cast(&DataType::String)?;
                put(v.str()?.iter().map(|x| json!(x)).collect());
            }
        }
    }
    Ok(rows.into_iter().map(Value::Object).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::schema::TABLES;
    use crate::ingest::series::{EventPoint, Order, Point, Prefill, Series, Setting};
    use tokstat_parsers::record::EventKind;

    fn dtype_of(schema: &str) -> DataType {
        match schema {
            "str" | "json" => DataType::String,
            "u64" => DataType::UInt64,
            "u32" => DataType::UInt32,
            "f64" => DataType::Float64,
            "bool" => DataType::Boolean,
            "datetime" => DataType::Datetime(TimeUnit::Milliseconds, None),
            other => panic!("{other}"),
        }
    }

    /// Every column of a frame is a documented column of its table, with its type.
    fn documented(table: &str, df: &DataFrame) {
        let cols = TABLES.iter().find(|t| t.0 == table).unwrap().1;
        for c in df.columns() {
            let (_, ty, _) = cols
                .iter()
                .find(|d| d.0 == c.name().as_str())
                .unwrap_or_else(|| panic!("{table}.{} is not documented", c.name()));
            assert_eq!(c.dtype(), &dtype_of(ty), "{table}.{}", c.name());
        }
    }

    #[test]
    fn frames_follow_the_schema() {
        let series = Series {
            points: vec![Point {
                ts: 2000,
                gen_tps: 120.5,
                running: 8.0,
                waiting: f32::NAN,
                kv_usage: 0.5,
                accept_len: f32::NAN,
            }],
            prefill: vec![Prefill {
                ts: 1000,
                new_tokens: 300,
                at: 0,
            }],
            events: vec![EventPoint {
                ts: 1500,
                kind: EventKind::Retraction,
                count: 3,
            }],
            settings: vec![Setting {
                ts: 0,
                key: "max_running_requests".into(),
                value: "16".into(),
            }],
            order: Order::Unknown,
            ..Series::default()
        };
        let mut m = BTreeMap::new();
        m.insert(
            "gpu0".to_string(),
            Instance {
                engine: Some("sglang"),
                series,
                ..Instance::default()
            },
        );
        let s = steps(&m).unwrap();
        documented("steps", &s);
        assert_eq!(s.height(), 2);
        let rows = json_rows(&s).unwrap();
        assert_eq!(rows[0]["kind"], "prefill");
        assert_eq!(rows[0]["new_tokens"], 300);
        assert_eq!(rows[1]["kind"], "decode");
        assert_eq!(rows[1]["gen_tps"], 120.5);
        assert_eq!(rows[1]["waiting"], serde_json::Value::Null);
        assert_eq!(rows[1]["ts"], "1970-01-01T00:00:02");
        documented("events", &events(&m).unwrap());
        let c = config(&m).unwrap();
        documented("config", &c);
        assert_eq!(json_rows(&c).unwrap()[0]["value"], "16");
        let mut scrapes = Scrapes::default();
        scrapes.read(
            "m.prom",
            "m",
            "# TYPE x_total counter\nx_total{a=\"1\"} 5\n",
        );
        let mf = metrics(&scrapes).unwrap();
        documented("metrics", &mf);
        assert_eq!(json_rows(&mf).unwrap()[0]["type"], "counter");
        let server = crate::analysis::server::analyze(&mut m, None).unwrap();
        let t = timeline(&server).unwrap();
        documented("timeline", &t);
        assert_eq!(t.height(), server.timeline.total.len());
    }

    /// A vLLM instance's rows keep what lives beside its points: each row's kind (periodic
    /// stats or speculative metrics) and prompt rate, NaN (null) where a line had none.
    #[test]
    fn vllm_rows_keep_kinds_and_prompt_rates() {
        let point = |ts: i64, accept_len: f32| Point {
            ts,
            gen_tps: if accept_len.is_nan() { 50.0 } else { f64::NAN },
            running: f32::NAN,
            waiting: f32::NAN,
            kv_usage: f32::NAN,
            accept_len,
        };
        let mut series = Series::default();
        series.push(point(1000, f32::NAN), PointKind::Stats, f64::NAN);
        series.push(point(2000, 2.5), PointKind::Spec, f64::NAN);
        series.push(point(3000, f32::NAN), PointKind::Stats, 812.5);
        let mut m = BTreeMap::new();
        m.insert(
            "engine0".to_string(),
            Instance {
                engine: Some("vllm"),
                series,
                ..Instance::default()
            },
        );
        let rows = json_rows(&steps(&m).unwrap()).unwrap();
        let kinds: Vec<&str> = rows.iter().map(|r| r["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["stats", "spec", "stats"]);
        assert_eq!(rows[0]["prompt_tps"], serde_json::Value::Null);
        assert_eq!(rows[1]["accept_len"], 2.5);
        assert_eq!(rows[2]["prompt_tps"], 812.5);
    }
}
