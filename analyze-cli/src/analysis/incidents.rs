//! The run's incident census: every kind of event line that says something went wrong or
//! was lost, with its count, first and last time, the instances it came from and the first
//! sample lines. Kinds that did not occur are listed too: "no crashes" is a finding.

use crate::analysis::iso_opt;
use crate::ingest::census::Census;
use serde::Serialize;
use std::collections::BTreeMap;
use tokstat_parsers::record::EventKind;
use tokstat_parsers::stamp::Ts;

/// Sample lines listed per kind for the run.
pub const RUN_SAMPLES: usize = 2;

/// One kind of incident over the run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Incident {
    /// The `events` table's kind.
    #[serde(serialize_with = "kind_name")]
    pub kind: EventKind,
    /// Whether it says something broke (a crash, a traceback, CUDA out of memory, an NCCL
    /// error, a failed health check or KV transfer), rather than pressure or lost requests.
    pub broke: bool,
    pub count: u64,
    #[serde(serialize_with = "iso_opt")]
    pub first_ts: Option<Ts>,
    #[serde(serialize_with = "iso_opt")]
    pub last_ts: Option<Ts>,
    /// Lines per instance, for the instances with any.
    pub by_instance: BTreeMap<String, u64>,
    /// The first lines, earliest first.
    pub samples: Vec<IncidentSample>,
}

fn kind_name<S: serde::Serializer>(k: &EventKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(k.as_str())
}

/// A sample line of an incident.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IncidentSample {
    pub instance: String,
    pub source: String,
    pub line: u64,
    #[serde(serialize_with = "iso_opt")]
    pub ts: Option<Ts>,
    pub text: String,
}

/// The kinds the census lists: every event kind but the start-up milestones.
pub fn kinds() -> impl Iterator<Item = EventKind> {
    EventKind::ALL.into_iter().filter(|k| !k.milestone())
}

/// The census of the run from its instances' (name, census).
pub fn census<'a>(instances: impl Iterator<Item = (&'a str, &'a Census)> + Clone) -> Vec<Incident> {
    kinds()
        .map(|kind| {
            let mut inc = Incident {
                kind,
                broke: kind.broke(),
                count: 0,
                first_ts: None,
                last_ts: None,
                by_instance: BTreeMap::new(),
                samples: Vec::new(),
            };
            let mut samples = Vec::new();
            for (name, c) in instances.clone() {
                let o = c.get(kind);
                if o.count == 0 {
                    continue;
                }
                inc.count += o.count;
                inc.by_instance.insert(name.to_string(), o.count);
                inc.first_ts = match (inc.first_ts, o.first) {
                    (Some(a), Some(b)) => Some(Ts(a.0.min(b))),
                    (a, b) => a.or(b.map(Ts)),
                };
                inc.last_ts = inc.last_ts.max(o.last.map(Ts));
                samples.extend(o.samples.iter().map(|s| IncidentSample {
                    instance: name.to_string(),
                    source: s.source.clone(),
                    line: s.line,
                    ts: s.ts.map(Ts),
                    text: s.text.clone(),
                }));
            }
            // (unstamped lines last; then by instance and line, for a stable order)
            samples.sort_by(|a, b| {
                (a.ts.is_none(), a.ts, &a.instance, a.line).cmp(&(
                    b.ts.is_none(),
                    b.ts,
                    &b.instance,
                    b.line,
                ))
            });
            samples.truncate(RUN_SAMPLES);
            inc.samples = samples;
            inc
        })
        .collect()
}

/// Whether the census says something broke.
pub fn anything_broke(incidents: &[Incident]) -> bool {
    incidents.iter().any(|i| i.broke && i.count > 0)
}
