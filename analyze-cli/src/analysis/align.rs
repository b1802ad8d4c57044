//! The offset between a client's clock and a server's, from the data (issue 55, item 2):
//! the client's requests in flight against the server's running + waiting requests. A
//! load generator stamps its requests in Unix time; a server stamps its log by its own
//! clock (a timezone's hours off, some seconds of skew, vLLM's without a year). The offset
//! `δ` (server = true + δ) is the middle of the offsets under which the two counts agree
//! best; its interval is every offset that agrees as well, to within two readings' worth of
//! one request (the server's whole-second stamps make it about a second wide).
//!
//! Never by assumption: where the counts do not agree well enough at their best (another
//! day's client run, another server), where the server's count never moves (nothing to
//! line up), or where a second offset far from the best agrees as well (a periodic load),
//! the alignment is refused with the reason.

use serde::Serialize;

/// How far the best offset's mean mismatch may be, as a share of the server's mean count
/// while busy, for the two sides to be one run's.
const MISMATCH_SHARE: f64 = 0.25;

/// An offset agrees "as well" as the best when its mean mismatch is within this many
/// readings' worth of one request of the best's.
const AS_WELL_READINGS: f64 = 2.0;

/// The fine search's step, seconds.
const FINE_S: f64 = 0.05;

/// One server reading: its time by the server's clock (seconds) and its requests in flight
/// (running + waiting).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub t: f64,
    pub in_flight: f64,
}

/// The offset found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Offset {
    /// server − client, seconds, and its interval.
    pub offset_s: f64,
    pub low_s: f64,
    pub high_s: f64,
    /// The offset as a timezone's whole quarter hours plus seconds of skew.
    pub zone_hours: f64,
    pub skew_s: f64,
    /// The mean |client − server| in-flight count at the best offset, and over how many
    /// server readings.
    pub mismatch: f64,
    pub readings: usize,
}

/// The alignment of two sides, or why not.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Alignment {
    Aligned(Offset),
    Refused(String),
}

/// The client's requests in flight over time, from their send and end times.
struct InFlight {
    starts: Vec<f64>,
    ends: Vec<f64>,
}

impl InFlight {
    fn new(requests: &[(f64, f64)]) -> InFlight {
        let mut starts: Vec<f64> = requests.iter().map(|r| r.0).collect();
        let mut ends: Vec<f64> = requests.iter().map(|r| r.1).collect();
        starts.sort_by(f64::total_cmp);
        ends.sort_by(f64::total_cmp);
        InFlight { starts, ends }
    }

    fn at(&self, t: f64) -> f64 {
        let s = self.starts.partition_point(|x| *x <= t);
        let e = self.ends.partition_point(|x| *x <= t);
        (s - e) as f64
    }

    /// Mean |client − server| with the server's clock `offset` ahead.
    fn mismatch(&self, server: &[Reading], offset: f64) -> f64 {
        server
            .iter()
            .map(|r| (self.at(r.t - offset) - r.in_flight).abs())
            .sum::<f64>()
            / server.len() as f64
    }
}

