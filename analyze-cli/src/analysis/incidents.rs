//! The run's incident census: every kind of event line that says something went wrong or
//! was lost, with its count, first and last time, the instances it came from and the first
//! sample lines. Kinds that did not occur are listed too: "no crashes" is a finding.

use crate::analysis::hints::{evidence, fig, Evidence, Hint, Severity};
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

/// Abort lines from this many on raise `client_aborts`.
pub const ABORTS_MANY: u64 = 10;

/// The hints of the census: `crash` when something broke (HTTP 5xx responses aside),
/// `client_aborts` when many requests were aborted.
pub fn hints(incidents: &[Incident]) -> Vec<Hint> {
    let mut out = Vec::new();
    let get = |k: EventKind| incidents.iter().find(|i| i.kind == k);
    // (HTTP 5xx responses alone are no crash: their bursts are another hint's)
    let broke: Vec<&Incident> = incidents
        .iter()
        .filter(|i| i.broke && i.count > 0 && i.kind != EventKind::Http5xx)
        .collect();
    if let Some(first) = broke
        .iter()
        .flat_map(|i| i.samples.first())
        .min_by(|a, b| (a.ts.is_none(), a.ts).cmp(&(b.ts.is_none(), b.ts)))
    {
        let count = |k: EventKind| get(k).map_or(0, |i| i.count);
        let fatal = broke.iter().any(|i| i.kind.fatal());
        let listed: Vec<String> = broke
            .iter()
            .map(|i| format!("{} {}", i.count, i.kind.as_str()))
            .collect();
        let mut action = String::from("Read the first traceback at the line given: its first exception is the cause, the rest follow from it.");
        if count(EventKind::CudaOom) > 0 {
            action.push_str(" CUDA ran out of memory: lower --mem-fraction-static (SGLang) or --gpu-memory-utilization (vLLM), or the batch (max_running_requests / max_num_seqs, the chunked-prefill size).");
        }
        if count(EventKind::Distributed) > 0 {
            action.push_str(" NCCL failed or timed out: check the interconnect and the other ranks' logs (NCCL_DEBUG=INFO); raise the collective timeout only once the cause is known.");
        }
        let from = broke.iter().filter_map(|i| i.first_ts).min();
        let to = broke.iter().filter_map(|i| i.last_ts).max();
        out.push(Hint {
            id: "crash",
            severity: if fatal {
                Severity::Critical
            } else {
                Severity::Warning
            },
            evidence: Evidence {
                instance: Some(first.instance.clone()),
                ..evidence(
                    format!(
                        "{}; first at {}:{}: {}",
                        listed.join(", "),
                        first.source,
                        first.line,
                        first.text
                    ),
                    from.zip(to).map(|(a, b)| (a.0, b.0)),
                    &broke
                        .iter()
                        .map(|i| (i.kind.as_str(), fig(i.count)))
                        .collect::<Vec<_>>(),
                )
            },
            action,
        });
    }
    if let Some(a) = get(EventKind::Abort).filter(|a| a.count >= ABORTS_MANY) {
        out.push(Hint {
            id: "client_aborts",
            severity: Severity::Warning,
            evidence: evidence(
                format!("{} requests aborted or their clients gone", a.count),
                a.first_ts.zip(a.last_ts).map(|(x, y)| (x.0, y.0)),
                &[("aborts", fig(a.count))],
            ),
            action: "Clients gave up on requests: raise their timeouts, or lower latency (fewer concurrent requests per instance, a shorter max_tokens); aborted work is lost GPU time.".into(),
        });
    }
    out
}

/// Ties the completions' `failure_spike` hint to the server logs' census: when the logs
/// show something broke or HTTP 5xx responses, the spike's evidence says what and when
/// (completion records carry no server time, so the two are put side by side, not matched).
pub fn explain_failures(hints: &mut [Hint], incidents: &[Incident]) {
    let shown: Vec<String> = incidents
        .iter()
        .filter(|i| i.broke && i.count > 0 && !matches!(i.kind, EventKind::Traceback))
        .map(|i| {
            let when = match (i.first_ts, i.last_ts) {
                (Some(a), Some(b)) if a == b => format!(" at {a}"),
                (Some(a), Some(b)) => format!(" from {a} to {b}"),
                _ => String::new(),
            };
            format!("{} {}{when}", i.count, i.kind.as_str())
        })
        .collect();
    if shown.is_empty() {
        return;
    }
    for h in hints.iter_mut().filter(|h| h.id == "failure_spike") {
        h.evidence.text.push_str(&format!(
            "; the server logs show {} (see the census)",
            shown.join(", ")
        ));
    }
}
