//! Time cells: the sums of an instance's lines over fixed lengths of time, from which any
//! timeline bucket is made.
//!
//! Cells are aligned on multiples of their length since 1970, as timeline buckets are (a
//! bucket starts at a multiple of its length), and their length divides every bucket length
//! the timeline may still choose for the span seen so far ([`base_for`]): so each bucket is
//! a whole number of cells. As the span grows, neighbouring cells are merged into longer
//! ones, which keeps their number near a few hundred whatever the time covered.
//!
//! Every sum is an integer (rates in [`RATE_SCALE`] steps times milliseconds, fractions in
//! [`FRACTION_SCALE`] steps): integer sums do not depend on the order they are added in, so
//! cells of chunks read on all cores, of files given in any order, and of merged cells all
//! give the same totals to the last digit.

/// The most buckets a timeline may have: a `--bucket` far too short for the run's span
/// would otherwise fill the memory.
pub const MAX_BUCKETS: i64 = 1_000_000;

/// Cells an automatic grid grows to before its length follows the times it is asked to
/// reach, beyond the stamps it has seen (see `Grid::reach`).
const SPREAD_CELLS: i64 = 100_000;

/// Rates are counted in steps of 1/10,000 token/s: engines print them with one or two
/// decimals, so every logged rate is a whole number of steps.
pub const RATE_SCALE: f64 = 10_000.0;
/// Fractions and means (KV usage, accept length) in steps of 2^-40: every `f32` from 2^-16
/// up is a whole number of them.
pub const FRACTION_SCALE: f64 = (1u64 << 40) as f64;
/// Rate steps times milliseconds per token.
pub const TOKEN_UNITS: f64 = RATE_SCALE * 1000.0;

/// `x` rounded to the nearest whole number, halves away from zero (as `f64::round`, which
/// is a library call on the baseline x86-64 target, as is a float to `i128`: here one
/// conversion instruction). Values beyond `i64` saturate.
#[inline]
fn whole(x: f64) -> i128 {
    let r = if x >= 0.0 {
        (x + 0.5) as i64
    } else {
        -((-x + 0.5) as i64)
    };
    i128::from(r)
}

/// A rate as a whole number of [`RATE_SCALE`] steps.
#[inline]
pub fn rate_steps(r: f64) -> i128 {
    whole(r * RATE_SCALE)
}

/// A fraction as a whole number of [`FRACTION_SCALE`] steps.
#[inline]
pub fn fraction_steps(v: f32) -> i128 {
    whole(f64::from(v) * FRACTION_SCALE)
}

/// Tokens from rate steps times milliseconds.
#[inline]
pub fn tokens_of(units: i128) -> f64 {
    units as f64 / TOKEN_UNITS
}

/// Intervals summed: tokens (rate steps × ms), milliseconds, and how many.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Totals {
    pub tokens: i128,
    pub ms: i64,
    pub count: i64,
}

impl Totals {
    pub fn add(&mut self, o: Totals) {
        self.tokens += o.tokens;
        self.ms += o.ms;
        self.count += o.count;
    }
    pub fn sub(&mut self, o: Totals) {
        self.tokens -= o.tokens;
        self.ms -= o.ms;
        self.count -= o.count;
    }
}

/// A gauge summed: values in whole steps, and how many lines gave one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Gauge {
    pub sum: i128,
    pub n: u64,
}

impl Gauge {
    #[inline]
    fn add(&mut self, v: i128) {
        self.sum += v;
        self.n += 1;
    }
    fn merge(&mut self, o: Gauge) {
        self.sum += o.sum;
        self.n += o.n;
    }
}

/// What one cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cell {
    /// Generated tokens inside the cell (rate steps × ms of overlap).
    pub gen: i128,
    /// Prompt tokens: vLLM's prompt rate over the overlap, SGLang's prefill tokens.
    pub prompt: i128,
    /// Milliseconds of the cell that intervals cover: below the cell's length where the
    /// instance started, stopped or fell silent inside it (a rate over the cell's length
    /// would spread its tokens over time it did not serve).
    pub covered: i64,
    /// Running and waiting requests (whole numbers), KV usage and accept length (fraction
    /// steps), of the lines stamped inside.
    pub running: Gauge,
    pub waiting: Gauge,
    pub kv_usage: Gauge,
    pub accept_len: Gauge,
    /// The intervals that end inside the cell, and their first and last end.
    pub ended: Totals,
    pub ends: (i64, i64),
    /// The first and last stamp of stats lines inside.
    pub stamps: (i64, i64),
}

