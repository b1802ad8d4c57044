//! nst/JSONTestSuite (vendored under `fixtures/suites/JSONTestSuite`, MIT): every `y_` case
//! is accepted and every `n_` case refused, by the record scanner and by the reference
//! grammar alike, but for the scanner's one extension: `NaN`, `Infinity` and `-Infinity`,
//! which Python's `json.dumps` writes for non-finite floats (logprobs, scores) unless told
//! not to. The `i_` cases, which RFC 8259 leaves to the parser, get the scanner's stated
//! choices: a number beyond f64 and a string with a lone surrogate (no Unicode text) are
//! refused; nesting has no limit (the grammar stops at 128 levels). None may panic.

use std::path::PathBuf;
use tokstat_parsers::grammar;
use tokstat_parsers::json::Scanner;

fn cases() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/suites/JSONTestSuite/test_parsing");
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    v.sort();
    v
}

/// The `n_` cases the scanner accepts: Python's spellings of non-finite floats.
const PYTHON_FLOATS: [&str; 3] = [
    "n_number_NaN.json",
    "n_number_infinity.json",
    "n_number_minus_infinity.json",
];

fn scanner(text: &[u8]) -> bool {
    let mut sc = Scanner::new(text);
    sc.skip().and_then(|_| sc.end()).is_ok()
}

#[test]
fn every_case_of_the_suite() {
    let all = cases();
    let (mut y, mut n, mut i) = (0, 0, 0);
    let mut wrong = Vec::new();
    for (name, text) in &all {
        let fast = scanner(text);
        let reference = grammar::json::is_value(text);
        match &name[..2] {
            "y_" => {
                y += 1;
                if !fast || !reference {
                    wrong.push(format!(
                        "{name}: accepted by scanner {fast}, grammar {reference}"
                    ));
                }
            }
            "n_" => {
                n += 1;
                let python = PYTHON_FLOATS.contains(&name.as_str());
                if fast != python || reference {
                    wrong.push(format!(
                        "{name}: refused by scanner {}, grammar {}",
                        !fast, !reference
                    ));
                }
            }
            _ => {
                i += 1;
                let refused = ["surrogate", "huge_exp", "overflow"]
                    .iter()
                    .any(|w| name.contains(w));
                let nested = name.contains("500_nested");
                let expected = if refused {
                    false
                } else if nested {
                    true
                } else {
                    reference
                };
                if fast != expected {
                    wrong.push(format!("{name}: scanner {fast}, grammar {reference}"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {}:\n{}",
        wrong.len(),
        all.len(),
        wrong.join("\n")
    );
    assert_eq!((y, n, i), (95, 188, 35));
}
