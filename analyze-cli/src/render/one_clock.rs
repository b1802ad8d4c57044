//! A run's client and server on one clock ([`OneClock`]), in words and series that every
//! format shows alike: the offset found (or why none was), the checks across the two
//! sides, the client's path per TTFT quantile, and the series stacked on one time axis.

use crate::analysis::one_clock::{ClockRow, OneClock};
use crate::render::num;
use tokstat_parsers::stamp::Ts;

/// The section's heading for one run and server source.
pub fn head(c: &OneClock) -> String {
    format!(
        "{} run '{}' and the {} on one clock",
        c.tool, c.run, c.server
    )
}

/// Seconds as signed hours, minutes and seconds (`-4 h 59 min 53.06 s`).
fn hms(s: f64) -> String {
    let sign = if s < 0.0 { "-" } else { "+" };
    let a = s.abs();
    let h = (a / 3600.0).floor();
    let m = ((a - h * 3600.0) / 60.0).floor();
    let sec = a - h * 3600.0 - m * 60.0;
    match (h > 0.0, m > 0.0) {
        (true, _) => format!("{sign}{h:.0} h {m:.0} min {sec:.2} s"),
        (false, true) => format!("{sign}{m:.0} min {sec:.2} s"),
        _ => format!("{sign}{sec:.3} s"),
    }
}

/// The runs lined up with a server's side: a section each.
pub fn aligned(r: &crate::report::Report) -> impl Iterator<Item = &OneClock> {
    r.one_clock
        .iter()
        .filter(|c| c.alignment.offset().is_some())
}

/// The heading of the runs not lined up, and a line each with why (a folder of many runs
/// beside one server's log is many refusals: one line each, not a section).
pub const REFUSED_HEAD: &str = "Not on one clock (the two sides were not lined up)";

/// A line per run not lined up with a server's side: who, and why.
pub fn refused(r: &crate::report::Report) -> Vec<String> {
    r.one_clock
        .iter()
        .filter_map(|c| match &c.alignment {
            crate::analysis::align::Alignment::Refused(why) => Some(format!(
                "{} run '{}' and the {}: {why}",
                c.tool, c.run, c.server
            )),
            _ => None,
        })
        .collect()
}

/// The section's lines: the alignment, then (aligned) the checks across the sides.
pub fn lines(c: &OneClock) -> Vec<String> {
    let Some(o) = c.alignment.offset() else {
        let why = match &c.alignment {
            crate::analysis::align::Alignment::Refused(w) => w.as_str(),
            _ => "",
        };
        return vec![format!("not lined up: {why}")];
    };
    // as many decimals as the interval's width asks for
    let d = if o.high_s - o.low_s < 0.1 { 3 } else { 2 };
    let owner = if c.server.ends_with('s') {
        format!("{}'", c.server)
    } else {
        format!("{}'s", c.server)
    };
    let split = match (o.zone_hours, o.skew_s) {
        (Some(z), Some(k)) => format!(
            ": {:+} h of zone, {k:+.d$} s of skew",
            if z == 0.0 { 0.0 } else { z }
        ),
        _ => {
            " from the client's monotonic clock: no zone to tell; times below on the server's clock"
                .into()
        }
    };
    // (a monotonic clock's offset is no length of time to read in hours)
    let offset = if o.zone_hours.is_some() {
        hms(o.offset_s)
    } else {
        format!("{:+.d$} s", o.offset_s)
    };
    let mut out = vec![format!(
        "offset: the {owner} clock is {offset} from the client's (interval {:.d$} … {:.d$} s{split}), from {} readings {:.2} requests apart on average",
        o.low_s,
        o.high_s,
        o.readings,
        o.mismatch
    )];
    if let Some(l) = &c.little {
        let verdict = match (l.holds, l.implied_client_path_ms) {
            (Some(true), _) => "holds within 5%".to_string(),
            (Some(false), _) => "does not hold within 5%".to_string(),
            (None, Some(p)) => format!(
                "the server's W is not known: the gap implies a client path of {p:.1} ms per request"
            ),
            (None, None) => "not judged".to_string(),
        };
        let scale = match l.server_e2e_s {
            Some(w) => format!(
                " × {w:.3} s at the server ÷ {:.3} s at the client",
                l.client_e2e_s
            ),
            None => String::new(),
        };
        out.push(format!(
            "Little's law: the server's running + waiting {:.2} against the client's {:.2} in flight{scale} = {:.2}: {:.3}, {verdict}",
            l.server_in_flight, l.client_in_flight, l.expected, l.ratio
        ));
    }
    if let (Some(cl), Some(sv)) = (c.client_tokens, c.server_tokens) {
        out.push(format!(
            "tokens: the client received {}, the server generated {} over the same buckets ({:+.2}%)",
            num::group(cl.round() as u64),
            num::group(sv.round() as u64),
            (sv / cl - 1.0) * 100.0
        ));
    }
    if let Some(q) = &c.queue_share {
        out.push(format!(
            "queue: {}{:.1} ms of the client's mean TTFT {:.1} ms ({}{:.0}%), by the {}{}",
            if q.upper_bound { "at most " } else { "" },
            q.queue_ms,
            q.client_ttft_ms,
            if q.upper_bound { "≤ " } else { "" },
            q.share * 100.0,
            q.from,
            if q.upper_bound {
                " (the waiting count holds preempted requests waiting again)"
            } else {
                ""
            }
        ));
    }
    out
}