impl Default for Cell {
    fn default() -> Cell {
        Cell {
            gen: 0,
            prompt: 0,
            covered: 0,
            running: Gauge::default(),
            waiting: Gauge::default(),
            kv_usage: Gauge::default(),
            accept_len: Gauge::default(),
            ended: Totals::default(),
            ends: (i64::MAX, i64::MIN),
            stamps: (i64::MAX, i64::MIN),
        }
    }
}

fn span_merge(a: &mut (i64, i64), b: (i64, i64)) {
    a.0 = a.0.min(b.0);
    a.1 = a.1.max(b.1);
}

impl Cell {
    fn merge(&mut self, o: &Cell) {
        self.gen += o.gen;
        self.prompt += o.prompt;
        self.covered += o.covered;
        self.running.merge(o.running);
        self.waiting.merge(o.waiting);
        self.kv_usage.merge(o.kv_usage);
        self.accept_len.merge(o.accept_len);
        self.ended.add(o.ended);
        span_merge(&mut self.ends, o.ends);
        span_merge(&mut self.stamps, o.stamps);
    }
}

/// The timeline's automatic bucket lengths, seconds, up to six hours; whole days beyond.
const STEPS: [i64; 15] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600,
];
const DAY: i64 = 86_400_000;

/// The automatic bucket rule, the one place it is written: a round length giving at most
/// about 120 buckets over `span_ms` (whole days beyond six hours: a vLLM log read out of
/// order can span years, each step back in its month-day stamps being a new year). The
/// timeline's buckets and the digest's cells (see [`base_for`]) both follow it.
pub fn auto_bucket(span_ms: i64) -> i64 {
    let want = span_ms / 120;
    STEPS
        .iter()
        .map(|s| s * 1000)
        .find(|&s| s >= want)
        .unwrap_or_else(|| (want.max(1) + DAY - 1) / DAY * DAY)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The cell length for a run that spans at least `span_ms`: the greatest common divisor
/// of every bucket length the timeline may choose for a span that long or longer (those
/// of at least its automatic bucket, and whole days). Each such length is a multiple of
/// the one before: 1, 5, 15, 30, 60, 300, 900 s …
pub fn base_for(span_ms: i64) -> i64 {
    let want = span_ms / 120;
    STEPS
        .iter()
        .map(|s| s * 1000)
        .filter(|&s| s >= want)
        .fold(DAY, gcd)
}

/// Cells of one length, over a stretch of time.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Grid {
    /// Cell length, ms.
    pub len: i64,
    /// Whether the length is fixed (a bucket length asked for) or follows the span.
    fixed: bool,
    /// The index (time / len) of the first cell held.
    pub first: i64,
    pub cells: Vec<Cell>,
    /// The first and last stamp seen: the span that chooses the cell length (cells reach a
    /// little further: an interval may end after the last stamp).
    span: (i64, i64),
    /// The last cell found, and where it starts: lines come in time order, so most times
    /// fall in the cell of the one before, found without a division.
    cursor: (usize, i64),
    /// The span beyond which the cell length may change (the automatic bucket for the span
    /// seen so far holds up to it).
    grow_at: i64,
}

impl Grid {
    /// A grid for buckets of `bucket` ms, or of lengths chosen later from the span.
    pub fn new(bucket: Option<i64>) -> Grid {
        Grid {
            len: bucket.unwrap_or(1000).max(1),
            fixed: bucket.is_some(),
            first: 0,
            cells: Vec::new(),
            span: (i64::MAX, i64::MIN),
            cursor: (usize::MAX, 0),
            grow_at: 0,
        }
    }

    /// Notes a time inside the run's span, and lengthens the cells if it asks for it.
    #[inline]
    fn note(&mut self, t: i64) {
        if t < self.span.0 || t > self.span.1 {
            span_merge(&mut self.span, (t, t));
            if self.span.1.saturating_sub(self.span.0) > self.grow_at {
                self.follow_span();
            }
        }
    }

