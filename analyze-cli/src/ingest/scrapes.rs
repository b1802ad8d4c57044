//! Prometheus scrapes read into samples: one file of one scrape, a file of scrapes separated
//! by `# scrape <time>` lines, or a folder of scrapes timed by their file names. The figures
//! drawn from them are in `analysis::metrics`.

use crate::ingest::scan::{Tally, SAMPLES};
use std::collections::HashMap;
use tokstat_parsers::prometheus::{self, family, Line, MetricType};
use tokstat_parsers::stamp::Ts;

/// One sample of the `metrics` table.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MetricSample {
    pub name: String,
    /// `k=v,k=v`, sorted.
    pub labels: String,
    pub value: f64,
}

/// One scrape.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Scrape {
    pub source: String,
    /// Its time as read: a `# scrape` line, the file's name, or the samples' own stamps.
    pub ts: Option<Ts>,
    pub samples: Vec<MetricSample>,
    /// Its time as the analyses place it (see [`Scrapes::place`]): derived from `ts`, never
    /// saved, so that a read placed and saved is merged as one that was not.
    #[serde(skip)]
    pub placed: Option<Ts>,
}

/// All scrapes read, with the declared family types.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Scrapes {
    pub scrapes: Vec<Scrape>,
    pub types: HashMap<String, MetricType>,
}

/// A malformed line: (line number, why).
pub type Bad = (u64, &'static str);

fn sorted_labels(raw: &str) -> String {
    let mut v: Vec<(&str, std::borrow::Cow<'_, str>)> = prometheus::labels(raw)
        .map(|(k, v)| (k, prometheus::unescape(v)))
        .collect();
    v.sort_unstable();
    let mut s = String::new();
    for (i, (k, v)) in v.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(k);
        s.push('=');
        s.push_str(v);
    }
    s
}

/// A time in a file name: `20260510T000010`, `2026-05-10T00:00:10`, or 10-digit Unix seconds.
pub fn time_from_name(stem: &str) -> Option<Ts> {
    let b = stem.as_bytes();
    for i in 0..b.len() {
        if !b[i].is_ascii_digit() || (i > 0 && b[i - 1].is_ascii_digit()) {
            continue;
        }
        let rest = &stem[i..];
        for len in [19, 15] {
            if let Some(t) = rest.get(..len).and_then(prometheus::iso) {
                return Some(t);
            }
        }
        let run = rest.bytes().take_while(u8::is_ascii_digit).count();
        if run == 10 {
            return prometheus::scrape_time(&rest[..10]);
        }
    }
    None
}

impl Scrapes {
    /// Reads a Prometheus input whole (scrapes are small) and accounts for its lines.
    pub fn read_input(
        &mut self,
        input: &tokstat_parsers::source::Input,
        src: tokstat_parsers::source::Source,
    ) -> std::io::Result<Tally> {
        let bytes = src.data.read_all()?;
        // (a byte order mark before the first line is no part of it)
        let text = String::from_utf8_lossy(tokstat_parsers::text::without_bom(&bytes));
        let (parsed, other, bad, total) = self.read(&input.display(), &input.stem(), &text);
        Ok(Tally {
            total,
            parsed,
            other,
            malformed: bad.len() as u64,
            partial: 0,
            samples: bad.into_iter().take(SAMPLES).collect(),
        })
    }

    /// Reads one file's text: returns (samples, other lines, malformed lines, total lines).
    pub fn read(&mut self, source: &str, stem: &str, text: &str) -> (u64, u64, Vec<Bad>, u64) {
        let mut parsed = 0;
        let mut other = 0;
        let mut bad = Vec::new();
        let mut total = 0;
        let mut current = Scrape {
            source: source.to_string(),
            ts: time_from_name(stem),
            ..Scrape::default()
        };
        let mut marked = false;
        let mut newest_stamp: Option<i64> = None;
        for (n, line) in text.lines().enumerate() {
            total += 1;
            match prometheus::parse_line(line) {
                Ok(Line::Sample(s)) => {
                    parsed += 1;
                    // `_created` samples stay in the table; no figure reads them
                    newest_stamp = newest_stamp.max(s.timestamp_ms);
                    current.samples.push(MetricSample {
                        name: prometheus::engine_name(s.name).into_owned(),
                        labels: sorted_labels(s.labels),
                        value: s.value,
                    });
                }
                Ok(Line::Type { name, kind }) => {
                    other += 1;
                    self.types
                        .insert(prometheus::engine_name(name).into_owned(), kind);
                }
                Ok(Line::Scrape(ts)) => {
                    other += 1;
                    if marked || !current.samples.is_empty() {
                        self.push(std::mem::take(&mut current), newest_stamp.take());
                        current.source = source.to_string();
                    }
                    current.ts = ts;
                    marked = true;
                }
                Ok(Line::Help { .. } | Line::Comment) => other += 1,
                Err(why) => bad.push((n as u64 + 1, why)),
            }
        }
        if marked || !current.samples.is_empty() {
            self.push(current, newest_stamp);
        }
        (parsed, other, bad, total)
    }

    /// Adds the scrapes of another read, as if its files were read after these.
    pub fn extend(&mut self, other: Scrapes) {
        self.scrapes.extend(other.scrapes);
        self.types.extend(other.types);
    }

    fn push(&mut self, mut s: Scrape, stamp: Option<i64>) {
        if s.ts.is_none() {
            s.ts = stamp.map(Ts);
        }
        self.scrapes.push(s);
    }

    /// Puts scrapes in time order and places each in time ([`Scrape::placed`]): a scrape
    /// without a time goes `interval` after the one before it (or stays unplaced without
    /// `--interval`). Its times as read are kept: placing again, after more scrapes were
    /// added, gives what placing them all at once gives.
    pub fn place(&mut self, interval_s: Option<f64>) {
        if self.scrapes.iter().all(|s| s.ts.is_some()) {
            self.scrapes.sort_by_key(|s| s.ts);
            for s in &mut self.scrapes {
                s.placed = s.ts;
            }
            return;
        }
        let step = interval_s.map(|s| (s * 1000.0).round() as i64);
        let mut prev: Option<i64> = None;
        for s in &mut self.scrapes {
            s.placed = match (s.ts, prev, step) {
                (Some(t), _, _) => Some(t),
                (None, Some(p), Some(step)) => Some(Ts(p + step)),
                (None, None, Some(_)) => Some(Ts(0)),
                (None, _, None) => None,
            };
            if step.is_some() {
                prev = s.placed.map(|t| t.0);
            }
        }
    }

    /// The declared type of a sample's family.
    pub fn kind(&self, name: &str) -> Option<MetricType> {
        let types = |n: &str| self.types.get(n).copied();
        let (fam, _) = family(name, &types);
        types(fam)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_times() {
        assert_eq!(
            time_from_name("metrics-20260510T000010"),
            prometheus::iso("2026-05-10T00:00:10")
        );
        assert_eq!(
            time_from_name("scrape_2026-05-10T00:00:10"),
            prometheus::iso("2026-05-10T00:00:10")
        );
        assert_eq!(time_from_name("m_1778371210"), Some(Ts(1_778_371_210_000)));
        assert_eq!(time_from_name("scrape-003"), None);
    }
}
