//! The line accounting of every input, written to stderr beside a report or records.

use crate::render::num::group;
use crate::report::{FileReport, SkippedInput};
use std::io::{self, Write};

/// `N parsed`, with how many of them were cut short when any were.
pub fn parsed(t: &crate::report::LineCounts) -> String {
    match t.partial {
        0 => format!("{} parsed", group(t.parsed)),
        k => format!("{} parsed ({} cut short)", group(t.parsed), group(k)),
    }
}

/// Writes each file's line counts (with its first malformed lines) and the skipped inputs.
pub fn write(
    err: &mut dyn Write,
    files: &[FileReport],
    skipped: &[SkippedInput],
) -> io::Result<()> {
    for f in files {
        let t = &f.lines;
        write!(
            err,
            "{}: {} lines: {}, {} other, {} malformed",
            f.source,
            group(t.total),
            parsed(t),
            group(t.other),
            group(t.malformed)
        )?;
        if let Some(first) = f.malformed_samples.first() {
            let nums: Vec<String> = f
                .malformed_samples
                .iter()
                .map(|s| s.line.to_string())
                .collect();
            write!(
                err,
                " (lines {}{}; line {}: {})",
                nums.join(", "),
                if t.malformed > f.malformed_samples.len() as u64 {
                    ", …"
                } else {
                    ""
                },
                first.line,
                first.reason
            )?;
        }
        writeln!(err)?;
        if let Some(e) = &f.envelope {
            writeln!(err, "  {}", envelope(e))?;
        }
    }
    for s in skipped {
        writeln!(err, "{}: {}: {}", s.source, s.label(), s.reason)?;
    }
    Ok(())
}

/// What a collector's records said: `Docker json-file, vllm-0/vllm: 1,204 rows (48
/// pieces joined); server clock UTC+08:00, skew -0.512 s (4,096 lines with both stamps,
/// 80% of them within 0.430 s of it)`.
pub fn envelope(e: &crate::report::EnvelopeReport) -> String {
    let mut s = e.collector.to_string();
    if let Some(who) = &e.identity {
        s.push_str(&format!(", {who}"));
    }
    s.push_str(&format!(": {} rows", group(e.rows)));
    if e.joined > 0 {
        s.push_str(&format!(" ({} pieces joined)", group(e.joined)));
    }
    if e.newest_first {
        s.push_str(", newest first (read in time order)");
    }
    match &e.clock {
        Some(c) => s.push_str(&format!(
            "; server clock {}, skew {:+.3} s ({} lines with both stamps, 80% of them within {:.3} s of it)",
            c.zone,
            c.skew_s,
            group(c.lines),
            (c.offset_s - c.low_s).max(c.high_s - c.offset_s)
        )),
        None => s.push_str("; no line has a stamp of its own: times are the collector's (UTC)"),
    }
    if e.dated_by_collector > 0 && e.clock.is_some() {
        s.push_str(&format!(
            "; {} lines without a stamp dated by the collector",
            group(e.dated_by_collector)
        ));
    }
    s
}
