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

/// The most offsets one scan weighs.
const MAX_STEPS: usize = 20_000;

/// One server reading: the stamps of the lines (or scrapes) it averages, by the server's
/// clock (seconds), how many there are, and their mean requests in flight (running +
/// waiting). One line is a reading with `t == to` and `lines == 1`; a time cell of a long
/// log averages its lines, and is compared with the client's count at as many evenly
/// spaced times over the same stamps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    pub t: f64,
    pub to: f64,
    pub lines: u32,
    pub in_flight: f64,
}

impl Reading {
    /// A reading of one line or scrape.
    pub fn at(t: f64, in_flight: f64) -> Reading {
        Reading {
            t,
            to: t,
            lines: 1,
            in_flight,
        }
    }
}

/// The offset found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Offset {
    /// server − client, seconds, and its interval.
    pub offset_s: f64,
    pub low_s: f64,
    pub high_s: f64,
    /// The offset as a timezone's whole quarter hours plus seconds of skew (null where the
    /// client's clock is not Unix time: a monotonic clock has no zone).
    pub zone_hours: Option<f64>,
    pub skew_s: Option<f64>,
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

impl Alignment {
    pub fn offset(&self) -> Option<&Offset> {
        match self {
            Alignment::Aligned(o) => Some(o),
            Alignment::Refused(_) => None,
        }
    }
}

/// The client's requests in flight over time, from their send and end times.
pub struct InFlight {
    starts: Vec<f64>,
    ends: Vec<f64>,
    /// Prefix sums of `starts` and `ends`, for [`InFlight::mean`].
    start_sums: Vec<f64>,
    end_sums: Vec<f64>,
}

impl InFlight {
    /// From `(sent, ended)` pairs; pairs not finite or ending before they start are left out.
    pub fn new(requests: &[(f64, f64)]) -> InFlight {
        let ok = || {
            requests
                .iter()
                .filter(|(s, e)| s.is_finite() && e.is_finite() && e >= s)
        };
        let mut starts: Vec<f64> = ok().map(|r| r.0).collect();
        let mut ends: Vec<f64> = ok().map(|r| r.1).collect();
        starts.sort_by(f64::total_cmp);
        ends.sort_by(f64::total_cmp);
        let sums = |v: &[f64]| {
            std::iter::once(0.0)
                .chain(v.iter().scan(0.0, |a, x| {
                    *a += x;
                    Some(*a)
                }))
                .collect::<Vec<f64>>()
        };
        InFlight {
            start_sums: sums(&starts),
            end_sums: sums(&ends),
            starts,
            ends,
        }
    }

    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The first send and the last end.
    pub fn span(&self) -> Option<(f64, f64)> {
        Some((*self.starts.first()?, *self.ends.last()?))
    }

    /// Requests in flight at `t`.
    pub fn at(&self, t: f64) -> f64 {
        let s = self.starts.partition_point(|x| *x <= t);
        let e = self.ends.partition_point(|x| *x <= t);
        (s - e) as f64
    }

    /// The integral of the count up to `t` (request-seconds).
    fn area(&self, t: f64) -> f64 {
        let s = self.starts.partition_point(|x| *x <= t);
        let e = self.ends.partition_point(|x| *x <= t);
        (t * s as f64 - self.start_sums[s]) - (t * e as f64 - self.end_sums[e])
    }

    /// The mean count over `[a, b]` (the count at `a` for an empty span).
    pub fn mean(&self, a: f64, b: f64) -> f64 {
        if b > a {
            (self.area(b) - self.area(a)) / (b - a)
        } else {
            self.at(a)
        }
    }

    /// The count as a reading sees it with the server's clock `offset` ahead: at its one
    /// stamp, at each of a few lines' evenly spaced stamps, or for many lines the mean
    /// over the time they stand for (each line the middle of its share: the same mean to
    /// within one line's worth, in one look-up rather than one per line).
    fn seen(&self, r: &Reading, offset: f64) -> f64 {
        let n = r.lines.max(1);
        if n == 1 || r.to <= r.t {
            return self.at(r.t - offset);
        }
        let step = (r.to - r.t) / f64::from(n - 1);
        if n > 4 {
            let (a, b) = (r.t - step / 2.0 - offset, r.to + step / 2.0 - offset);
            return self.mean(a, b);
        }
        (0..n)
            .map(|k| self.at(r.t + f64::from(k) * step - offset))
            .sum::<f64>()
            / f64::from(n)
    }

