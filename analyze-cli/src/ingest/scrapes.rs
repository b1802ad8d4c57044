//! Prometheus scrapes read into samples: one file of one scrape, a file of scrapes separated
//! by `# scrape <time>` lines, or a folder of scrapes timed by their file names. The figures
//! drawn from them are in `analysis::metrics`.

use crate::ingest::scan::{Tally, SAMPLES};
use std::collections::HashMap;
use tokstat_parsers::loadgen::aiperf_scrapes;
use tokstat_parsers::prometheus::{self, family, Line, MetricType};
use tokstat_parsers::stamp::Ts;
use tokstat_parsers::wrappers::envelope::time;

/// One sample of the `metrics` table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricSample {
    pub name: String,
    /// `k=v,k=v`, sorted.
    pub labels: String,
    pub value: f64,
}

/// One scrape.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Scrape {
    pub source: String,
    /// Its time as read: a `# scrape` line, the file's name, or the samples' own stamps.
    pub ts: Option<Ts>,
    pub samples: Vec<MetricSample>,
    /// Its time as the analyses place it (see [`Scrapes::place`]): derived from `ts`, never
    /// saved, so that a read placed and saved is merged as one that was not.
    #[serde(skip)]
    pub placed: Option<Ts>,
}

/// All scrapes read, with the declared family types.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Scrapes {
    pub scrapes: Vec<Scrape>,
    pub types: HashMap<String, MetricType>,
    /// What a read must say beside its figures (a partial API response's warnings, derived
    /// series left out); taken into the read's warnings by its reader, not saved.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// Sources whose counters are increases from their window's start, not the server's
    /// (AIPerf's Parquet): left out where the same server's raw scrapes of the same time
    /// are read too ([`Scrapes::place`]), so that no counter is read as reset and reset.
    #[serde(skip)]
    pub relative: Vec<String>,
}

/// Why a Parquet file that is not AIPerf's server metrics is not read.
pub const NOT_AIPERF: &str = "a Parquet file, not AIPerf's server-metrics export: not read (tokstat reads its own exports as their folder)";

