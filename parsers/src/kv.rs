//! Splitting stats bodies and configuration dumps into `key: value` / `key=value` pairs.
//!
//! Engines build stats lines by joining `key: value` parts with `", "`, and the set and order
//! of parts changes with every release, so fields are read by name, never by position. Some
//! values themselves contain `", "` (vLLM's per-position acceptance list and `KV fetch` part,
//! SGLang 0.4.9's `#token: full=1, swa=2`): a part without `": "` continues the previous
//! value, and the value stays one borrowed slice of the line. vLLM 0.7.1 forgot one comma
//! (`Waiting: 0 reqs GPU KV cache usage: 2.1%`); a value that runs into the next key is split
//! after its number and unit.

/// Iterator over the `key: value` pairs of a stats body.
#[derive(Debug, Clone)]
pub struct Pairs<'a> {
    s: &'a str,
    pos: usize,
    /// The part after the current one, already scanned while looking ahead.
    peeked: Option<Piece>,
}

/// Splits `body` into `key: value` pairs; see the module documentation.
pub fn pairs(body: &str) -> Pairs<'_> {
    Pairs {
        s: body,
        pos: 0,
        peeked: None,
    }
}

/// One `", "`-separated part: where it ends, and where its first `": "` is.
#[derive(Debug, Clone, Copy)]
struct Piece {
    start: usize,
    end: usize,
    colon: Option<usize>,
    /// Another `": "` after the first one (vLLM 0.7.1's missing comma).
    colon2: bool,
}

/// Scans one part from `start` in a single pass over its bytes. Always inlined: returned
/// through memory, the small struct cost a store-forwarding stall per part (measured).
#[inline(always)]
fn part(b: &[u8], start: usize) -> Piece {
    let mut colon = None;
    let mut colon2 = false;
    // separators are `", "` and `": "`: look at spaces, then at the byte before (parts are a
    // few dozen bytes: a plain loop beats a SIMD search call, measured)
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b' ' {
            match b[i - 1] {
                b',' => {
                    return Piece {
                        start,
                        end: i - 1,
                        colon,
                        colon2,
                    }
                }
                b':' => {
                    colon2 |= colon.is_some();
                    colon = colon.or(Some(i - 1));
                }
                _ => {}
            }
        }
        i += 1;
    }
    Piece {
        start,
        end: b.len(),
        colon,
        colon2,
    }
}

impl<'a> Iterator for Pairs<'a> {
    /// `(key, value)`; a part without `": "` comes out with an empty key.
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let (s, b) = (self.s, self.s.as_bytes());
        if self.pos >= s.len() {
            return None;
        }
        let first = self.peeked.take().unwrap_or_else(|| part(b, self.pos));
        let Some(colon_at) = first.colon else {
            // a part with no key (it should have continued a value): hand it out alone
            self.pos = first.end + 2;
            return Some(("", &s[first.start..first.end]));
        };
        let key = &s[first.start..colon_at];
        let vstart = colon_at + 2;
        // extend over following parts that carry no key of their own
        let mut vend = first.end;
        while vend < s.len() {
            let next = part(b, vend + 2);
            if next.end == next.start || next.colon.is_some() {
                self.peeked = Some(next);
                break;
            }
            vend = next.end;
        }
        let value = &s[vstart..vend];
        // vLLM 0.7.1: `0 reqs GPU KV cache usage: 2.1%` — cut after the number and unit
        if let Some(inner) = first.colon2.then(|| value.find(": ")).flatten() {
            if let Some(cut) = value_end(value) {
                if cut < inner {
                    self.peeked = None;
                    self.pos = vstart + cut + 1;
                    return Some((key, &value[..cut]));
                }
            }
        }
        self.pos = vend + 2;
        Some((key, value))
    }
}

/// `body` without its last `", "` part when that part looks cut short: it has no `": "` and
/// ends in `:` or holds a word (`, token usa`, `, Swapp`, `, #queue-req:`), and is no longer
/// than a key. A part that
/// continues a value (`0.6` of an acceptance list, `swa=2` of a `full=…, swa=…` pair) is not
/// cut. `None` when the body looks whole.
pub fn cut_tail(body: &str) -> Option<&str> {
    let at = body.rfind(", ")?;
    let last = &body[at + 2..];
    // a cut part is the start of a key: short
    let cut = last.len() <= 64
        && !last.contains(": ")
        && (last.ends_with(':')
            || (last.bytes().any(|c| c.is_ascii_alphabetic()) && !last.contains(['=', ']', ')'])));
    cut.then_some(&body[..at])
}

/// End of `NUMBER[%][ UNIT]` at the start of `v`, if it is followed by a space.
fn value_end(v: &str) -> Option<usize> {
    let b = v.as_bytes();
    let mut i = b
        .iter()
        .take_while(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'%' | b','))
        .count();
    if i == 0 {
        return None;
    }
    for unit in [" reqs", " tokens/s", " tokens"] {
        if v[i..].starts_with(unit) {
            i += unit.len();
            break;
        }
    }
    (b.get(i) == Some(&b' ')).then_some(i)
}

/// Iterator over the top-level items of a Python repr: `a=1, b='x, y', c=[1, 2]` or the dict
/// form `'a': 1, 'b': {'c': 2}`. Commas inside quotes and brackets do not split.
#[derive(Debug, Clone)]
pub struct ReprItems<'a> {
    rest: &'a str,
}

/// Items of a repr body, without the enclosing `Name(`…`)` or `{`…`}`.
pub fn repr_items(body: &str) -> ReprItems<'_> {
    ReprItems { rest: body }
}

