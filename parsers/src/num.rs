//! Number parsing for log values.
//!
//! Engines print floats with `:.1f`, `:.2f` or `:.4f`, percents with a `%` sign and, in vLLM
//! capacity lines, integers with thousands separators. The fast path reads the digits into an
//! integer mantissa `m` and a decimal scale `k` and returns `m / 10^k`: both operands are exact
//! in an `f64` (m < 2^53, k ≤ 22), so one IEEE division gives the correctly rounded value, the
//! same as a full decimal parser. The same trick turns a percent into an exact fraction
//! (`21.4%` → `m / 10^(k+2)` = `0.214`, not `0.21399999999999997`). Anything unusual
//! (exponents, `nan`, `inf`) falls back to the standard library parser.

const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// A decimal as printed: integer mantissa and number of fraction digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    neg: bool,
    mantissa: u64,
    scale: u32,
}

/// Reads `[-+]?digits[.digits]`, allowing `,` thousands separators in the integer part only
/// when `allow_sep` is set. Returns `None` if the text is anything else.
fn decimal(s: &[u8], allow_sep: bool) -> Option<Decimal> {
    let (neg, mut i) = match s.first() {
        Some(b'-') => (true, 1),
        Some(b'+') => (false, 1),
        _ => (false, 0),
    };
    let mut mantissa: u64 = 0;
    let mut digits = 0u32;
    let mut int_digits = 0u32;
    while i < s.len() {
        let c = s[i];
        if c.is_ascii_digit() {
            mantissa = mantissa.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
            digits += 1;
            int_digits += 1;
        } else if c == b',' && allow_sep && int_digits > 0 {
            // a separator must be followed by exactly three digits
            let grp = s.get(i + 1..i + 4)?;
            if !grp.iter().all(u8::is_ascii_digit) || s.get(i + 4).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        } else {
            break;
        }
        i += 1;
    }
    let mut scale = 0u32;
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while i < s.len() && s[i].is_ascii_digit() {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(u64::from(s[i] - b'0'))?;
            digits += 1;
            scale += 1;
            i += 1;
        }
    }
    if digits == 0 || i != s.len() || mantissa >= (1u64 << 53) {
        return None;
    }
    Some(Decimal {
        neg,
        mantissa,
        scale,
    })
}

fn to_f64(d: Decimal, extra_scale: u32) -> Option<f64> {
    let k = (d.scale + extra_scale) as usize;
    let v = d.mantissa as f64 / *POW10.get(k)?;
    Some(if d.neg { -v } else { v })
}

/// A plain decimal `-?digits(.digits)?` of at most 15 digits, read in one pass where it
/// stands in a longer text (so that a caller need not find the value's end first). With 15
/// digits the mantissa is exact in an `f64`, and [`Plain::float`] rounds exactly as
/// [`float`] does; anything longer or unusual is left to [`float`] / [`uint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Plain {
    pub mantissa: u64,
    pub scale: usize,
    pub neg: bool,
    /// Index just past the number.
    pub end: usize,
}

impl Plain {
    /// The number at `b[at..]`, ending at the first byte that cannot continue it.
    #[inline(always)]
    pub fn at(b: &[u8], at: usize) -> Option<Plain> {
        // the digits of most numbers of a log line (`64`, `0.06`, `2721.09`) lie in two
        // 8-byte words, the integer part's and the fraction's: each is read whole, with no
        // branch per digit
        let Some((int, n)) = word_digits(b, at) else {
            return Plain::at_bytewise(b, at);
        };
        if n == 0 {
            return Plain::at_bytewise(b, at);
        }
        let i = at + n;
        if b.get(i) != Some(&b'.') {
            return Some(Plain {
                mantissa: int,
                scale: 0,
                neg: false,
                end: i,
            });
        }
        let Some((frac, k)) = word_digits(b, i + 1) else {
            return Plain::at_bytewise(b, at);
        };
        if k == 0 {
            return None;
        }
        Some(Plain {
            mantissa: int * POW10_U[k] + frac,
            scale: k,
            neg: false,
            end: i + 1 + k,
        })
    }

