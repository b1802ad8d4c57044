//! What the end-to-end tests share.

/// Runs tokstat in-process, through the library entry point the binary wraps; returns the
/// exit code, stdout and stderr (bytes that are not UTF-8 shown as U+FFFD).
pub fn tokstat(args: &[&str]) -> (i32, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let argv = std::iter::once("tokstat").chain(args.iter().copied());
    let code = tokstat::run(argv, &mut out, &mut err);
    (
        code,
        String::from_utf8_lossy(&out).into_owned(),
        String::from_utf8_lossy(&err).into_owned(),
    )
}

/// The `fixtures/` folder.
pub fn fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// The path of `rel` under `fixtures/`, as an argument.
pub fn fixture(rel: &str) -> String {
    fixtures().join(rel).display().to_string()
}

/// The ids of a JSON report's hints, in its order.
pub fn hint_ids(report: &serde_json::Value) -> Vec<&str> {
    report["hints"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|h| h["id"].as_str())
        .collect()
}

/// A JSON report's hints as `(id, level)`, in its order (`level`: `firm` or `borderline`).
pub fn hint_levels(report: &serde_json::Value) -> Vec<(String, String)> {
    report["hints"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .map(|h| {
            (
                h["id"].as_str().unwrap_or_default().to_string(),
                h["evidence"]["level"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// `tokstat ARGS` that must succeed, its stdout read as JSON.
pub fn tokstat_json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = tokstat(args);
    assert_eq!(code, 0, "tokstat {}: {err}", args.join(" "));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("tokstat {}: {e}", args.join(" ")))
}
