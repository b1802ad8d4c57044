//! `tokstat-parsers`: zero-copy, version-tolerant parsers for what LLM inference runs leave
//! behind — SGLang and vLLM server logs first.
//!
//! The path of a byte: [`source`] opens an input (mmap, or a gzip / zstd / stdin stream) and
//! cuts it into whole-line chunks; [`scan`] runs a parser over the chunks on all cores and
//! hands results back in file order; [`line`](mod@line) turns one line into a [`record::Line`]
//! that borrows the line: [`wrappers`] take off what loggers, terminals and log collectors
//! put around it, [`sglang`] and [`vllm`] read the message. Nothing here knows about tables
//! or reports.
//!
//! The crate's layout: engines' grammars ([`sglang`], [`vllm`], [`grammar`]), formats of
//! other artifacts ([`completion`], [`prometheus`], [`loadgen`], [`json`]), [`wrappers`]
//! around engine lines, and [`source`]s of bytes.

// No panics across the library boundary: bad input is a value (`Malformed`, an error), never
// a panic. Slicing (`indexing_slicing`) is left out of the list: it is how the parsers work,
// every slice is bounds-checked (a panic, never undefined behaviour), and the fuzz targets
// look for exactly such panics.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]

pub mod access;
pub mod bench_console;
pub mod completion;
pub mod detect;
pub mod grammar;
pub mod guard;
pub mod incident;
pub mod json;
pub mod kv;
pub mod line;
pub mod loadgen;
pub mod num;
pub mod prometheus;
pub mod prometheus_api;
pub mod record;
pub mod scan;
pub mod sglang;
pub mod source;
pub mod stamp;
pub mod text;
pub mod vllm;
pub mod wrappers;

pub use line::{
    parse_line, parse_str_line, visit_line, visit_quick_line, visit_quick_line_split,
    visit_str_line, Quick,
};

#[cfg(test)]
pub(crate) mod testing {
    /// Every line of the fixture logs in these folders of `fixtures/formats`.
    pub fn fixture_lines(folders: &[&str]) -> Vec<String> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/formats");
        let mut lines = Vec::new();
        for sub in folders {
            for e in std::fs::read_dir(format!("{dir}/{sub}")).unwrap() {
                let text = std::fs::read(e.unwrap().path()).unwrap();
                lines.extend(String::from_utf8_lossy(&text).lines().map(str::to_owned));
            }
        }
        lines
    }

    /// `line` with the character at each place before `upto` replaced by each of `with`.
    pub fn mutations<'a>(
        line: &'a str,
        upto: usize,
        with: &'a [&'a str],
    ) -> impl Iterator<Item = String> + 'a {
        (0..line.len().min(upto))
            .filter(|&at| line.is_char_boundary(at) && line.is_char_boundary(at + 1))
            .flat_map(move |at| {
                with.iter().map(move |c| {
                    let mut m = line.to_owned();
                    m.replace_range(at..at + 1, c);
                    m
                })
            })
    }
}
