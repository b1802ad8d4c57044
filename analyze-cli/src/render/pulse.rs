//! A pulse for a terminal: one labelled line per subject, the ETA with its inputs.

use crate::live::pulse::Pulse;
use crate::render::num::{group, opt};
use crate::render::style::Style;
use std::io::{self, Write};

/// A time left as a person plans with it: `42s`, `37m`, `6.4 h`, `15.7 days`.
fn left(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "–".into();
    }
    if secs < 60.0 {
        format!("{secs:.0}s")
    } else if secs < 3600.0 {
        format!("{:.0}m", secs / 60.0)
    } else if secs < 48.0 * 3600.0 {
        format!("{:.1} h", secs / 3600.0)
    } else {
        format!("{:.1} days", secs / 86_400.0)
    }
}

/// A rate or a count of tokens, whole, with thousands separators.
fn int(v: f64) -> String {
    if v.is_finite() && v >= 0.0 {
        group(v.round() as u64)
    } else {
        "–".into()
    }
}

/// [`int`] of a value that may be absent.
fn int_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), int)
}

pub fn table(p: &Pulse, style: Style, out: &mut dyn Write) -> io::Result<()> {
    let _ = style;
    writeln!(
        out,
        "Pulse over {} ({} samples, {} bytes appended)",
        super::num::duration(p.window_s),
        p.samples,
        group(p.bytes)
    )?;
    let label = |out: &mut dyn Write, l: &str, text: String| writeln!(out, "  {l:<8}{text}");
    match &p.client {
        Some(c) => label(
            out,
            "client",
            format!(
                "{} requests · {} req/s · {} output tok/s · tokens/request mean {} (p50 {}, p90 {}) · {} failure(s) · {} cap hit(s)",
                group(c.requests),
                opt(Some(c.requests_per_s), 2),
                int(c.output_tokens_per_s),
                int_opt(c.tokens_per_request_mean),
                int_opt(c.tokens_per_request_p50),
                int_opt(c.tokens_per_request_p90),
                group(c.failures),
                group(c.cap_hits)
            ),
        )?,
        None => label(out, "client", "no completion records written in the window".into())?,
    }
    if let Some(s) = &p.server {
        label(
            out,
            "server",
            format!(
                "{} gen tok/s as logged · {} running · {} queued ({} instance(s), {} stats lines)",
                int(s.gen_tps),
                opt(Some(s.running), 1),
                opt(Some(s.waiting), 1),
                s.instances,
                group(s.stat_lines)
            ),
        )?;
    }
    if let Some(m) = &p.metrics {
        let mean = |s: &Option<crate::analysis::quantile::Summary>, d: usize| {
            opt(s.as_ref().map(|s| s.mean), d)
        };
        label(
            out,
            "metrics",
            format!(
                "{} gen tok/s · {} req/s · {} running · {} queued · kv {} · cap-hit {} ({} scrapes{})",
                int_opt(m.gen_tps),
                opt(m.requests_per_s, 2),
                mean(&m.running, 1),
                mean(&m.waiting, 1),
                mean(&m.kv_usage, 2),
                m.cap_hit_rate
                    .map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0)),
                m.scrapes,
                m.span_s
                    .map_or(String::new(), |s| format!(" over {}", super::num::duration(s)))
            ),
        )?;
    }
    if let Some(g) = &p.gap {
        label(
            out,
            "gap",
            format!(
                "client/server {:.2} (server from {}): {}",
                g.ratio, g.server_from, g.explanation
            ),
        )?;
    }
    let j = &p.job;
    label(
        out,
        "job",
        format!(
            "{} requests done · tokens/request mean {} (trend {} per 1k requests) · failures {} · cap hits {}",
            group(j.requests_done),
            int_opt(j.tokens_per_request_mean),
            j.tokens_per_request_trend_per_1k
                .map_or_else(|| "–".into(), |t| format!("{t:+.1}")),
            j.failure_rate.map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0)),
            j.cap_hit_rate.map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0)),
        ),
    )?;
    match &p.eta {
        Some(e) => label(
            out,
            "ETA",
            format!(
                "{} (80%: {} – {}) = {} left of {} × {} tokens ÷ {} tok/s",
                left(e.seconds),
                left(e.seconds_low),
                left(e.seconds_high),
                group(e.remaining),
                group(e.total),
                int(e.projected_tokens_per_request),
                int(e.tokens_per_s)
            ),
        )?,
        None if p.client.is_some() => label(
            out,
            "ETA",
            "give --total N or --total-from prompts.jsonl".into(),
        )?,
        None => {}
    }
    for d in &p.drift {
        label(out, "drift", d.clone())?;
    }
    Ok(())
}

