//! The reference grammars: the stats-line body and the completion record written as nom
//! combinators, rule by rule.
//!
//! The fast paths ([`crate::kv::pairs`] for stats bodies, [`crate::json::Scanner`] for
//! records) are hand-written loops, with SIMD prefilters in front of them. They stay because
//! they are faster on the bench files, measured against these grammars by the criterion
//! benches `grammar/*` (the table is in `docs/formats.md`, "Why the hot parsers are
//! hand-written"). These grammars are what the fast paths must agree with: property tests
//! feed both the same generated bodies and records, and every stats line of the fixtures,
//! and require the same pairs, the same verdicts.

pub mod json;
pub mod stats;
