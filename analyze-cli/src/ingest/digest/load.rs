//! What the concurrency curve needs of the intervals: per `running` value, how many
//! intervals, how long, and how often each generation rate was logged.
//!
//! Engines print rates with one or two decimals, so a long log repeats the same few
//! thousand (running, rate) pairs millions of times: counting the pairs gives the curve's
//! exact quantiles in memory that grows with the distinct pairs, not with the lines (16,847
//! pairs for the 1.8 million decode lines of the 1.1 GB benchmark log).

use super::grid::{rate_steps, RATE_SCALE};
use rustc_hash::FxHashMap;

/// One `running` value's intervals.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Level {
    pub lines: i64,
    pub ms: i64,
    /// Milliseconds times `running` (saturating, as counts beyond reason are).
    pub running_ms: i128,
}

/// `running` values below this are counted in a table; the others (beyond reason) in a map.
const DENSE: usize = 4096;

/// Bits of a packed rate key that hold the rate's steps (rates up to 10^8 tokens/s).
const STEP_BITS: u32 = 40;

/// The counts of all intervals that take part in the curve.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Load {
    /// By `running` (as a whole number): below [`DENSE`] by place (whose `running_ms` is
    /// `ms` times the place, made when read), the rest by value.
    dense: Vec<Level>,
    sparse: FxHashMap<u32, Level>,
    /// How many intervals logged each rate at each `running`: a whole `running` and a rate
    /// of whole [`RATE_SCALE`] steps (every rate an engine prints) packed in one word, whose
    /// hash is one product; other pairs in `odd`.
    packed: FxHashMap<u64, i64>,
    odd: FxHashMap<(u32, u64), i64>,
}

/// `ms × running`, as the curve weighs time by concurrency: one 64-bit product where
/// `running` fits (a float to `i128`, and an overflow-checked `i128` product, are library
/// calls), saturating beyond reason.
fn weighted(ms: i64, running: f32) -> i128 {
    let r = f64::from(running);
    if r < 9.0e18 {
        i128::from(ms) * i128::from(r as i64)
    } else {
        i128::from(ms).saturating_mul(r as i128)
    }
}

/// The packed key of a pair, if it is a whole `running` below 2^24 and a rate of whole
/// steps below 2^40 whose steps give back the rate exactly (a division of two whole numbers
/// rounds as the reading of the printed decimal does).
#[inline]
fn pack(running: f32, gen: f64) -> Option<u64> {
    let r = running as u32;
    let steps = rate_steps(gen);
    let fits = (r as f32) == running
        && r < (1 << 24)
        && (0..1i128 << STEP_BITS).contains(&steps)
        && steps as f64 / RATE_SCALE == gen;
    fits.then(|| (u64::from(r) << STEP_BITS) | steps as u64)
}

impl Load {
    /// Adds (`sign` 1) or removes (-1) an interval of `ms` at `running` with rate `gen`.
    /// Only intervals with a known concurrency of at least one and some length take part.
    /// (Inlined in the run's per-line path: a call cost a tenth of it.)
    #[inline(always)]
    pub fn add(&mut self, running: f32, gen: f64, ms: i64, sign: i64) {
        if !(running.is_finite() && running >= 1.0 && ms > 0) {
            return;
        }
        let r = f64::from(running) as u32;
        let i = r as usize;
        if i < self.dense.len() {
            let level = &mut self.dense[i];
            level.lines += sign;
            level.ms += ms * sign;
        } else {
            self.add_level(r, running, ms, sign);
        }
        match pack(running, gen) {
            Some(k) => *self.packed.entry(k).or_default() += sign,
            None => self.add_odd(running, gen, sign),
        }
    }

    #[cold]
    fn add_odd(&mut self, running: f32, gen: f64, sign: i64) {
        *self
            .odd
            .entry((running.to_bits(), gen.to_bits()))
            .or_default() += sign;
    }

    /// The counts of a `running` value not seen yet, or beyond the table.
    #[cold]
    fn add_level(&mut self, r: u32, running: f32, ms: i64, sign: i64) {
        let i = r as usize;
        let level = if i < DENSE {
            self.dense.resize(i + 1, Level::default());
            &mut self.dense[i]
        } else {
            let level = self.sparse.entry(r).or_default();
            let rm = weighted(ms, running);
            level.running_ms = if sign > 0 {
                level.running_ms.saturating_add(rm)
            } else {
                level.running_ms.saturating_sub(rm)
            };
            level
        };
        level.lines += sign;
        level.ms += ms * sign;
    }

