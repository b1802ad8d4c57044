//! The CLI crate's integration tests, one module per subject, in one test binary. `memory.rs`
//! is a binary of its own: it installs a counting global allocator, which would count the
//! other tests' allocations too.

mod binary;
mod layers;
mod stdin;
