//! The end-to-end tests of the tokstat CLI over fixtures, one module per subject, in one
//! test binary (linked once: each binary links polars).

mod a_a;
mod accounting;
mod bad_input;
mod cli;
mod compare;
mod completions;
mod corpus;
mod envelopes;
mod export;
mod hints;
mod incidents;
mod json_keys;
mod loadgen;
mod metrics;
mod pulse;
mod server;
mod simulator;
mod snapshots;
mod steady;
mod suites;
