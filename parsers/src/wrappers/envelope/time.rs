//! The collectors' times: RFC 3339 text (any zone, any number of fraction digits) and Unix
//! epochs in seconds, milliseconds, microseconds or nanoseconds (as numbers or digit strings),
//! all read as UTC milliseconds.

use crate::stamp::days_from_civil;

/// A collector's time of a record: UTC milliseconds since the epoch.
pub type UtcMs = i64;

/// A record's time as its collector wrote it, read when asked ([`When::ms`]): most engine
/// lines carry a stamp of their own, and reading the collector's for each of them was a
/// twelfth of a Docker log's reading.
#[derive(Debug, Clone, Copy, Default)]
pub enum When<'a> {
    #[default]
    None,
    Ms(UtcMs),
    /// RFC 3339 text whose date and time of day are in place ([`rfc3339_shaped`]).
    Text(&'a [u8]),
}

impl When<'_> {
    /// UTC milliseconds, if the record had a time.
    #[inline]
    pub fn ms(self) -> Option<UtcMs> {
        match self {
            When::None => None,
            When::Ms(t) => Some(t),
            When::Text(b) => rfc3339(b).map(|t| t.0),
        }
    }

    pub fn is_some(self) -> bool {
        !matches!(self, When::None)
    }
}

impl From<Option<UtcMs>> for When<'_> {
    fn from(t: Option<UtcMs>) -> Self {
        t.map_or(When::None, When::Ms)
    }
}

impl PartialEq for When<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.ms() == o.ms()
    }
}

impl Eq for When<'_> {}

/// Whether `b` opens with an RFC 3339 date and time of day (`YYYY-MM-DDTHH:MM:SS`): the
/// check a record's shape needs, the reading left for when the time is asked.
/// The first 16 bytes by one vector compare each for digits and separators, the last three
/// alone (a byte-by-byte match was a twentieth of a Docker row's reading).
#[inline]
pub fn rfc3339_shaped(b: &[u8]) -> bool {
    let Some(h) = b.get(..19) else {
        return false;
    };
    let d = |c: u8| c.is_ascii_digit();
    let last = h[16] == b':' && d(h[17]) && d(h[18]) && matches!(h[10], b'T' | b't' | b' ');
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // digits at 0-3, 5-6, 8-9, 11-12, 14-15; `-` at 4 and 7, `:` at 13 (10 is above)
        const DIGITS: u32 = 0b1101_1011_0110_1111;
        // SAFETY: SSE2 is part of x86_64; the load reads the 16 first of `h`'s 19 bytes
        let got = unsafe {
            let v = _mm_loadu_si128(h.as_ptr().cast());
            let digit = _mm_and_si128(
                _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(b'0' as i8)), v),
                _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(b'9' as i8)), v),
            );
            let seps = _mm_setr_epi8(0, 0, 0, 0, 45, 0, 0, 45, 0, 0, 0, 0, 0, 58, 0, 0);
            let digits = _mm_movemask_epi8(digit) as u32 & DIGITS;
            let seps = _mm_movemask_epi8(_mm_cmpeq_epi8(v, seps)) as u32 & 0b0010_0000_1001_0000;
            digits | seps
        };
        last && got | 1 << 10 == 0xffff
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        last && h[..16].iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => true,
            13 => c == b':',
            _ => d(c),
        })
    }
}

thread_local! {
    /// The last `YYYY-MM-DD` read, and its day number.
    static LAST: std::cell::Cell<Option<([u8; 10], i32)>> = const { std::cell::Cell::new(None) };
}

/// `n` ASCII digits at the start of `b`.
fn digits(b: &[u8], n: usize) -> Option<i64> {
    let d = b.get(..n)?;
    d.iter().try_fold(0i64, |v, &c| {
        c.is_ascii_digit().then(|| v * 10 + i64::from(c - b'0'))
    })
}

