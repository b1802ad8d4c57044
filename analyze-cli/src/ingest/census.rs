//! The incident census of one instance: for each kind of event line, how many, the first
//! and last time, and the first lines themselves as samples; and its HTTP responses by
//! status class over time ([`Responses`]).
//!
//! Chunks are censused on all cores and merged in file order, so the samples are the first
//! lines of the instance's log whatever the chunking.

use crate::ingest::responses::Responses;
use tokstat_parsers::record::EventKind;

/// Sample lines kept per kind.
pub const SAMPLES: usize = 2;
/// Characters of a sample line kept.
const SAMPLE_CHARS: usize = 300;

/// One sample line.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SampleLine {
    /// The input it is in, and its 1-based line number there.
    pub source: String,
    pub line: u64,
    pub ts: Option<i64>,
    /// The message (without the logger's prefix), cut at [`SAMPLE_CHARS`] characters.
    pub text: String,
}

/// The lines of one kind.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Occurrences {
    pub count: u64,
    /// The first and last stamp among them (lines without one, such as a traceback's, take
    /// the stamp of the instance's line before them in the chunk).
    pub first: Option<i64>,
    pub last: Option<i64>,
    pub samples: Vec<SampleLine>,
}

impl Occurrences {
    fn merge(&mut self, o: &Occurrences) {
        self.count += o.count;
        self.first = match (self.first, o.first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last = self.last.max(o.last);
        for s in &o.samples {
            if self.samples.len() < SAMPLES {
                self.samples.push(s.clone());
            }
        }
    }
}

/// Every kind's lines, in the order of [`EventKind::ALL`].
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Census {
    kinds: [Occurrences; EventKind::ALL.len()],
    /// Access lines by status class over time.
    pub responses: Responses,
}

fn index(kind: EventKind) -> usize {
    EventKind::ALL
        .iter()
        .position(|k| *k == kind)
        .unwrap_or_default()
}

impl Census {
    /// Counts an event line.
    pub fn note(&mut self, kind: EventKind, source: &str, line: u64, ts: Option<i64>, text: &str) {
        let o = &mut self.kinds[index(kind)];
        o.count += 1;
        if let Some(t) = ts {
            o.first = Some(o.first.map_or(t, |f| f.min(t)));
            o.last = Some(o.last.map_or(t, |l| l.max(t)));
        }
        if o.samples.len() < SAMPLES {
            let cut = text
                .char_indices()
                .nth(SAMPLE_CHARS)
                .map_or(text.len(), |(i, _)| i);
            o.samples.push(SampleLine {
                source: source.to_string(),
                line,
                ts,
                text: text[..cut].trim_end().to_string(),
            });
        }
    }

    /// Adds the census of lines read after these, the last of them stamped `before`.
    pub fn merge(&mut self, later: &Census, before: Option<i64>) {
        for (a, b) in self.kinds.iter_mut().zip(&later.kinds) {
            a.merge(b);
        }
        self.responses.merge(&later.responses, before);
    }

    /// Adds `by` to the samples' line numbers (a chunk's, read relative to its start).
    pub fn shift_lines(&mut self, by: u64) {
        for s in self.kinds.iter_mut().flat_map(|o| &mut o.samples) {
            s.line += by;
        }
    }

    /// The lines of one kind.
    pub fn get(&self, kind: EventKind) -> &Occurrences {
        &self.kinds[index(kind)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Merged in order, chunks give the counts, times and first samples of the whole.
    #[test]
    fn chunks_merge_like_the_whole() {
        let lines: Vec<(EventKind, u64, Option<i64>)> = (1..=9)
            .map(|n| {
                let kind = if n % 3 == 0 {
                    EventKind::Crash
                } else {
                    EventKind::Abort
                };
                (kind, n, (n % 4 != 0).then_some(1000 * n as i64))
            })
            .collect();
        let census = |ls: &[(EventKind, u64, Option<i64>)]| {
            let mut c = Census::default();
            for &(k, n, ts) in ls {
                c.note(k, "a.log", n, ts, &format!("line {n} é{}", "x".repeat(400)));
            }
            c
        };
        let whole = census(&lines);
        for cut in 0..lines.len() {
            let mut a = census(&lines[..cut]);
            a.merge(&census(&lines[cut..]), None);
            assert_eq!(a, whole, "{cut}");
        }
        let crash = whole.get(EventKind::Crash);
        assert_eq!(
            (crash.count, crash.first, crash.last),
            (3, Some(3000), Some(9000))
        );
        let lines: Vec<u64> = crash.samples.iter().map(|s| s.line).collect();
        assert_eq!(lines, [3, 6]);
        assert_eq!(crash.samples[0].text.chars().count(), SAMPLE_CHARS);
        assert_eq!(whole.get(EventKind::Oom).count, 0);
    }
}