/// A bar of `width` cells, `done` of `total` filled.
fn bar(done: u64, total: u64, width: usize, unicode: bool) -> String {
    let frac = if total == 0 {
        0.0
    } else {
        (done as f64 / total as f64).min(1.0)
    };
    let filled = (frac * width as f64).round() as usize;
    let (on, off) = if unicode { ('█', '░') } else { ('#', '.') };
    let mut s: String = std::iter::repeat_n(on, filled).collect();
    s.extend(std::iter::repeat_n(off, width - filled));
    s
}

/// The watch's view, for a terminal redrawn in place.
pub fn watch_view(
    v: &crate::live::watch::View,
    style: Style,
    out: &mut dyn Write,
) -> io::Result<()> {
    let progress = match v.total {
        Some(t) => format!(
            "{} {} / {} ({:.1}%)",
            bar(v.requests_done, t, 30, style.unicode),
            group(v.requests_done),
            group(t),
            v.requests_done as f64 * 100.0 / t.max(1) as f64
        ),
        None => format!(
            "{} requests done (give --total for progress and ETA)",
            group(v.requests_done)
        ),
    };
    writeln!(
        out,
        "tokstat watch · {} · {progress}",
        super::num::duration(v.elapsed_s)
    )?;
    for (m, req, tok) in &v.rates {
        writeln!(
            out,
            "  last {m:>2}m   {:>8} req/s   {:>10} output tok/s",
            opt(Some(*req), 2),
            int(*tok)
        )?;
    }
    if let Some(s) = &v.server {
        let client = v.rates.first().map_or(0.0, |r| r.2);
        writeln!(
            out,
            "  server     {} gen tok/s as logged (client {} tok/s) · {} running · {} queued",
            int(s.gen_tps),
            int(client),
            opt(Some(s.running), 1),
            opt(Some(s.waiting), 1)
        )?;
    }
    if let Some(m) = &v.metrics {
        writeln!(out, "  metrics    {}", metrics_text(m))?;
    }
    let pct = |r: Option<f64>| r.map_or_else(|| "–".into(), |r| format!("{:.1}%", r * 100.0));
    writeln!(
        out,
        "  so far     cap hits {} · failures {}",
        pct(v.cap_hit_rate),
        pct(v.failure_rate)
    )?;
    if let Some(e) = &v.eta {
        writeln!(
            out,
            "  ETA        {} (80%: {} – {}) = {} left × {} tokens ÷ {} tok/s",
            left(e.seconds),
            left(e.seconds_low),
            left(e.seconds_high),
            group(e.remaining),
            int(e.projected_tokens_per_request),
            int(e.tokens_per_s)
        )?;
    }
    if let Some(d) = &v.drift {
        writeln!(out, "  drift      {d}")?;
    }
    for n in &v.notes {
        writeln!(out, "  note       {n}")?;
    }
    Ok(())
}

/// A scrape's figures in words.
fn metrics_text(m: &crate::analysis::metrics::ScrapePoint) -> String {
    format!(
        "{} gen tok/s · {} req/s · {} running · {} waiting · KV {}",
        m.gen_tps.map_or_else(|| "–".into(), int),
        opt(m.requests_per_s, 2),
        opt(m.running, 0),
        opt(m.waiting, 0),
        m.kv_usage
            .map_or_else(|| "–".into(), |k| format!("{:.1}%", k * 100.0))
    )
}

/// The watch's view as one line, for a log or a pipe.
pub fn watch_line(v: &crate::live::watch::View) -> String {
    let mut s = format!(
        "{} done={}",
        super::num::duration(v.elapsed_s),
        v.requests_done
    );
    if let Some(t) = v.total {
        s.push_str(&format!("/{t}"));
    }
    for (m, req, tok) in &v.rates {
        s.push_str(&format!(" req/s@{m}m={req:.2} tok/s@{m}m={tok:.0}"));
    }
    if let Some(srv) = &v.server {
        s.push_str(&format!(
            " server_tok/s={:.0} running={:.1} queued={:.1}",
            srv.gen_tps, srv.running, srv.waiting
        ));
    }
    if let Some(m) = &v.metrics {
        let f = |x: Option<f64>, d: usize| x.map_or_else(|| "-".into(), |x| format!("{x:.d$}"));
        s.push_str(&format!(
            " metrics_gen_tok/s={} metrics_req/s={} metrics_running={} metrics_waiting={} metrics_kv={}",
            f(m.gen_tps, 0),
            f(m.requests_per_s, 2),
            f(m.running, 0),
            f(m.waiting, 0),
            f(m.kv_usage, 3)
        ));
    }
    if let Some(e) = &v.eta {
        s.push_str(&format!(" eta={}", left(e.seconds)));
    }
    if let Some(d) = &v.drift {
        s.push_str(&format!(" | drift: {d}"));
    }
    for n in &v.new_notes {
        s.push_str(&format!(" | {n}"));
    }
    s
}