/// RFC 3339 (`2026-05-09T22:00:00.123456789Z`, `…+08:00`, `…+0800`, a space for the `T`; no
/// zone read as UTC), as UTC milliseconds and the length of the text read.
pub fn rfc3339(b: &[u8]) -> Option<(UtcMs, usize)> {
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (digits(b, 4)?, digits(&b[5..], 2)?, digits(&b[8..], 2)?);
    let (h, mi, s) = (
        digits(&b[11..], 2)?,
        digits(&b[14..], 2)?,
        digits(&b[17..], 2)?,
    );
    if h > 23 || mi > 59 || s > 60 {
        return None;
    }
    // consecutive records carry the same date: the last one read on this thread is kept
    let key: [u8; 10] = b[..10].try_into().ok()?;
    let days = match LAST.with(std::cell::Cell::get) {
        Some((k, days)) if k == key => days,
        _ => {
            let days = days_from_civil(y as i32, mo as u8, d as u8)?;
            LAST.with(|c| c.set(Some((key, days))));
            days
        }
    };
    let mut at = 19;
    let mut ms = 0;
    if b.get(at) == Some(&b'.') || b.get(at) == Some(&b',') {
        let n = b[at + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if n == 0 {
            return None;
        }
        let take = n.min(3);
        ms = digits(&b[at + 1..], take)? * 10i64.pow(3 - take as u32);
        at += 1 + n;
    }
    let zone_s = match b.get(at) {
        Some(b'Z' | b'z') => {
            at += 1;
            0
        }
        Some(&sign @ (b'+' | b'-')) => {
            let zh = digits(&b[at + 1..], 2)?;
            let (zm, len) = match b.get(at + 3) {
                Some(b':') => (digits(&b[at + 4..], 2)?, 6),
                _ => (digits(&b[at + 3..], 2)?, 5),
            };
            at += len;
            let z = zh * 3600 + zm * 60;
            if sign == b'-' {
                -z
            } else {
                z
            }
        }
        _ => 0,
    };
    let local = (i64::from(days) * 86_400 + h * 3600 + mi * 60 + s.min(59)) * 1000 + ms;
    Some((local - zone_s * 1000, at))
}

/// A Unix epoch as a collector writes it, in the unit its size says: seconds (up to 11
/// digits before any fraction: `1715292000.123`, Fluent Bit's `date`), milliseconds
/// (CloudWatch), microseconds (journald's `__REALTIME_TIMESTAMP`) or nanoseconds (Loki).
pub fn epoch(text: &[u8]) -> Option<UtcMs> {
    let (int, frac) = match memchr::memchr(b'.', text) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    if int.is_empty() || int.len() > 19 || !int.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits(int, int.len())?;
    let ms = match int.len() {
        ..=11 => {
            let f = frac.map_or(Some(0), |f| {
                let take = f.len().min(3);
                if !f.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                Some(digits(f, take).unwrap_or(0) * 10i64.pow(3 - take as u32))
            })?;
            n * 1000 + f
        }
        12..=14 => n,
        15..=17 => n / 1000,
        _ => n / 1_000_000,
    };
    Some(ms)
}

/// The text [`crate::stamp::Ts::write_iso`] writes for the time of the stamp `b`, where it
/// is `b`'s own first 23 bytes (`2026-05-09T22:00:00.123`): a UTC stamp (`Z`) with
/// milliseconds not all zero, its date and time of day plainly valid (days up to the 28th,
/// no leap second). `None` where it may not be: the time is then read and written. (Read
/// and written again, the stamps of the lines given the collector's time were a twentieth
/// of a Docker file's reading.)
#[inline]
pub fn iso_ms_text(b: &[u8]) -> Option<&[u8]> {
    let two = |i: usize| {
        let (a, c) = (b[i].wrapping_sub(b'0'), b[i + 1].wrapping_sub(b'0'));
        (a < 10 && c < 10).then(|| a * 10 + c)
    };
    if b.len() < 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[19] != b'.' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' || two(0).and(two(2)).is_none() {
        return None;
    }
    let (mo, d, h, mi, sec) = (two(5)?, two(8)?, two(11)?, two(14)?, two(17)?);
    if !(1..=12).contains(&mo) || !(1..=28).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return None;
    }
    let ms = &b[20..23];
    if !ms.iter().all(u8::is_ascii_digit) || ms == b"000" {
        return None;
    }
    let zone = 23 + b[23..].iter().take_while(|c| c.is_ascii_digit()).count();
    matches!(b.get(zone), Some(b'Z' | b'z')).then(|| &b[..23])
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The stamp's own text is what reading and writing its time gives, wherever it is
        /// taken: any byte of a stamp changed to any kind of byte, at any length.
        #[test]
        fn iso_ms_text_is_the_written_time(
            at in 0usize..31,
            to in proptest::sample::select(vec![
                b'0', b'1', b'2', b'3', b'5', b'6', b'9', b'/', b':', b'-', b'.', b'T', b't',
                b' ', b'Z', b'z', b'+', 0xb0,
            ]),
            len in 0usize..32,
            base in proptest::sample::select(vec![
                "2026-05-09T22:00:00.123456789Z", "2026-12-31T23:59:59.999Z",
                "2026-02-28T00:00:00.000001Z", "2024-02-29T12:30:45.5Z", "0000-01-01T00:00:00.010Z",
            ]),
        ) {
            let mut b = base.as_bytes().to_vec();
            if at < b.len() {
                b[at] = to;
            }
            b.truncate(len.max(at + 1));
            if let Some(text) = iso_ms_text(&b) {
                let (ms, _) = rfc3339(&b).expect("a stamp taken is a time");
                let mut written = Vec::new();
                crate::stamp::Ts(ms).write_iso(&mut written);
                proptest::prop_assert_eq!(text, &written[..]);
            }
        }

        /// The vector check takes what a byte-by-byte match takes: every byte of a stamp
        /// changed to any kind of byte, at any length.
        #[test]
        fn shaped_is_the_bytewise_match(
            at in 0usize..24,
            to in proptest::sample::select(vec![b'0', b'9', b'/', b':', b'-', b'T', b't', b' ', b'Z', 0xb0, 0x39 | 0x80]),
            len in 0usize..24,
        ) {
            let mut b = b"2026-05-09T22:00:00.123Z".to_vec();
            if at < b.len() {
                b[at] = to;
            }
            b.truncate(len.max(at));
            let want = b.get(..19).is_some_and(|h| {
                h.iter().enumerate().all(|(i, &c)| match i {
                    4 | 7 => c == b'-',
                    10 => matches!(c, b'T' | b't' | b' '),
                    13 | 16 => c == b':',
                    _ => c.is_ascii_digit(),
                })
            });
            proptest::prop_assert_eq!(rfc3339_shaped(&b), want);
        }
    }

    #[test]
    fn iso_ms_text_takes_the_daemons_stamps() {
        let take =
            |b: &str| iso_ms_text(b.as_bytes()).map(|t| String::from_utf8_lossy(t).into_owned());
        assert_eq!(
            take("2026-05-09T22:00:00.123456789Z").as_deref(),
            Some("2026-05-09T22:00:00.123")
        );
        assert_eq!(take("2026-05-09T22:00:00.1Z"), None);
        assert_eq!(take("2026-05-09T22:00:00.000123Z"), None);
        assert_eq!(take("2026-05-09T22:00:00.123+08:00"), None);
        assert_eq!(take("2026-05-30T22:00:00.123Z"), None);
    }

    #[test]
    fn rfc3339_zones_and_fractions() {
        let utc = rfc3339(b"2026-05-09T22:00:00.123456789Z").unwrap();
        assert_eq!(utc, (1_778_364_000_123, 30));
        assert_eq!(rfc3339(b"2026-05-10T06:00:00.123+08:00").unwrap().0, utc.0);
        assert_eq!(rfc3339(b"2026-05-10T06:00:00.123+0800").unwrap().0, utc.0);
        assert_eq!(rfc3339(b"2026-05-09 22:00:00.123").unwrap().0, utc.0);
        assert_eq!(
            rfc3339(b"2026-05-09T22:00:00Z x").unwrap(),
            (utc.0 - 123, 20)
        );
        assert_eq!(rfc3339(b"2026-13-09T22:00:00Z"), None);
        assert_eq!(rfc3339(b"2026-05-09T22:00"), None);
    }

    #[test]
    fn epochs_in_every_unit() {
        let ms = 1_778_364_000_123;
        assert_eq!(epoch(b"1778364000.123"), Some(ms));
        assert_eq!(epoch(b"1778364000123"), Some(ms));
        assert_eq!(epoch(b"1778364000123456"), Some(ms));
        assert_eq!(epoch(b"1778364000123456789"), Some(ms));
        assert_eq!(epoch(b"x"), None);
        assert_eq!(epoch(b""), None);
    }
}
