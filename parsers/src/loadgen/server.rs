//! The server's side of a benchmark run as a load generator summarised it beside its own
//! results (docs/formats.md §4.11): inference-perf's `stage_N_prometheus_metrics.json` /
//! `summary_prometheus_metrics.json` (PromQL it ran against Prometheus over the stage) and
//! AIPerf's `server_metrics_export.json` (its own scrapes of `/metrics`, summarised over the
//! profiling window). Both are summaries, not scrapes: one figure per series over the run,
//! no time.
//!
//! A figure is kept under tokstat's name ([`SERVER_FIGURES`]) with the tool's key beside it.
//! What the writer cannot tell apart from "no result" is never a measurement: inference-perf
//! writes 0.0 for a query that found no series (`execute_query` starts from
//! `query_result = 0.0` and returns it on an empty result or an error) and NaN for a
//! quantile of an empty histogram, so its 0 is "not measured" where the figure cannot be 0
//! on a server that finished requests (a rate, a latency, a token length, KV usage), and
//! "0, or not measured" where it can (preemptions, a queue).

use super::tree::num;
use serde_json::Value;

/// The figures of a server's view, by tokstat's names (vLLM's result-file vocabulary where
/// the client's figure has the same name), with their units.
pub const SERVER_FIGURES: &[(&str, &str)] = &[
    ("window", "s"),
    ("completed", "requests"),
    ("finished_length", "requests"),
    ("request_throughput", "req/s"),
    ("output_throughput", "tok/s"),
    ("input_throughput", "tok/s"),
    ("total_output_tokens", "tokens"),
    ("total_input_tokens", "tokens"),
    ("mean_input_tokens", "tokens"),
    ("mean_output_tokens", "tokens"),
    ("mean_ttft_ms", "ms"),
    ("median_ttft_ms", "ms"),
    ("p90_ttft_ms", "ms"),
    ("p99_ttft_ms", "ms"),
    ("mean_tpot_ms", "ms"),
    ("median_tpot_ms", "ms"),
    ("p90_tpot_ms", "ms"),
    ("p99_tpot_ms", "ms"),
    ("mean_itl_ms", "ms"),
    ("median_itl_ms", "ms"),
    ("p90_itl_ms", "ms"),
    ("p99_itl_ms", "ms"),
    ("mean_e2el_ms", "ms"),
    ("median_e2el_ms", "ms"),
    ("p90_e2el_ms", "ms"),
    ("p99_e2el_ms", "ms"),
    ("mean_queue_ms", "ms"),
    ("median_queue_ms", "ms"),
    ("p90_queue_ms", "ms"),
    ("p99_queue_ms", "ms"),
    ("mean_running", "requests"),
    ("mean_waiting", "requests"),
    ("mean_kv_usage", "fraction"),
    ("p99_kv_usage", "fraction"),
    ("preemptions", "requests"),
    ("prefix_cache_hit", "fraction"),
];

/// Who summarised the server's metrics, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ServerSource {
    /// inference-perf's PromQL over a stage's window (`increase`, `rate`,
    /// `histogram_quantile`, `avg_over_time`): quantiles are the histogram's estimates.
    #[default]
    InferencePerfPromql,
    /// AIPerf's summary of its own scrapes over its profiling window: counters' increases,
    /// gauges' sample statistics, histograms' bucket estimates.
    AiPerfSummary,
}

impl ServerSource {
    /// In words, for the report.
    pub fn describe(self) -> &'static str {
        match self {
            ServerSource::InferencePerfPromql => {
                "inference-perf's PromQL over the stage (quantiles estimated from histogram buckets)"
            }
            ServerSource::AiPerfSummary => {
                "AIPerf's summary of its scrapes over the profiling window (quantiles estimated from histogram buckets)"
            }
        }
    }
}

/// One figure of the server's view.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServerFigure {
    /// tokstat's name, one of [`SERVER_FIGURES`].
    pub name: String,
    /// The tool's key (a path such as `successes.time_to_first_token.p90`).
    pub key: String,
    /// In the unit [`SERVER_FIGURES`] gives; None: not measured (the writer's 0 or NaN for
    /// a figure that cannot be 0).
    pub value: Option<f64>,
    /// A 0 the writer also writes for "no result": shown as "0, or not measured".
    pub zero_unsure: bool,
}

/// The server's view of one run.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServerView {
    pub source: ServerSource,
    /// The file it was read from (set by the reader of files).
    pub file: String,
    pub figures: Vec<ServerFigure>,
    /// Series summed into one figure (several engines or endpoints); a quantile of several
    /// histograms is not combined and left out.
    pub series: usize,
}

