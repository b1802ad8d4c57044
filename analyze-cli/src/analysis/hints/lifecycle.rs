//! Hints from how instances spent their time: `slow_startup`, `down_time` and
//! `idle_capacity` (idle is up with nothing running: the time down after a crash is not).

use super::vocabulary::{evidence, fig, Evidence, Hint, Inputs, Severity};
use crate::analysis::lifecycle::spell;

/// A start-up longer than this raises `slow_startup`, ms.
pub const SLOW_STARTUP_MS: i64 = 10 * 60_000;
/// Idle instance time above this share of the time held, and longer than
/// [`IDLE_MIN_MS`], raises `idle_capacity`.
pub const IDLE_SHARE: f64 = 0.25;
pub const IDLE_MIN_MS: i64 = 10 * 60_000;
/// Time down after crashes above this share of the time held, and longer than
/// [`DOWN_MIN_MS`], raises `down_time`.
pub const DOWN_SHARE: f64 = 0.05;
pub const DOWN_MIN_MS: i64 = 60_000;

/// The hints of the lifecycle: `slow_startup`, `down_time` and `idle_capacity`.
pub fn hints(i: &Inputs<'_>) -> Vec<Hint> {
    let lives = &i.server.lifecycle;
    let mut out = Vec::new();
    let slow: Vec<(&str, i64)> = lives
        .iter()
        .filter(|(_, l)| l.starts > 0)
        .map(|(n, l)| (n.as_str(), l.starting_ms / l.starts as i64))
        .filter(|(_, ms)| *ms > SLOW_STARTUP_MS)
        .collect();
    if let Some(&(name, worst)) = slow.iter().max_by_key(|s| s.1) {
        let total: i64 = lives.iter().map(|(_, l)| l.starting_ms).sum();
        out.push(Hint {
            id: "slow_startup",
            severity: Severity::Warning,
            evidence: Evidence {
                level: super::vocabulary::Level::Firm,
                instance: Some(name.to_string()),
                strength: None,
                ..evidence(
                    format!(
                        "a start-up took {} on {name} ({} of {} instance(s) over {}); {} of instance time went to starting",
                        spell(worst),
                        slow.len(),
                        lives.len(),
                        spell(SLOW_STARTUP_MS),
                        spell(total)
                    ),
                    None,
                    &[("startup_s", fig(worst as f64 / 1000.0)), ("starting_s", fig(total as f64 / 1000.0)), ("instances", fig(slow.len()))],
                )
            },
            action: "Start-up is weight loading, KV-cache allocation and graph capture: keep weights on local NVMe (or a warm page cache), reuse compile caches, capture fewer batch sizes, or keep servers up between jobs.".into(),
        });
    }
    let held: i64 = lives.iter().map(|(_, l)| l.held_ms()).sum();
    let down: i64 = lives.iter().map(|(_, l)| l.down_ms).sum();
    if held > 0 && down > DOWN_MIN_MS && down as f64 > DOWN_SHARE * held as f64 {
        let crashed = lives.iter().filter(|(_, l)| l.down_ms > 0).count();
        out.push(Hint {
            id: "down_time",
            severity: Severity::Warning,
            evidence: evidence(
                format!(
                    "{crashed} of {} instance(s) were down {} after crashes, until the next start-up ({:.0}% of the {} they were held)",
                    lives.len(),
                    spell(down),
                    100.0 * down as f64 / held as f64,
                    spell(held)
                ),
                None,
                &[("down_s", fig(down as f64 / 1000.0)), ("held_s", fig(held as f64 / 1000.0)), ("down_share", fig(down as f64 / held as f64))],
            ),
            action: "The GPUs were held while no server ran: restart crashed servers automatically (a supervisor or the orchestrator's restart policy), and see the crash hint for the cause.".into(),
        });
    }
    let idle: i64 = lives.iter().map(|(_, l)| l.idle_ms).sum();
    if held > 0 && idle > IDLE_MIN_MS && idle as f64 > IDLE_SHARE * held as f64 {
        out.push(Hint {
            id: "idle_capacity",
            severity: Severity::Warning,
            evidence: evidence(
                format!(
                    "{} instance(s) spent {} idle, up with nothing running ({:.0}% of the {} they were held)",
                    lives.len(),
                    spell(idle),
                    100.0 * idle as f64 / held as f64,
                    spell(held)
                ),
                None,
                &[("idle_s", fig(idle as f64 / 1000.0)), ("held_s", fig(held as f64 / 1000.0)), ("idle_share", fig(idle as f64 / held as f64))],
            ),
            action: "GPUs waited for work: send it sooner or to fewer instances, and release instances between jobs.".into(),
        });
    }
    out
}
