//! Hints from the KV cache running out over the whole run: `retractions` (SGLang) and
//! `preemptions` (vLLM).

use super::vocabulary::{evidence, fig, Hint, Inputs, Severity};
use crate::ingest::instance::Instance;
use std::collections::BTreeMap;

/// Retracted requests or preemptions from which their hint is critical.
pub const PRESSURE_CRITICAL: u64 = 10;

/// The run's retractions and preemptions.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out = Vec::new();
    // event counts over the whole run
    let (retr, preempt) = events_in(i.instances, i64::MIN, i64::MAX);
    if retr > 0 {
        out.push(Hint {
            id: "retractions",
            severity: if retr >= PRESSURE_CRITICAL { Severity::Critical } else { Severity::Warning },
            evidence: evidence(format!("{retr} requests retracted (KV cache full; their decoding is redone)"), None, &[("retracted_requests", fig(retr))]),
            action: "Retracted requests are decoded again: lower max_running_requests or --schedule-conservativeness, or give the KV cache more memory.".into(),
        });
    }
    if preempt > 0 {
        out.push(Hint {
            id: "preemptions",
            severity: if preempt >= PRESSURE_CRITICAL { Severity::Critical } else { Severity::Warning },
            evidence: evidence(format!("{preempt} preemptions (KV cache full; requests recomputed or swapped)"), None, &[("preemptions", fig(preempt))]),
            action: "Preempted requests are recomputed: lower max_num_seqs, raise --gpu-memory-utilization, or add tensor parallelism.".into(),
        });
    }
    out
}

/// Preemptions vLLM V1 states on its stats lines (`Preemptions: N`), beyond those of
/// placed preemption lines: counted over the run, not placed in time.
pub fn unplaced_preemptions(instances: &BTreeMap<String, Instance>) -> u64 {
    use tokstat_parsers::record::EventKind;
    instances
        .values()
        .map(|i| {
            let placed = i
                .digest
                .events()
                .iter()
                .filter(|e| e.kind == EventKind::Preemption)
                .count() as u64;
            i.preemptions.saturating_sub(placed)
        })
        .sum()
}

/// Retracted requests and preemptions of all instances between `t0` and `t1`.
pub fn events_in(instances: &BTreeMap<String, Instance>, t0: i64, t1: i64) -> (u64, u64) {
    use tokstat_parsers::record::EventKind;
    let mut r = (0, 0);
    for i in instances.values() {
        let events = i.digest.events();
        for e in events.iter().filter(|e| e.ts >= t0 && e.ts < t1) {
            match e.kind {
                EventKind::Retraction => r.0 += e.count,
                EventKind::Preemption => r.1 += 1,
                _ => {}
            }
        }
    }
    // vLLM V1 counts preemptions on its stats lines
    if t0 == i64::MIN {
        r.1 += unplaced_preemptions(instances);
    }
    r
}