    /// [`Plain::at`] a byte at a time: numbers near the end of the text, negative ones,
    /// and parts of eight digits or more.
    #[inline(never)]
    fn at_bytewise(b: &[u8], at: usize) -> Option<Plain> {
        // a run of digits from `i` into `m`; returns where it ends (wrapping: a number of
        // more than 15 digits is refused below anyway)
        let digits = |mut i: usize, m: &mut u64| {
            // each byte loaded once, then tested: a mapped file truncated while read may
            // change under a second load (a digit, then a zero page), which must not panic
            while let Some(c) = b.get(i).copied() {
                let d = c.wrapping_sub(b'0');
                if d > 9 {
                    break;
                }
                *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
                i += 1;
            }
            i
        };
        let neg = b.get(at) == Some(&b'-');
        let start = at + usize::from(neg);
        let mut m = 0u64;
        let mut i = digits(start, &mut m);
        let int_digits = i - start;
        let mut scale = 0;
        if b.get(i) == Some(&b'.') {
            let end = digits(i + 1, &mut m);
            scale = end - (i + 1);
            i = end;
            if scale == 0 {
                return None;
            }
        }
        (int_digits > 0 && int_digits + scale <= 15).then_some(Plain {
            mantissa: m,
            scale,
            neg,
            end: i,
        })
    }

    /// As [`float`] reads the same text.
    #[inline]
    pub fn float(&self) -> f64 {
        let v = self.mantissa as f64 / POW10[self.scale];
        if self.neg {
            -v
        } else {
            v
        }
    }

    /// As [`uint`] reads the same text.
    #[inline]
    pub fn uint(&self) -> Option<u64> {
        (!self.neg && self.scale == 0).then_some(self.mantissa)
    }
}

/// Powers of ten below 10^8, as integers.
const POW10_U: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The run of at most 7 ASCII digits at `b[at..]`, read from one 8-byte word: its value and
/// its length. `None` when the word does not fit in `b` or is all digits.
#[inline(always)]
fn word_digits(b: &[u8], at: usize) -> Option<(u64, usize)> {
    let w = u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?);
    // digits become 0–9; a byte is no digit when its high bit is set or adding 0x76 to its
    // low seven bits sets it (no carry leaves a byte)
    let x = w ^ 0x3030_3030_3030_3030;
    let no_digit = ((x & 0x7f7f_7f7f_7f7f_7f7f).wrapping_add(0x7676_7676_7676_7676) | x)
        & 0x8080_8080_8080_8080;
    if no_digit == 0 {
        return None;
    }
    let n = (no_digit.trailing_zeros() / 8) as usize;
    // the n digits moved to the top bytes, zeros (leading zero digits) below, then summed
    // pairwise: eight digits in three multiplications
    let mut v = x.checked_shl(8 * (8 - n) as u32).unwrap_or(0);
    v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    v = (v.wrapping_mul(10_000) + (v >> 32)) & 0x0000_0000_ffff_ffff;
    Some((v, n))
}

fn slow_float(s: &str) -> Option<f64> {
    match s {
        "nan" | "NaN" | "NAN" => Some(f64::NAN),
        "inf" | "+inf" | "Infinity" | "+Inf" | "+Infinity" => Some(f64::INFINITY),
        "-inf" | "-Infinity" | "-Inf" => Some(f64::NEG_INFINITY),
        _ => {
            if s.bytes()
                .any(|c| c.is_ascii_alphabetic() && c != b'e' && c != b'E')
            {
                return None;
            }
            s.parse::<f64>().ok()
        }
    }
}

/// Parses a float such as `1863.65`, `0.12`, `-3`, `1e6`, `nan`.
pub fn float(s: &str) -> Option<f64> {
    decimal(s.as_bytes(), false)
        .and_then(|d| to_f64(d, 0))
        .or_else(|| slow_float(s))
}

/// Parses a percent (`21.4%` or `21.4`) into a fraction (`0.214`), exactly rounded.
pub fn percent_as_fraction(s: &str) -> Option<f64> {
    let s = s.strip_suffix('%').unwrap_or(s);
    decimal(s.as_bytes(), false)
        .and_then(|d| to_f64(d, 2))
        .or_else(|| slow_float(s).map(|v| v / 100.0))
}

/// Parses an unsigned integer, allowing thousands separators (`1,048,576`).
pub fn uint(s: &str) -> Option<u64> {
    let d = decimal(s.as_bytes(), true)?;
    if d.neg || d.scale != 0 {
        return None;
    }
    Some(d.mantissa)
}

