//! Analyses over rows: pure functions from data to results, rendered elsewhere.

pub mod align;
pub mod bench;
pub mod completions;
pub mod curve;
pub mod hints;
pub mod incidents;
pub mod intervals;
pub mod lifecycle;
pub mod metrics;
pub mod one_clock;
pub mod quantile;
pub mod segments;
pub mod server;
pub mod server_side;
pub mod settle;
pub mod statistics;
pub mod steady;
pub mod sweep;
pub mod timeline;
pub mod trend;

/// `Some(v)` for a finite value: NaN marks "absent" in the compact rows.
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

/// Serialises a stamp as ISO 8601 text (`2026-05-10T00:00:10`), as every time in a report.
pub fn iso<S: serde::Serializer>(t: &tokstat_parsers::stamp::Ts, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

/// [`iso`] for a stamp that may be absent (`null`).
pub fn iso_opt<S: serde::Serializer>(
    t: &Option<tokstat_parsers::stamp::Ts>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.collect_str(t),
        None => s.serialize_none(),
    }
}
