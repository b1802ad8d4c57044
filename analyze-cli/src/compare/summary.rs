//! The verdict in words: the throughput change with its interval, what happened to the load,
//! and why throughput moved (or did not), from the hints of both runs.

use super::unit::Unit;
use super::{FigureRow, Provenance, Verdict};

fn pct(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

fn row<'a>(rows: &'a [FigureRow], name: &str, run: &str) -> Option<&'a FigureRow> {
    rows.iter().find(|r| r.name == name && r.run == run)
}

/// One sentence (or a few) per compared run.
pub fn sentences(units: &[Unit<'_>], rows: &[FigureRow], prov: &Provenance) -> Vec<String> {
    let base = &units[0];
    units[1..]
        .iter()
        .map(|u| {
            let mut s = format!("{} vs {}: ", u.label, base.label);
            if let Some(c) = &prov.single_change {
                s.push_str(&format!("single change {c}; "));
            } else if !prov.changed.is_empty() {
                s.push_str(&format!("{} settings differ; ", prov.changed.len()));
            }
            let tps = row(rows, "steady gen tok/s", &u.label);
            let run = row(rows, "mean running", &u.label);
            // a run with no steady rate: its throughput is not compared, and why is said
            for (x, which) in [(base, "the baseline"), (u, "this run")] {
                if let Some(why) = &x.no_steady {
                    s.push_str(&format!(
                        "{} ({which}) has {why}: steady throughput not compared; ",
                        x.label
                    ));
                }
            }
            match tps {
                Some(t) if t.ratio.is_some() => {
                    let r = t.ratio.unwrap_or(1.0) - 1.0;
                    let a = t.values[0].unwrap_or(0.0);
                    s.push_str(&format!("steady tok/s {}", pct(r)));
                    if let (Some(lo), Some(hi)) = (t.ci_low, t.ci_high) {
                        s.push_str(&format!(" [{}, {}]", pct(lo / a), pct(hi / a)));
                    }
                    s.push_str(match t.verdict {
                        Verdict::Better => " (better)",
                        Verdict::Worse => " (worse)",
                        _ => " (no significant change)",
                    });
                    if let Some(rr) = run.and_then(|x| x.ratio) {
                        let verb = if rr >= 1.0 { "rose" } else { "fell" };
                        s.push_str(&format!(
                            " while mean running {verb} {:.0}%",
                            (rr - 1.0).abs() * 100.0
                        ));
                        // what one more running request added, against a request's own rate
                        if let (Some(ra), Some(rb), Some(tb)) = (
                            run.and_then(|x| x.values[0]),
                            run.and_then(|x| x.values[1]),
                            t.values[1],
                        ) {
                            if rb - ra > 1.0 && a > 0.0 && ra > 0.0 {
                                let marginal = (tb - a) / (rb - ra);
                                let per_request = a / ra;
                                s.push_str(&format!(
                                    ": each extra running request adds {:.0}% of a request's rate",
                                    (marginal / per_request * 100.0).max(0.0)
                                ));
                            }
                        }
                    }
                    s.push('.');
                    let flat = !matches!(t.verdict, Verdict::Better);
                    s.push_str(&why(base, u, flat));
                }
                _ => {
                    let moved: Vec<String> = rows
                        .iter()
                        .filter(|r| {
                            r.run == u.label
                                && matches!(r.verdict, Verdict::Better | Verdict::Worse)
                        })
                        .map(|r| format!("{} {}", r.name, r.verdict.as_str()))
                        .collect();
                    if moved.is_empty() {
                        s.push_str("no figure changed beyond the noise and the threshold.");
                    } else {
                        s.push_str(&moved.join(", "));
                        s.push('.');
                    }
                }
            }
            s.push_str(&tools(base, u));
            s
        })
        .collect()
}

/// A caution when the runs were measured by different load generators: a difference may
/// be the tools' (their definitions, their own overhead), not the server's.
fn tools(base: &Unit<'_>, u: &Unit<'_>) -> String {
    let of = |x: &Unit<'_>| {
        x.settings
            .get("load generator")
            .cloned()
            .unwrap_or_default()
    };
    let (a, b) = (of(base), of(u));
    if a.is_empty() || b.is_empty() || a == b {
        return String::new();
    }
    format!(
        " Measured by different load generators ({} → {}): their definitions differ (see each run's notes in `tokstat report`) and each adds its own client overhead, so a difference may be the tools', not the server's.",
        a.join("/"),
        b.join("/")
    )
}

/// Why throughput did not rise (or what limits the compared run), from the runs' hints.
fn why(base: &Unit<'_>, u: &Unit<'_>, flat: bool) -> String {
    let has = |x: &Unit<'_>, id: &str| x.hints.iter().any(|h| h.id == id);
    let mut out = String::new();
    if has(u, "saturated") || has(base, "saturated") {
        let knee = u.knee.or(base.knee);
        out.push_str(&format!(
            " The server is saturated{}: more concurrency buys little throughput, only latency.",
            knee.map_or(String::new(), |k| format!(
                " (throughput flattens at about {k:.0} running requests)"
            ))
        ));
    }
    if has(u, "kv_bound") {
        out.push_str(
            " The KV cache is the limit in the compared run: more concurrency waits for memory.",
        );
    }
    if has(u, "running_cap") {
        out.push_str(" Running requests are held at the configured maximum while requests queue: the cap, not the GPU, limits throughput.");
    }
    if has(u, "client_bound") {
        out.push_str(" The compared run's server waits for work: the client sends too little.");
    }
    if out.is_empty() && flat {
        out.push_str(
            " Neither run's hints name a limit: look at the curve and the per-instance figures.",
        );
    }
    out
}
