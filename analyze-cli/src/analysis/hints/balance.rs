//! `instance_imbalance`: an instance whose steady throughput is away from its peers'.

use super::vocabulary::{evidence, pct, Figure, Hint, Inputs, Off, Severity};
use crate::analysis::server::IMBALANCE;

/// The instances beyond [`IMBALANCE`] of the median instance's steady rate.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out = Vec::new();
    let s = i.server;
    // instance_imbalance
    let off: Vec<_> = s.instances.iter().filter(|r| r.imbalanced).collect();
    if !off.is_empty() {
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
    }
    out
}
