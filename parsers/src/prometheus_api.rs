//! The Prometheus HTTP API's query results, as `curl` saves them and as tokstat's own
//! queries read them: `/api/v1/query` and `/api/v1/query_range` (served alike by Thanos,
//! Mimir, Cortex, VictoriaMetrics and Google Managed Prometheus).
//!
//! ```text
//! {"status":"success","data":{"resultType":"matrix","result":[
//!   {"metric":{"__name__":"vllm:generation_tokens_total","engine":"0",…},
//!    "values":[[1778371200.123,"5900"],…]}]},"warnings":[…]}
//! {"status":"error","errorType":"bad_data","error":"…"}
//! ```
//!
//! A `vector` result has one `"value":[t,"v"]` a series. A series without `__name__` is
//! derived (`sum(rate(…))`, `increase(…)`): its numbers are not a metric's samples, and it
//! is said to be derived, never read as a counter.

use crate::json::{JsonError, Scanner, Str};
use std::borrow::Cow;

/// One series of a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Series<'a> {
    /// `__name__`; `None` for a derived series.
    pub name: Option<Cow<'a, str>>,
    /// The other labels, as given.
    pub labels: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// `(ms since the epoch, value)`, as given.
    pub points: Vec<(i64, f64)>,
}

/// A response of the API.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Response<'a> {
    /// `success` or `error`.
    pub status: String,
    /// `errorType` and `error` of a failed query.
    pub error_type: Option<String>,
    pub error: Option<String>,
    /// `warnings` (a partial response) and `infos`.
    pub warnings: Vec<String>,
    /// `matrix`, `vector`, `scalar`, `string`.
    pub result_type: String,
    pub series: Vec<Series<'a>>,
}

fn text(s: Str<'_>) -> Cow<'_, str> {
    s.decode()
}

/// Whether a head is an API response (of a query: the result type, or an error).
pub fn sniff(head: &[u8]) -> bool {
    let head = crate::text::without_bom(head);
    let start = head
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(head.len());
    let h = &head[start..head.len().min(start + 4096)];
    let find = |n: &[u8]| memchr::memmem::find(h, n).is_some();
    h.starts_with(b"{")
        && find(b"\"status\"")
        && (find(b"\"resultType\":\"matrix\"")
            || find(b"\"resultType\": \"matrix\"")
            || find(b"\"resultType\":\"vector\"")
            || find(b"\"resultType\": \"vector\"")
            || find(b"\"errorType\""))
}

/// A `[t, "v"]` pair: seconds (a number with up to 3 decimals) and the value's text.
fn point(sc: &mut Scanner<'_>) -> Result<Option<(i64, f64)>, JsonError> {
    let mut t = None;
    let mut v = None;
    sc.array(|sc, i| {
        match i {
            0 => t = sc.opt_number()?.map(|s| (s * 1000.0).round() as i64),
            1 => {
                v = sc
                    .opt_string()?
                    .and_then(|s| crate::prometheus::value(&s.decode()))
            }
            _ => sc.skip()?,
        }
        Ok(())
    })?;
    Ok(t.zip(v))
}

fn series<'a>(sc: &mut Scanner<'a>) -> Result<Series<'a>, JsonError> {
    let mut out = Series {
        name: None,
        labels: Vec::new(),
        points: Vec::new(),
    };
    sc.object(|sc, k| match k.raw {
        b"metric" => sc.object(|sc, key| {
            let v = sc.opt_string()?.map(text).unwrap_or_default();
            if key.is("__name__") {
                out.name = Some(v);
            } else {
                out.labels.push((text(key), v));
            }
            Ok(())
        }),
        b"values" => sc.array(|sc, _| {
            if let Some(p) = point(sc)? {
                out.points.push(p);
            }
            Ok(())
        }),
        b"value" => {
            if let Some(p) = point(sc)? {
                out.points.push(p);
            }
            Ok(())
        }
        _ => sc.skip(),
    })?;
    Ok(out)
}

/// Reads a response.
pub fn read(doc: &[u8]) -> Result<Response<'_>, JsonError> {
    let mut r = Response::default();
    let mut sc = Scanner::new(crate::text::without_bom(doc));
    let strings = |sc: &mut Scanner<'_>, into: &mut Vec<String>| {
        sc.array(|sc, _| {
            if let Some(s) = sc.opt_string()? {
                into.push(s.decode().into_owned());
            }
            Ok(())
        })
    };
    sc.object(|sc, k| match k.raw {
        b"status" => {
            r.status = sc
                .opt_string()?
                .map(|s| s.decode().into_owned())
                .unwrap_or_default();
            Ok(())
        }
        b"errorType" => {
            r.error_type = sc.opt_string()?.map(|s| s.decode().into_owned());
            Ok(())
        }
        b"error" => {
            r.error = sc.opt_string()?.map(|s| s.decode().into_owned());
            Ok(())
        }
        b"warnings" | b"infos" => strings(sc, &mut r.warnings),
        b"data" => sc.object(|sc, k| match k.raw {
            b"resultType" => {
                r.result_type = sc
                    .opt_string()?
                    .map(|s| s.decode().into_owned())
                    .unwrap_or_default();
                Ok(())
            }
            b"result" if sc.peek() == Some(b'[') => sc.array(|sc, _| {
                r.series.push(series(sc)?);
                Ok(())
            }),
            _ => sc.skip(),
        }),
        _ => sc.skip(),
    })?;
    sc.end()?;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_vector_and_errors() {
        let m = br#"{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"vllm:generation_tokens_total","engine":"0","job":"vllm"},"values":[[1778371200,"5900"],[1778371201.5,"6000"]]},{"metric":{"engine":"0"},"values":[[1778371200,"12.5"]]}]},"warnings":["partial"]}"#;
        assert!(sniff(m));
        let r = read(m).unwrap();
        assert_eq!(r.result_type, "matrix");
        assert_eq!(r.series.len(), 2);
        assert_eq!(
            r.series[0].name.as_deref(),
            Some("vllm:generation_tokens_total")
        );
        assert_eq!(
            r.series[0].points,
            vec![(1_778_371_200_000, 5900.0), (1_778_371_201_500, 6000.0)]
        );
        assert_eq!(r.series[0].labels.len(), 2);
        assert_eq!(r.series[1].name, None);
        assert_eq!(r.warnings, ["partial"]);
        let v = br#"{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up"},"value":[1778371200.25,"1"]}]}}"#;
        assert_eq!(
            read(v).unwrap().series[0].points,
            vec![(1_778_371_200_250, 1.0)]
        );
        let e = br#"{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory in query execution"}"#;
        assert!(sniff(e));
        let r = read(e).unwrap();
        assert_eq!(
            (r.status.as_str(), r.error_type.as_deref()),
            ("error", Some("execution"))
        );
        assert!(!sniff(
            br#"{"status":"success","data":{"resultType":"streams","result":[]}}"#
        ));
    }
}