impl ServerView {
    /// A figure's value by tokstat's name.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.figures
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.value)
    }

    /// Whether any figure was measured.
    pub fn measured(&self) -> bool {
        self.figures.iter().any(|f| f.value.is_some())
    }

    /// The span the counts were taken over, from the writer's own pair: finished requests
    /// over their rate (inference-perf's `increase` and `rate` over one range: the stage's
    /// duration; AIPerf's delta and rate over its scrapes from the one before the window to
    /// the last in it, wider than the window it profiles).
    fn derive_window(&mut self) {
        let (Some(n), Some(r)) = (self.get("completed"), self.get("request_throughput")) else {
            return;
        };
        if n > 0.0 && r > 0.0 {
            let key = self
                .figures
                .iter()
                .filter(|f| f.name == "completed" || f.name == "request_throughput")
                .map(|f| f.key.as_str())
                .collect::<Vec<_>>()
                .join(" ÷ ");
            self.figures.insert(
                0,
                ServerFigure {
                    name: "window".to_string(),
                    key,
                    value: Some(n / r),
                    zero_unsure: false,
                },
            );
        }
    }

    fn put(&mut self, name: &str, key: String, value: Option<f64>, zero_unsure: bool) {
        debug_assert!(SERVER_FIGURES.iter().any(|(n, _)| *n == name), "{name}");
        if self.figures.iter().any(|f| f.name == name) {
            return;
        }
        self.figures.push(ServerFigure {
            name: name.to_string(),
            key,
            value,
            zero_unsure,
        });
    }
}

/// How inference-perf's 0 is taken: a figure that cannot be 0 on a server that finished
/// requests, or one that can.
#[derive(Clone, Copy, PartialEq)]
enum Zero {
    NotMeasured,
    Unsure,
}

/// Reads inference-perf's `…_prometheus_metrics.json` (`summarize_prometheus_metrics` in
/// `inference_perf/reportgen/base.py`): `successes.count` (`sum(increase(…))` of finished
/// requests), `.rate` (`sum(rate(…))`), histograms' `{mean, median, p90, p99}` in seconds
/// (`sum(rate(_sum)) / sum(rate(_count))` and `histogram_quantile` over `sum by (le)`),
/// gauges' `{mean}` (`avg_over_time`, of the first series the query returns: one engine's
/// where several are scraped), KV usage as a fraction (vLLM's `…_usage_perc`, despite the
/// key's `_percentage`), `prefix_cache_hit_percent.mean` in percent.
///
/// Two layouts, told apart by `successes.inter_token_latency` (added with vLLM 0.15's
/// names, inference-perf 0.5, fccf5e4):
/// - before it, `time_per_output_token` is `vllm:time_per_output_token_seconds`, which
///   vLLM fills per token (its inter-token latency, despite the name): read as ITL; and
///   `num_preemptions_total.mean` is the counter's mean level since the server started
///   (`avg_over_time` of a counter), no count of this run's: not read;
/// - from it, `time_per_output_token` is `vllm:request_time_per_output_token_seconds`
///   (per request: TPOT), `inter_token_latency` ITL, `num_preemptions_total.mean` the
///   window's increase.
///
/// `prompt_len.mean` and `output_len.mean` are never tokens per request: they are a
/// counter's rate averaged by a subquery whose step is the window (`avg_over_time(rate(…)
/// [W:W])`), not read; the per-request means come from the `request_prompt_tokens` and
/// `request_generation_tokens` histograms (0.7).
pub fn inference_perf(v: &Value) -> Option<ServerView> {
    let ok = v.get("successes").filter(|o| o.is_object())?;
    let mut view = ServerView {
        source: ServerSource::InferencePerfPromql,
        series: 1,
        ..ServerView::default()
    };
    // the value at a path: None if the key is absent, Some(None) if it is no number (NaN)
    let at = |path: &[&str]| {
        path.iter()
            .try_fold(ok, |v, k| v.get(*k))
            .map(|x| num(Some(x)))
    };
    let current = ok.get("inter_token_latency").is_some();
    // every query found nothing: no request was seen finishing, and no other 0 means anything
    let served = at(&["count"])
        .flatten()
        .is_some_and(|c| c.is_finite() && c > 0.0);
    let mut put = |name: &str, path: &[&str], scale: f64, zero: Zero| {
        // a key the writer's version has not: not in the view
        let Some(raw) = at(path) else { return };
        let value =
            raw.filter(|x| x.is_finite() && (*x != 0.0 || (zero == Zero::Unsure && served)));
        view.put(
            name,
            format!("successes.{}", path.join(".")),
            value.filter(|_| served).map(|x| x * scale),
            zero == Zero::Unsure && value == Some(0.0),
        );
    };
    put("completed", &["count"], 1.0, Zero::NotMeasured);
    put("request_throughput", &["rate"], 1.0, Zero::NotMeasured);
    put(
        "output_throughput",
        &["output_len", "rate"],
        1.0,
        Zero::NotMeasured,
    );
    put(
        "input_throughput",
        &["prompt_len", "rate"],
        1.0,
        Zero::NotMeasured,
    );
    put(
        "mean_input_tokens",
        &["request_prompt_tokens", "mean"],
        1.0,
        Zero::NotMeasured,
    );
    put(
        "mean_output_tokens",
        &["request_generation_tokens", "mean"],
        1.0,
        Zero::NotMeasured,
    );
    let tpot = if current { "tpot" } else { "itl" };
    for (key, figure) in [
        ("time_to_first_token", "ttft"),
        ("time_per_output_token", tpot),
        ("inter_token_latency", "itl"),
        ("request_latency", "e2el"),
        ("request_queue_time", "queue"),
    ] {
        // a queue time of 0 is a request that never waited: possible
        let zero = if figure == "queue" {
            Zero::Unsure
        } else {
            Zero::NotMeasured
        };
        for (stat, prefix) in [
            ("mean", "mean"),
            ("median", "median"),
            ("p90", "p90"),
            ("p99", "p99"),
        ] {
            put(&format!("{prefix}_{figure}_ms"), &[key, stat], 1000.0, zero);
        }
    }
    put(
        "mean_running",
        &["num_requests_running", "mean"],
        1.0,
        Zero::NotMeasured,
    );
    put("mean_waiting", &["queue_len", "mean"], 1.0, Zero::Unsure);
    put(
        "mean_kv_usage",
        &["kv_cache_usage_percentage", "mean"],
        1.0,
        Zero::NotMeasured,
    );
    put(
        "p99_kv_usage",
        &["kv_cache_usage_percentage", "p99"],
        1.0,
        Zero::NotMeasured,
    );
    if current {
        put(
            "preemptions",
            &["num_preemptions_total", "mean"],
            1.0,
            Zero::Unsure,
        );
    }
    put(
        "prefix_cache_hit",
        &["prefix_cache_hit_percent", "mean"],
        0.01,
        Zero::Unsure,
    );
    view.derive_window();
    Some(view)
}