    #[cold]
    fn follow_span(&mut self) {
        let span = self.span.1.saturating_sub(self.span.0);
        // the automatic bucket changes once a 120th of the span passes it
        let want = span / 120;
        let step = STEPS
            .iter()
            .map(|s| s * 1000)
            .find(|&s| s >= want)
            .unwrap_or((want.max(1) + DAY - 1) / DAY * DAY);
        self.grow_at = step.saturating_mul(120).saturating_add(119);
        if !self.fixed {
            // (a multiple of the length: always, but for cells of a bucket asked for and
            // given up)
            let base = base_for(span);
            if base > self.len {
                self.coarsen((base + self.len - 1) / self.len * self.len);
            }
        }
    }

    /// The cell of time `t`, made (and the cells grown longer) as needed.
    #[inline]
    pub fn at(&mut self, t: i64) -> &mut Cell {
        let i = self.index(t);
        &mut self.cells[i]
    }

    /// The place of the cell of time `t` (made as needed), and where that cell starts.
    #[inline]
    fn index(&mut self, t: i64) -> usize {
        let (i, lo) = self.cursor;
        if i < self.cells.len() && t >= lo && t - lo < self.len {
            return i;
        }
        self.find(t)
    }

    fn find(&mut self, t: i64) -> usize {
        let mut k = t.div_euclid(self.len);
        let mut i = k - self.first;
        if i < 0 || i as usize >= self.cells.len() {
            self.reach(t);
            k = t.div_euclid(self.len);
            i = k - self.first;
        }
        let i = i as usize;
        self.cursor = (i, k * self.len);
        i
    }

    /// Grows the grid to hold `t`.
    #[cold]
    fn reach(&mut self, t: i64) {
        // a bucket far too short for the span: the timeline refuses it, and the cells
        // follow the span meanwhile rather than fill the memory
        let lo = self.first.min(t.div_euclid(self.len));
        let hi = (self.first + self.cells.len() as i64).max(t.div_euclid(self.len));
        if self.fixed && !self.cells.is_empty() && hi - lo > MAX_BUCKETS {
            self.fixed = false;
            self.follow_span();
        } else if !self.fixed && hi - lo > SPREAD_CELLS {
            // an interval across a silence of days (lines months apart, read as one run):
            // the cells follow it, as they follow the stamps, rather than fill the memory
            // with cells of a second (a 4-line log of 2025 and 2026 took 12 GB)
            span_merge(&mut self.span, (t, t));
            self.follow_span();
        }
        let k = t.div_euclid(self.len);
        if self.cells.is_empty() {
            self.first = k;
            self.cells.push(Cell::default());
        } else if k < self.first {
            let more = (self.first - k) as usize;
            self.cells
                .splice(0..0, std::iter::repeat_n(Cell::default(), more));
            self.first = k;
            self.cursor = (usize::MAX, 0);
        } else {
            let want = (k - self.first + 1) as usize;
            if want > self.cells.len() {
                self.cells.resize(want, Cell::default());
            }
        }
    }

    /// Merges cells into cells of `len` ms (a multiple of the current length).
    pub fn coarsen(&mut self, len: i64) {
        if len <= self.len || self.fixed {
            return;
        }
        debug_assert_eq!(len % self.len, 0);
        let mut out: Vec<Cell> = Vec::new();
        let mut first = 0;
        for (i, c) in self.cells.iter().enumerate() {
            let t = (self.first + i as i64) * self.len;
            let k = t.div_euclid(len);
            if out.is_empty() {
                first = k;
            }
            let j = (k - first) as usize;
            if j >= out.len() {
                out.resize(j + 1, Cell::default());
            }
            out[j].merge(c);
        }
        self.len = len;
        self.first = first;
        self.cells = out;
        self.cursor = (usize::MAX, 0);
    }

    /// Adds another grid's cells (both grown to the longer cells).
    pub fn merge(&mut self, mut o: Grid) {
        if o.cells.is_empty() {
            return;
        }
        if self.cells.is_empty() && self.fixed == o.fixed {
            *self = o;
            return;
        }
        span_merge(&mut self.span, o.span);
        self.follow_span();
        let len = self.len.max(o.len);
        self.coarsen(len);
        o.coarsen(len);
        for (i, c) in o.cells.iter().enumerate() {
            let t = (o.first + i as i64) * len;
            self.at(t).merge(c);
        }
    }

    /// Notes the start of the first interval: the timeline begins there.
    pub fn starts_at(&mut self, t: i64) {
        self.note(t);
    }

