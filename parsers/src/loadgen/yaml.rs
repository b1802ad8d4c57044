//! YAML result files (GuideLLM's `--output-path benchmarks.yaml`), read into the same tree
//! as their JSON twins so that one reader reads both. The YAML is parsed by `yaml-rust2`.

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// The layout of a YAML result file, from its head: GuideLLM's report begins with
/// `metadata:` (0.5+ in field order, holding `guidellm_version:`) or `benchmarks:` (0.3–0.4,
/// whose entries are `type_: generative_benchmark`; 0.5+ with sorted keys, whose first
/// benchmark's `config` names GuideLLM's modules).
pub fn sniff(head: &[u8]) -> Option<super::Layout> {
    // the first 64 KiB are enough (and a mapped file may be gigabytes of JSONL)
    let head = &head[..head.len().min(64 * 1024)];
    let text = std::str::from_utf8(crate::text::without_bom(head))
        .or_else(|e| std::str::from_utf8(&head[..e.valid_up_to()]))
        .ok()?;
    let first = text
        .lines()
        .map(str::trim_end)
        .find(|l| !l.trim().is_empty())?;
    let guidellm = (first == "metadata:" && text.contains("guidellm_version:"))
        || (first == "benchmarks:"
            && (text.contains("type_: generative_benchmark") || text.contains("guidellm.")));
    guidellm.then_some(super::Layout::GuideLlm)
}

/// Parses a YAML document into a JSON tree.
pub fn parse(text: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(crate::text::without_bom(text)).map_err(|e| e.to_string())?;
    let docs = YamlLoader::load_from_str(text).map_err(|e| e.to_string())?;
    let doc = docs.into_iter().next().ok_or("an empty YAML file")?;
    Ok(value(doc))
}

/// A finite real (`.nan` and what does not parse: no value).
fn real(s: &str) -> Value {
    s.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map_or(Value::Null, Value::Number)
}

/// `.inf` and `-.inf` are kept as text, as the JSON reader keeps `Infinity`.
fn value(y: Yaml) -> Value {
    match y {
        Yaml::Real(s) => match s.trim_start_matches('+').to_ascii_lowercase().as_str() {
            ".inf" => Value::String("Infinity".into()),
            "-.inf" => Value::String("-Infinity".into()),
            _ => real(&s),
        },
        Yaml::Integer(i) => Value::Number(i.into()),
        Yaml::String(s) => Value::String(s),
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Array(a) => Value::Array(a.into_iter().map(value).collect()),
        Yaml::Hash(h) => {
            let mut m = Map::new();
            for (k, v) in h {
                let key = match k {
                    Yaml::String(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Real(r) => r,
                    Yaml::Boolean(b) => b.to_string(),
                    _ => continue,
                };
                m.insert(key, value(v));
            }
            Value::Object(m)
        }
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_as_its_json_twin() {
        let y = b"metadata:\n  version: 2\n  guidellm_version: 0.8.1\nbenchmarks:\n- type_: generative_benchmark\n  duration: 5.5\n  rate: .inf\n  name: null\n";
        assert_eq!(sniff(y), Some(super::super::Layout::GuideLlm));
        let v = parse(y).unwrap();
        assert_eq!(v["metadata"]["guidellm_version"], "0.8.1");
        assert_eq!(v["benchmarks"][0]["duration"], 5.5);
        assert_eq!(v["benchmarks"][0]["rate"], "Infinity");
        assert_eq!(v["benchmarks"][0]["name"], Value::Null);
        assert_eq!(sniff(b"metadata:\n  other: 1\n"), None);
        assert!(parse(b"a: [1, 2\n").is_err());
    }
}
