//! The units load generators write, and conversion between them: durations (ns, µs, ms, s,
//! min), rates (per second, per minute) and plain counts.

/// A unit a tool writes, as a quantity and its time scale in nanoseconds (whole numbers,
/// exact in an `f64`, so that a conversion is one exact multiplication or one correctly
/// rounded division: 0.25 s is 250 ms to the last digit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unit {
    /// A duration: nanoseconds per unit.
    Time(f64),
    /// A rate per a time: that time's nanoseconds (per second: 1e9; per minute: 6e10).
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
            "ns" | "nanoseconds" => Some(1.0),
            "us" | "µs" | "μs" | "microseconds" => Some(1e3),
            "ms" | "milliseconds" => Some(1e6),
            "s" | "sec" | "secs" | "second" | "seconds" => Some(1e9),
            "min" | "minute" | "minutes" => Some(6e10),
            "h" | "hour" | "hours" => Some(3.6e12),
            _ => None,
        };
        if let Some(ns) = time(&u) {
            return Ok(Unit::Time(ns));
        }
        // a rate: "<what>/<time>" (the last part of `tokens/sec/user` is who, not time)
        let parts: Vec<&str> = u.split('/').collect();
        if parts.len() >= 2 {
            if let Some(ns) = time(parts[1].trim()) {
                return Ok(Unit::Rate(ns));
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
        // `from` nanoseconds per unit to `to`: by a whole factor either way
        let scale = |value: f64, from: f64, to: f64| {
            if from >= to {
                value * (from / to)
            } else {
                value / (to / from)
            }
        };
        match (self, target) {
            (Unit::Time(a), Unit::Time(b)) => Ok(scale(value, a, b)),
            // per `a` ns to per `b` ns: the count per unit scales the other way
            (Unit::Rate(a), Unit::Rate(b)) => Ok(scale(value, b, a)),
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
        assert_eq!(c("ms", 4007.145722969041, "ms"), 4007.145722969041);
        assert_eq!(
            c("s", 0.003468243724688194, "ms"),
            0.003468243724688194 * 1000.0
        );
        assert_eq!(
            c("requests/min", 230.27393806693428, "req/s"),
            230.27393806693428 / 60.0
        );
        assert!(Unit::parse("ms").unwrap().convert(1.0, "req/s").is_err());
        assert!(Unit::parse("tokens").unwrap().convert(1.0, "ms").is_err());
    }
}