/// Reads AIPerf's `server_metrics_export.json` (0.13: `summary.endpoint_info`, then
/// `metrics` by family name as `prometheus_client` parses it — `vllm:generation_tokens`,
/// no `_total` — each `{type, series: [{endpoint_url, labels, stats}]}`): counters'
/// `stats.total` (the increase over the window) and `stats.rate`, gauges' `avg` / `p99`,
/// histograms' `count`, `sum`, `avg` and `pN_estimate` (seconds). Series of several engines
/// or endpoints are summed (gauges' means too: the mean of a sum is the sum of the means;
/// KV usage averaged); their quantiles are not combined.
pub fn aiperf(v: &Value) -> Option<ServerView> {
    let metrics = v.get("metrics")?.as_object()?;
    let mut view = ServerView {
        source: ServerSource::AiPerfSummary,
        ..ServerView::default()
    };
    let family = |suffix: &str| {
        ["vllm:", "sglang:"]
            .iter()
            .find_map(|p| metrics.get_key_value(&format!("{p}{suffix}")))
    };
    fn series(f: &Value) -> Vec<&Value> {
        f.get("series")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    }
    let stat = |s: &Value, k: &str| num(s.get("stats").and_then(|st| st.get(k)));
    let sum = |f: &Value, k: &str, keep: &dyn Fn(&Value) -> bool| -> Option<f64> {
        let vals: Vec<f64> = series(f)
            .into_iter()
            .filter(|s| keep(s))
            .filter_map(|s| stat(s, k))
            .collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    };
    let all = |_: &Value| true;
    // the engines and endpoints a counter's series come from: its series without the
    // label a counter is split by (`finished_reason`)
    let sources = |f: &Value| {
        let mut seen: Vec<String> = series(f)
            .iter()
            .map(|s| {
                let mut l = s.get("labels").cloned().unwrap_or(Value::Null);
                if let Some(m) = l.as_object_mut() {
                    m.remove("finished_reason");
                }
                format!("{}{l}", s.get("endpoint_url").unwrap_or(&Value::Null))
            })
            .collect();
        seen.sort();
        seen.dedup();
        seen.len()
    };
    let mut widest = 0;
    let counter = |widest: &mut usize, view: &mut ServerView, name: &str, fam: &str, k: &str| {
        if let Some((key, f)) = family(fam) {
            *widest = (*widest).max(sources(f));
            view.put(name, format!("{key}.{k}"), sum(f, k, &all), false);
        }
    };
    counter(
        &mut widest,
        &mut view,
        "total_output_tokens",
        "generation_tokens",
        "total",
    );
    counter(
        &mut widest,
        &mut view,
        "output_throughput",
        "generation_tokens",
        "rate",
    );
    counter(
        &mut widest,
        &mut view,
        "total_input_tokens",
        "prompt_tokens",
        "total",
    );
    counter(
        &mut widest,
        &mut view,
        "input_throughput",
        "prompt_tokens",
        "rate",
    );
    counter(
        &mut widest,
        &mut view,
        "completed",
        "request_success",
        "total",
    );
    counter(
        &mut widest,
        &mut view,
        "request_throughput",
        "request_success",
        "rate",
    );
    counter(
        &mut widest,
        &mut view,
        "preemptions",
        "num_preemptions",
        "total",
    );
    if let Some((key, f)) = family("request_success") {
        let length = |s: &Value| {
            s.get("labels")
                .and_then(|l| l.get("finished_reason"))
                .and_then(Value::as_str)
                == Some("length")
        };
        view.put(
            "finished_length",
            format!("{key}{{finished_reason=\"length\"}}.total"),
            sum(f, "total", &length),
            false,
        );
    }
    for (name, fam, k) in [
        ("mean_running", "num_requests_running", "avg"),
        ("mean_waiting", "num_requests_waiting", "avg"),
    ] {
        if let Some((key, f)) = family(fam) {
            widest = widest.max(series(f).len());
            view.put(name, format!("{key}.{k}"), sum(f, k, &all), false);
        }
    }
    for fam in ["kv_cache_usage_perc", "gpu_cache_usage_perc"] {
        if let Some((key, f)) = family(fam) {
            let s = series(f);
            let n = s.len() as f64;
            let mean = sum(f, "avg", &all).map(|x| x / n);
            view.put("mean_kv_usage", format!("{key}.avg"), mean, false);
            if s.len() == 1 {
                view.put(
                    "p99_kv_usage",
                    format!("{key}.p99"),
                    stat(s[0], "p99"),
                    false,
                );
            }
        }
    }
    for (fam, name) in [
        ("request_prompt_tokens", "mean_input_tokens"),
        ("request_generation_tokens", "mean_output_tokens"),
    ] {
        if let Some((key, f)) = family(fam) {
            let mean = match (sum(f, "sum", &all), sum(f, "count", &all)) {
                (Some(t), Some(c)) if c > 0.0 => Some(t / c),
                _ => None,
            };
            view.put(name, format!("{key}.sum ÷ count"), mean, false);
        }
    }
    for (fam, figure) in [
        ("time_to_first_token_seconds", "ttft"),
        ("request_time_per_output_token_seconds", "tpot"),
        ("inter_token_latency_seconds", "itl"),
        ("e2e_request_latency_seconds", "e2el"),
        ("request_queue_time_seconds", "queue"),
    ] {
        let Some((key, f)) = family(fam) else {
            continue;
        };
        let s = series(f);
        widest = widest.max(s.len());
        let count = sum(f, "count", &all);
        let total = sum(f, "sum", &all);
        let mean = match (total, count) {
            (Some(t), Some(c)) if c > 0.0 => Some(t / c * 1000.0),
            _ => None,
        };
        view.put(
            &format!("mean_{figure}_ms"),
            format!("{key}.sum ÷ count"),
            mean,
            false,
        );
        if s.len() == 1 && count.is_some_and(|c| c > 0.0) {
            for (stat_key, prefix) in [
                ("p50_estimate", "median"),
                ("p90_estimate", "p90"),
                ("p99_estimate", "p99"),
            ] {
                view.put(
                    &format!("{prefix}_{figure}_ms"),
                    format!("{key}.{stat_key}"),
                    stat(s[0], stat_key)
                        .filter(|x| x.is_finite())
                        .map(|x| x * 1000.0),
                    false,
                );
            }
        }
    }
    view.series = widest.max(1);
    view.derive_window();
    (!view.figures.is_empty()).then_some(view)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Value {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn inference_perf_zero_is_not_a_measurement() {
        let v = parse(
            r#"{"load_summary": {}, "successes": {"count": 40.5, "rate": 2.0,
            "output_len": {"mean": 32.0, "rate": 64.0}, "queue_len": {"mean": 0},
            "time_to_first_token": {"mean": 0.04, "median": 0.0475, "p90": 0.0495, "p99": 0.04995},
            "request_latency": {"mean": 0.0, "median": 0.0, "p90": 0.0, "p99": 0.0},
            "kv_cache_usage_percentage": {"mean": 0.0, "median": 0.0, "p90": 0.0, "p99": 0.0},
            "inter_token_latency": {"mean": 0.008, "median": 0.0075, "p90": 0.0095, "p99": 0.00995},
            "time_per_output_token": {"mean": 0.009, "median": 0.0085, "p90": 0.0095, "p99": 0.00995},
            "num_preemptions_total": {"mean": 0}}, "failures": {}}"#,
        );
        let s = inference_perf(&v).unwrap();
        assert_eq!(s.get("completed"), Some(40.5));
        assert_eq!(s.get("median_tpot_ms"), Some(8.5));
        assert_eq!(s.get("median_itl_ms"), Some(7.5));
        // output_len.mean is a rate averaged by a subquery, never tokens per request
        assert_eq!(s.get("mean_output_tokens"), None);
        assert_eq!(s.get("output_throughput"), Some(64.0));
        assert_eq!(s.get("median_ttft_ms"), Some(47.5));
        // a latency or a KV usage of 0 on a server that finished requests is no result
        assert_eq!(s.get("median_e2el_ms"), None);
        assert_eq!(s.get("mean_kv_usage"), None);
        // a 0 that can be true is kept, said to be unsure
        let pre = s.figures.iter().find(|f| f.name == "preemptions").unwrap();
        assert_eq!((pre.value, pre.zero_unsure), (Some(0.0), true));
        // keys absent from older files are absent
        assert!(s.figures.iter().all(|f| f.name != "mean_queue_ms"));
    }

    #[test]
    fn inference_perf_before_0_5_time_per_output_token_is_per_token() {
        // the kubecon demo's layout: no inter_token_latency key
        let v = parse(
            r#"{"load_summary": {}, "successes": {"count": 1140, "rate": 14.430483,
            "time_per_output_token": {"mean": 0.01592, "median": 0.01, "p90": 0.023052, "p99": 0.179045},
            "kv_cache_usage_percentage": {"mean": 0.0}, "num_preemptions_total": {"mean": 0}}, "failures": {}}"#,
        );
        let s = inference_perf(&v).unwrap();
        assert_eq!(s.get("median_itl_ms"), Some(10.0));
        assert!(s.figures.iter().all(|f| !f.name.contains("tpot")));
        // a counter's mean level, not this run's preemptions
        assert!(s.figures.iter().all(|f| f.name != "preemptions"));
    }

    #[test]
    fn inference_perf_all_empty_is_nothing_measured() {
        let v = parse(
            r#"{"load_summary": {}, "successes": {"count": 0.0, "rate": 0.0,
            "num_preemptions_total": {"mean": 0}, "queue_len": {"mean": 0}}, "failures": {}}"#,
        );
        let s = inference_perf(&v).unwrap();
        assert!(!s.measured(), "{s:?}");
    }

    #[test]
    fn aiperf_sums_series_and_keeps_one_histogram_s_quantiles() {
        let v = parse(
            r#"{"metrics": {
              "vllm:generation_tokens": {"type": "counter", "series": [
                {"labels": {"engine": "0"}, "stats": {"total": 100.0, "rate": 10.0}},
                {"labels": {"engine": "1"}, "stats": {"total": 50.0, "rate": 5.0}}]},
              "vllm:request_success": {"type": "counter", "series": [
                {"labels": {"finished_reason": "length"}, "stats": {"total": 3.0, "rate": 0.3}},
                {"labels": {"finished_reason": "stop"}, "stats": {"total": 1.0, "rate": 0.1}}]},
              "vllm:time_to_first_token_seconds": {"type": "histogram", "series": [
                {"labels": {}, "stats": {"count": 4, "sum": 0.2, "p50_estimate": 0.045, "p90_estimate": 0.049, "p99_estimate": 0.0499}}]}
            }}"#,
        );
        let s = aiperf(&v).unwrap();
        assert_eq!(s.get("total_output_tokens"), Some(150.0));
        assert_eq!(s.get("output_throughput"), Some(15.0));
        assert_eq!(s.get("completed"), Some(4.0));
        assert_eq!(s.get("finished_length"), Some(3.0));
        assert_eq!(s.get("mean_ttft_ms"), Some(50.0));
        assert_eq!(s.get("median_ttft_ms"), Some(45.0));
        assert_eq!(s.series, 2);
    }
}
