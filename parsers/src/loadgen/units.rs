//! The units load generators write, and conversion between them: durations (ns, µs, ms, s,
//! min), rates (per second, per minute) and plain counts.

/// A unit a tool writes, as a quantity and a scale to tokstat's base unit of that quantity
/// (seconds, or per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// A duration, as seconds per unit.
    Time(f64),
    /// A rate, as "per second" per unit (per minute: 1/60).
    Rate(f64),
    /// A count or a share: no conversion.
    Plain,
}

/// A unit that cannot be converted to the one asked for.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("cannot convert {from} to {to}")]
pub struct UnitError {
    pub from: String,
    pub to: String,
}

impl Unit {
    /// Reads a unit as the tools write it: `ns`, `us`, `µs`, `ms`, `s`, `sec`, `seconds`,
    /// `min`; `requests/sec`, `tokens/sec`, `tok/s`, `req/s`, `…/min`, `tokens/sec/user`;
    /// anything else (`tokens`, `requests`, `count`, `%`) is plain.
    pub fn parse(unit: &str) -> Result<Unit, UnitError> {
        let u = unit.trim().to_ascii_lowercase();
        let time = |t: &str| match t {
            "ns" | "nanoseconds" => Some(1e-9),
            "us" | "µs" | "μs" | "microseconds" => Some(1e-6),
            "ms" | "milliseconds" => Some(1e-3),
            "s" | "sec" | "secs" | "second" | "seconds" => Some(1.0),
            "min" | "minute" | "minutes" => Some(60.0),
            "h" | "hour" | "hours" => Some(3600.0),
            _ => None,
        };
        if let Some(s) = time(&u) {
            return Ok(Unit::Time(s));
        }
        // a rate: "<what>/<time>" (the last part of `tokens/sec/user` is who, not time)
        let parts: Vec<&str> = u.split('/').collect();
        if parts.len() >= 2 {
            if let Some(s) = time(parts[1].trim()) {
                return Ok(Unit::Rate(1.0 / s));
            }
        }
        Ok(Unit::Plain)
    }

    /// `value` in this unit, in `to` (`s`, `ms`, `req/s`, `tok/s`, `tokens`, `requests`, …).
    pub fn convert(self, value: f64, to: &str) -> Result<f64, UnitError> {
        let target = Unit::parse(to)?;
        let err = || UnitError {
            from: format!("{self:?}"),
            to: to.to_string(),
        };
        match (self, target) {
            (Unit::Time(a), Unit::Time(b)) => Ok(value * a / b),
            (Unit::Rate(a), Unit::Rate(b)) => Ok(value * a / b),
            (Unit::Plain, Unit::Plain) => Ok(value),
            _ => Err(err()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_the_tools_write() {
        let c = |from: &str, v: f64, to: &str| Unit::parse(from).unwrap().convert(v, to).unwrap();
        assert_eq!(c("ns", 1.5e6, "ms"), 1.5);
        assert_eq!(c("us", 1500.0, "ms"), 1.5);
        assert_eq!(c("sec", 2.5, "s"), 2.5);
        assert_eq!(c("s", 0.25, "ms"), 250.0);
        assert_eq!(c("ms", 250.0, "s"), 0.25);
        assert_eq!(c("requests/sec", 3.0, "req/s"), 3.0);
        assert_eq!(c("req/min", 120.0, "req/s"), 2.0);
        assert_eq!(c("tokens/sec", 10.0, "tok/s"), 10.0);
        assert_eq!(c("tokens", 7.0, "tokens"), 7.0);
        assert_eq!(c("requests", 7.0, "requests"), 7.0);
        assert!(Unit::parse("ms").unwrap().convert(1.0, "req/s").is_err());
        assert!(Unit::parse("tokens").unwrap().convert(1.0, "ms").is_err());
    }
}
