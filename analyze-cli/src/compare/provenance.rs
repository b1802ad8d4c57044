//! What differs between runs besides the outcome: engines, models, versions and every
//! setting their logs' start-up lines state.

use super::unit::Unit;
use super::{Provenance, Setting};
use std::collections::BTreeSet;

/// Settings that name the model.
const MODEL_KEYS: [&str; 4] = ["model", "model_path", "served_model_name", "model_name"];
/// Settings that name the engine's version.
const VERSION_KEYS: [&str; 2] = ["version", "sglang_version"];
/// Settings that differ between any two runs of one machine and say nothing of the setup.
const NOISE: [&str; 1] = ["available_gpu_mem"];

fn values(u: &Unit<'_>, keys: &[&str]) -> Vec<String> {
    let set: BTreeSet<String> = keys
        .iter()
        .filter_map(|k| u.settings.get(*k))
        .flatten()
        .cloned()
        .collect();
    set.into_iter().collect()
}

/// The provenance of `units`, and whether they may be compared: runs of different engines
/// or models only with `force`.
pub fn of(units: &[Unit<'_>], force: bool) -> Result<Provenance, String> {
    let engines: Vec<Vec<String>> = units.iter().map(|u| u.engines.clone()).collect();
    let models: Vec<Vec<String>> = units.iter().map(|u| values(u, &MODEL_KEYS)).collect();
    let versions: Vec<Vec<String>> = units.iter().map(|u| values(u, &VERSION_KEYS)).collect();
    let differ = |v: &[Vec<String>]| {
        let known: Vec<&Vec<String>> = v.iter().filter(|x| !x.is_empty()).collect();
        known.windows(2).any(|w| w[0] != w[1])
    };
    let mut mismatch = Vec::new();
    if differ(&engines) {
        mismatch.push(("engines", engines.clone()));
    }
    if differ(&models) {
        mismatch.push(("models", models.clone()));
    }
    if !mismatch.is_empty() && !force {
        let what: Vec<String> = mismatch
            .iter()
            .map(|(name, v)| {
                let per: Vec<String> = units
                    .iter()
                    .zip(v.iter())
                    .map(|(u, x)| format!("{}: {}", u.label, x.join(", ")))
                    .collect();
                format!("{name} ({})", per.join("; "))
            })
            .collect();
        return Err(format!(
            "the runs differ in {}: their figures are not comparable; pass --force to compare them anyway",
            what.join(" and ")
        ));
    }
    let keys: BTreeSet<&String> = units.iter().flat_map(|u| u.settings.keys()).collect();
    let changed: Vec<Setting> = keys
        .into_iter()
        .filter(|k| !NOISE.contains(&k.as_str()))
        .filter_map(|k| {
            let values: Vec<Vec<String>> = units
                .iter()
                .map(|u| u.settings.get(k).cloned().unwrap_or_default())
                .collect();
            values.windows(2).any(|w| w[0] != w[1]).then(|| Setting {
                key: k.clone(),
                values,
            })
        })
        .collect();
    // `context_len` and `context_length` are one setting logged twice by some versions
    let distinct: BTreeSet<Vec<Vec<String>>> = changed.iter().map(|s| s.values.clone()).collect();
    let single_change = (units.len() == 2 && distinct.len() == 1).then(|| {
        let s = &changed[0];
        let show = |v: &Vec<String>| {
            if v.is_empty() {
                "(not stated)".to_string()
            } else {
                v.join("/")
            }
        };
        let keys: Vec<&str> = changed.iter().map(|s| s.key.as_str()).collect();
        format!(
            "{} {} → {}",
            keys.join(" = "),
            show(&s.values[0]),
            show(&s.values[1])
        )
    });
    Ok(Provenance {
        engines,
        models,
        versions,
        changed,
        single_change,
        forced: !mismatch.is_empty(),
    })
}