/// Parses a float that may carry thousands separators (`131,072`, `8.00`).
pub fn float_sep(s: &str) -> Option<f64> {
    decimal(s.as_bytes(), true)
        .and_then(|d| to_f64(d, 0))
        .or_else(|| slow_float(&s.replace(',', "")))
}

/// Python booleans as printed by f-strings.
pub fn pybool(s: &str) -> Option<bool> {
    match s {
        "True" | "true" => Some(true),
        "False" | "false" => Some(false),
        _ => None,
    }
}

/// Splits a value such as `1820.4 tokens/s`, `12 reqs`, `21.4%` into its number text and unit.
pub fn split_unit(s: &str) -> (&str, &str) {
    match s.find(' ') {
        Some(i) => (&s[..i], s[i + 1..].trim_start()),
        None => (s, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_decimals() {
        assert_eq!(float("1863.65"), Some(1863.65));
        assert_eq!(float("0.12"), Some(0.12));
        assert_eq!(float("-3"), Some(-3.0));
        assert_eq!(float("0.4718"), Some(0.4718));
        assert_eq!(float("2.345678e+06"), Some(2_345_678.0));
        assert!(float("nan").unwrap().is_nan());
        assert_eq!(float("inf"), Some(f64::INFINITY));
        assert_eq!(float(""), None);
        assert_eq!(float("."), None);
        assert_eq!(float("1.2.3"), None);
        assert_eq!(float("True"), None);
    }

    #[test]
    fn percents_are_exact_fractions() {
        assert_eq!(percent_as_fraction("21.4%"), Some(0.214));
        assert_eq!(percent_as_fraction("63.7"), Some(0.637));
        assert_eq!(percent_as_fraction("97.41%"), Some(0.9741));
        assert_eq!(percent_as_fraction("0.0%"), Some(0.0));
        assert!(percent_as_fraction("nan%").unwrap().is_nan());
    }

    #[test]
    fn separators() {
        assert_eq!(uint("1,048,576"), Some(1_048_576));
        assert_eq!(uint("131072"), Some(131_072));
        assert_eq!(uint("1,04"), None);
        assert_eq!(uint("1,0485"), None);
        assert_eq!(uint("-1"), None);
        assert_eq!(float_sep("131,072"), Some(131_072.0));
    }

    /// Regression (found by the `numbers` fuzz target): more than 22 fraction digits fell off
    /// the fast path without falling back to the full parser.
    #[test]
    fn many_fraction_digits_fall_back() {
        let s = "000000.0000000000000000000000000000000000000000000000000000000000000000000004";
        assert_eq!(float(s), Some(4e-70));
        assert_eq!(
            percent_as_fraction("0.00000000000000000000001%"),
            Some(1e-23 / 100.0)
        );
    }

    #[test]
    fn plain_numbers_read_like_float_and_uint() {
        for text in [
            "0",
            "40",
            "1863.65",
            "0.12",
            "-3",
            "-0.5",
            "123456789012345",
            "0.4718",
        ] {
            let p = Plain::at(text.as_bytes(), 0).unwrap();
            assert_eq!(p.end, text.len());
            assert_eq!(p.float(), float(text).unwrap(), "{text}");
            assert_eq!(
                p.uint(),
                uint(text).filter(|_| !text.contains('.')),
                "{text}"
            );
        }
        // in a longer text: stops where the number does
        let p = Plain::at(b"x: 12.5, y", 3).unwrap();
        assert_eq!((p.mantissa, p.scale, p.end), (125, 1, 7));
        for bad in ["", "-", ".5", "5.", "1234567890123456", "abc"] {
            assert_eq!(Plain::at(bad.as_bytes(), 0), None, "{bad}");
        }
    }

    proptest::proptest! {
        /// Read a word at a time, a number is what reading it a byte at a time gives, at
        /// any offset and whatever follows it.
        #[test]
        fn plain_words_read_like_bytes(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["0", "1", "7", "9", ".", "-", "x", " ", ",", "/", ":"]),
                0..24,
            ),
            at in 0usize..4,
        ) {
            let text = parts.concat();
            let at = at.min(text.len());
            proptest::prop_assert_eq!(
                Plain::at(text.as_bytes(), at),
                Plain::at_bytewise(text.as_bytes(), at),
                "{:?} at {}", text, at
            );
        }
    }

    #[test]
    fn units() {
        assert_eq!(split_unit("1820.4 tokens/s"), ("1820.4", "tokens/s"));
        assert_eq!(split_unit("12"), ("12", ""));
    }
}
