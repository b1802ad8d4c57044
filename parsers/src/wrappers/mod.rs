//! What comes around an engine's line before it reaches us, one wrapper a file:
//!
//! - [`prefix`]: what loggers and simple wrappers put in front of a line (`\r\n`, ANSI colour
//!   codes, docker and journal stamps, compose services, vLLM process tags);
//! - [`glued`]: several records glued into one physical line (progress bars' `\r`);
//! - [`wrapped`]: one record a terminal wrapped over several rows;
//! - [`envelope`]: a log collector's record around the line (Docker json-file, CRI,
//!   journald, Loki, CloudWatch, Cloud Logging, Elasticsearch, Fluent Bit, `kubectl
//!   --prefix`), with the identity and time the collector adds.
//!
//! A new wrapper is a new file here; the engines' parsers never see it.

pub mod envelope;
pub mod glued;
pub mod prefix;
pub mod wrapped;
