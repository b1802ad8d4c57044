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
mod completions;
mod incidents;
mod lifecycle;
mod pressure;
mod steady;

mod vocabulary;

pub use vocabulary::{evidence, fig, Evidence, Figure, Hint, Inputs, Off, Severity, Strength};

/// A family of rules: the hints it raises.
type Rule = fn(&Inputs<'_>) -> Vec<Hint>;

/// Every family of rules, in the order their hints are listed before the sort by severity.
pub const FAMILIES: [(&str, Rule); 7] = [
    ("steady windows", steady::hints),
    ("KV-cache pressure", pressure::hints),
    ("instance balance", balance::hints),
    ("completions", completions::hints),
    ("lifecycle", lifecycle::hints),
    ("incidents", incidents::hints),
    ("bursts", bursts::hints),
];

/// All hints of every family, most severe first (in [`FAMILIES`] order within a severity).
pub fn all(i: &Inputs<'_>) -> Vec<Hint> {
    let mut out: Vec<Hint> = FAMILIES.iter().flat_map(|(_, rule)| rule(i)).collect();
    incidents::explain_failures(&mut out, i.incidents);
    out.sort_by_key(|h| std::cmp::Reverse(h.severity));
    out
}