impl<'a> Iterator for ReprItems<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let s = self.rest.trim_start();
        if s.is_empty() {
            return None;
        }
        let b = s.as_bytes();
        let mut depth = 0i32;
        let mut quote: Option<u8> = None;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            match quote {
                Some(q) => {
                    if c == b'\\' {
                        i += 1;
                    } else if c == q {
                        quote = None;
                    }
                }
                None => match c {
                    b'\'' | b'"' => quote = Some(c),
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' | b'}' => depth -= 1,
                    b',' if depth <= 0 => break,
                    _ => {}
                },
            }
            i += 1;
        }
        let i = i.min(b.len());
        self.rest = s.get(i + 1..).unwrap_or("");
        Some(s[..i].trim_end())
    }
}

/// Removes one pair of matching Python quotes.
pub fn unquote(v: &str) -> &str {
    let b = v.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        &v[1..v.len() - 1]
    } else {
        v
    }
}

/// Splits a repr item into key and value: `key=value` or `'key': value`.
pub fn repr_pair(item: &str) -> Option<(&str, &str)> {
    if item.starts_with('\'') || item.starts_with('"') {
        let i = item.find(": ")?;
        Some((unquote(&item[..i]), item[i + 2..].trim()))
    } else {
        let i = item.find('=')?;
        let key = &item[..i];
        if key.is_empty()
            || !key
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
        {
            return None;
        }
        Some((key, item[i + 1..].trim()))
    }
}

/// The pairs of a body whose counts come before their names, as vLLM's iteration details
/// print them: `("iteration", "1204")` from `Iteration(1204): `,
/// then its `", "`-separated parts, counts named after them (`("context tokens", "896")`)
/// and the rest `key: value`. A part of neither shape comes out with an empty key.
pub fn counted_pairs(body: &str) -> CountedPairs<'_> {
    CountedPairs {
        rest: body.strip_prefix("Iteration(").unwrap_or(body),
        head: true,
    }
}

/// Iterator of [`counted_pairs`].
pub struct CountedPairs<'a> {
    rest: &'a str,
    head: bool,
}

impl<'a> Iterator for CountedPairs<'a> {
    type Item = (&'a str, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if std::mem::take(&mut self.head) {
            let (n, rest) = self
                .rest
                .split_once("): ")
                .unwrap_or((self.rest.trim_end_matches([')', ':']), ""));
            self.rest = rest;
            return Some(("iteration", n));
        }
        if self.rest.is_empty() {
            return None;
        }
        let (part, rest) = self.rest.split_once(", ").unwrap_or((self.rest, ""));
        self.rest = rest;
        if let Some((k, v)) = part.split_once(": ") {
            return Some((k, v));
        }
        match part.split_once(' ') {
            Some((n, name)) if n.bytes().all(|c| c.is_ascii_digit()) && !n.is_empty() => {
                Some((name, n))
            }
            _ => Some(("", part)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_pairs() {
        let v: Vec<_> =
            pairs("#running-req: 7, #token: 4410, gen throughput (token/s): 512.77").collect();
        assert_eq!(
            v,
            [
                ("#running-req", "7"),
                ("#token", "4410"),
                ("gen throughput (token/s)", "512.77")
            ]
        );
        let v: Vec<_> =
            pairs("#token: full=1190, swa=1190, token usage: full=0.00, swa=0.01").collect();
        assert_eq!(
            v,
            [
                ("#token", "full=1190, swa=1190"),
                ("token usage", "full=0.00, swa=0.01")
            ]
        );
        let v: Vec<_> = pairs(
            "Per-position acceptance rate: 0.795, 0.531, 0.360, Avg Draft acceptance rate: 56.2%",
        )
        .collect();
        assert_eq!(
            v,
            [
                ("Per-position acceptance rate", "0.795, 0.531, 0.360"),
                ("Avg Draft acceptance rate", "56.2%")
            ]
        );
        let v: Vec<_> =
            pairs("Running: 4 reqs, Waiting: 0 reqs GPU KV cache usage: 2.1%").collect();
        assert_eq!(
            v,
            [
                ("Running", "4 reqs"),
                ("Waiting", "0 reqs"),
                ("GPU KV cache usage", "2.1%")
            ]
        );
        let v: Vec<_> = pairs("KV fetch: 2 waiting to start, 1 in progress, 0 completed waiting, GPU KV cache usage: 33.7%").collect();
        assert_eq!(
            v,
            [
                (
                    "KV fetch",
                    "2 waiting to start, 1 in progress, 0 completed waiting"
                ),
                ("GPU KV cache usage", "33.7%")
            ]
        );
        let v: Vec<_> = pairs("odd, a: 1").collect();
        assert_eq!(v, [("", "odd"), ("a", "1")]);
    }

    #[test]
    fn repr() {
        let items: Vec<_> =
            repr_items("model_path='Q, 8B', port=30000, x={'a': (1, 2)}, y=None").collect();
        assert_eq!(
            items,
            [
                "model_path='Q, 8B'",
                "port=30000",
                "x={'a': (1, 2)}",
                "y=None"
            ]
        );
        assert_eq!(repr_pair(items[0]), Some(("model_path", "'Q, 8B'")));
        let items: Vec<_> = repr_items("'model': 'Qwen/Qwen3-8B', 'max_num_seqs': 128").collect();
        assert_eq!(repr_pair(items[1]), Some(("max_num_seqs", "128")));
        assert_eq!(unquote("'Qwen/Qwen3-8B'"), "Qwen/Qwen3-8B");
    }
}
