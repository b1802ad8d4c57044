//! HTTP responses over time: an instance's access lines counted by status class in time
//! slots, for the timeline's `http_*` columns and the `error_burst` hint.
//!
//! Access lines of uvicorn carry no stamp of their own in vLLM's logs: such a line is
//! placed at the instance's stamp before it. Slots are a second long and grow (to a minute,
//! an hour, a day) when an instance's lines span more than [`MAX_SLOTS`] of them, so memory
//! stays bounded by time, not by lines; every slot length divides the timeline's bucket
//! lengths of a span that long.

use tokstat_parsers::record::EventKind;

/// A response's status class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// 1xx, 2xx and 3xx: answered.
    Ok = 0,
    /// 4xx: the request was refused.
    Client = 1,
    /// 5xx: the server failed it.
    Server = 2,
}

impl Class {
    pub fn of(status: u16) -> Class {
        match status {
            500.. => Class::Server,
            400..=499 => Class::Client,
            _ => Class::Ok,
        }
    }
}

/// The `events` kind of an access line of status 400 or more.
pub fn access_kind(status: u16) -> EventKind {
    if status >= 500 {
        EventKind::Http5xx
    } else {
        EventKind::Http4xx
    }
}

/// Counts by [`Class`] (`[ok, 4xx, 5xx]`).
pub type Counts = [u64; 3];

/// Adds `b`'s counts to `a`'s.
pub fn add_counts(a: &mut Counts, b: &Counts) {
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
}

/// Slots kept per instance before they grow: two hours of seconds, so that a slot stays at
/// most a 120th of the span (the timeline's automatic bucket is at least that).
pub const MAX_SLOTS: usize = 7_200;
/// The slot lengths, ms, in the order they grow.
const LENGTHS: [i64; 4] = [1000, 60_000, 3_600_000, 86_400_000];

/// One instance's responses (see the module docs).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Responses {
    /// Slot length, ms.
    len: i64,
    /// (slot start ms, counts), in the order read (a log read out of time order leaves them
    /// out of order, and a slot may then appear twice).
    slots: Vec<(i64, Counts)>,
    /// Lines read before any stamp of their chunk: placed by [`Responses::merge`] at the
    /// last slot of the lines before them, or left here when there is none.
    unplaced: Counts,
    totals: Counts,
}

impl Default for Responses {
    fn default() -> Responses {
        Responses {
            len: LENGTHS[0],
            slots: Vec::new(),
            unplaced: [0; 3],
            totals: [0; 3],
        }
    }
}

impl Responses {
    /// Counts `n` lines of `class` stamped `ts`, or, with no stamp, following the lines
    /// before them.
    pub fn add(&mut self, ts: Option<i64>, class: Class, n: u64) {
        self.totals[class as usize] += n;
        self.place(ts, class as usize, n);
    }

    /// Counts answered lines, `(second's start ms, lines)`.
    pub fn add_answered(&mut self, seconds: &[(i64, u32)]) {
        let ok = Class::Ok as usize;
        self.slots.reserve(seconds.len());
        for &(t, n) in seconds {
            let n = u64::from(n);
            self.totals[ok] += n;
            match self.slots.last_mut() {
                // (seconds are slots while the slots are a second long)
                Some(last) if last.0 == t => last.1[ok] += n,
                _ if self.len == LENGTHS[0] && t.rem_euclid(1000) == 0 => {
                    let mut counts = [0; 3];
                    counts[ok] = n;
                    self.slots.push((t, counts));
                    if self.slots.len() > MAX_SLOTS {
                        self.grow();
                    }
                }
                _ => self.place(Some(t), ok, n),
            }
        }
    }

    /// Puts `n` lines of class index `c` in their slot (see [`Responses::add`]).
    fn place(&mut self, ts: Option<i64>, c: usize, n: u64) {
        match ts {
            Some(t) => {
                let slot = t - t.rem_euclid(self.len);
                match self.slots.last_mut() {
                    Some(last) if last.0 == slot => last.1[c] += n,
                    _ => {
                        let mut counts = [0; 3];
                        counts[c] = n;
                        self.slots.push((slot, counts));
                        if self.slots.len() > MAX_SLOTS {
                            self.grow();
                        }
                    }
                }
            }
            None => match self.slots.last_mut() {
                Some(last) => last.1[c] += n,
                None => self.unplaced[c] += n,
            },
        }
    }

    /// Adds the responses of lines read after these, the last of which was stamped
    /// `before` (the stamp `later`'s unplaced lines follow).
    pub fn merge(&mut self, later: &Responses, before: Option<i64>) {
        for (c, &n) in later.unplaced.iter().enumerate() {
            if n > 0 {
                self.place(before, c, n);
            }
        }
        add_counts(&mut self.totals, &later.totals);
        while self.len < later.len && self.grow() {}
        if self.len == later.len {
            // slots of one length are aligned already: joined where they meet
            let mut rest = later.slots.as_slice();
            if let (Some(last), Some(first)) = (self.slots.last_mut(), rest.first()) {
                if last.0 == first.0 {
                    add_counts(&mut last.1, &first.1);
                    rest = &rest[1..];
                }
            }
            self.slots.extend_from_slice(rest);
        } else {
            for &(t, counts) in &later.slots {
                let slot = t - t.rem_euclid(self.len);
                match self.slots.last_mut() {
                    Some(last) if last.0 == slot => add_counts(&mut last.1, &counts),
                    _ => self.slots.push((slot, counts)),
                }
            }
        }
        while self.slots.len() > MAX_SLOTS && self.grow() {}
    }

