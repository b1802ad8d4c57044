//! A/A (issue 56): twenty seeds of one configuration of the simulator (`xtask::scenario`,
//! vLLM logs), near and far from the rules' thresholds, give the same firm hints; where a
//! seed's evidence straddles a threshold, its hint is borderline, never firm in some seeds
//! and absent in others.

use serde_json::Value;
use tokstat_tests::{hint_levels, tokstat_json};
use xtask::scenario::{run_gpu, Engine, Gpu, Phase};

/// The JSON report of simulated vLLM servers, one a `(seed, slowdown)`, each running
/// `phase`.
fn report_of(gpus: &[(u64, f64)], phase: &Phase) -> Value {
    report_with(gpus, phase, Gpu::new("", Engine::Vllm, 0).mean_output)
}

/// As [`report_of`], the requests' outputs `mean_output` tokens long on average.
fn report_with(gpus: &[(u64, f64)], phase: &Phase, mean_output: f64) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (k, &(seed, slowdown)) in gpus.iter().enumerate() {
        let path = dir.path().join(format!("gpu{k}.log"));
        let gpu = Gpu {
            slowdown,
            mean_output,
            ..Gpu::new(&format!("gpu{k}"), Engine::Vllm, seed)
        };
        run_gpu(&gpu, std::slice::from_ref(phase), &path).unwrap();
        paths.push(path.display().to_string());
    }
    let mut args = vec!["report", "--format", "json", "-q"];
    args.extend(paths.iter().map(String::as_str));
    tokstat_json(&args)
}

/// One server at `running`, half again as many closed-loop clients, for `secs`.
fn report(seed: u64, secs: f64, running: usize) -> Value {
    report_of(&[(seed, 1.0)], &Phase::closed_loop(secs, running, 0.0))
}

/// Two servers of one run, the second `slow` times slower.
fn two(seed: u64, secs: f64, running: usize, slow: f64) -> Value {
    report_of(
        &[(seed * 10, 1.0), (seed * 10 + 1, slow)],
        &Phase::closed_loop(secs, running, 0.0),
    )
}

/// One server with room for `running` and only `clients` closed-loop clients.
fn clients(seed: u64, secs: f64, running: usize, clients: usize) -> Value {
    let phase = Phase {
        secs,
        max_running: running,
        clients: Some(clients),
        ..Phase::default()
    };
    report_of(&[(seed, 1.0)], &phase)
}

/// One server with room for 64 and 64 closed-loop clients pausing `think_s` on average
/// between a response and their next request: running moves about its mean.
fn thinking(seed: u64, secs: f64, think_s: f64) -> Value {
    let phase = Phase {
        secs,
        max_running: 64,
        clients: Some(64),
        think_s,
        ..Phase::default()
    };
    report_of(&[(seed, 1.0)], &phase)
}

/// One server at 128 running, half again as many closed-loop clients, outputs
/// `mean_output` tokens long on average (none capped): the longer, the fuller its KV cache.
fn kv(seed: u64, secs: f64, mean_output: f64) -> Value {
    let phase = Phase {
        secs,
        max_running: 128,
        clients: Some(192),
        cap: 1 << 20,
        context_len: 1 << 20,
        ..Phase::default()
    };
    report_with(&[(seed, 1.0)], &phase, mean_output)
}

/// A configuration's name, and its report for a seed.
type Configuration = (&'static str, Box<dyn Fn(u64) -> Value>);

/// The configurations: far from every threshold, and near client_bound's (0.8 of the cap:
/// with a constant running count, and at it with one that moves about its mean),
/// kv_bound's (KV cache full in half the steady time: running_cap then borderline too) and
/// instance_imbalance's (15% from the median).
fn configurations() -> Vec<Configuration> {
    vec![
        (
            "capped, 4 h at 128 (192 clients)",
            Box::new(|s| report(s, 4.0 * 3600.0, 128)),
        ),
        (
            "client-bound far: 40 clients on 64",
            Box::new(|s| clients(s, 7200.0, 64, 40)),
        ),
        (
            "client-bound near: 51 clients on 64",
            Box::new(|s| clients(s, 7200.0, 64, 51)),
        ),
        (
            "client-bound near: 52 clients on 64",
            Box::new(|s| clients(s, 7200.0, 64, 52)),
        ),
        (
            "client-bound at the threshold: 64 clients pausing 9.1 s on 64",
            Box::new(|s| thinking(s, 7200.0, 9.1)),
        ),
        (
            "KV near full: 128 running, outputs of 6,450 tokens",
            Box::new(|s| kv(s, 7200.0, 6450.0)),
        ),
        (
            "imbalance far: a GPU 1.6x slower",
            Box::new(|s| two(s, 7200.0, 64, 1.6)),
        ),
        (
            "imbalance near: a GPU 1.36x slower",
            Box::new(|s| two(s, 7200.0, 64, 1.36)),
        ),
        (
            "imbalance at the threshold: a GPU 1.353x slower",
            Box::new(|s| two(s, 7200.0, 64, 1.353)),
        ),
    ]
}

/// Per configuration and hint, how many of the 20 seeds have it firm, borderline, absent:
/// the firm ones agree in 19 of 20 or more (firm in at least 19, or in at most 1).
#[test]
fn twenty_seeds_agree_on_their_firm_hints() {
    use std::collections::BTreeMap;
    let mut table = String::from(
        "| configuration | hint | firm | borderline | absent |\n|---|---|---|---|---|\n",
    );
    let mut disagree = Vec::new();
    for (name, run) in configurations() {
        let mut counts: BTreeMap<String, (u32, u32)> = BTreeMap::new();
        for seed in 1..=20 {
            for (id, level) in hint_levels(&run(seed)) {
                let e = counts.entry(id).or_default();
                if level == "firm" {
                    e.0 += 1;
                } else {
                    e.1 += 1;
                }
            }
        }
        if counts.is_empty() {
            table.push_str(&format!("| {name} | (none) | 0 | 0 | 20 |\n"));
        }
        for (id, (firm, borderline)) in &counts {
            table.push_str(&format!(
                "| {name} | {id} | {firm} | {borderline} | {} |\n",
                20 - firm - borderline
            ));
            if (2..=18).contains(firm) {
                disagree.push(format!("{name}: {id} firm in {firm} of 20"));
            }
        }
    }
    eprintln!("{table}");
    assert!(disagree.is_empty(), "{disagree:?}\n{table}");
}

/// Issue 56's example: two seeds of 8 h at 128 running give the same firm hints, and
/// `saturated` borderline in both or neither.
#[test]
fn seeds_7_and_8_give_the_same_firm_hints() {
    let firm = |r: &Value| -> Vec<String> {
        hint_levels(r)
            .into_iter()
            .filter(|(_, l)| l == "firm")
            .map(|(id, _)| id)
            .collect()
    };
    let (a, b) = (report(7, 8.0 * 3600.0, 128), report(8, 8.0 * 3600.0, 128));
    assert_eq!(firm(&a), firm(&b));
    assert!(
        firm(&a).contains(&"running_cap".to_string()),
        "{:?}",
        hint_levels(&a)
    );
    let saturated = |r: &Value| hint_levels(r).into_iter().find(|(id, _)| id == "saturated");
    match (saturated(&a), saturated(&b)) {
        (None, None) => {}
        (Some((_, x)), Some((_, y))) => assert!(x == "borderline" && y == "borderline"),
        other => panic!("saturated in one seed only: {other:?}"),
    }
}
