//! `tokstat report`: the post-mortem of the given inputs — server logs, completions,
//! benchmark result files and Prometheus scrapes — in the format asked for.

use crate::cli::{CompletionArgs, DateArgs, ServerArgs};
use crate::render::{self, Format, Style};
use crate::report::{self, Options, Report};
use anyhow::Result;
use std::io::Write;

/// The report's options from the command line's flags.
pub fn options(
    inputs: &[String],
    dates: &DateArgs,
    c: &CompletionArgs,
    srv: &ServerArgs,
) -> Options {
    Options {
        inputs: inputs.to_vec(),
        year: dates.year,
        date: dates.date.clone(),
        cap: c.cap,
        tokens_path: c.tokens_path.clone(),
        finish_path: c.finish_path.clone(),
        slo: c.slo,
        bucket_ms: srv.bucket,
        interval_s: srv.interval,
        progress: None,
        limits: None,
        run: None,
        node: None,
        benchmark: None,
        prometheus: None,
    }
}

/// The window of a Prometheus server the flags name, if any: the times resolved against
/// now, the access as [`prometheus_access`] gives it.
pub fn prometheus(
    a: &crate::cli::PrometheusArgs,
) -> Result<Option<crate::ingest::prometheus_server::Query>> {
    use crate::ingest::prometheus_server::parse_time;
    use anyhow::Context;
    let Some(url) = &a.prometheus else {
        return Ok(None);
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    let since_ms = parse_time(&a.since, now).context("--since")?;
    let until_ms = parse_time(&a.until, now).context("--until")?;
    Ok(Some(prometheus_access(url, &a.access, since_ms, until_ms)?))
}

/// A query of `url` over `(since, until]` as the access flags say: the token read from its
/// file or variable (never shown), the selector or every engine series.
pub fn prometheus_access(
    url: &str,
    a: &crate::cli::PrometheusAccess,
    since_ms: i64,
    until_ms: i64,
) -> Result<crate::ingest::prometheus_server::Query> {
    use crate::ingest::prometheus_server::{Access, Query, DEFAULT_MATCH};
    use anyhow::Context;
    let bearer = match (&a.bearer_token_file, &a.bearer_token_env) {
        (Some(f), _) => Some(
            std::fs::read_to_string(f)
                .with_context(|| format!("--bearer-token-file {}: cannot read", f.display()))?,
        ),
        (None, Some(v)) => Some(
            std::env::var(v)
                .with_context(|| format!("--bearer-token-env {v}: the variable is not set"))?,
        ),
        (None, None) => None,
    };
    let headers = a
        .headers
        .iter()
        .map(|h| {
            h.split_once(':')
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .with_context(|| format!("--header {h:?}: expected `Name: value`"))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Query {
        url: url.to_string(),
        since_ms,
        until_ms,
        selector: a
            .selector
            .clone()
            .unwrap_or_else(|| DEFAULT_MATCH.to_string()),
        access: Access {
            bearer,
            headers,
            ca_file: a.ca_file.clone(),
            timeout: a.query_timeout,
        },
    })
}

pub fn run(
    opts: &Options,
    format: Format,
    quiet: bool,
    strict: bool,
    style: Style,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32> {
    let report = super::progress::with_bar(quiet, |progress| {
        report::build(&Options {
            progress,
            ..opts.clone()
        })
    })?;
    format.render(&report, style, out)?;
    // the table shows the accounting itself; beside the other formats it goes to stderr
    if !quiet && format != Format::Table {
        render::accounting::write(err, &report.files, &report.skipped)?;
        if let Some(note) = render::unknown_note(report.unknown_records) {
            writeln!(err, "{note}")?;
        }
    }
    exit_code(&report, strict, err)
}

/// 1 when an input failed to read or nothing at all was parsed, else 0. With `strict`, also 1
/// when any line is malformed or any input was not read in full, saying why on `err`.
pub fn exit_code(report: &Report, strict: bool, err: &mut dyn Write) -> Result<i32> {
    if report.failed() {
        return Ok(crate::EXIT_FAILURE);
    }
    if report.lines.parsed == 0 {
        writeln!(
            err,
            "tokstat: nothing to report: no line of the inputs ({} in all) is a record tokstat \
             reads (engine stats lines, completions, benchmark results, Prometheus samples)",
            report.lines.total
        )?;
        return Ok(crate::EXIT_FAILURE);
    }
    if strict {
        if let Some(why) = strict_failure(report.lines.malformed, report.skipped.len()) {
            writeln!(err, "tokstat: --strict: {why}")?;
            return Ok(crate::EXIT_FAILURE);
        }
    }
    Ok(0)
}

/// What `--strict` refuses: malformed lines, inputs not read in full.
pub fn strict_failure(malformed: u64, not_read: usize) -> Option<String> {
    let mut why = Vec::new();
    if malformed > 0 {
        why.push(format!("{malformed} malformed line(s)"));
    }
    if not_read > 0 {
        why.push(format!("{not_read} input(s) not read in full"));
    }
    (!why.is_empty()).then(|| why.join(", "))
}
