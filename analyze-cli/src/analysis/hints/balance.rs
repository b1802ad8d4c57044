//! `instance_imbalance`: an instance whose steady throughput is away from its peers';
//! `rank_imbalance`: an engine (data-parallel rank) of the scrapes generating more or less
//! than its peers.

use super::steady::MIN_LINES;
use super::vocabulary::{evidence, fig, pct, Figure, Hint, Inputs, Level, Off, Severity, Strength};
use crate::analysis::server::IMBALANCE;

/// Generated tokens (over the window, else since start) a rank needs for its share to say
/// something: below this, a rank may simply not have started yet.
const RANK_MIN_TOKENS: f64 = 10_000.0;

/// The instances beyond [`IMBALANCE`] of the median instance's steady rate.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out = Vec::new();
    let s = i.server;
    // instance_imbalance, on steady windows holding the lines each instance needs (the
    // steady family says `too_little_data` of the others)
    let lines: u64 = s.segments.iter().map(|g| g.window_lines).sum();
    let span_s: f64 = s
        .segments
        .iter()
        .filter_map(|g| s.steady_span(g))
        .map(|(a, b)| (b - a) as f64 / 1000.0)
        .sum();
    let enough = lines >= MIN_LINES * s.instances.len() as u64;
    // beyond the threshold over the rate's whole interval: firm; over part of it:
    // borderline (the point value may be on either side)
    // (against a median of two instances or more that generated)
    let compared = s.instances.iter().filter(|r| r.gen_tps > 0.0).count() >= 2;
    let off: Vec<_> = s
        .instances
        .iter()
        .filter(|r| compared && r.gen_tps > 0.0 && r.beyond_imbalance().is_some())
        .collect();
    let firm = off.iter().any(|r| r.beyond_imbalance() == Some(true));
    if !off.is_empty() && enough {
        // (a firm hint names the instances beyond at their point value)
        let off: Vec<_> = if firm {
            off.iter().copied().filter(|r| r.imbalanced).collect()
        } else {
            off.clone()
        };
        let worst = off.iter().map(|r| r.vs_median.abs()).fold(0.0, f64::max);
        let names: Vec<String> = off
            .iter()
            .map(|r| format!("{} {:+.0}%", r.name, r.vs_median * 100.0))
            .collect();
        out.push(Hint {
            id: "instance_imbalance",
            severity: Severity::Warning,
            evidence: evidence(
                format!("steady throughput more than {} from the median instance: {}", pct(IMBALANCE), names.join(", ")),
                None,
                &[("instances", Figure::Instances(off.iter().map(|r| Off { instance: r.name.clone(), gen_tps: r.gen_tps, vs_median: r.vs_median }).collect()))],
            ),
            action: "One instance is slower than its peers: check its GPU (clocks, thermals, ECC errors, PCIe/NVLink), its placement, and whether the load balancer sends it the same work.".into(),
        });
        if let Some(h) = out.last_mut() {
            if !firm {
                h.evidence.level = Level::Borderline;
                let spans: Vec<String> = off
                    .iter()
                    .map(|r| {
                        let (lo, hi) = r.vs_median_interval();
                        format!("{} {:+.0}% to {:+.0}%", r.name, lo * 100.0, hi * 100.0)
                    })
                    .collect();
                h.evidence.text.push_str(&format!(
                    "; borderline: the steady rates' 95% intervals hold {} ({})",
                    pct(IMBALANCE),
                    spans.join(", ")
                ));
            }
            h.evidence.strength = Some(Strength {
                span_s: Some(span_s),
                lines,
                of: "stats lines",
                effect: Some(worst),
                threshold: Some(IMBALANCE),
                fires: "above",
            });
        }
    }
    if !off.is_empty() && !enough {
        out.push(Hint {
            id: "too_little_data",
            severity: Severity::Info,
            evidence: evidence(
                format!("the steady windows hold {lines} stats line(s) for {} instances: too little to judge their balance (instance_imbalance needs {MIN_LINES} lines an instance)", s.instances.len()),
                None,
                &[("lines", fig(lines)), ("min_lines", fig(MIN_LINES * s.instances.len() as u64))],
            ),
            action: "Give the whole logs (or longer excerpts): a few stats lines an instance cannot tell a slow GPU from noise.".into(),
        });
    }
    if let Some(h) = ranks(i) {
        out.push(h);
    }
    out
}

/// The ranks of the scrapes beyond [`IMBALANCE`] of the median rank's generated tokens.
fn ranks(i: &Inputs<'_>) -> Option<Hint> {
    let m = i.metrics?;
    let least = m
        .ranks
        .iter()
        .filter_map(|r| r.generation_tokens)
        .fold(f64::INFINITY, f64::min);
    let all: f64 = m.ranks.iter().filter_map(|r| r.generation_tokens).sum();
    if m.ranks.len() < 2 || all < RANK_MIN_TOKENS * m.ranks.len() as f64 {
        return None;
    }
    let off: Vec<Off> = m
        .ranks
        .iter()
        .filter_map(|r| {
            let v = r.vs_median?;
            (v.abs() > IMBALANCE).then(|| Off {
                instance: r.rank.clone(),
                gen_tps: r.gen_tps.unwrap_or(f64::NAN),
                vs_median: v,
            })
        })
        .collect();
    if off.is_empty() {
        return None;
    }
    let names: Vec<String> = off
        .iter()
        .map(|o| format!("{} {:+.0}%", o.instance, o.vs_median * 100.0))
        .collect();
    Some(Hint {
        id: "rank_imbalance",
        severity: Severity::Warning,
        evidence: evidence(
            format!(
                "generated tokens more than {} from the median engine's ({} engines in the scrapes): {}",
                pct(IMBALANCE),
                m.ranks.len(),
                names.join(", ")
            ),
            m.from.zip(m.to).map(|(a, b)| (a.0, b.0)),
            &[
                ("ranks", Figure::Instances(off)),
                ("engines", fig(m.ranks.len() as u64)),
                ("least_tokens", fig(least)),
            ],
        ),
        action: "One data-parallel engine gets less (or more) work than the others: check the router's policy (round robin against load-aware), requests pinned to one rank (sessions, prefix-cache affinity), and that rank's GPUs.".into(),
    })
}
