//! Analyses over rows: pure functions from data to results, rendered elsewhere.

pub mod bench;
pub mod completions;
pub mod curve;
pub mod hints;
pub mod metrics;
pub mod quantile;
pub mod segments;
pub mod server;
pub mod steady;
pub mod timeline;

/// `Some(v)` for a finite value: NaN marks "absent" in the compact rows.
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
