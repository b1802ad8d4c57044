//! What the concurrency curve needs of the intervals: per `running` value, how many
//! intervals, how long, and how often each generation rate was logged.
//!
//! Engines print rates with one or two decimals, so a long log repeats the same few
//! thousand (running, rate) pairs millions of times: counting the pairs gives the curve's
//! exact quantiles in memory that grows with the distinct pairs, not with the lines (16,847
//! pairs for the 1.8 million decode lines of the 1.1 GB benchmark log).

use rustc_hash::FxHashMap;

/// One `running` value's intervals.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Level {
    pub lines: i64,
    pub ms: i64,
    /// Milliseconds times `running` (saturating, as counts beyond reason are).
    pub running_ms: i128,
}

/// `running` values below this are counted in a table; the others (beyond reason) in a map.
const DENSE: usize = 4096;

/// The counts of all intervals that take part in the curve.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Load {
    /// By `running` (as a whole number): below [`DENSE`] by place, the rest by value.
    dense: Vec<Level>,
    sparse: FxHashMap<u32, Level>,
    /// How many intervals logged each rate at each `running`: `(running bits, rate bits)`.
    pub rates: FxHashMap<(u32, u64), i64>,
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

impl Load {
    /// Adds (`sign` 1) or removes (-1) an interval of `ms` at `running` with rate `gen`.
    /// Only intervals with a known concurrency of at least one and some length take part.
    #[inline]
    pub fn add(&mut self, running: f32, gen: f64, ms: i64, sign: i64) {
        if !(running.is_finite() && running >= 1.0 && ms > 0) {
            return;
        }
        let r = f64::from(running) as u32;
        let level = self.level(r);
        level.lines += sign;
        level.ms += ms * sign;
        let rm = weighted(ms, running);
        level.running_ms = if sign > 0 {
            level.running_ms.saturating_add(rm)
        } else {
            level.running_ms.saturating_sub(rm)
        };
        *self
            .rates
            .entry((running.to_bits(), gen.to_bits()))
            .or_default() += sign;
    }

    /// The counts of `running` value `r`.
    #[inline]
    fn level(&mut self, r: u32) -> &mut Level {
        let i = r as usize;
        if i < DENSE {
            if i >= self.dense.len() {
                self.dense.resize(i + 1, Level::default());
            }
            &mut self.dense[i]
        } else {
            self.sparse.entry(r).or_default()
        }
    }

    /// The counts by `running` value (those with some line or time).
    pub fn levels(&self) -> impl Iterator<Item = (u32, &Level)> + '_ {
        let dense = self.dense.iter().enumerate().map(|(r, l)| (r as u32, l));
        dense
            .chain(self.sparse.iter().map(|(r, l)| (*r, l)))
            .filter(|(_, l)| l.lines != 0 || l.ms != 0)
    }

    pub fn merge(&mut self, mut o: Load) {
        // (into the one with more distinct rates: counts add up in any order)
        if o.rates.len() > self.rates.len() {
            std::mem::swap(self, &mut o);
        }
        for (r, l) in o.levels() {
            let e = self.level(r);
            e.lines += l.lines;
            e.ms += l.ms;
            e.running_ms = e.running_ms.saturating_add(l.running_ms);
        }
        for (k, n) in &o.rates {
            *self.rates.entry(*k).or_default() += n;
        }
    }
}
