//! Records → polars DataFrames named and typed as the documented schema (`tokstat schema`),
//! for notebooks and `export`: here `steps` and `timeline`; each input kind builds its own
//! tables (`events`, `config`, `metrics`, `completions`, `requests`: see
//! `crate::ingest::kinds::Reader::tables`). `steps`, millions of rows for a long log, is gathered a row group
//! at a time by [`steps::StepColumns`], which also gives its rows to the Parquet writer
//! without a frame.
//!
//! The frames hold what the analyses keep of each line ([`crate::ingest::series`]): the columns a
//! query of throughput, load and pressure needs, not the rarely used ones (`tokens`,
//! `cached_tokens`, `extra`, …) that `tokstat parse` writes. Prefill batches sharing a
//! stamp are one row (their tokens summed; their gauges are left to the decode rows). Times are naive datetimes in milliseconds, as
//! the engines log local time without a zone.

use crate::ingest::kinds::{datetime, datetime_opt, signed};
use crate::report::{InstanceReport, SegmentReport, TimelineRow};
use polars::prelude::*;

pub mod steps;

/// The timeline: the run's total (`instance` null) and, with several instances, each one,
/// as the report has it.
pub fn timeline(rows: &[TimelineRow], bucket_s: f64) -> PolarsResult<DataFrame> {
    let f =
        |g: fn(&TimelineRow) -> Option<f64>| -> Vec<Option<f64>> { rows.iter().map(g).collect() };
    let n =
        |g: fn(&TimelineRow) -> Option<u64>| -> Vec<Option<u64>> { rows.iter().map(g).collect() };
    DataFrame::new_infer_height(vec![
        datetime("ts", rows.iter().map(|r| r.ts.0).collect())?,
        Column::new(
            "instance".into(),
            rows.iter()
                .map(|r| r.instance.as_deref())
                .collect::<Vec<_>>(),
        ),
        Column::new("gen_tps".into(), f(|b| b.gen_tps)),
        Column::new("serving_gen_tps".into(), f(|b| b.serving_gen_tps)),
        Column::new("prompt_tps".into(), f(|b| b.prompt_tps)),
        Column::new("running".into(), f(|b| b.running)),
        Column::new("waiting".into(), f(|b| b.waiting)),
        Column::new("kv_usage".into(), f(|b| b.kv_usage)),
        Column::new("accept_len".into(), f(|b| b.accept_len)),
        Column::new("events".into(), f(|b| b.events)),
        Column::new("http_ok".into(), n(|b| b.http_ok)),
        Column::new("http_4xx".into(), n(|b| b.http_4xx)),
        Column::new("http_5xx".into(), n(|b| b.http_5xx)),
        Column::new(
            "steady".into(),
            rows.iter().map(|r| r.steady).collect::<Vec<_>>(),
        ),
        Column::new(
            "covered_s".into(),
            rows.iter().map(|r| r.covered_s).collect::<Vec<_>>(),
        ),
        Column::new("bucket_s".into(), vec![bucket_s; rows.len()]),
    ])
    .and_then(signed)
}

/// The timeline as `export` writes it: the report's rows and, where the report has no rows
/// of its own for each instance (a run of one instance), that instance's rows, which are
/// the total's; so a query by instance finds every instance whatever the number of them.
pub fn timeline_by_instance(
    rows: &[TimelineRow],
    instances: &[InstanceReport],
    bucket_s: f64,
) -> PolarsResult<DataFrame> {
    match instances {
        [one] if rows.iter().all(|r| r.instance.is_none()) => {
            let mut all = rows.to_vec();
            all.extend(rows.iter().map(|r| TimelineRow {
                instance: Some(one.instance.clone()),
                ..r.clone()
            }));
            timeline(&all, bucket_s)
        }
        _ => timeline(rows, bucket_s),
    }
}