    /// Mean |client − server| with the server's clock `offset` ahead.
    fn mismatch(&self, server: &[Reading], offset: f64) -> f64 {
        server
            .iter()
            .map(|r| (self.seen(r, offset) - r.in_flight).abs())
            .sum::<f64>()
            / server.len() as f64
    }
}

/// Why two sides are not lined up: their counts are `least` apart at best, against
/// `mean_busy` in flight.
fn refused_apart(least: f64, mean_busy: f64) -> Alignment {
    Alignment::Refused(format!(
        "the client's requests in flight and the server's running + waiting do not agree under any offset (at best {least:.2} requests apart on average, against {mean_busy:.2} in flight): not one run's two sides (another day's run, another server, or a server that also served other clients or runs in what was read: give it the log or scrapes of this run's window), so they are not lined up"
    ))
}

/// The offset between the client's requests (`(sent, ended)`, Unix seconds) and the
/// server's readings (its clock's seconds), searched over every offset that puts the
/// client's span inside the server's readings' (padded by the client's span on each
/// side). `step_s` is the server's reading interval (its stats interval, or its time
/// cells' length): the coarse search's step is half of it, and each finer search a tenth
/// of the one before around the best, down to 50 ms. `stamp_s` is its stamps' resolution
/// (1 for vLLM's `HH:MM:SS`, 0.001 for milliseconds): a stamp cut to it was written up to
/// `stamp_s` after its reading, so the interval reaches that much above the offsets that
/// agree.
pub fn offset(requests: &[(f64, f64)], server: &[Reading], step_s: f64, stamp_s: f64) -> Alignment {
    let flight = InFlight::new(requests);
    if flight.len() < 2 || server.len() < 5 {
        return Alignment::Refused(format!(
            "too little to line up: {} client request(s) with times, {} server reading(s) (at least 2 and 5)",
            flight.len(),
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
    let (c_first, c_last) = flight.span().expect("two requests");
    let span = c_last - c_first;
    // the offsets under which some busy reading falls inside the client's span (padded by
    // a reading's length): under any other, the client's busy time meets an idle server
    // and the counts cannot agree, so only these are searched
    let pad = step_s.max(FINE_S);
    let mut windows: Vec<(f64, f64)> = server
        .iter()
        .filter(|r| r.in_flight > 0.0)
        .map(|r| (r.t - c_last - pad, r.to - c_first + pad))
        .collect();
    windows.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::new();
    for w in windows {
        match merged.last_mut() {
            Some(m) if w.0 <= m.1 => m.1 = m.1.max(w.1),
            _ => merged.push(w),
        }
    }
    let searched: f64 = merged.iter().map(|w| w.1 - w.0).sum();
    // (at most MAX_STEPS offsets a scan: a long log against a long run is searched as
    // coarsely as that asks, then finer around the best)
    let coarse = (step_s / 2.0).max(FINE_S).max(searched / MAX_STEPS as f64);
    let scan = |from: f64, step: f64, n: usize| -> Vec<(f64, f64)> {
        (0..=n)
            .map(|k| {
                let d = from + k as f64 * step;
                (d, flight.mismatch(server, d))
            })
            .collect()
    };
    let best_of = |v: &[(f64, f64)]| {
        *v.iter()
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .expect("one step at least")
    };
    let scores: Vec<(f64, f64)> = merged
        .iter()
        .flat_map(|w| scan(w.0, coarse, ((w.1 - w.0) / coarse).ceil() as usize))
        .collect();
    let (mut rough, rough_least) = best_of(&scores);
    let mean_busy = busy.iter().sum::<f64>() / busy.len() as f64;
    // far from agreeing even at the coarse best (another run's two sides): the finer
    // searches could not bring it within reach
    if rough_least > 2.0 * MISMATCH_SHARE * mean_busy {
        return refused_apart(rough_least, mean_busy);
    }
    // finer and finer around it
    let mut step = coarse;
    while step / 10.0 >= FINE_S {
        let finer = step / 10.0;
        (rough, _) = best_of(&scan(rough - 2.0 * step, finer, 40));
        step = finer;
    }
    // the offsets that agree as well, at the finest step (or as fine as MAX_STEPS allows
    // over the reach): widened until they end inside it
    let tol = AS_WELL_READINGS / server.len() as f64;
    let mut reach = 2.0 * coarse;
    let (least, low, high) = loop {
        let fine_s = FINE_S.max(2.0 * reach / MAX_STEPS as f64);
        let fine = scan(
            rough - reach,
            fine_s,
            (2.0 * reach / fine_s).round() as usize,
        );
        let least = fine.iter().map(|f| f.1).fold(f64::INFINITY, f64::min);
        let within: Vec<f64> = fine
            .iter()
            .filter(|(_, m)| *m <= least + tol)
            .map(|(d, _)| *d)
            .collect();
        let low = within.iter().copied().fold(f64::INFINITY, f64::min);
        let high = within.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let inside = low > rough - reach + fine_s / 2.0 && high < rough + reach - fine_s / 2.0;
        if inside || reach > 8.0 * coarse.max(span) {
            break (least, low, high + stamp_s.max(0.0));
        }
        reach *= 2.0;
    };
    let best = (low + high) / 2.0;
    if least > MISMATCH_SHARE * mean_busy {
        return refused_apart(least, mean_busy);
    }
    // a second offset, away from the best's interval by more than two readings, that
    // agrees as well
    let apart = (high - low) / 2.0 + 2.0 * step_s.max(coarse);
    let rival = scores
        .iter()
        .filter(|(d, m)| (d - best).abs() > apart && *m <= least + tol)
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
        zone_hours: Some(zone_hours),
        skew_s: Some(best - zone_hours * 3600.0),
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
                Reading::at((truth + offset).floor(), flight.at(truth))
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
        assert_eq!(o.zone_hours, Some(5.0));
        assert!((o.skew_s.unwrap() - 7.3).abs() <= 1.0);
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
            .map(|s| Reading::at(s as f64, if s % 7 < 3 { 12.0 } else { 0.0 }))
            .collect();
        let got = offset(&req, &server, 1.0, 1.0);
        assert!(
            matches!(got, Alignment::Refused(ref why) if why.contains("do not agree")),
            "{got:?}"
        );
    }

    /// Eight hours of a load that changes every few minutes, read as five-minute cells of
    /// thirty stats lines each (a long log's digest): the offset is found to within a
    /// cell.
    #[test]
    fn a_long_run_in_cells_is_aligned() {
        let t0 = 1_800_000_000.0;
        let injected = -8.0 * 3600.0 + 42.0;
        // requests of 50 s, sent at a rate that changes every 7 minutes
        let mut req = Vec::new();
        let mut t = t0;
        let mut k = 0u64;
        while t < t0 + 8.0 * 3600.0 {
            let rate = [0.5, 2.0, 1.0, 3.0, 0.2][((t - t0) / 420.0) as usize % 5];
            req.push((t, t + 50.0));
            t += 1.0 / rate;
            k += 1;
        }
        assert!(k > 1000);
        let flight = InFlight::new(&req);
        let server: Vec<Reading> = (0..96)
            .map(|c| {
                let from = t0 + c as f64 * 300.0;
                let lines: Vec<f64> = (0..30).map(|l| flight.at(from + l as f64 * 10.0)).collect();
                Reading {
                    t: from + injected,
                    to: from + 290.0 + injected,
                    lines: 30,
                    in_flight: lines.iter().sum::<f64>() / 30.0,
                }
            })
            .collect();
        let got = offset(&req, &server, 300.0, 1.0);
        let Alignment::Aligned(o) = got else {
            panic!("{got:?}")
        };
        assert!((o.offset_s - injected).abs() <= 10.0, "{o:?}");
        assert!(o.low_s <= injected && injected <= o.high_s, "{o:?}");
        assert_eq!(o.zone_hours, Some(-8.0));
    }

    #[test]
    fn the_mean_in_flight_is_the_counts_integral() {
        let f = InFlight::new(&[(0.0, 10.0), (5.0, 6.0), (2.0, 20.0)]);
        assert_eq!(f.at(5.5), 3.0);
        assert!((f.mean(0.0, 10.0) - (10.0 + 1.0 + 8.0) / 10.0).abs() < 1e-12);
        assert_eq!(f.mean(5.5, 5.5), 3.0);
    }
}
