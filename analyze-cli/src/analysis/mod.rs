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
