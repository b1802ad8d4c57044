//! Steady state tested, not assumed: the simulator's logs of known truth (`xtask::scenario`)
//! — a flat run, a run whose rate falls a fifth over two hours, a run cut during its ramp-up
//! — and the verdicts, slopes and intervals the report gives them.

use serde_json::Value;
use tokstat_tests::tokstat;
use xtask::scenario::{run_gpu, Engine, Gpu, Phase};

/// The JSON report of one simulated SGLang GPU running `phase` (seed `seed`), and its
/// terminal report.
fn run(name: &str, seed: u64, phase: Phase) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.log"));
    let gpu = Gpu {
        log_every: 100,
        ..Gpu::new(name, Engine::Sglang, seed)
    };
    run_gpu(&gpu, &[phase], &path).unwrap();
    let path = path.display().to_string();
    let (code, out, err) = tokstat(&["report", "--format", "json", "-q", &path]);
    assert_eq!(code, 0, "{err}");
    let (_, text, _) = tokstat(&["report", "-q", &path]);
    (serde_json::from_str(&out).unwrap(), text)
}

/// Two hours at 64 running requests (96 closed-loop clients).
fn two_hours(slow_by: f64) -> Phase {
    Phase::closed_loop(7200.0, 64, slow_by)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A flat run keeps its steady figure: the window's mean, tested steady.
#[test]
fn a_flat_run_is_steady_and_keeps_its_figure() {
    let (r, text) = run("flat", 1, two_hours(0.0));
    assert!(
        text.contains("steady state tested: steady: no drift beyond ±10%"),
        "{text}"
    );
    let s = &r["steady"];
    assert_eq!(s["verdict"], "steady", "{}", s["trend"]);
    assert_eq!(s["gen_tps"], s["window_gen_tps"]);
    let t = &s["trend"];
    assert_eq!(t["test"], "wls_slope_ar1_effective_n");
    assert!(f(&t["change"]).abs() < 0.05, "{t}");
    assert!(
        f(&t["slope_low_per_h"]) < 0.0 && f(&t["slope_high_per_h"]) > -0.05,
        "{t}"
    );
}

/// 20% slower decode steps by the end of two hours (the rate falls by a sixth, 1/1.2):
/// no steady rate, the fall with an interval holding the truth.
#[test]
fn a_drifting_run_has_no_steady_state() {
    let (r, text) = run("drift", 1, two_hours(0.2));
    assert!(
        text.contains("steady state tested: no steady state: throughput falls"),
        "{text}"
    );
    assert!(text.contains("which is no steady rate"), "{text}");
    let s = &r["steady"];
    assert_eq!(s["verdict"], "drifting", "{}", s["trend"]);
    assert_eq!(s["gen_tps"], Value::Null);
    assert!(f(&s["window_gen_tps"]) > 0.0);
    let t = &s["trend"];
    // the truth: decode steps go as 1 + 0.2 t/T, whose rate's least-squares line falls
    // 9.1%/h of its mean (prefill time, which does not slow, takes a little off)
    let (lo, hi) = (f(&t["slope_low_per_h"]), f(&t["slope_high_per_h"]));
    assert!(lo < -0.07 && hi > -0.10 && hi < 0.0, "{t}");
    assert_eq!(r["segments"][0]["trend"], *t);
    assert_eq!(r["segments"][0]["gen_tps"], Value::Null);
}

/// A log that ends while the clients are still joining: still ramping, no steady rate.
#[test]
fn a_run_cut_during_ramp_up_is_still_ramping() {
    let (r, text) = run("ramp", 3, Phase::cut_in_ramp_up());
    let s = &r["steady"];
    assert_eq!(s["verdict"], "ramping", "{}", s["trend"]);
    assert_eq!(s["gen_tps"], Value::Null);
    assert!(f(&s["trend"]["slope_low_per_h"]) > 0.0, "{}", s["trend"]);
    assert!(
        text.contains("no steady state: still ramping up at the end"),
        "{text}"
    );
}

/// The JSON comparison of simulated runs at max running `loads` (one GPU each), and its
/// terminal and markdown renderings.
fn sweep(loads: &[usize], secs: f64) -> (Value, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["compare".to_string(), "--format".into(), "json".into()];
    for &n in loads {
        let path = dir.path().join(format!("c{n}.log"));
        let gpu = Gpu {
            log_every: 100,
            ..Gpu::new(&format!("c{n}"), Engine::Sglang, 10 + n as u64)
        };
        run_gpu(&gpu, &[Phase::closed_loop(secs, n, 0.0)], &path).unwrap();
        args.push(format!("c{n}={}", path.display()));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = tokstat(&args);
    assert_eq!(code, 0, "{err}");
    let (_, table, _) = tokstat(&[&args[..1], &args[3..]].concat());
    let (_, markdown, _) = tokstat(&[&args[..1], &["--format", "markdown"], &args[3..]].concat());
    (serde_json::from_str(&out).unwrap(), table, markdown)
}

/// Five runs at max running 8 … 128 of a server whose step takes `0.012 + 0.0003 × running`
/// s are one curve, each point with its interval; its knee (one more request adding under a
/// tenth of a request's rate, from 360 running on) is not within these loads. Up to 1,024 it
/// is, with an interval.
#[test]
fn a_sweep_is_one_curve_with_its_knee() {
    let (c, table, markdown) = sweep(&[8, 16, 32, 64, 128], 1800.0);
    let s = &c["sweep"];
    let part = |text: &str, from: &str, to: &str| {
        let a = text
            .find(from)
            .unwrap_or_else(|| panic!("{from} in {text}"));
        let z = text[a..].find(to).map_or(text.len(), |z| a + z);
        text[a..z].to_string()
    };
    insta::assert_snapshot!(
        "sweep-table",
        part(&table, "Sweep: the runs by load", "Generated tok/s")
    );
    insta::assert_snapshot!("sweep-markdown", part(&markdown, "### Sweep", "\n\n\n"));
    assert_eq!(s["load"], "running");
    let points = s["points"].as_array().unwrap();
    let labels: Vec<&str> = points
        .iter()
        .map(|p| p["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["c8", "c16", "c32", "c64", "c128"]);
    for p in points {
        // the decode model's rate at the point's load, less the prefill time (a few per cent)
        let r = f(&p["load"]);
        let decode = r / (0.012 + 0.0003 * r);
        let (lo, hi) = (f(&p["gen_tps_low"]), f(&p["gen_tps_high"]));
        assert!(
            lo <= f(&p["gen_tps"]) && f(&p["gen_tps"]) <= hi && hi - lo < 0.02 * hi,
            "{p}"
        );
        assert!(
            (0.9..1.0).contains(&(f(&p["gen_tps"]) / decode)),
            "{p} against {decode}"
        );
    }
    assert_eq!(s["knee_verdict"], "not_within_loads", "{s}");
    assert!(
        s["note"]
            .as_str()
            .unwrap()
            .starts_with("no knee within the loads seen"),
        "{s}"
    );
    let (c, _, _) = sweep(&[8, 32, 128, 256, 512, 1024], 900.0);
    let s = &c["sweep"];
    assert_eq!(s["knee_verdict"], "found", "{s}");
    let k = &s["knee"];
    assert_eq!(k["label"], "c256", "{k}");
    assert!(f(&k["low_load"]) <= f(&k["load"]), "{k}");
    assert!(f(&k["found_share"]) > 0.9, "{k}");
    // runs at one load (within 5%) are no curve
    let (c, _, _) = sweep(&[64, 65, 66], 900.0);
    assert_eq!(c["sweep"], Value::Null);
}

/// A pasted excerpt — five stats lines of a run whose whole log raises `running_cap` —
/// judges nothing: `too_little_data`, and no other hint (five lines fired hints before).
#[test]
fn an_excerpt_of_five_stats_lines_is_too_little_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flat.log");
    let gpu = Gpu {
        log_every: 100,
        ..Gpu::new("flat", Engine::Sglang, 1)
    };
    run_gpu(&gpu, &[Phase::closed_loop(1200.0, 64, 0.0)], &path).unwrap();
    let whole = std::fs::read_to_string(&path).unwrap();
    let excerpt: String = whole
        .lines()
        .filter(|l| l.contains("Decode batch"))
        .skip(200)
        .take(5)
        .map(|l| format!("{l}\n"))
        .collect();
    let cut = dir.path().join("excerpt.log");
    std::fs::write(&cut, excerpt).unwrap();
    let report = |p: &std::path::Path| -> Value {
        let (code, out, err) =
            tokstat(&["report", "--format", "json", "-q", &p.display().to_string()]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str(&out).unwrap()
    };
    let r = report(&path);
    assert!(
        tokstat_tests::hint_ids(&r).contains(&"running_cap"),
        "{:?}",
        tokstat_tests::hint_ids(&r)
    );
    let r = report(&cut);
    assert_eq!(tokstat_tests::hint_ids(&r), ["too_little_data"]);
    // (the first line only opens the first interval: four close inside the window)
    assert_eq!(r["hints"][0]["evidence"]["lines"], 4);
}

/// A run whose clients join over half an hour while its decode steps slow by 60% over two
/// hours: the curve has a knee (the later, slower lines sit at the higher concurrencies),
/// and `saturated` fired on it. The drift's window is not tested steady: no `saturated`.
#[test]
fn a_drift_does_not_raise_saturated() {
    let (r, _) = run(
        "drift-ramp",
        5,
        Phase {
            secs: 7200.0,
            max_running: 128,
            clients: Some(128),
            ramp_per_s: 128.0 / 1800.0,
            slow_by: 0.6,
            ..Phase::default()
        },
    );
    assert!(r["knee"]["running"].as_f64().is_some(), "{}", r["knee"]);
    assert_ne!(r["steady"]["verdict"], "steady", "{}", r["steady"]["trend"]);
    assert!(
        !tokstat_tests::hint_ids(&r).contains(&"saturated"),
        "{:?}",
        tokstat_tests::hint_ids(&r)
    );
}
