//! Counting the differences of stamps, for the typical interval between lines.

/// Differences of stamps counted, for their median ([`Gaps::typical`]): those under a
/// minute (nearly all of them) by millisecond in a table, the rest in a short list. Counts
/// add up, so the parts of a log read apart merge into the counts of the whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Gaps {
    /// Differences by millisecond below [`Gaps::SMALL`] (made at the first one).
    counts: Vec<u32>,
    large: Vec<i64>,
    n: u64,
}

impl Gaps {
    const SMALL: usize = 60_000;

    /// Counts a difference (those not positive are not intervals).
    #[inline]
    pub fn add(&mut self, d: i64) {
        if d <= 0 {
            return;
        }
        self.n += 1;
        if (d as u64) < Self::SMALL as u64 {
            if self.counts.is_empty() {
                self.counts = vec![0; Self::SMALL];
            }
            self.counts[d as usize] += 1;
        } else {
            self.large.push(d);
        }
    }

    pub fn merge(&mut self, mut o: Gaps) {
        // (into the larger: counts add up in any order)
        if o.n > self.n {
            std::mem::swap(self, &mut o);
        }
        if o.n == 0 {
            return;
        }
        if !o.counts.is_empty() {
            if self.counts.is_empty() {
                self.counts = vec![0; Self::SMALL];
            }
            for (a, b) in self.counts.iter_mut().zip(&o.counts) {
                *a += b;
            }
        }
        self.large.extend_from_slice(&o.large);
        self.n += o.n;
    }

    /// The median difference (the lower middle one of an even count): exactly the order
    /// statistic a sort of all of them gives.
    pub fn typical(&self) -> Option<i64> {
        if self.n == 0 {
            return None;
        }
        let mid = (self.n / 2) as usize;
        let mut seen = 0usize;
        for (d, &c) in self.counts.iter().enumerate() {
            seen += c as usize;
            if seen > mid {
                return Some(d as i64);
            }
        }
        let mut large = self.large.clone();
        large.sort_unstable();
        large.get(mid - seen).copied()
    }
}
