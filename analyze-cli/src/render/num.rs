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

/// A number with at most `d` decimals and no trailing zeros: `8` (not `8.00`), `2.5`.
pub fn trim(v: f64, d: usize) -> String {
    let s = format!("{v:.d$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Seconds for people: `6.0s` under a minute, else whole seconds as humantime writes them
/// (`4m 5s`, `1h 2m 3s`).
pub fn duration(secs: f64) -> String {
    if !secs.is_finite() {
        return "–".into();
    }
    if secs.round() < 60.0 {
        format!("{secs:.1}s")
    } else {
        humantime::format_duration(std::time::Duration::from_secs(secs.round() as u64)).to_string()
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
        assert_eq!(duration(3723.0), "1h 2m 3s");
        assert_eq!(duration(245.0), "4m 5s");
        assert_eq!(duration(6.04), "6.0s");
        assert_eq!(duration(f64::NAN), "–");
    }
}
