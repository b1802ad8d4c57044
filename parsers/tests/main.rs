//! The parsers' integration tests, one module per subject, in one test binary.

mod completions;
mod fuzz_corpus;
mod json_suite;
mod loadgen;
mod prometheus;
mod props;
mod shrink;
mod variants;
