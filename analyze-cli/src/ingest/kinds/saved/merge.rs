//! Saved reads merged into one read, in an order of their own: the same report, to the last
//! digit, whatever order the reads were found in or their writers finished, and the report
//! of all the raw inputs read at once (given in the order of their nodes, then paths).
//!
//! - **Order**: by what was read — the node, then the inputs' paths, then the read's bytes —
//!   never by writer (host, process, time), which says when a task ran, not what it read.
//! - **Nodes**: an instance name read by two nodes is two instances, `NODE/NAME` each (as
//!   `report nodeA/server.log nodeB/server.log` names them); names no other node has stay
//!   as they are.
//! - **Never a silent merge**: two reads with the same bytes from one node (a retried task)
//!   count once, and an instance that two reads hold over overlapping times (one log
//!   exported twice, two nodes given one `--node`) is merged as one and warned of.

use super::Saved;
use crate::ingest::read::Ingested;
use std::collections::{BTreeMap, BTreeSet};

/// Merges the saved reads `saved` after `base` (the read of the raw inputs, by node
/// `base_node`), in the order of what they read, and says in the read's warnings what
/// could not be told apart.
pub fn merge(mut base: Ingested, base_node: Option<&str>, mut saved: Vec<Saved>) -> Ingested {
    let key = |s: &Saved| {
        (
            s.header.node.clone().unwrap_or_default(),
            s.read
                .files
                .iter()
                .map(|f| f.file.source.clone())
                .collect::<Vec<_>>(),
        )
    };
    saved.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| a.encoded.cmp(&b.encoded)));
    // a read saved twice (a task run again) counts once
    let mut warnings = Vec::new();
    let mut kept: Vec<Saved> = Vec::with_capacity(saved.len());
    for s in saved {
        match kept.last() {
            Some(k) if k.header.node == s.header.node && k.encoded == s.encoded => {
                warnings.push(format!(
                    "{} and {} hold the same read (node {}, inputs {}): counted once — was an \
                     export run twice?",
                    k.path.display(),
                    s.path.display(),
                    node_name(k.header.node.as_deref()),
                    s.header.inputs.join(" ")
                ));
            }
            _ => kept.push(s),
        }
    }
    // names read by more than one node are qualified by their node
    let mut nodes_of: BTreeMap<String, BTreeSet<Option<&str>>> = BTreeMap::new();
    for (node, read) in std::iter::once((base_node, &base))
        .chain(kept.iter().map(|s| (s.header.node.as_deref(), &s.read)))
    {
        for name in read.logs.instances.keys() {
            nodes_of.entry(name.clone()).or_default().insert(node);
        }
    }
    let shared: BTreeSet<String> = nodes_of
        .into_iter()
        .filter(|(_, nodes)| nodes.len() > 1)
        .map(|(name, _)| name)
        .collect();
    let mut parts: Vec<(String, Ingested)> = Vec::with_capacity(kept.len());
    let base_from = "the inputs given".to_string();
    qualify(&mut base, base_node, &shared);
    for mut s in kept {
        qualify(&mut s.read, s.header.node.as_deref(), &shared);
        parts.push((s.path.display().to_string(), s.read));
    }
    // one instance in two reads over overlapping times: merged, and said so
    let mut spans: BTreeMap<&str, Vec<(i64, i64, &str)>> = BTreeMap::new();
    for (from, read) in
        std::iter::once((&base_from, &base)).chain(parts.iter().map(|(p, r)| (p, r)))
    {
        for (name, i) in &read.logs.instances {
            if let (Some(a), Some(b)) = (i.first, i.last) {
                spans.entry(name).or_default().push((a.0, b.0, from));
            }
        }
    }
    for (name, mut s) in spans {
        s.sort();
        for w in s.windows(2) {
            let ((_, end, a), (start, _, b)) = (w[0], w[1]);
            if start <= end {
                warnings.push(format!(
                    "instance {name}: {a} and {b} both hold its lines over {:.0} s: its figures \
                     count both. Export each log once, or name the nodes apart (--node)",
                    (end - start) as f64 / 1000.0
                ));
            }
        }
    }
    for (_, read) in parts {
        base.extend(read);
    }
    base.warnings.extend(warnings);
    base
}

fn node_name(node: Option<&str>) -> &str {
    node.unwrap_or("unnamed")
}

/// Renames the instances of `read` whose names are `shared` to `NODE/NAME`.
fn qualify(read: &mut Ingested, node: Option<&str>, shared: &BTreeSet<String>) {
    let Some(node) = node else {
        return;
    };
    let instances = std::mem::take(&mut read.logs.instances);
    read.logs.instances = instances
        .into_iter()
        .map(|(name, i)| {
            if shared.contains(&name) {
                (format!("{node}/{name}"), i)
            } else {
                (name, i)
            }
        })
        .collect();
}
