//! What the unit tests share.

/// A small linear congruential generator (Knuth's MMIX constants): random test data that is
/// the same on every run, with no dependency.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next state.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0
    }

    /// A number below `n`, from the state's high bits.
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_u64() >> 33) % n
    }
}
