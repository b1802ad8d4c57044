//! A whole JSON document as a [`serde_json::Value`], read with the [`Scanner`]: for the small
//! documents read whole (load generators' result files), where a tree is simpler than a
//! walk. Unlike serde_json it takes the `NaN` and `Infinity` Python's `json.dump` writes:
//! `NaN` becomes `null` (no value), `Infinity` and `-Infinity` the strings `"Infinity"` and
//! `"-Infinity"` (a [`serde_json::Number`] cannot hold them; [`crate::num::float`] reads
//! them back).

use super::{JsonError, Scanner, R};
use serde_json::{Map, Number, Value};

/// Containers nested deeper than this are refused (a tree is built by recursion).
const MAX_DEPTH: usize = 128;

/// Parses one JSON document (blanks around it allowed).
pub fn parse(b: &[u8]) -> Result<Value, JsonError> {
    let mut sc = Scanner::new(b);
    let v = value(&mut sc, 0)?;
    sc.end()?;
    Ok(v)
}

fn value(sc: &mut Scanner<'_>, depth: usize) -> R<Value> {
    if depth > MAX_DEPTH {
        return sc.err("nested too deeply");
    }
    match sc.peek() {
        Some(b'{') => {
            let mut map = Map::new();
            sc.object(|sc, k| {
                let v = value(sc, depth + 1)?;
                map.insert(k.decode().into_owned(), v);
                Ok(())
            })?;
            Ok(Value::Object(map))
        }
        Some(b'[') => {
            let mut list = Vec::new();
            sc.array(|sc, _| {
                list.push(value(sc, depth + 1)?);
                Ok(())
            })?;
            Ok(Value::Array(list))
        }
        Some(b'"') => Ok(Value::String(sc.string()?.decode().into_owned())),
        Some(b't') => sc.literal(b"true").map(|_| Value::Bool(true)),
        Some(b'f') => sc.literal(b"false").map(|_| Value::Bool(false)),
        Some(b'n') => sc.literal(b"null").map(|_| Value::Null),
        _ => {
            let t = sc.number()?;
            match t {
                b"NaN" => Ok(Value::Null),
                b"Infinity" | b"-Infinity" => {
                    Ok(Value::String(String::from_utf8_lossy(t).into_owned()))
                }
                _ => {
                    let text = std::str::from_utf8(t).unwrap_or("0");
                    if let Ok(i) = text.parse::<i64>() {
                        return Ok(Value::Number(i.into()));
                    }
                    if let Ok(u) = text.parse::<u64>() {
                        return Ok(Value::Number(u.into()));
                    }
                    Ok(text
                        .parse::<f64>()
                        .ok()
                        .and_then(Number::from_f64)
                        .map_or(Value::Null, Value::Number))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_serde_json_reads_it_and_python_literals_too() {
        let doc = br#" {"a": [1, -2, 3.5e2, true, false, null, "x\u00e9"], "b": {"c": NaN, "d": Infinity, "e": -Infinity}} "#;
        let v = parse(doc).unwrap();
        assert_eq!(
            v["a"],
            serde_json::json!([1, -2, 350.0, true, false, null, "xé"])
        );
        assert_eq!(v["b"]["c"], Value::Null);
        assert_eq!(v["b"]["d"], "Infinity");
        assert_eq!(v["b"]["e"], "-Infinity");
        assert!(parse(b"{\"a\": 1} x").is_err());
        assert!(parse(b"{\"a\": }").is_err());
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(parse(deep.as_bytes()).is_err());
    }
}
