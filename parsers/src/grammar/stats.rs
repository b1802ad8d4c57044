//! The stats body as a grammar: `key: value` pairs joined by `", "`.
//!
//! ```text
//! body         = pair *( ", " pair )
//! pair         = key ": " value | text            ; a part with no key comes out alone
//! value        = part-rest *( ", " continuation ) ; `0.6, 0.4` of an acceptance list
//! continuation = text                             ; a part with no ": " of its own
//! text         = *( char | ","  not-space | ":" not-space )
//! ```
//!
//! vLLM 0.7.1 joined two parts without the comma (`Waiting: 0 reqs GPU KV cache usage:
//! 2.1%`): a value holding a second `": "` is cut after its number and unit.

use nom::branch::alt;
use nom::bytes::complete::{is_not, tag};
use nom::character::complete::{char, one_of};
use nom::combinator::{not, recognize};
use nom::multi::{many0_count, many1_count};
use nom::sequence::{preceded, terminated};
use nom::{IResult, Parser};

/// A run of characters holding neither `", "` nor `": "`.
fn text(i: &str) -> IResult<&str, &str> {
    recognize(many0_count(alt((
        is_not(",:"),
        recognize(terminated(one_of(",:"), not(char(' ')))),
    ))))
    .parse(i)
}

/// The rest of a part after its key: anything up to the next `", "`.
fn part_rest(i: &str) -> IResult<&str, &str> {
    recognize(many0_count(alt((
        is_not(",:"),
        recognize(terminated(char(','), not(char(' ')))),
        recognize(char(':')),
    ))))
    .parse(i)
}

/// `, text` where the text is a whole part with no `": "`: it continues the value.
fn continuation(i: &str) -> IResult<&str, &str> {
    preceded(
        tag(", "),
        terminated(recognize(many1_count(one_text_piece)), not(char(':'))),
    )
    .parse(i)
}

/// One step of [`text`], at least one byte long.
fn one_text_piece(i: &str) -> IResult<&str, &str> {
    alt((
        is_not(",:"),
        recognize(terminated(one_of(",:"), not(char(' ')))),
    ))
    .parse(i)
}

/// `key: value`, the value running over continuation parts.
fn keyed(i: &str) -> IResult<&str, (&str, &str)> {
    let (after, (key, _, value)) = (
        text,
        tag(": "),
        recognize((part_rest, many0_count(continuation))),
    )
        .parse(i)?;
    Ok((after, (key, value)))
}

/// One pair; a part without a key comes out as `("", part)`.
fn pair(i: &str) -> IResult<&str, (&str, &str)> {
    alt((keyed, text.map(|t| ("", t)))).parse(i)
}

/// End of `NUMBER[%][ UNIT]` at the start of `v`, if a space follows it (vLLM 0.7.1).
fn number_and_unit(v: &str) -> Option<usize> {
    let r: IResult<&str, &str> = recognize((
        many1_count(one_of("0123456789.-%,")),
        nom::combinator::opt(alt((tag(" reqs"), tag(" tokens/s"), tag(" tokens")))),
    ))
    .parse(v);
    let (rest, n) = r.ok()?;
    rest.starts_with(' ').then_some(n.len())
}

/// The pair at the start of `i` (a suffix of `body`) and what follows it.
fn next<'a>(body: &'a str, i: &'a str) -> Option<((&'a str, &'a str), &'a str)> {
    if i.is_empty() {
        return None;
    }
    let (after, (key, value)) = pair(i).ok()?;
    // vLLM 0.7.1's missing comma: the value's first part holds a second key
    let head = value.split(", ").next().unwrap_or(value);
    let cut = head
        .find(": ")
        .and_then(|inner| number_and_unit(value).filter(|&c| c < inner));
    if let Some(c) = cut.filter(|_| !key.is_empty()) {
        let at = value.as_ptr() as usize - body.as_ptr() as usize;
        return Some(((key, &value[..c]), &body[at + c + 1..]));
    }
    let rest = match tag::<&str, &str, ()>(", ").parse(after) {
        Ok((rest, _)) => rest,
        // no separator after a pair: the grammar does not cover what follows
        Err(_) => "",
    };
    Some(((key, value), rest))
}

/// The pairs of a stats body, by the grammar; what [`crate::kv::pairs`] must hand out.
pub fn pairs(body: &str) -> Vec<(&str, &str)> {
    let mut out = Vec::new();
    let mut i = body;
    while let Some((p, rest)) = next(body, i) {
        out.push(p);
        i = rest;
    }
    out
}

/// How many pairs the grammar finds, without collecting them (for the benchmark).
pub fn count(body: &str) -> usize {
    let mut n = 0;
    let mut i = body;
    while let Some((_, rest)) = next(body, i) {
        n += 1;
        i = rest;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fast(body: &str) -> Vec<(&str, &str)> {
        crate::kv::pairs(body).collect()
    }

    #[test]
    fn engine_bodies() {
        for body in [
            "#running-req: 64, #token: 12345, token usage: 0.45, gen throughput (token/s): 2945.12, #queue-req: 0",
            "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 1234.5 tokens/s, Running: 64 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 45.1%, CPU KV cache usage: 0.0%",
            "Mean acceptance length: 2.50, Accepted throughput: 10.00 tokens/s, Per-position acceptance rate: 0.900, 0.600, 0.400",
            "#token: full=1, swa=2, token usage: 0.10",
            "Running: 1 reqs, Waiting: 0 reqs GPU KV cache usage: 2.1%, Prefix cache hit rate: 0.0%",
            "a: 1",
            "no key here",
        ] {
            assert_eq!(pairs(body), fast(body), "{body}");
            assert_eq!(count(body), fast(body).len(), "{body}");
        }
    }

    #[test]
    fn every_fixture_stats_body() {
        let mut n = 0;
        for line in crate::testing::fixture_lines(&["sglang", "vllm"]) {
            for marker in ["Decode batch", "Prefill batch", "throughput:"] {
                let Some(at) = line.find(marker) else {
                    continue;
                };
                let Some(colon) = line[at..].find(": ").map(|c| at + c) else {
                    continue;
                };
                // the body starts at the first key: from the start of the marker's part
                let body = &line[line[..colon].rfind(['.', ']']).map_or(at, |d| d + 1)..];
                let body = body.trim_start();
                assert_eq!(pairs(body), fast(body), "{line}");
                n += 1;
            }
        }
        assert!(n >= 80, "{n} bodies");
    }

    fn part() -> impl Strategy<Value = String> {
        let key = "[#A-Za-z][A-Za-z #()/_-]{0,20}[A-Za-z)]";
        let value = prop_oneof![
            "[0-9]{1,6}(\\.[0-9]{1,3})?( tokens/s| reqs|%)?",
            "[0-9]\\.[0-9]{2}(, 0\\.[0-9]{2}){0,3}",
            "full=[0-9]{1,4}, swa=[0-9]{1,4}",
            "[a-z]{1,5}:[0-9]",
        ];
        (key, value).prop_map(|(k, v)| format!("{k}: {v}"))
    }

    proptest! {
        #[test]
        fn the_fast_path_follows_the_grammar(parts in prop::collection::vec(part(), 1..12)) {
            let body = parts.join(", ");
            prop_assert_eq!(pairs(&body), fast(&body));
        }
    }
}
