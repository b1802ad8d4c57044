//! Analyses over rows: pure functions from data to results, rendered elsewhere.

pub mod bench;
pub mod completions;
pub mod quantile;
