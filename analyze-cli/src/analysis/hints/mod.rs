//! Bottleneck hints: what holds a run back, each with the numbers that show it and what to
//! do about it. Their vocabulary ([`Hint`], [`Evidence`], [`Figure`], [`Inputs`]) is
//! [`vocabulary`]; this module is the list of rule families ([`FAMILIES`]); each family is a
//! file beside it, with its
//! thresholds as constants. A new hint goes into the family whose evidence it reads, or
//! into a new file and one line of [`FAMILIES`].
//!
//! Server hints look at each segment's steady window (ramp-up and drain tell nothing about
//! the bottleneck); completion hints look at the whole job in record order.

mod balance;
mod bursts;
mod client_latency;
mod completions;
mod incidents;
mod lifecycle;
mod pressure;
mod steady;

mod vocabulary;

pub use vocabulary::{
    evidence, fig, Evidence, Figure, Hint, Inputs, Level, Off, Severity, Strength,
};

/// A family of rules: the hints it raises.
type Rule = fn(&Inputs<'_>) -> Vec<Hint>;

/// Every family of rules, in the order their hints are listed before the sort by severity.
pub const FAMILIES: [(&str, Rule); 8] = [
    ("steady windows", steady::hints),
    ("KV-cache pressure", pressure::hints),
    ("instance balance", balance::hints),
    ("completions", completions::hints),
    ("lifecycle", lifecycle::hints),
    ("incidents", incidents::hints),
    ("bursts", bursts::hints),
    ("client latency", client_latency::hints),
];

/// All hints of every family, most severe first (in [`FAMILIES`] order within a severity).
pub fn all(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out: Vec<Hint> = FAMILIES.iter().flat_map(|(_, rule)| rule(i)).collect();
    incidents::explain_failures(&mut out, i.incidents);
    // what the run's evidence is counted in: its stats lines, else (scrapes alone) its
    // scrapes
    let lines: u64 = i.instances.values().map(|x| x.stat_lines).sum();
    let (lines, of) = match i.metrics {
        Some(m) if lines == 0 => (m.scrapes as u64, "scrapes"),
        _ => (lines, "stats lines"),
    };
    for h in &mut out {
        if h.evidence.strength.is_none() {
            h.evidence.strength = over_the_run(h, lines, of);
        }
    }
    // firm hints first, most severe first; the borderline ones after them
    out.sort_by_key(|h| (h.evidence.level, std::cmp::Reverse(h.severity)));
    out
}

/// The strength of a hint whose family reads the whole run (events, the lifecycle, bursts,
/// the scrapes' ranks) rather than a window: the run's stats lines behind it, and its effect
/// against the family's threshold, from its figures.
fn over_the_run(h: &Hint, lines: u64, of: &'static str) -> Option<Strength> {
    let f = |k: &str| h.evidence.figures.get(k).and_then(Figure::number);
    let span = match (h.evidence.from, h.evidence.to) {
        (Some(a), Some(b)) => Some((b.0 - a.0) as f64 / 1000.0),
        _ => None,
    };
    let (effect, threshold, span_s) = match h.id {
        "crash" => (f("crash"), 0.0, span),
        "retractions" => (f("retracted_requests"), 0.0, span),
        "preemptions" => (f("preemptions"), 0.0, span),
        "slow_startup" => (
            f("startup_s"),
            lifecycle::SLOW_STARTUP_MS as f64 / 1000.0,
            span,
        ),
        "down_time" => (f("down_share"), lifecycle::DOWN_SHARE, f("held_s")),
        "idle_capacity" => (f("idle_share"), lifecycle::IDLE_SHARE, f("held_s")),
        "client_aborts" => (f("aborts"), incidents::ABORTS_MANY as f64 - 1.0, span),
        // (a burst's rate per minute against the rate it must pass: 4× the rest's)
        "error_burst" => (
            f("per_min"),
            bursts::HOT_FACTOR * f("elsewhere_per_min").unwrap_or(0.0),
            span,
        ),
        "rank_imbalance" => (
            match &h.evidence.figures.get("ranks") {
                Some(Figure::Instances(v)) => v.iter().map(|o| o.vs_median.abs()).reduce(f64::max),
                _ => None,
            },
            crate::analysis::server::IMBALANCE,
            span,
        ),
        _ => return None,
    };
    Some(Strength {
        span_s,
        lines,
        of,
        effect,
        threshold: Some(threshold),
        fires: "above",
    })
}
