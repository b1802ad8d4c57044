//! The server-side analysis in the terminal and as JSON.

use crate::analysis::hints::Hint;
use crate::analysis::metrics::Metrics;
use crate::analysis::server::{Segment, Server};
use crate::analysis::steady::PEAK_WINDOW_MS;
use crate::render::num::{duration, group, opt};
use serde_json::{json, Value};
use std::io::{self, Write};
use tokstat_parsers::stamp::Ts;

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn ts(ms: i64) -> String {
    Ts(ms).to_string()
}

/// A segment's steady window in time, ms.
fn window(s: &Segment, server: &Server) -> Option<(i64, i64)> {
    let st = s.steady?;
    let t0 = server.timeline.total[s.buckets.0 + st.start].ts;
    let t1 = server.timeline.total[s.buckets.0 + st.end - 1].ts + server.timeline.bucket_ms;
    Some((t0, t1))
}

/// Ramp-up (segment start to steady) and drain (steady to segment end), seconds.
fn ramp_drain(s: &Segment, server: &Server) -> (Option<f64>, Option<f64>) {
    match window(s, server) {
        Some((a, b)) => (
            Some((a - s.start).max(0) as f64 / 1000.0),
            Some((s.end - b).max(0) as f64 / 1000.0),
        ),
        None => (None, None),
    }
}

fn segment_json(s: &Segment, server: &Server, prev: Option<&Segment>) -> Value {
    let steady_range = window(s, server).map(|(t0, t1)| json!({"from": ts(t0), "to": ts(t1)}));
    let (ramp, drain) = ramp_drain(s, server);
    json!({
        "index": s.index,
        "reason": s.reason.as_str(),
        "start": ts(s.start),
        "end": ts(s.end),
        "duration_s": (s.end - s.start) as f64 / 1000.0,
        "instances": s.instances,
        "gen_tokens": s.gen_tokens.round(),
        "gen_tps": s.steady_tps().map_or(Value::Null, num),
        "gen_tps_mean": num(s.gen_tps_mean),
        "peak_gen_tps": s.peak_tps.map_or(Value::Null, num),
        "steady": steady_range,
        "ramp_up_s": ramp,
        "drain_s": drain,
        "vs_previous": match (prev.and_then(Segment::steady_tps), s.steady_tps()) {
            (Some(a), Some(b)) if a > 0.0 => num(b / a - 1.0),
            _ => Value::Null,
        },
        "changes": s.changes,
        "settings": s.settings,
    })
}

/// The JSON keys of the server analysis, added to the report object.
pub fn json_into(
    obj: &mut serde_json::Map<String, Value>,
    s: &Server,
    hints: &[Hint],
) -> anyhow::Result<()> {
    // no server lines (a completions-only report): no frame to build — polars' first cast
    // alone costs more than reading a small file
    let rows = if s.timeline.total.is_empty() {
        Vec::new()
    } else {
        crate::table::json_rows(&crate::table::timeline(s)?)?
    };
    obj.insert(
        "timeline_bucket_s".into(),
        json!(s.timeline.bucket_ms as f64 / 1000.0),
    );
    obj.insert("timeline".into(), Value::Array(rows));
    obj.insert("curve".into(), json!(s.curve));
    obj.insert("knee".into(), json!(s.knee));
    let mean_tps = {
        let secs: f64 = s
            .segments
            .iter()
            .map(|g| (g.end - g.start) as f64 / 1000.0)
            .sum();
        (secs > 0.0).then(|| s.gen_tokens / secs)
    };
    obj.insert(
        "steady".into(),
        json!({
            "gen_tps": s.steady_tps,
            "peak_gen_tps": s.peak_tps,
            "peak_window_s": (PEAK_WINDOW_MS.max(s.timeline.bucket_ms)) as f64 / 1000.0,
            "mean_gen_tps": mean_tps,
            "gen_tokens": s.gen_tokens.round(),
            "ramp_up_s": s.segments.first().and_then(|g| ramp_drain(g, s).0),
            "drain_s": s.segments.last().and_then(|g| ramp_drain(g, s).1),
            "windows": s.segments.iter().filter_map(|g| window(g, s)).map(|(a, b)| json!({"from": ts(a), "to": ts(b)})).collect::<Vec<_>>(),
        }),
    );
    obj.insert(
        "segments".into(),
        Value::Array(
            s.segments
                .iter()
                .enumerate()
                .map(|(k, g)| segment_json(g, s, k.checked_sub(1).map(|p| &s.segments[p])))
                .collect(),
        ),
    );
    obj.insert("hints".into(), json!(hints));
    Ok(())
}

