//! The simulator as a library: `main.rs` is its command line, and the end-to-end tests
//! generate runs of known truth with it.

pub mod gen_completions;
pub mod scenario;
pub mod sim;
