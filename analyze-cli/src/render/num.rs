//! Number formatting for people: thousands separators, fixed decimals, durations.

use num_format::{Locale, ToFormattedString};

/// `1234567` → `1,234,567`.
pub fn group(n: u64) -> String {
    n.to_formatted_string(&Locale::en)
}

/// A float with `d` decimals, or `–` when absent.
pub fn opt(v: Option<f64>, d: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.d$}"),
        _ => "–".to_string(),
    }
}

/// Seconds as `1h 02m 03s` / `4m 05s` / `6.0s`.
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() {
        return "–".into();
    }
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{secs:.1}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m {:02}s", s / 3600, s / 60 % 60, s % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(group(0), "0");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(group(100), "100");
        assert_eq!(opt(Some(1.234), 1), "1.2");
        assert_eq!(opt(None, 1), "–");
        assert_eq!(duration(3723.0), "1h 02m 03s");
        assert_eq!(duration(245.0), "4m 05s");
    }
}
