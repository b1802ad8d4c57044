//! vLLM's and SGLang's benchmark result files (docs/formats.md §4.4): vLLM `bench serve --save-result` (one JSON
//! object per file, or one per line with `--append-result`) and SGLang `bench_serving`
//! (one JSON line per run, with a literal `Infinity` request rate).
//!
//! A run keeps its scalar results by name (`duration`, `request_throughput`, the typo key
//! `request_goodput:` of vLLM ≤ 0.9.1, `median_ttft_ms`, …) and, when the file has them, the
//! per-request lists (`input_lens`, `output_lens`, `ttfts`, `itls`, `latencies`, `errors`),
//! which become rows of the `requests` table. Lists are in seconds; summaries in ms.

use super::{Request, Run, Tool};
use crate::json::{JsonError, Scanner};

/// Whether a record is a benchmark result rather than a completion: it carries the
/// aggregate keys both tools write.
pub fn is_bench(record: &[u8]) -> bool {
    let has = |k: &str| memchr::memmem::find(record, k.as_bytes()).is_some();
    (has("\"request_throughput\"")
        || has("\"output_token_throughput\"")
        || has("\"total_output_tokens\"")
        || has("\"total_output\""))
        && (has("\"duration\"") || has("\"benchmark_duration\"") || has("\"completed\""))
}

fn numbers(sc: &mut Scanner<'_>) -> Result<Vec<Option<f64>>, JsonError> {
    let mut v = Vec::new();
    if sc.peek() != Some(b'[') {
        sc.skip()?;
        return Ok(v);
    }
    sc.array(|sc, _| {
        v.push(sc.opt_number()?);
        Ok(())
    })?;
    Ok(v)
}

/// Reads one run (a JSON object).
pub fn read_run(record: &[u8]) -> Result<Run, JsonError> {
    let mut sc = Scanner::new(record);
    let mut run = Run::default();
    let (mut inputs, mut outputs, mut ttfts, mut latencies) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut itls: Vec<(f64, usize)> = Vec::new(); // (sum, count) per request
    let mut errors: Vec<bool> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut sglang = false;
    sc.object(|sc, k| {
        let key = k.decode();
        // keys only SGLang's writer has (docs/formats.md §4.4)
        sglang |= matches!(
            key.as_ref(),
            "dataset_name"
                | "sharegpt_output_len"
                | "total_output_retokenized"
                | "total_output_tokens_retokenized"
        );
        match key.as_ref() {
            "input_lens" => inputs = numbers(sc)?,
            "output_lens" => outputs = numbers(sc)?,
            "ttfts" => ttfts = numbers(sc)?,
            "latencies" => latencies = numbers(sc)?,
            "itls" if sc.peek() == Some(b'[') => sc.array(|sc, _| {
                let v = numbers(sc)?;
                let vals: Vec<f64> = v.into_iter().flatten().collect();
                itls.push((vals.iter().sum(), vals.len()));
                Ok(())
            })?,
            "errors" if sc.peek() == Some(b'[') => sc.array(|sc, _| {
                let e = sc.opt_string()?;
                errors.push(e.is_some_and(|s| !s.raw.is_empty()));
                Ok(())
            })?,
            "backend" | "endpoint_type" | "label" | "tag" | "model_id" => {
                if let Some(s) = sc.opt_string()? {
                    let s = s.decode().into_owned();
                    match key.as_ref() {
                        "model_id" => run.setup.model = Some(s.clone()),
                        "endpoint_type" | "backend" if run.setup.endpoint.is_none() => {
                            run.setup.endpoint = Some(s.clone())
                        }
                        _ => {}
                    }
                    if !names.contains(&s) {
                        names.push(s);
                    }
                }
            }
            _ => match sc.peek() {
                Some(b'-' | b'0'..=b'9' | b'N' | b'I') => {
                    if let Some(v) = sc.opt_number()? {
                        run.scalars.push((key.into_owned(), v));
                    }
                }
                // vLLM writes `"request_rate": "inf"`
                Some(b'"') => {
                    let s = sc.string()?;
                    if let Some(v) = crate::num::float(&s.decode()) {
                        run.scalars.push((key.into_owned(), v));
                    }
                }
                _ => sc.skip()?,
            },
        }
        Ok(())
    })?;
    sc.end()?;
    run.name = names.join(" · ");
    run.tool = if sglang {
        Tool::SglangBench
    } else {
        Tool::VllmBench
    };
    let n = inputs
        .len()
        .max(outputs.len())
        .max(ttfts.len())
        .max(itls.len())
        .max(latencies.len());
    for i in 0..n {
        let get = |v: &Vec<Option<f64>>| v.get(i).copied().flatten();
        let out = get(&outputs).map(|x| x as u64);
        let ttft = get(&ttfts);
        let itl = itls
            .get(i)
            .filter(|(_, c)| *c > 0)
            .map(|(s, c)| s / *c as f64);
        // e2e: the recorded latency (vLLM 0.30+), else first token plus every gap after it —
        // only when the gaps are complete (one per output token after the first)
        let complete = |(_, c): &(f64, usize)| out.is_some_and(|o| *c as u64 + 1 == o);
        let e2e = get(&latencies).or_else(|| Some(ttft? + itls.get(i).filter(|x| complete(x))?.0));
        let error = errors.get(i).copied().unwrap_or(false);
        let tpot = Request::tpot_of(e2e, ttft, out);
        run.requests.push(Request {
            index: i as u64,
            input_len: get(&inputs).map(|x| x as u64),
            output_len: out,
            ttft_s: ttft.filter(|_| !error),
            tpot_s: tpot.filter(|_| !error),
            itl_mean_s: itl.filter(|_| !error),
            e2e_s: e2e.filter(|_| !error),
            error,
            ..Request::default()
        });
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sglang_line_with_infinity() {
        let line = br#"{"backend": "sglang", "request_rate": Infinity, "duration": 10.0, "completed": 2, "total_output_tokens": 6, "median_ttft_ms": 61.4, "input_lens": [5, 7], "output_lens": [3, 4], "ttfts": [0.1, 0.2], "itls": [[0.02, 0.04], [0.03, 0.03]], "errors": ["", ""]}"#;
        assert!(is_bench(line));
        let r = read_run(line).unwrap();
        assert_eq!(r.name, "sglang");
        assert_eq!(r.get(&["request_rate"]), Some(f64::INFINITY));
        assert_eq!(r.get(&["median_ttft_ms"]), Some(61.4));
        assert_eq!(r.requests.len(), 2);
        let q = r.requests[0];
        assert_eq!(
            (q.input_len, q.output_len, q.ttft_s),
            (Some(5), Some(3), Some(0.1))
        );
        assert!((q.e2e_s.unwrap() - 0.16).abs() < 1e-12);
        assert!((q.tpot_s.unwrap() - 0.03).abs() < 1e-12);
        assert!((q.itl_mean_s.unwrap() - 0.03).abs() < 1e-12);
        // 4 output tokens but only 2 gaps: no end-to-end time is made up
        assert_eq!((r.requests[1].e2e_s, r.requests[1].tpot_s), (None, None));
        assert!((r.requests[1].itl_mean_s.unwrap() - 0.03).abs() < 1e-12);
    }
}