/// A column chart of `v` (NaN = no data), `height` rows, with the steady window underlined.
pub fn chart(out: &mut dyn Write, v: &[f64], steady: &[bool], height: usize) -> io::Result<()> {
    const BLOCKS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = v
        .iter()
        .copied()
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max);
    if max <= 0.0 {
        return Ok(());
    }
    let label_w = format!("{max:.0}").len();
    for row in (0..height).rev() {
        let label = if row == height - 1 {
            format!("{max:.0}")
        } else if row == 0 {
            "0".to_string()
        } else {
            String::new()
        };
        let mut line = format!("  {label:>label_w$} │");
        for x in v {
            let eighths = if x.is_finite() {
                (x / max * (height * 8) as f64).round() as usize
            } else {
                0
            };
            let here = eighths.saturating_sub(row * 8).min(8);
            line.push(BLOCKS[here]);
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    let mut axis = format!("  {:>label_w$} └", "");
    for &st in steady {
        axis.push(if st { '━' } else { '─' });
    }
    writeln!(out, "{axis}")
}

/// The terminal sections of the server analysis.
pub fn write(out: &mut dyn Write, s: &Server, hints: &[Hint]) -> io::Result<()> {
    let tl = &s.timeline;
    if tl.total.is_empty() {
        return Ok(());
    }
    let b = tl.bucket_ms;
    writeln!(
        out,
        "Throughput: {} tokens generated (estimated from the logged rates) · steady {} tok/s · peak {} tok/s (best {})",
        group(s.gen_tokens.round() as u64),
        s.steady_tps.map_or("–".into(), |v| format!("{v:.0}")),
        s.peak_tps.map_or("–".into(), |v| format!("{v:.0}")),
        duration((PEAK_WINDOW_MS.max(b)) as f64 / 1000.0)
    )?;
    let mean_secs: f64 = s
        .segments
        .iter()
        .map(|g| (g.end - g.start) as f64 / 1000.0)
        .sum();
    if mean_secs > 0.0 {
        let (ramp, _) = s
            .segments
            .first()
            .map_or((None, None), |g| ramp_drain(g, s));
        let (_, drain) = s.segments.last().map_or((None, None), |g| ramp_drain(g, s));
        writeln!(
            out,
            "  whole-run mean {:.0} tok/s · ramp-up {} · drain {}",
            s.gen_tokens / mean_secs,
            ramp.map_or("–".into(), duration),
            drain.map_or("–".into(), duration)
        )?;
    }
    let rates: Vec<f64> = tl.total.iter().map(|r| r.gen_tps).collect();
    let steady: Vec<bool> = (0..rates.len()).map(|k| s.in_steady(k)).collect();
    let width = 100usize;
    let (rates, steady, per) = if rates.len() > width {
        let per = rates.len().div_ceil(width);
        let r: Vec<f64> = rates
            .chunks(per)
            .map(crate::analysis::steady::mean)
            .collect();
        let st: Vec<bool> = steady.chunks(per).map(|c| c.iter().any(|x| *x)).collect();
        (r, st, per)
    } else {
        (rates, steady, 1)
    };
    writeln!(
        out,
        "\nGenerated tok/s over time ({} per column, {} → {}; ━ marks steady state)",
        duration((b * per as i64) as f64 / 1000.0),
        ts(tl.origin),
        ts(tl.origin + b * tl.total.len() as i64)
    )?;
    chart(out, &rates, &steady, 8)?;
    writeln!(out)?;

    if s.segments.len() > 1 {
        writeln!(out, "Segments: {}", s.segments.len())?;
        let mut prev: Option<&Segment> = None;
        for g in &s.segments {
            let vs = match (prev.and_then(Segment::steady_tps), g.steady_tps()) {
                (Some(a), Some(c)) if a > 0.0 => {
                    format!(" ({:+.0}% vs before)", (c / a - 1.0) * 100.0)
                }
                _ => String::new(),
            };
            writeln!(
                out,
                "  {}. {} → {} ({}, {}) · {} instance(s) · steady {} tok/s{vs} · {} tokens",
                g.index + 1,
                ts(g.start),
                ts(g.end),
                duration((g.end - g.start) as f64 / 1000.0),
                g.reason.as_str(),
                g.instances,
                g.steady_tps().map_or("–".into(), |v| format!("{v:.0}")),
                group(g.gen_tokens.round() as u64)
            )?;
            for c in &g.changes {
                writeln!(
                    out,
                    "       changed: {} {} → {} ({} instance(s))",
                    c.key, c.before, c.after, c.instances
                )?;
            }
            prev = Some(g);
        }
        writeln!(out)?;
    }

    if !s.curve.is_empty() {
        writeln!(
            out,
            "Concurrency vs throughput (per instance, from every stats line)"
        )?;
        let max = s
            .curve
            .iter()
            .map(|c| c.tps_median)
            .fold(0.0, f64::max)
            .max(1e-9);
        for c in &s.curve {
            let bar = "█".repeat((c.tps_median / max * 40.0).round() as usize);
            let knee = s
                .knee
                .filter(|k| {
                    k.running >= f64::from(c.running_lo)
                        && k.running < f64::from(c.running_hi) + 1.0
                })
                .map_or("", |_| "  ◀ knee");
            let range = if c.running_lo == c.running_hi {
                format!("{}", c.running_lo)
            } else {
                format!("{}–{}", c.running_lo, c.running_hi)
            };
            writeln!(
                out,
                "  {range:>9} running {bar:<40} {:>8.0} tok/s (p10 {:.0}, p90 {:.0}) · {:>6.1} per req · {:>5.1}% of time{knee}",
                c.tps_median,
                c.tps_p10,
                c.tps_p90,
                c.tps_per_req,
                c.time_share * 100.0
            )?;
        }
        match s.knee {
            Some(k) => writeln!(
                out,
                "  Knee at about {:.0} running ({:.0} tok/s): beyond it one more request adds under 10% of a request's rate ({:.0} tok/s at {:.0}).",
                k.running, k.tps_median, k.tps_at_max, k.running_max
            )?,
            None => writeln!(out, "  No knee in the observed range: throughput still grows with concurrency (or too few levels were seen).")?,
        }
        writeln!(out)?;
    }

    write_hints(out, hints)
}

/// The hints, most severe first.
pub fn write_hints(out: &mut dyn Write, hints: &[Hint]) -> io::Result<()> {
    if !hints.is_empty() {
        writeln!(out, "Hints")?;
        for h in hints {
            writeln!(
                out,
                "  [{}] {}: {}",
                h.severity.as_str(),
                h.id,
                h.evidence["text"].as_str().unwrap_or("")
            )?;
            if let (Some(a), Some(b)) = (h.evidence["from"].as_str(), h.evidence["to"].as_str()) {
                writeln!(out, "      during {a} → {b}")?;
            }
            writeln!(out, "      → {}", h.action)?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// The Prometheus section.
pub fn write_metrics(out: &mut dyn Write, m: &Metrics) -> io::Result<()> {
    writeln!(
        out,
        "Prometheus: {} scrape(s), {} samples{}{}",
        m.scrapes,
        group(m.samples as u64),
        m.engine.map_or(String::new(), |e| format!(" · {e}")),
        match (m.from, m.to, m.span_s) {
            (Some(a), Some(b), Some(s)) => format!(" · {a} → {b} ({})", duration(s)),
            _ => " · no time span (one scrape, or scrapes without times: give --interval)".into(),
        }
    )?;
    if m.span_s.is_some() {
        writeln!(
            out,
            "  generated {} tok/s · prompt {} tok/s · {} requests/s (counter increases over the window)",
            opt(m.gen_tps, 1),
            opt(m.prompt_tps, 1),
            opt(m.requests_per_s, 2)
        )?;
    }
    writeln!(
        out,
        "  counters at the last scrape: {} generated tokens · {} prompt tokens",
        opt(m.generation_tokens, 0),
        opt(m.prompt_tokens, 0)
    )?;
    if !m.finished.is_empty() {
        let done: f64 = m.finished.values().sum();
        let parts: Vec<String> = m
            .finished
            .iter()
            .map(|(k, v)| format!("{k} {v:.0}"))
            .collect();
        writeln!(
            out,
            "  finished requests{}: {} · cap-hit rate {}",
            if m.span_s.is_some() {
                " in the window"
            } else {
                " since start"
            },
            parts.join(" · "),
            m.cap_hit_rate
                .map_or("–".into(), |r| format!("{:.1}% of {done:.0}", r * 100.0))
        )?;
    }
    for (name, s) in [
        ("running", &m.running),
        ("waiting", &m.waiting),
        ("kv usage", &m.kv_usage),
    ] {
        if let Some(s) = s {
            writeln!(
                out,
                "  {name}: mean {:.2} · max {:.2} over {} scrape(s)",
                s.mean, s.max, s.count
            )?;
        }
    }
    for (name, q) in &m.latency {
        writeln!(
            out,
            "  {name}: p50 {} · p90 {} · p99 {} · mean {} ({:.0} observations, from histogram buckets)",
            opt(q.p50, 3),
            opt(q.p90, 3),
            opt(q.p99, 3),
            opt(q.mean, 3),
            q.count
        )?;
    }
    writeln!(out)
}
