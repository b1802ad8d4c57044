//! `tokstat report DIR` on what `tokstat export` wrote gives the report of the raw inputs, to
//! the last digit: for every fixture set, unpartitioned and partitioned, and for a fleet whose
//! nodes export their own logs into one folder.

use tokstat_tests::{fixture, tokstat};

/// The JSON report of `args` (inputs and flags), which must succeed.
fn report(args: &[&str]) -> String {
    let mut all = vec!["report", "--format", "json", "-q", "--year", "2026"];
    all.extend_from_slice(args);
    let (code, out, err) = tokstat(&all);
    assert!(code == 0 || code == 2, "{args:?}: exit {code}: {err}");
    out
}

fn export(inputs: &[String], to: &std::path::Path, extra: &[&str]) {
    let to = to.display().to_string();
    let mut args = vec!["export", "-q", "--year", "2026", "--to", to.as_str()];
    args.extend(inputs.iter().map(String::as_str));
    args.extend_from_slice(extra);
    let (code, _, err) = tokstat(&args);
    assert!(
        code == 0 || code == 2,
        "export {inputs:?}: exit {code}: {err}"
    );
}

/// Each set of fixtures read back from its export, unpartitioned and (the first set)
/// partitioned by run and instance.
fn reports_as_inputs(sets: &[&[&str]]) {
    let tmp = tempfile::tempdir().unwrap();
    for (k, set) in sets.iter().enumerate() {
        let inputs: Vec<String> = set.iter().map(|s| fixture(s)).collect();
        let want = report(&inputs.iter().map(String::as_str).collect::<Vec<_>>());
        let partitions: &[Option<&str>] = match k {
            0 => &[None, Some("run,instance")],
            _ => &[None],
        };
        for &partition in partitions {
            let dir = tmp.path().join(format!("{k}-{}", partition.is_some()));
            let extra: Vec<&str> = partition
                .map(|p| vec!["--partition-by", p])
                .unwrap_or_default();
            export(&inputs, &dir, &extra);
            let got = report(&[dir.to_str().unwrap()]);
            assert!(
                got == want,
                "{set:?} ({partition:?}): the export's report differs:\n{}",
                first_difference(&want, &got)
            );
        }
    }
}

/// The scenario runs: logs of both engines, completions, several instances.
#[test]
fn runs_report_from_their_export() {
    reports_as_inputs(&[
        &["runs/demo", "runs/completions"],
        &["runs/fleet"],
        &["runs/sglang-mrr"],
        &["runs/vllm-c128"],
        &["runs/vllm-c200"],
    ]);
}

/// Every format fixture: each engine's versions, benchmark files and summaries, scrapes,
/// completion shapes, crashes and messy logs.
#[test]
fn formats_report_from_their_export() {
    reports_as_inputs(&[
        &["formats/messy"],
        &["formats/sglang"],
        &["formats/vllm"],
        &["formats/bench"],
        &["formats/prometheus"],
        &["formats/completions"],
        &["formats/incidents"],
    ]);
}