    /// The counts by `running` value (those with some line or time).
    pub fn levels(&self) -> impl Iterator<Item = (u32, Level)> + '_ {
        let dense = self.dense.iter().enumerate().map(|(r, l)| {
            let r = r as u32;
            let running_ms = i128::from(l.ms) * i128::from(r);
            (r, Level { running_ms, ..*l })
        });
        dense
            .chain(self.sparse.iter().map(|(r, l)| (*r, l.clone())))
            .filter(|(_, l)| l.lines != 0 || l.ms != 0)
    }

    /// How many intervals logged each `(running, rate)` pair (counts may be 0 or below
    /// while intervals are taken out and put back).
    pub fn rates(&self) -> impl Iterator<Item = ((f32, f64), i64)> + '_ {
        let packed = self.packed.iter().map(|(&k, &n)| {
            let r = (k >> STEP_BITS) as u32 as f32;
            let steps = k & ((1 << STEP_BITS) - 1);
            ((r, steps as f64 / RATE_SCALE), n)
        });
        let odd = self
            .odd
            .iter()
            .map(|(&(r, g), &n)| ((f32::from_bits(r), f64::from_bits(g)), n));
        packed.chain(odd)
    }

    /// How many distinct pairs it counts.
    fn pairs(&self) -> usize {
        self.packed.len() + self.odd.len()
    }

    pub fn merge(&mut self, mut o: Load) {
        // (into the one with more distinct rates: counts add up in any order)
        if o.pairs() > self.pairs() {
            std::mem::swap(self, &mut o);
        }
        for (i, l) in o.dense.iter().enumerate() {
            if i >= self.dense.len() {
                self.dense.resize(i + 1, Level::default());
            }
            let e = &mut self.dense[i];
            e.lines += l.lines;
            e.ms += l.ms;
        }
        for (r, l) in o.sparse {
            let e = self.sparse.entry(r).or_default();
            e.lines += l.lines;
            e.ms += l.ms;
            e.running_ms = e.running_ms.saturating_add(l.running_ms);
        }
        for (k, n) in o.packed {
            *self.packed.entry(k).or_default() += n;
        }
        for (k, n) in o.odd {
            *self.odd.entry(k).or_default() += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::Lcg;

    /// Every pair comes back bit for bit, packed or not: rates printed with up to four
    /// decimals (as engines print them) are packed, finer rates, fractional or huge
    /// concurrencies are counted as they are.
    #[test]
    fn pairs_come_back_exactly() {
        let mut rng = Lcg(7);
        let mut load = Load::default();
        let mut want: Vec<((u32, u64), i64)> = Vec::new();
        for k in 0..20_000u64 {
            let running = match k % 7 {
                0 => 1.5 + rng.below(100) as f32,
                1 => (1u32 << 25) as f32,
                _ => 1.0 + rng.below(5000) as f32,
            };
            let decimals = rng.below(7) as i32;
            let gen = rng.below(100_000_000) as f64 / 10f64.powi(decimals);
            load.add(running, gen, 1 + rng.below(3000) as i64, 1);
            want.push(((running.to_bits(), gen.to_bits()), 1));
        }
        assert!(!load.packed.is_empty() && !load.odd.is_empty());
        let mut got: Vec<_> = load
            .rates()
            .map(|((r, g), n)| ((r.to_bits(), g.to_bits()), n))
            .collect();
        got.sort_unstable();
        want.sort_unstable();
        want.dedup_by(|a, b| {
            let same = a.0 == b.0;
            if same {
                b.1 += a.1;
            }
            same
        });
        assert_eq!(got, want);
    }

    /// A level's concurrency-weighted time is `running` times its time, in the table and
    /// beyond it, after intervals are taken out again.
    #[test]
    fn weighted_time_of_levels() {
        let mut load = Load::default();
        for (running, ms) in [(3.0, 1000), (3.0, 500), (5000.0, 10), (3.0, 200)] {
            load.add(running, 12.5, ms, 1);
        }
        load.add(3.0, 12.5, 200, -1);
        let levels: Vec<_> = load
            .levels()
            .map(|(r, l)| (r, l.lines, l.ms, l.running_ms))
            .collect();
        assert_eq!(levels, vec![(3, 2, 1500, 4500), (5000, 1, 10, 50_000)]);
    }
}