    /// Spreads `rate` steps (of generation, and of prompt) over `[start, end)` by overlap.
    #[inline]
    pub fn spread(&mut self, start: i64, end: i64, gen: i128, prompt: i128, sign: i128) {
        if start >= end {
            return;
        }
        // (most intervals lie inside one cell)
        let i = self.index(start);
        if end <= self.cursor.1.saturating_add(self.len) {
            let ms = i128::from(end - start) * sign;
            let c = &mut self.cells[i];
            c.gen += gen * ms;
            c.prompt += prompt * ms;
            c.covered += (end - start) * sign as i64;
            return;
        }
        let mut s = start;
        while s < end {
            let i = self.index(s);
            let e = self.cursor.1.saturating_add(self.len).min(end);
            let ms = i128::from(e - s);
            let (g, p) = (gen * ms, prompt * ms);
            let c = &mut self.cells[i];
            if sign > 0 {
                c.gen += g;
                c.prompt += p;
                c.covered += e - s;
            } else {
                c.gen -= g;
                c.prompt -= p;
                c.covered -= e - s;
            }
            s = e;
        }
    }

    /// Adds an interval `[start, end)` of `gen` and `prompt` token units that ends with
    /// totals `t`, if it lies inside one cell, its end included (else `false`, and nothing
    /// is added: [`Grid::spread`] and [`Grid::ended`] add it).
    #[inline]
    pub fn within(&mut self, start: i64, end: i64, gen: i128, prompt: i128, t: Totals) -> bool {
        if start >= end {
            return false;
        }
        let i = self.index(start);
        if end - self.cursor.1 >= self.len {
            return false;
        }
        let c = &mut self.cells[i];
        c.gen += gen;
        c.prompt += prompt;
        c.covered += end - start;
        c.ended.add(t);
        span_merge(&mut c.ends, (end, end));
        true
    }

    /// Notes a stats line's stamp and gauges (running and waiting for stats lines only).
    #[inline]
    pub fn line(&mut self, ts: i64, stats: bool, running: f32, waiting: f32, kv: f32, al: f32) {
        self.note(ts);
        let c = self.at(ts);
        span_merge(&mut c.stamps, (ts, ts));
        if stats {
            // (through `i64`: a float to `i128` is a library call)
            if running.is_finite() {
                c.running.add(i128::from(running as i64));
            }
            if waiting.is_finite() {
                c.waiting.add(i128::from(waiting as i64));
            }
            if kv.is_finite() {
                c.kv_usage.add(fraction_steps(kv));
            }
        }
        if al.is_finite() {
            c.accept_len.add(fraction_steps(al));
        }
    }

    /// A prefill stamp's new tokens.
    #[inline]
    pub fn prefill(&mut self, ts: i64, tokens: u32) {
        self.note(ts);
        let c = self.at(ts);
        span_merge(&mut c.stamps, (ts, ts));
        c.prompt += i128::from(tokens) * TOKEN_UNITS as i128;
    }

    /// Notes an interval ending at `end` (removed again with `sign` -1).
    #[inline]
    pub fn ended(&mut self, end: i64, t: Totals, sign: i64) {
        let c = self.at(end);
        if sign > 0 {
            c.ended.add(t);
            span_merge(&mut c.ends, (end, end));
        } else {
            c.ended.sub(t);
        }
    }

    /// The cells as `(start ms, cell)`, in time order.
    pub fn iter(&self) -> impl Iterator<Item = (i64, &Cell)> + '_ {
        self.cells
            .iter()
            .enumerate()
            .map(move |(i, c)| ((self.first + i as i64) * self.len, c))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// Sums merged into longer cells, and grids merged, are the sums of their parts.
    #[test]
    fn coarsening_keeps_the_sums() {
        let mut g = Grid::new(None);
        let mut total = 0i128;
        for k in 0..5000i64 {
            let t = k * 3_700 + 1_700_000_000_000;
            g.spread(t, t + 3_700, 12_345, 0, 1);
            total += 12_345 * 3_700;
            g.prefill(t, 10);
        }
        assert!(
            g.len > 1000 && g.cells.len() < 400,
            "{} {}",
            g.len,
            g.cells.len()
        );
        assert_eq!(g.cells.iter().map(|c| c.gen).sum::<i128>(), total);
        let mut h = Grid::new(None);
        h.prefill(1_000, 3);
        h.merge(g.clone());
        let prompt: i128 = h.cells.iter().map(|c| c.prompt).sum();
        assert_eq!(prompt, (5000 * 10 + 3) * TOKEN_UNITS as i128);
    }
}