/// A fleet's nodes each export their own log into one folder under one run label; the
/// folder's report is the report of all the logs read together. A second run in the same
/// folder is told apart by `--run`.
#[test]
fn a_fleet_exported_node_by_node_reports_as_one_run() {
    let logs: Vec<String> = fleet_logs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(logs.len(), 7, "{logs:?}");
    let want = report(&logs.iter().map(String::as_str).collect::<Vec<_>>());
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dataset");
    for log in &logs {
        export(
            std::slice::from_ref(log),
            &dir,
            &["--partition-by", "run,instance", "--run", "fleet"],
        );
    }
    let d = dir.to_str().unwrap();
    assert_eq!(report(&[d]), want);
    // another run beside it: the folder then needs `--run`
    export(
        &[fixture("runs/demo")],
        &dir,
        &["--partition-by", "run,instance", "--run", "demo"],
    );
    let (code, _, err) = tokstat(&["report", "-q", d]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("holds 2 runs (\"demo\", \"fleet\"): choose one with --run LABEL"),
        "{err}"
    );
    assert_eq!(report(&[d, "--run", "fleet"]), want);
    assert_eq!(
        report(&[d, "--run", "demo"]),
        report(&[&fixture("runs/demo")])
    );
    let (code, _, err) = tokstat(&["report", "-q", d, "--run", "nope"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("holds no run labelled \"nope\""), "{err}");
}

/// The fleet fixture's logs, in name order.
fn fleet_logs() -> Vec<std::path::PathBuf> {
    let mut logs: Vec<_> = std::fs::read_dir(fixture("runs/fleet"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    logs
}

/// Asserts two JSON reports are equal, showing where they first differ.
fn same(want: &str, got: &str, what: &str) {
    assert!(got == want, "{what}: {}", first_difference(want, got));
}

/// The first line where two JSON texts differ, with a little context.
fn first_difference(a: &str, b: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let n = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let from = n.saturating_sub(3);
    format!(
        "raw inputs:\n{}\nexport:\n{}",
        a[from..a.len().min(n + 3)].join("\n"),
        b[from..b.len().min(n + 3)].join("\n")
    )
}

/// `compare` reads exported datasets as it reads their inputs: the same comparison, but for
/// the paths it names.
#[test]
fn compare_reads_exports() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for run in ["vllm-c128", "vllm-c200"] {
        let dir = tmp.path().join(run);
        export(&[fixture(&format!("runs/{run}"))], &dir, &[]);
        dirs.push(dir.display().to_string());
    }
    let compare = |a: &str, b: &str| {
        let (a, b) = (format!("c128={a}"), format!("c200={b}"));
        let (code, out, err) = tokstat(&["compare", "--year", "2026", "--format", "json", &a, &b]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let raw = [fixture("runs/vllm-c128"), fixture("runs/vllm-c200")];
    let want = compare(&raw[0], &raw[1])
        .replace(&raw[0], &dirs[0])
        .replace(&raw[1], &dirs[1]);
    assert_eq!(compare(&dirs[0], &dirs[1]), want);
}

/// A folder exported by an earlier version (no saved read in it) is not read as a folder of
/// logs (its Parquet files as binary, its report as JSON of no known shape): the report says
/// to export again.
#[test]
fn an_export_without_a_saved_read_asks_for_another() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("old");
    export(&[fixture("runs/demo")], &dir, &[]);
    std::fs::remove_dir_all(dir.join("_tokstat")).unwrap();
    let (code, _, err) = tokstat(&["report", "-q", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains(
            "saved no read to report from (no _tokstat/ folder in it): export the logs again"
        ),
        "{err}"
    );
}

/// The fleet exported node by node, then its dataset exported again: the merged run's own
/// tables and report. Its report (and `report` on it) is the raw logs' report; its timeline
/// has every instance's rows with the run's steady flags, from which each instance's and the
/// run's steady tok/s are found again by a query alone; its instances are the report's. No
/// `steps` (a saved read keeps no stats line), and a dataset with raw files beside it is
/// refused.
#[test]
fn an_exported_dataset_exports_the_merged_run() {
    let logs = fleet_logs();
    let raw: Vec<&str> = logs.iter().map(|p| p.to_str().unwrap()).collect();
    let want = report(&raw);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nodes");
    for (k, log) in logs.iter().enumerate() {
        let node = format!("node{k}");
        export(
            &[log.display().to_string()],
            &dir,
            &[
                "--partition-by",
                "run,instance",
                "--run",
                "fleet",
                "--node",
                &node,
            ],
        );
    }
    let merged = tmp.path().join("merged");
    let m = merged.display().to_string();
    let d = dir.display().to_string();
    let (code, out, err) = tokstat(&[
        "export", "-q", "--year", "2026", "--format", "jsonl", "--to", &m, &d,
    ]);
    assert!(code == 0 || code == 2, "{err}");
    assert!(
        out.contains("steps        not written: a saved read keeps no stats line"),
        "{out}"
    );
    assert!(!merged.join("steps.jsonl").exists());
    let json = |p: &str| std::fs::read_to_string(merged.join(p)).unwrap();
    let rows = |p: &str| -> Vec<serde_json::Value> {
        json(p)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let mut written: serde_json::Value = serde_json::from_str(&json("report.json")).unwrap();
    let mut raw_report: serde_json::Value = serde_json::from_str(&want).unwrap();
    // (the report the export writes is the one `report` gives: files and all)
    for r in [&mut written, &mut raw_report] {
        r.as_object_mut().unwrap().remove("files");
    }
    assert_eq!(written, raw_report);
    same(&want, &report(&[&m]), "report on the merged export");
    let report: serde_json::Value = serde_json::from_str(&want).unwrap();
    // every instance's steady tok/s from its timeline rows alone
    let timeline = rows("timeline.jsonl");
    let steady_rate = |instance: Option<&str>| {
        let (mut tokens, mut covered) = (0.0, 0.0);
        for r in timeline.iter().filter(|r| {
            r["steady"] == true && r["instance"].as_str() == instance && r["run"] == "fleet"
        }) {
            if let Some(rate) = r["serving_gen_tps"].as_f64() {
                tokens += rate * r["covered_s"].as_f64().unwrap();
                covered += r["covered_s"].as_f64().unwrap();
            }
        }
        tokens / covered
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
    let instances = report["instances"].as_array().unwrap();
    assert_eq!(instances.len(), 7);
    for i in instances {
        let name = i["instance"].as_str().unwrap();
        let got = steady_rate(Some(name));
        let want = i["gen_tps"].as_f64().unwrap();
        assert!(close(got, want), "{name}: {got} against {want}");
    }
    let got = steady_rate(None);
    let run = report["steady"]["gen_tps"].as_f64().unwrap();
    assert!(close(got, run), "the run: {got} against {run}");
    assert!(timeline
        .iter()
        .all(|r| r["bucket_s"] == report["timeline_bucket_s"]));
    // the instances table is the report's
    let table = rows("instances.jsonl");
    assert_eq!(table.len(), 7);
    for (row, i) in table.iter().zip(instances) {
        for key in ["instance", "stat_lines", "gen_tps", "prefill_tokens"] {
            assert_eq!(row[key], i[key], "{key}");
        }
    }
    // the merged run is a dataset of its own
    assert!(merged.join("_tokstat/read.bin").is_file());
    // a dataset and raw files together: refused
    let (code, _, err) = tokstat(&["export", "-q", "--to", &m, &d, raw[0]]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("export reads either exported datasets or the files"),
        "{err}"
    );
}

/// The fleet's saved reads merge to the same report whatever order the nodes' exports ran
/// in (here: reversed, and shuffled), each node named by `--node`.
#[test]
fn the_merge_does_not_depend_on_the_order_exports_ran() {
    let logs: Vec<String> = fleet_logs()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let want = report(&logs.iter().map(String::as_str).collect::<Vec<_>>());
    let tmp = tempfile::tempdir().unwrap();
    for (k, order) in [[6, 5, 4, 3, 2, 1, 0], [2, 0, 5, 1, 6, 3, 4]]
        .iter()
        .enumerate()
    {
        let dir = tmp.path().join(format!("order-{k}"));
        for &i in order {
            let node = format!("node{i}");
            export(
                std::slice::from_ref(&logs[i]),
                &dir,
                &["--partition-by", "run", "--run", "fleet", "--node", &node],
            );
        }
        let got = report(&[dir.to_str().unwrap()]);
        same(&want, &got, &format!("order {order:?}"));
    }
}

/// Two nodes' logs of one name are two instances, as the raw read names them; a log
/// exported twice by one node counts once, and two logs of one name and time on one node
/// are merged with a warning, never silently.
#[test]
fn same_named_logs_of_two_nodes_are_two_instances() {
    let logs = fleet_logs();
    let tmp = tempfile::tempdir().unwrap();
    let mut raw = Vec::new();
    for (node, log) in ["nodeA", "nodeB"].iter().zip(&logs) {
        let d = tmp.path().join(node);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(log, d.join("server.log")).unwrap();
        raw.push(d.join("server.log").display().to_string());
    }
    let want = report(&raw.iter().map(String::as_str).collect::<Vec<_>>());
    let names = |json: &str| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        v["instances"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["instance"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(names(&want), ["nodeA/server", "nodeB/server"]);
    let dir = tmp.path().join("dataset");
    for (node, log) in ["nodeB", "nodeA"].iter().zip(raw.iter().rev()) {
        export(
            std::slice::from_ref(log),
            &dir,
            &["--partition-by", "run", "--run", "r", "--node", node],
        );
    }
    let d = dir.to_str().unwrap();
    let got = report(&[d]);
    assert!(got == want, "{}", first_difference(&want, &got));
    // the same log exported again by nodeA (a retried task): counted once, said so
    export(
        std::slice::from_ref(&raw[0]),
        &dir,
        &["--partition-by", "run", "--run", "r", "--node", "nodeA"],
    );
    let v: serde_json::Value = serde_json::from_str(&report(&[d])).unwrap();
    let w: serde_json::Value = serde_json::from_str(&want).unwrap();
    assert_eq!(v["instances"], w["instances"]);
    let warnings = v["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .as_str()
            .unwrap()
            .contains("hold the same read (node nodeA"),
        "{warnings:?}"
    );
    // nodeB's log given to nodeA as well: one instance nodeA/server held twice over one time
    let twice = tmp.path().join("twice");
    export(
        std::slice::from_ref(&raw[0]),
        &twice,
        &["--partition-by", "run", "--node", "nodeA", "--run", "t"],
    );
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::copy(&raw[1], other.join("server.log")).unwrap();
    export(
        &[other.join("server.log").display().to_string()],
        &twice,
        &["--partition-by", "run", "--node", "nodeA", "--run", "t"],
    );
    let v: serde_json::Value = serde_json::from_str(&report(&[twice.to_str().unwrap()])).unwrap();
    assert_eq!(names(&v.to_string()), ["server"]);
    let warnings = v["warnings"].as_array().unwrap();
    assert!(
        warnings.len() == 1
            && warnings[0]
                .as_str()
                .unwrap()
                .starts_with("instance server: ")
            && warnings[0]
                .as_str()
                .unwrap()
                .contains("its figures count both"),
        "{warnings:?}"
    );
}

/// A saved read of format 1 (tokstat 0.1.0 before saved reads had a format of their own,
/// `fixtures/saved/format-1`: `export --run demo ../fixtures/runs/demo
/// ../fixtures/runs/completions`) is read by this build: the report of the raw inputs.
#[test]
fn a_saved_read_of_format_1_is_read() {
    let want = report(&["../fixtures/runs/demo", "../fixtures/runs/completions"]);
    let got = report(&["../fixtures/saved/format-1"]);
    assert!(got == want, "{}", first_difference(&want, &got));
}
