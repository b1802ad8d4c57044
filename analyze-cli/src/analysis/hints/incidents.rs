//! Hints from the server logs' incident census: `crash` and `client_aborts`, and the
//! census's word on the completions' `failure_spike`.

use super::vocabulary::{evidence, fig, Evidence, Hint, Inputs, Severity};
use crate::analysis::incidents::Incident;
use tokstat_parsers::record::EventKind;

/// Abort lines from this many on raise `client_aborts`.
pub const ABORTS_MANY: u64 = 10;

/// The hints of the census: `crash` when something broke (HTTP 5xx responses aside),
/// `client_aborts` when many requests were aborted.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let incidents = i.incidents;
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
                level: super::vocabulary::Level::Firm,
                instance: Some(first.instance.clone()),
                strength: None,
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