/// The report's instances, a row each.
pub fn instances(rows: &[InstanceReport]) -> PolarsResult<DataFrame> {
    let f = |g: fn(&InstanceReport) -> Option<f64>| -> Vec<Option<f64>> {
        rows.iter().map(g).collect()
    };
    let n =
        |g: fn(&InstanceReport) -> u64| -> Vec<i64> { rows.iter().map(|r| g(r) as i64).collect() };
    DataFrame::new_infer_height(vec![
        Column::new(
            "instance".into(),
            rows.iter().map(|r| r.instance.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "engine".into(),
            rows.iter().map(|r| r.engine).collect::<Vec<_>>(),
        ),
        datetime_opt(
            "first_ts",
            rows.iter().map(|r| r.first_ts.map(|t| t.0)).collect(),
        )?,
        datetime_opt(
            "last_ts",
            rows.iter().map(|r| r.last_ts.map(|t| t.0)).collect(),
        )?,
        Column::new("span_s".into(), f(|r| r.span_s)),
        Column::new("stat_lines".into(), n(|r| r.stat_lines)),
        Column::new("prefill_lines".into(), n(|r| r.prefill_lines)),
        Column::new("gen_tps".into(), f(|r| r.gen_tps)),
        Column::new("vs_median".into(), f(|r| r.vs_median)),
        Column::new(
            "imbalanced".into(),
            rows.iter().map(|r| r.imbalanced).collect::<Vec<_>>(),
        ),
        Column::new("gen_tokens".into(), f(|r| r.gen_tokens)),
        Column::new("gen_tps_mean".into(), f(|r| r.gen_tps_mean)),
        Column::new("gen_tps_max".into(), f(|r| r.gen_tps_max)),
        Column::new("running_mean".into(), f(|r| r.running_mean)),
        Column::new("running_max".into(), f(|r| r.running_max)),
        Column::new("waiting_mean".into(), f(|r| r.waiting_mean)),
        Column::new("kv_usage_mean".into(), f(|r| r.kv_usage_mean)),
        Column::new("kv_usage_max".into(), f(|r| r.kv_usage_max)),
        Column::new("prefill_tokens".into(), n(|r| r.prefill_tokens)),
        Column::new("retractions".into(), n(|r| r.retractions)),
        Column::new("preemptions".into(), n(|r| r.preemptions)),
        Column::new("errors".into(), n(|r| r.errors)),
    ])
}

/// The report's segments, a row each, with their steady windows.
pub fn segments(rows: &[SegmentReport]) -> PolarsResult<DataFrame> {
    let f =
        |g: fn(&SegmentReport) -> Option<f64>| -> Vec<Option<f64>> { rows.iter().map(g).collect() };
    DataFrame::new_infer_height(vec![
        Column::new(
            "segment".into(),
            rows.iter().map(|r| r.index as i64).collect::<Vec<_>>(),
        ),
        Column::new(
            "reason".into(),
            rows.iter().map(|r| r.reason).collect::<Vec<_>>(),
        ),
        datetime("start", rows.iter().map(|r| r.start.0).collect())?,
        datetime("end", rows.iter().map(|r| r.end.0).collect())?,
        Column::new("duration_s".into(), f(|r| Some(r.duration_s))),
        Column::new(
            "instances".into(),
            rows.iter().map(|r| r.instances as i64).collect::<Vec<_>>(),
        ),
        Column::new("gen_tokens".into(), f(|r| Some(r.gen_tokens))),
        Column::new("gen_tps".into(), f(|r| r.gen_tps)),
        Column::new("gen_tps_mean".into(), f(|r| r.gen_tps_mean)),
        Column::new("peak_gen_tps".into(), f(|r| r.peak_gen_tps)),
        datetime_opt(
            "steady_from",
            rows.iter()
                .map(|r| r.steady.as_ref().map(|w| w.from.0))
                .collect(),
        )?,
        datetime_opt(
            "steady_to",
            rows.iter()
                .map(|r| r.steady.as_ref().map(|w| w.to.0))
                .collect(),
        )?,
        Column::new("ramp_up_s".into(), f(|r| r.ramp_up_s)),
        Column::new("drain_s".into(), f(|r| r.drain_s)),
    ])
}

/// The runs on one clock, a row per bucket of each aligned run (refused ones have none).
pub fn one_clock(runs: &[crate::analysis::one_clock::OneClock]) -> PolarsResult<DataFrame> {
    use crate::analysis::one_clock::ClockRow;
    let rows: Vec<(&crate::analysis::one_clock::OneClock, &ClockRow)> = runs
        .iter()
        .flat_map(|c| c.rows.iter().map(move |r| (c, r)))
        .collect();
    let f = |g: fn(&ClockRow) -> Option<f64>| -> Vec<Option<f64>> {
        rows.iter().map(|(_, r)| g(r)).collect()
    };
    let n =
        |g: fn(&ClockRow) -> u64| -> Vec<i64> { rows.iter().map(|(_, r)| g(r) as i64).collect() };
    DataFrame::new_infer_height(vec![
        Column::new(
            "bench_run".into(),
            rows.iter().map(|(c, _)| c.run.as_str()).collect::<Vec<_>>(),
        ),
        Column::new(
            "server".into(),
            rows.iter().map(|(c, _)| c.server).collect::<Vec<_>>(),
        ),
        Column::new(
            "offset_s".into(),
            rows.iter()
                .map(|(c, _)| c.alignment.offset().map(|o| o.offset_s))
                .collect::<Vec<_>>(),
        ),
        datetime(
            "ts",
            rows.iter()
                .map(|(c, r)| (c.shown(r.t) * 1000.0).round() as i64)
                .collect(),
        )?,
        Column::new(
            "ts_clock".into(),
            rows.iter().map(|(c, _)| c.shown_on()).collect::<Vec<_>>(),
        ),
        Column::new(
            "bucket_s".into(),
            rows.iter().map(|(c, _)| c.bucket_s).collect::<Vec<_>>(),
        ),
        Column::new("starts".into(), n(|r| r.starts)),
        Column::new("completions".into(), n(|r| r.completions)),
        Column::new("errors".into(), n(|r| r.errors)),
        Column::new("in_flight".into(), f(|r| Some(r.in_flight))),
        Column::new("ttft_mean_ms".into(), f(|r| r.ttft_mean_ms)),
        Column::new("ttft_p50_ms".into(), f(|r| r.ttft_p50_ms)),
        Column::new("ttft_p99_ms".into(), f(|r| r.ttft_p99_ms)),
        Column::new("itl_p50_ms".into(), f(|r| r.itl_p50_ms)),
        Column::new("itl_p99_ms".into(), f(|r| r.itl_p99_ms)),
        Column::new("e2e_p50_ms".into(), f(|r| r.e2e_p50_ms)),
        Column::new("e2e_p99_ms".into(), f(|r| r.e2e_p99_ms)),
        Column::new("running".into(), f(|r| r.running)),
        Column::new("waiting".into(), f(|r| r.waiting)),
        Column::new("kv_usage".into(), f(|r| r.kv_usage)),
        Column::new("preemptions".into(), f(|r| r.preemptions)),
        Column::new("gen_tps".into(), f(|r| r.gen_tps)),
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
            DataType::Int64 => put(c.i64()?.iter().map(|x| json!(x)).collect()),
            DataType::Int32 => put(c.i32()?.iter().map(|x| json!(x)).collect()),
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
    use crate::ingest::digest::Digest;
    use crate::ingest::instance::Instance;
    use crate::ingest::series::{EventPoint, Order, Point, PointKind, Prefill, Series, Setting};
    use crate::ingest::Ingested;
    use crate::schema::dtype as dtype_of;
    use crate::schema::TABLES;
    use std::collections::BTreeMap;
    use tokstat_parsers::record::EventKind;

    /// The steps rows of one chunk of an instance's lines, as `export` writes them.
    fn steps_of(
        name: &str,
        engine: Option<&'static str>,
        series: &Series,
    ) -> PolarsResult<DataFrame> {
        let mut columns = steps::StepColumns::default();
        columns.push(name, engine, series);
        columns.frame("run")
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
                engine: Some(tokstat_parsers::record::Engine::Sglang),
                digest: Digest::of(&series),
                ..Instance::default()
            },
        );
        let s = steps_of("gpu0", Some("sglang"), &series).unwrap();
        documented("steps", &s);
        assert_eq!(s.height(), 2);
        let rows = json_rows(&s).unwrap();
        assert_eq!(rows[0]["kind"], "prefill");
        assert_eq!(rows[0]["new_tokens"], 300);
        assert_eq!(rows[1]["kind"], "decode");
        assert_eq!(rows[1]["gen_tps"], 120.5);
        assert_eq!(rows[1]["waiting"], serde_json::Value::Null);
        assert_eq!(rows[1]["ts"], "1970-01-01T00:00:02");
        let mut read = Ingested::default();
        read.logs.instances = m;
        read.scrapes.read(
            "m.prom",
            "m",
            "# TYPE x_total counter\nx_total{a=\"1\"} 5\n",
        );
        let tables = crate::ingest::kinds::tables(&read).unwrap();
        let table = |name: &str| tables.iter().find(|t| t.0 == name).unwrap().1.clone();
        documented("events", &table("events"));
        let c = table("config");
        documented("config", &c);
        assert_eq!(json_rows(&c).unwrap()[0]["value"], "16");
        let mf = table("metrics");
        documented("metrics", &mf);
        assert_eq!(json_rows(&mf).unwrap()[0]["type"], "counter");
        let row = |ts: i64, instance: Option<&str>| TimelineRow {
            ts: tokstat_parsers::stamp::Ts(ts),
            instance: instance.map(str::to_string),
            gen_tps: Some(10.0),
            serving_gen_tps: Some(12.5),
            prompt_tps: None,
            running: Some(2.0),
            waiting: None,
            kv_usage: Some(0.5),
            accept_len: None,
            events: Some(0.0),
            http_ok: Some(3),
            http_4xx: None,
            http_5xx: Some(1),
            steady: true,
            covered_s: 60.0,
        };
        let t = timeline(&[row(0, None), row(0, Some("gpu0"))], 60.0).unwrap();
        documented("timeline", &t);
        assert_eq!(t.height(), 2);
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
        let rows = json_rows(&steps_of("engine0", Some("vllm"), &series).unwrap()).unwrap();
        let kinds: Vec<&str> = rows.iter().map(|r| r["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["stats", "spec", "stats"]);
        assert_eq!(rows[0]["prompt_tps"], serde_json::Value::Null);
        assert_eq!(rows[1]["accept_len"], 2.5);
        assert_eq!(rows[2]["prompt_tps"], 812.5);
    }
}