/// Columns of the client's TTFT against the server's, per quantile.
pub const PATH_COLUMNS: [&str; 4] = ["TTFT", "client", "server", "client path"];

/// The rows of [`PATH_COLUMNS`].
pub fn path_rows(c: &OneClock) -> Vec<Vec<String>> {
    c.ttft_path
        .iter()
        .map(|p| {
            let server = if p.estimated {
                format!("≈{:.1} ms", p.server_ms)
            } else {
                format!("{:.1} ms", p.server_ms)
            };
            let path = match (p.estimated, p.path_low_ms, p.path_high_ms) {
                (false, _, _) => format!("{:+.1} ms", p.path_ms),
                (true, lo, Some(hi)) => format!(
                    "{} … {:+.0} ms",
                    lo.map_or("–∞".into(), |v| format!("{v:+.0}")),
                    hi
                ),
                (true, _, None) => "–".into(),
            };
            vec![
                p.at.to_string(),
                format!("{:.1} ms", p.client_ms),
                server,
                path,
            ]
        })
        .collect()
}

/// What to keep in mind reading the section.
pub fn notes(c: &OneClock) -> Vec<String> {
    let mut out = c.notes.clone();
    if c.ttft_path.iter().any(|p| p.estimated) {
        out.push("≈: the server's quantile from its histogram's buckets; the client path's range is the bucket's (a difference of quantiles, not each request's path)".into());
    }
    out
}

/// One series of the stacked charts: its name, unit and a value per bucket.
pub struct Series {
    pub name: &'static str,
    pub unit: &'static str,
    pub values: Vec<Option<f64>>,
}

/// The series every format stacks on the buckets' one time axis.
pub fn series(c: &OneClock) -> Vec<Series> {
    let s = |name, unit, f: fn(&ClockRow) -> Option<f64>| Series {
        name,
        unit,
        values: c.rows.iter().map(f).collect(),
    };
    let mut out = vec![
        s("client in flight", "requests", |r| Some(r.in_flight)),
        s("server running + waiting", "requests", |r| {
            Some(r.running? + r.waiting.unwrap_or(0.0))
        }),
        s("server waiting", "requests", |r| r.waiting),
        s("client TTFT p99", "ms", |r| r.ttft_p99_ms),
        s("client TTFT p50", "ms", |r| r.ttft_p50_ms),
        s("client E2E p99", "ms", |r| r.e2e_p99_ms),
        s("server generated", "tok/s", |r| r.gen_tps),
        s("server KV usage", "%", |r| r.kv_usage.map(|k| k * 100.0)),
        s("server preemptions", "requests", |r| r.preemptions),
        s("client errors", "requests", |r| Some(r.errors as f64)),
    ];
    out.retain(|s| s.values.iter().any(|v| v.is_some_and(|x| x > 0.0)));
    out
}

/// The buckets' first start and last end, as times of the clock they are shown on.
pub fn span(c: &OneClock) -> Option<(String, String)> {
    let first = c.shown(c.rows.first()?.t);
    let last = c.shown(c.rows.last()?.t) + c.bucket_s;
    let at = |t: f64| Ts((t * 1000.0).round() as i64).to_string();
    Some((at(first), at(last)))
}

/// A series as one row of eighth blocks, scaled to its own maximum.
pub fn spark(values: &[Option<f64>]) -> (String, f64) {
    const BLOCKS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = values.iter().flatten().copied().fold(0.0, f64::max);
    let line = values
        .iter()
        .map(|v| match v {
            None => '·',
            Some(x) if max > 0.0 => BLOCKS[((x / max) * 8.0).round().clamp(0.0, 8.0) as usize],
            Some(_) => BLOCKS[0],
        })
        .collect();
    (line, max)
}

/// The stacked series as text rows: a name column, one block per bucket, the maximum.
pub fn stacked(c: &OneClock) -> Vec<String> {
    let all = series(c);
    let w = all
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let mut out: Vec<String> = all
        .iter()
        .map(|s| {
            let (line, max) = spark(&s.values);
            format!(
                "{:<w$} │{line}│ max {} {}",
                s.name,
                num::trim(max, 1),
                s.unit
            )
        })
        .collect();
    if let Some((a, b)) = span(c) {
        let n = c.rows.len();
        let axis = if c.shown_on() == "client" {
            format!("{a} … {b} (client clock, UTC)")
        } else {
            format!("{a} … {b} (server clock, as logged)")
        };
        out.push(format!(
            "{:<w$} └{}┘ {} buckets of {} s",
            "",
            "─".repeat(n),
            n,
            num::trim(c.bucket_s, 2)
        ));
        out.push(format!("{:<w$}  {axis}", ""));
    }
    out
}