/// The offset between the client's requests (`(sent, ended)`, Unix seconds) and the
/// server's readings (its clock's seconds), searched over every offset that puts the
/// client's span inside the server's readings' (padded by the client's span on each
/// side). `step_s` is the server's reading interval (its stats interval): the coarse
/// search's step is half of it. `stamp_s` is its stamps' resolution (1 for vLLM's
/// `HH:MM:SS`, 0.001 for milliseconds): a stamp cut to it was written up to `stamp_s`
/// after its reading, so the interval reaches that much above the offsets that agree.
pub fn offset(requests: &[(f64, f64)], server: &[Reading], step_s: f64, stamp_s: f64) -> Alignment {
    let requests: Vec<(f64, f64)> = requests
        .iter()
        .copied()
        .filter(|(s, e)| s.is_finite() && e.is_finite() && e >= s)
        .collect();
    if requests.len() < 2 || server.len() < 5 {
        return Alignment::Refused(format!(
            "too little to line up: {} client request(s) with times, {} server reading(s) (at least 2 and 5)",
            requests.len(),
            server.len()
        ));
    }
    let busy: Vec<f64> = server
        .iter()
        .map(|r| r.in_flight)
        .filter(|n| *n > 0.0)
        .collect();
    let (lo, hi) = server
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| {
            (a.min(r.in_flight), b.max(r.in_flight))
        });
    if busy.is_empty() || lo == hi {
        return Alignment::Refused(
            "the server's requests in flight never change: nothing to line the client's up with"
                .into(),
        );
    }
    let flight = InFlight::new(&requests);
    let c_first = flight.starts[0];
    let c_last = *flight.ends.last().expect("two requests");
    let span = c_last - c_first;
    let s_first = server.iter().map(|r| r.t).fold(f64::INFINITY, f64::min);
    let s_last = server.iter().map(|r| r.t).fold(f64::NEG_INFINITY, f64::max);
    // every offset that overlaps the two spans
    let (from, to) = (s_first - c_last - span, s_last - c_first + span);
    let coarse = (step_s / 2.0).max(FINE_S);
    let steps = ((to - from) / coarse).ceil() as usize;
    let scores: Vec<(f64, f64)> = (0..=steps)
        .map(|k| {
            let d = from + k as f64 * coarse;
            (d, flight.mismatch(server, d))
        })
        .collect();
    let &(rough, _) = scores
        .iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("one step at least");
    // the fine search around it, and its interval
    let fine: Vec<(f64, f64)> = (0..=((4.0 * coarse) / FINE_S).round() as usize)
        .map(|k| {
            let d = rough - 2.0 * coarse + k as f64 * FINE_S;
            (d, flight.mismatch(server, d))
        })
        .collect();
    let least = fine.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
    let tol = AS_WELL_READINGS / server.len() as f64;
    let within: Vec<f64> = fine
        .iter()
        .filter(|(_, m)| *m <= least + tol)
        .map(|(d, _)| *d)
        .collect();
    let low = within.iter().copied().fold(f64::INFINITY, f64::min);
    let high = within.iter().copied().fold(f64::NEG_INFINITY, f64::max) + stamp_s.max(0.0);
    let best = (low + high) / 2.0;
    let mean_busy = busy.iter().sum::<f64>() / busy.len() as f64;
    if least > MISMATCH_SHARE * mean_busy {
        return Alignment::Refused(format!(
            "the client's requests in flight and the server's running + waiting do not agree under any offset (at best {least:.2} requests apart on average, against {mean_busy:.2} in flight): not one run's two sides (another day's or another server's), so they are not lined up"
        ));
    }
    // a second offset, away from the best's interval by more than two readings, that
    // agrees as well
    let reach = (high - low) / 2.0 + 2.0 * step_s.max(coarse);
    let rival = scores
        .iter()
        .filter(|(d, m)| (d - best).abs() > reach && *m <= least + tol)
        .min_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((d, m)) = rival {
        return Alignment::Refused(format!(
            "two offsets agree as well ({best:.1} s and {d:.1} s: {least:.2} and {m:.2} requests apart on average): the load repeats itself, so which one is true cannot be told"
        ));
    }
    let zone_hours = (best / 900.0).round() * 0.25;
    Alignment::Aligned(Offset {
        offset_s: best,
        low_s: low,
        high_s: high,
        zone_hours,
        skew_s: best - zone_hours * 3600.0,
        mismatch: least,
        readings: server.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client whose in-flight count steps 0 → 4 → 8 → 2 → 0, and a server reading it
    /// every second on a clock 5 h 7.3 s ahead, stamped to the whole second.
    fn sides(offset: f64) -> (Vec<(f64, f64)>, Vec<Reading>) {
        let t0 = 1_800_000_000.0;
        let mut req = Vec::new();
        for k in 0..4 {
            req.push((t0 + 10.0 + k as f64 * 0.01, t0 + 40.0));
        }
        for k in 0..4 {
            req.push((t0 + 20.0 + k as f64 * 0.01, t0 + 30.0));
        }
        for k in 0..2 {
            req.push((t0 + 25.0, t0 + 50.0 + k as f64));
        }
        let flight = InFlight::new(&req);
        let server = (0..80)
            .map(|s| {
                let truth = t0 + s as f64 + 0.37;
                Reading {
                    t: (truth + offset).floor(),
                    in_flight: flight.at(truth),
                }
            })
            .collect();
        (req, server)
    }

    #[test]
    fn the_offset_is_recovered_with_its_interval() {
        let injected = 5.0 * 3600.0 + 7.3;
        let (req, server) = sides(injected);
        let Alignment::Aligned(o) = offset(&req, &server, 1.0, 1.0) else {
            panic!("{:?}", offset(&req, &server, 1.0, 1.0))
        };
        assert!((o.offset_s - injected).abs() <= 1.0, "{o:?}");
        assert!(o.low_s <= injected && injected <= o.high_s, "{o:?}");
        assert_eq!(o.zone_hours, 5.0);
        assert!((o.skew_s - 7.3).abs() <= 1.0);
    }

    #[test]
    fn a_server_that_never_moves_is_refused() {
        let (req, mut server) = sides(0.0);
        for r in &mut server {
            r.in_flight = 3.0;
        }
        assert!(matches!(
            offset(&req, &server, 1.0, 1.0),
            Alignment::Refused(_)
        ));
    }

    #[test]
    fn another_runs_server_is_refused() {
        let (req, _) = sides(0.0);
        // a server busy in a pattern the client never had
        let server: Vec<Reading> = (0..80)
            .map(|s| Reading {
                t: s as f64,
                in_flight: if s % 7 < 3 { 12.0 } else { 0.0 },
            })
            .collect();
        let got = offset(&req, &server, 1.0, 1.0);
        assert!(
            matches!(got, Alignment::Refused(ref why) if why.contains("do not agree")),
            "{got:?}"
        );
    }
}