    /// Lengthens the slots to the next length, joining those that fall together; false at
    /// the longest (a day: lines over 7,200 days apart, such as a vLLM log read out of
    /// order, whose stamps have no year, may keep more slots).
    fn grow(&mut self) -> bool {
        let Some(&len) = LENGTHS.iter().find(|&&l| l > self.len) else {
            return false;
        };
        self.len = len;
        let mut out: Vec<(i64, Counts)> = Vec::with_capacity(self.slots.len() / 2 + 1);
        for &(t, counts) in &self.slots {
            let slot = t - t.rem_euclid(len);
            match out.last_mut() {
                Some(last) if last.0 == slot => {
                    add_counts(&mut last.1, &counts);
                }
                _ => out.push((slot, counts)),
            }
        }
        self.slots = out;
        true
    }

    /// Lines by class.
    pub fn totals(&self) -> Counts {
        self.totals
    }

    /// Lines read before any stamp of the instance: in the totals, at no time.
    pub fn unplaced(&self) -> Counts {
        self.unplaced
    }

    /// The slots as `(start ms, counts)`.
    pub fn slots(&self) -> &[(i64, Counts)] {
        &self.slots
    }

    /// The slot length, ms.
    pub fn slot_ms(&self) -> i64 {
        self.len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Split anywhere into chunks and merged in order, lines give the slots and totals of
    /// the whole; unstamped lines follow the stamped ones before them.
    #[test]
    fn chunks_merge_like_the_whole() {
        let lines: Vec<(Option<i64>, Class)> = (0..40)
            .map(|k: i64| {
                let ts = (k % 5 != 1).then_some(1_000_000 + k * 700);
                let class = Class::of([200, 200, 404, 500, 302][(k % 5) as usize]);
                (ts, class)
            })
            .collect();
        let counted = |ls: &[(Option<i64>, Class)]| {
            let mut r = Responses::default();
            for &(ts, c) in ls {
                r.add(ts, c, 1);
            }
            r
        };
        let whole = counted(&lines);
        for cut in 0..lines.len() {
            let mut a = counted(&lines[..cut]);
            let before = lines[..cut].iter().rev().find_map(|l| l.0);
            a.merge(&counted(&lines[cut..]), before);
            assert_eq!(a, whole, "{cut}");
        }
        assert_eq!(whole.totals(), [24, 8, 8]);
        assert_eq!(whole.unplaced(), [0; 3]);
        // line 1 (unstamped) follows line 0 at 1,000,000 ms
        assert_eq!(whole.slots()[0], (1_000_000, [2, 0, 0]));
        let summed: u64 = whole.slots().iter().flat_map(|s| s.1).sum();
        assert_eq!(summed, 40);
    }

    /// Answered seconds counted at once give the slots and totals of their lines one by one,
    /// whatever the slot length; lines far more days apart than slots stop growing at a day.
    #[test]
    fn seconds_count_like_lines() {
        let seconds: Vec<(i64, u32)> = (0..9000i64)
            .map(|k| (1_000 * (k * 7 / 3), 1 + (k % 4) as u32))
            .collect();
        let mut one = Responses::default();
        let mut many = Responses::default();
        for &(t, n) in &seconds {
            for _ in 0..n {
                one.add(Some(t), Class::Ok, 1);
            }
        }
        many.add_answered(&seconds[..4000]);
        many.add_answered(&seconds[4000..]);
        assert_eq!(one, many);
        assert_eq!(one.slot_ms(), 60_000);
        let mut far = Responses::default();
        for d in 0..(MAX_SLOTS as i64 + 5) {
            far.add(Some(d * 3 * 86_400_000), Class::Server, 1);
        }
        assert_eq!(far.slot_ms(), 86_400_000);
        assert_eq!(far.slots().len(), MAX_SLOTS + 5);
        let mut more = Responses::default();
        more.merge(&far, None);
        assert_eq!(more.totals(), [0, 0, MAX_SLOTS as u64 + 5]);
    }

    /// More slots than [`MAX_SLOTS`] grow to minutes: the counts stay, the slots shrink.
    #[test]
    fn many_seconds_grow_into_minutes() {
        let mut r = Responses::default();
        let mut un = Responses::default();
        un.add(None, Class::Server, 3);
        for s in 0..(MAX_SLOTS as i64 + 10) {
            r.add(Some(s * 1000), Class::Ok, 2);
        }
        assert_eq!(r.slot_ms(), 60_000);
        assert_eq!(r.slots().len(), (MAX_SLOTS + 10).div_ceil(60));
        assert_eq!(r.slots()[0], (0, [120, 0, 0]));
        un.merge(&r, None);
        assert_eq!(un.unplaced(), [0, 0, 3]);
        assert_eq!(un.totals(), [2 * (MAX_SLOTS as u64 + 10), 0, 3]);
        assert_eq!(un.slot_ms(), 60_000);
    }
}