/// A malformed line: (line number, why).
pub type Bad = (u64, &'static str);

fn sorted_labels(raw: &str) -> String {
    let mut v: Vec<(&str, std::borrow::Cow<'_, str>)> = prometheus::labels(raw)
        .map(|(k, v)| (k, prometheus::unescape(v)))
        .collect();
    v.sort_unstable();
    let mut s = String::new();
    for (i, (k, v)) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    s
}

/// Label pairs as a sample's `labels`: `k=v,k=v`, sorted.
pub(crate) fn joined_labels<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let mut v: Vec<(&str, &str)> = pairs.collect();
    v.sort_unstable();
    v.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `labels` (`k=v,k=v`, sorted) with `key=value` added in its place, unless it has `key`.
pub(crate) fn with_label(labels: String, key: &str, value: &str) -> String {
    let mut v: Vec<&str> = labels.split(',').filter(|kv| !kv.is_empty()).collect();
    if v.iter().any(|kv| kv.split('=').next() == Some(key)) {
        return labels;
    }
    let added = format!("{key}={value}");
    v.push(&added);
    v.sort_unstable_by_key(|kv| kv.split_once('=').unwrap_or((kv, "")));
    v.join(",")
}

/// The `host:port` of a scrape endpoint's URL (`http://10.0.0.7:8000/metrics` →
/// `10.0.0.7:8000`): the `instance` label Prometheus gives a target.
pub(crate) fn endpoint_instance(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split(['/', '?', '#']).next().unwrap_or(rest)
}

/// A time in a file name: `20260510T000010`, `2026-05-10T00:00:10`, or 10-digit Unix seconds.
pub fn time_from_name(stem: &str) -> Option<Ts> {
    let b = stem.as_bytes();
    for i in 0..b.len() {
        if !b[i].is_ascii_digit() || (i > 0 && b[i - 1].is_ascii_digit()) {
            continue;
        }
        let rest = &stem[i..];
        for len in [19, 15] {
            if let Some(t) = rest.get(..len).and_then(prometheus::iso) {
                return Some(t);
            }
        }
        let run = rest.bytes().take_while(u8::is_ascii_digit).count();
        if run == 10 {
            return prometheus::scrape_time(&rest[..10]);
        }
    }
    None
}

impl Scrapes {
    /// Reads a Prometheus input whole (scrapes are small) and accounts for its lines.
    pub fn read_input(
        &mut self,
        input: &tokstat_parsers::source::Input,
        src: tokstat_parsers::source::Source,
    ) -> std::io::Result<Tally> {
        let bytes = src.data.read_all()?;
        if tokstat_parsers::detect::is_parquet(&bytes) {
            let source = input.display();
            return match self.read_aiperf_parquet(&source, bytes) {
                Ok(Some(t)) => Ok(t),
                Ok(None) => Err(std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    NOT_AIPERF,
                )),
                Err(e) => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!("not a whole Parquet file: {e}"),
                )),
            };
        }
        if tokstat_parsers::prometheus_api::sniff(&bytes) {
            return self.read_api(&input.display(), &bytes);
        }
        if aiperf_scrapes::sniff(tokstat_parsers::text::without_bom(&bytes)) {
            return Ok(self.read_aiperf(&input.display(), &bytes));
        }
        // (a byte order mark before the first line is no part of it)
        let text = String::from_utf8_lossy(tokstat_parsers::text::without_bom(&bytes));
        let (parsed, other, bad, total) = self.read(&input.display(), &input.stem(), &text);
        Ok(Tally {
            total,
            parsed,
            other,
            malformed: bad.len() as u64,
            partial: 0,
            samples: bad.into_iter().take(SAMPLES).collect(),
        })
    }

    /// Reads a saved response of the HTTP API (`curl …/api/v1/query`, `query_range`): each
    /// sample into the scrape of its time, as a scrape file holds them. Its samples are its
    /// lines: a derived series' (no `__name__`) are other, and said so.
    pub fn read_api(&mut self, source: &str, bytes: &[u8]) -> std::io::Result<Tally> {
        use tokstat_parsers::prometheus_api;
        let bad = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
        let r = prometheus_api::read(bytes)
            .map_err(|e| bad(format!("not a whole Prometheus API response: {e}")))?;
        if r.status != "success" {
            return Err(bad(format!(
                "the saved query failed: {}: {}",
                r.error_type.as_deref().unwrap_or("error"),
                r.error.as_deref().unwrap_or("(no message)")
            )));
        }
        for w in &r.warnings {
            self.notes.push(format!("{source}: Prometheus warned: {w}"));
        }
        let mut t = Tally::default();
        let mut timed: Vec<(i64, MetricSample)> = Vec::new();
        let mut derived = 0u64;
        for series in &r.series {
            t.total += series.points.len() as u64;
            let Some(name) = &series.name else {
                derived += 1;
                t.other += series.points.len() as u64;
                continue;
            };
            let labels = joined_labels(series.labels.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
            let name = prometheus::engine_name(name).into_owned();
            for &(ms, value) in &series.points {
                t.parsed += 1;
                timed.push((
                    ms,
                    MetricSample {
                        name: name.clone(),
                        labels: labels.clone(),
                        value,
                    },
                ));
            }
        }
        if derived > 0 {
            self.notes.push(format!(
                "{source}: {derived} series without a metric name (derived by the query, such as sum(rate(…))): not read as a metric's samples"
            ));
        }
        self.push_timed(source, timed);
        Ok(t)
    }

    /// Reads AIPerf's `server_metrics_export.jsonl`: each record a scrape at its
    /// `timestamp_ns`, its samples under their wire names ([`aiperf_scrapes`]), labelled
    /// with the endpoint's `host:port` as `instance` (as Prometheus labels a target), so
    /// that the scrapes of several endpoints are servers side by side. A line that is no
    /// whole record is malformed. Scrapes outside AIPerf's phases are read and said so:
    /// the baseline is the counters' value when the run began.
    pub fn read_aiperf(&mut self, source: &str, bytes: &[u8]) -> Tally {
        let mut t = Tally::default();
        let mut outside = 0u64;
        let text = tokstat_parsers::text::without_bom(bytes);
        // (the file's last newline ends its last line, it starts none)
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        for (n, line) in text.split(|&c| c == b'\n').enumerate() {
            t.total += 1;
            if line.trim_ascii().is_empty() {
                t.other += 1;
                continue;
            }
            let r = match aiperf_scrapes::record(line.trim_ascii_end()) {
                Ok(r) => r,
                Err(_) => {
                    t.malformed += 1;
                    if t.samples.len() < SAMPLES {
                        t.samples
                            .push((n as u64 + 1, "not a whole AIPerf scrape record (JSON)"));
                    }
                    continue;
                }
            };
            t.parsed += 1;
            if r.phase.is_none() {
                outside += 1;
            }
            let instance = r.endpoint_url.as_deref().map(endpoint_instance);
            let mut samples = Vec::with_capacity(r.samples.len());
            for x in &r.samples {
                let family = match x.kind {
                    aiperf_scrapes::Kind::Counter => x
                        .name
                        .strip_suffix("_total")
                        .map(|f| (f, MetricType::Counter)),
                    aiperf_scrapes::Kind::Histogram => ["_bucket", "_sum", "_count"]
                        .iter()
                        .find_map(|s| x.name.strip_suffix(s))
                        .map(|f| (f, MetricType::Histogram)),
                    aiperf_scrapes::Kind::Value => None,
                };
                if let Some((f, k)) = family {
                    if !self.types.contains_key(f) {
                        self.types.insert(f.to_string(), k);
                    }
                }
                let mut labels =
                    joined_labels(x.labels.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
                if let Some(i) = instance {
                    labels = with_label(labels, "instance", i);
                }
                samples.push(MetricSample {
                    name: prometheus::engine_name(&x.name).into_owned(),
                    labels,
                    value: x.value,
                });
            }
            self.scrapes.push(Scrape {
                source: source.to_string(),
                ts: r.ts_ms.map(Ts),
                samples,
                ..Scrape::default()
            });
        }
        if outside > 0 {
            self.notes.push(format!(
                "{source}: {outside} of AIPerf's scrapes were taken outside its phases (the baseline before the run, the flush after it): read, so the window and its rates include the time around the run"
            ));
        }
        t
    }

    /// Reads one file's text: returns (samples, other lines, malformed lines, total lines).
    pub fn read(&mut self, source: &str, stem: &str, text: &str) -> (u64, u64, Vec<Bad>, u64) {
        let mut parsed = 0;
        let mut other = 0;
        let mut bad = Vec::new();
        let mut total = 0;
        let mut current = Scrape {
            source: source.to_string(),
            ts: time_from_name(stem),
            ..Scrape::default()
        };
        let mut marked = false;
        let mut pod: Option<String> = None;
        // each sample's own timestamp, beside `current.samples`
        let mut stamps: Vec<Option<i64>> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            total += 1;
            match prometheus::parse_line(line) {
                Ok(Line::Sample(s)) => {
                    parsed += 1;
                    // `_created` samples stay in the table; no figure reads them
                    stamps.push(s.timestamp_ms);
                    let mut labels = sorted_labels(s.labels);
                    if let Some(pod) = &pod {
                        labels = with_label(labels, "pod", pod);
                    }
                    current.samples.push(MetricSample {
                        name: prometheus::engine_name(s.name).into_owned(),
                        labels,
                        value: s.value,
                    });
                }
                Ok(Line::Type { name, kind }) => {
                    other += 1;
                    self.types
                        .insert(prometheus::engine_name(name).into_owned(), kind);
                }
                Ok(Line::Scrape(ts)) => {
                    other += 1;
                    if marked || !current.samples.is_empty() {
                        self.push(std::mem::take(&mut current), std::mem::take(&mut stamps));
                        current.source = source.to_string();
                    }
                    current.ts = ts;
                    marked = true;
                }
                Ok(Line::Comment) => {
                    other += 1;
                    // llm-d-benchmark's header (`collect_metrics.sh`, `_scrape_pod`):
                    // `# Timestamp: 2026-05-10T00:00:10+0000`, `# Pod: NAME`
                    if let Some(t) = line.strip_prefix("# Timestamp: ") {
                        if let Some((ms, _)) = time::rfc3339(t.trim().as_bytes()) {
                            current.ts = Some(Ts(ms));
                        }
                    } else if let Some(name) = line.strip_prefix("# Pod: ") {
                        // its samples are labelled with it, as Kubernetes discovery labels
                        // what Prometheus stores
                        pod = Some(name.trim().to_string()).filter(|p| !p.is_empty());
                    }
                }
                Ok(Line::Help { .. }) => other += 1,
                Err(why) => bad.push((n as u64 + 1, why)),
            }
        }
        if marked || !current.samples.is_empty() {
            self.push(current, stamps);
        }
        (parsed, other, bad, total)
    }

    /// Adds the scrapes of another read, as if its files were read after these.
    pub fn extend(&mut self, other: Scrapes) {
        self.scrapes.extend(other.scrapes);
        self.types.extend(other.types);
        self.notes.extend(other.notes);
        self.relative.extend(other.relative);
    }

    /// Adds a scrape read, `stamps` its samples' own timestamps. A file of samples of many
    /// timestamps — `promtool tsdb dump`, `/federate`, an API answer, exposition written with
    /// timestamps — is many scrapes, never one holding them all: in time order, a scrape
    /// takes each series once, and the next begins when a series comes again. One target's
    /// scrape (Prometheus stamps its every sample with the scrape's time) is one scrape;
    /// targets scraped at their own offsets are one scrape a round of them, each series at
    /// its own time, so that the increase from the first scrape to the last is every
    /// series' own. A scrape's samples without a timestamp keep its own time (a `# scrape`
    /// line, the file's name), else the newest timestamp among the others.
    fn push(&mut self, mut s: Scrape, stamps: Vec<Option<i64>>) {
        let mut distinct: Vec<i64> = stamps.iter().flatten().copied().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() <= 1 {
            if s.ts.is_none() {
                s.ts = distinct.first().copied().map(Ts);
            }
            self.scrapes.push(s);
            return;
        }
        let mut timed: Vec<(i64, MetricSample)> = Vec::new();
        let mut unstamped = Vec::new();
        for (m, t) in s.samples.drain(..).zip(stamps) {
            match t {
                Some(t) => timed.push((t, m)),
                None => unstamped.push(m),
            }
        }
        self.push_timed(&s.source, timed);
        if !unstamped.is_empty() {
            s.samples = unstamped;
            s.ts = s.ts.or(distinct.last().copied().map(Ts));
            self.scrapes.push(s);
        }
    }

    /// Samples of their own times into scrapes (see [`Scrapes::push`]).
    fn push_timed(&mut self, source: &str, mut timed: Vec<(i64, MetricSample)>) {
        timed.sort_by_key(|x| x.0);
        let mut current: Vec<MetricSample> = Vec::new();
        let mut seen: std::collections::HashSet<(String, String)> = Default::default();
        let mut last = None;
        for (t, m) in timed {
            let key = (m.name.clone(), m.labels.clone());
            if seen.contains(&key) {
                self.scrapes.push(Scrape {
                    source: source.to_string(),
                    ts: last.map(Ts),
                    samples: std::mem::take(&mut current),
                    ..Scrape::default()
                });
                seen.clear();
            }
            seen.insert(key);
            current.push(m);
            last = Some(t);
        }
        if !current.is_empty() {
            self.scrapes.push(Scrape {
                source: source.to_string(),
                ts: last.map(Ts),
                samples: current,
                ..Scrape::default()
            });
        }
    }

    /// Puts scrapes in time order and places each in time ([`Scrape::placed`]): a scrape
    /// without a time goes `interval` after the one before it (or stays unplaced without
    /// `--interval`). Its times as read are kept: placing again, after more scrapes were
    /// added, gives what placing them all at once gives.
    pub fn place(&mut self, interval_s: Option<f64>) {
        self.drop_relative_twins();
        if self.scrapes.iter().all(|s| s.ts.is_some()) {
            self.scrapes.sort_by_key(|s| s.ts);
            for s in &mut self.scrapes {
                s.placed = s.ts;
            }
            return;
        }
        let step = interval_s.map(|s| (s * 1000.0).round() as i64);
        let mut prev: Option<i64> = None;
        for s in &mut self.scrapes {
            s.placed = match (s.ts, prev, step) {
                (Some(t), _, _) => Some(t),
                (None, Some(p), Some(step)) => Some(Ts(p + step)),
                (None, None, Some(_)) => Some(Ts(0)),
                (None, _, None) => None,
            };
            if step.is_some() {
                prev = s.placed.map(|t| t.0);
            }
        }
    }

    /// Leaves out a relative source's scrapes ([`Scrapes::relative`]) when raw scrapes of
    /// one of its servers (`instance`) fall within its window: AIPerf's Parquet beside the
    /// JSONL of the same run is read once, from the JSONL.
    fn drop_relative_twins(&mut self) {
        fn instance(s: &Scrape) -> Option<&str> {
            let l = &s.samples.first()?.labels;
            l.split(',').find_map(|kv| kv.strip_prefix("instance="))
        }
        for r in std::mem::take(&mut self.relative) {
            let mine: Vec<&Scrape> = self.scrapes.iter().filter(|s| s.source == r).collect();
            let times = mine.iter().filter_map(|s| s.ts.map(|t| t.0));
            let (Some(lo), Some(hi)) = (times.clone().min(), times.max()) else {
                continue;
            };
            let servers: Vec<&str> = mine.iter().filter_map(|s| instance(s)).collect();
            let twin = self.scrapes.iter().find(|s| {
                s.source != r
                    && s.ts.is_some_and(|t| (lo..=hi).contains(&t.0))
                    && instance(s).is_some_and(|i| servers.contains(&i))
            });
            match twin {
                Some(twin) => {
                    let note = format!(
                        "{r}: the same server's scrapes as {} (AIPerf's Parquet beside its raw JSONL): read once, from the raw",
                        twin.source
                    );
                    self.scrapes.retain(|s| s.source != r);
                    self.notes.push(note);
                }
                None => self.notes.push(format!(
                    "{r}: AIPerf's Parquet holds its profiling window's counters as increases from the window's start: rates are read, counters' totals since the server started are not"
                )),
            }
        }
    }

    /// The declared type of a sample's family.
    pub fn kind(&self, name: &str) -> Option<MetricType> {
        let types = |n: &str| self.types.get(n).copied();
        let (fam, _) = family(name, &types);
        types(fam)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression (issue 53): exposition with per-sample timestamps (`/federate`, a
    /// `promtool tsdb dump`) was one scrape of every sample, its counters' last value taken
    /// for the whole and NaN rates; each timestamp is now its scrape.
    #[test]
    fn each_timestamp_is_a_scrape() {
        let text = "# TYPE vllm:generation_tokens counter\n\
            vllm:generation_tokens_total{engine=\"0\"} 100 1778371200000\n\
            vllm:generation_tokens_total{engine=\"0\"} 200 1778371201000\n\
            {__name__=\"vllm_generation_tokens_total\", engine=\"0\"} 300 1778371202000\n";
        let mut s = Scrapes::default();
        let (parsed, _, bad, _) = s.read("x", "x", text);
        assert_eq!((parsed, bad.len()), (3, 0));
        let times: Vec<i64> = s.scrapes.iter().map(|x| x.ts.unwrap().0).collect();
        assert_eq!(
            times,
            [1_778_371_200_000, 1_778_371_201_000, 1_778_371_202_000]
        );
        assert_eq!(s.scrapes[2].samples[0].name, "vllm:generation_tokens_total");
        assert_eq!(s.scrapes[2].samples[0].labels, "engine=0");
        assert!(s.scrapes.iter().all(|x| x.samples.len() == 1));
    }

    /// Two targets scraped at their own offsets: one scrape a round, each series once, so
    /// that the increase from the first scrape to the last is each target's own.
    #[test]
    fn targets_of_their_own_offsets_are_one_scrape_a_round() {
        let text = "a_total{instance=\"x\"} 0 1000\na_total{instance=\"y\"} 0 4000\n\
            a_total{instance=\"x\"} 10 16000\na_total{instance=\"y\"} 20 19000\n\
            a_total{instance=\"x\"} 20 31000\na_total{instance=\"y\"} 40 34000\n";
        let mut s = Scrapes::default();
        s.read("x", "x", text);
        let rounds: Vec<(i64, usize)> = s
            .scrapes
            .iter()
            .map(|x| (x.ts.unwrap().0, x.samples.len()))
            .collect();
        assert_eq!(rounds, [(4000, 2), (19000, 2), (34000, 2)]);
    }

    /// A saved API response: its samples by time, a derived series said so, an error
    /// response refused with Prometheus' words.
    #[test]
    fn api_responses() {
        let m = br#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm_generation_tokens_total","engine":"0"},"values":[[1778371200,"1"],[1778371201,"2"]]},{"metric":{"engine":"0"},"values":[[1778371200,"9"]]}]}}"#;
        let mut s = Scrapes::default();
        let t = s.read_api("a.json", m).unwrap();
        assert_eq!((t.total, t.parsed, t.other), (3, 2, 1));
        assert_eq!(s.scrapes.len(), 2);
        assert!(
            s.notes[0].contains("1 series without a metric name"),
            "{:?}",
            s.notes
        );
        let e = br#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        let err = s.read_api("e.json", e).unwrap_err().to_string();
        assert!(err.contains("bad_data: parse error"), "{err}");
    }

    #[test]
    fn names_give_times() {
        assert_eq!(
            time_from_name("metrics-20260510T000010"),
            prometheus::iso("2026-05-10T00:00:10")
        );
        assert_eq!(
            time_from_name("scrape_2026-05-10T00:00:10"),
            prometheus::iso("2026-05-10T00:00:10")
        );
        assert_eq!(time_from_name("m_1778371210"), Some(Ts(1_778_371_210_000)));
        assert_eq!(time_from_name("scrape-003"), None);
    }
}
