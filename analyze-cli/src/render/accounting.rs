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
    }
    for s in skipped {
        writeln!(err, "{}: {}: {}", s.source, s.label(), s.reason)?;
    }
    Ok(())
}
