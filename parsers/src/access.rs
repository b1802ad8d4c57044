//! HTTP access lines (uvicorn's, in SGLang's and vLLM's servers): their status, read
//! without building a record.
//!
//! `INFO:     172.17.0.1:53400 - "POST /v1/chat/completions HTTP/1.1" 200 OK`: the status
//! follows the request's closing quote. Most access lines of a log end in `" 200 OK`, told by
//! their last eight bytes; the others are searched for the quote.

/// Whether `line` may be an access line that did not succeed: false for those ending in
/// `" 200 OK` (one word compare; `ends_with` on a slice is a `memcmp` call). The per-line
/// test of the quick reading, which leaves the others to [`status`].
#[inline(always)]
pub fn may_have_failed(line: &str) -> bool {
    let b = line.as_bytes();
    match b.len().checked_sub(8).and_then(|at| b.get(at..)) {
        Some(w) => {
            let w: [u8; 8] = w.try_into().unwrap_or_default();
            u64::from_le_bytes(w) != u64::from_le_bytes(*b"\" 200 OK")
        }
        None => true,
    }
}

/// The status of an access line (`None` for any other line): 200 at once for a line ending
/// in `" 200 OK`, else read after the request's closing quote.
#[inline]
pub fn status(line: &str) -> Option<u16> {
    if !may_have_failed(line) {
        return Some(200);
    }
    read_status(line.as_bytes())
}

/// The status of an access line whose status is 400 or more (`None` for any other line).
#[inline]
pub fn failed_status(line: &str) -> Option<u16> {
    status(line).filter(|s| *s >= 400)
}

/// The status after an access line's request (`… HTTP/1.1" NNN …`).
#[cold]
fn read_status(b: &[u8]) -> Option<u16> {
    let q = memchr::memrchr(b'"', b)?;
    let request = &b[..q];
    if !(request.ends_with(b" HTTP/1.1")
        || request.ends_with(b" HTTP/1.0")
        || request.ends_with(b" HTTP/2"))
    {
        return None;
    }
    match &b[q + 1..] {
        [b' ', d @ ..] if d.len() >= 3 && d[..3].iter().all(u8::is_ascii_digit) => {
            if d.get(3).is_some_and(|c| *c != b' ') {
                return None;
            }
            Some(
                d[..3]
                    .iter()
                    .fold(0u16, |n, c| n * 10 + u16::from(c - b'0')),
            )
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses() {
        for (line, want) in [
            ("INFO:     127.0.0.1:40120 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK", None),
            ("INFO:     127.0.0.1:40122 - \"POST /v1/chat/completions HTTP/1.1\" 500 Internal Server Error", Some(500)),
            ("INFO:     10.0.0.7:51234 - \"POST /generate HTTP/1.1\" 503 Service Unavailable", Some(503)),
            ("INFO:     10.0.0.7:51234 - \"GET /v1/models HTTP/1.1\" 404 Not Found", Some(404)),
            ("INFO:     10.0.0.7:51234 - \"POST /v1/completions HTTP/1.1\" 400 Bad Request", Some(400)),
            ("INFO:     10.0.0.7:51234 - \"GET /health HTTP/1.1\" 204 No Content", None),
            ("INFO:     10.0.0.7:51234 - \"GET /health HTTP/2\" 307 Temporary Redirect", None),
            ("INFO:     10.0.0.7:51234 - \"POST /x HTTP/1.1\" 5000 Odd", None),
            ("said \"HTTP/1.1\" 500", None),
            ("Decode batch. #running-req: 8", None),
            ("", None),
            ("\"", None),
        ] {
            assert_eq!(failed_status(line), want, "{line}");
            let any = status(line);
            assert_eq!(any.filter(|s| *s >= 400), want, "{line}");
            if line.contains(" HTTP/") && !line.contains("5000") {
                assert!(any.is_some(), "{line}");
            }
        }
    }
}
