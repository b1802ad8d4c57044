//! A JSON value as a grammar (RFC 8259), the shape every completion record has.
//!
//! ```text
//! value  = ws ( object | array | string | number | "true" | "false" | "null" ) ws
//! object = "{" ws [ member *( "," member ) ] "}"      member = ws string ws ":" value
//! array  = "[" ws [ value *( "," value ) ] "]"
//! string = '"' *( unescaped | "\" ( ["\/bfnrt] | "u" 4HEXDIG ) ) '"'
//! number = [ "-" ] ( "0" | [1-9] *DIGIT ) [ "." 1*DIGIT ] [ ( "e" | "E" ) [ "+" | "-" ] 1*DIGIT ]
//! ```
//!
//! Nesting is limited to [`MAX_DEPTH`] levels, so that a hostile line cannot overflow the
//! stack of this recursive grammar (the fast scanner keeps its nesting in a bit stack).

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1, take_while_m_n};
use nom::character::complete::{char, one_of, satisfy};
use nom::combinator::{opt, recognize, verify};
use nom::multi::many0_count;
use nom::sequence::preceded;
use nom::{IResult, Parser};

/// Deepest nesting the grammar follows (serde_json's limit too); deeper values are refused.
pub const MAX_DEPTH: usize = 128;

type R<'a> = IResult<&'a [u8], &'a [u8]>;

fn ws(i: &[u8]) -> R<'_> {
    take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r')).parse(i)
}

/// The bytes between the quotes may be any UTF-8 but a quote, a backslash or a control
/// character.
fn unescaped(i: &[u8]) -> R<'_> {
    verify(
        take_while1(|c| c != b'"' && c != b'\\' && c >= 0x20),
        |s: &[u8]| std::str::from_utf8(s).is_ok(),
    )
    .parse(i)
}

fn escape(i: &[u8]) -> R<'_> {
    recognize(preceded(
        char('\\'),
        alt((
            recognize(one_of("\"\\/bfnrt")),
            recognize(preceded(
                char('u'),
                take_while_m_n(4, 4, |c: u8| c.is_ascii_hexdigit()),
            )),
        )),
    ))
    .parse(i)
}

/// A string, quotes included.
pub fn string(i: &[u8]) -> R<'_> {
    recognize((char('"'), many0_count(alt((unescaped, escape))), char('"'))).parse(i)
}

fn digits(i: &[u8]) -> R<'_> {
    take_while1(|c: u8| c.is_ascii_digit()).parse(i)
}

/// A number as written.
pub fn number(i: &[u8]) -> R<'_> {
    recognize((
        opt(char('-')),
        alt((
            tag("0"),
            recognize((satisfy(|c| ('1'..='9').contains(&c)), opt(digits))),
        )),
        opt((char('.'), digits)),
        opt((one_of("eE"), opt(one_of("+-")), digits)),
    ))
    .parse(i)
}

fn nested(depth: usize) -> impl Fn(&[u8]) -> R<'_> {
    move |i| {
        if depth >= MAX_DEPTH {
            return Err(nom::Err::Failure(nom::error::Error::new(
                i,
                nom::error::ErrorKind::TooLarge,
            )));
        }
        value_at(i, depth + 1)
    }
}

fn value_at(i: &[u8], depth: usize) -> R<'_> {
    let member = |i| (ws, string, ws, char(':'), nested(depth)).parse(i);
    let object = recognize((
        char('{'),
        ws,
        opt((member, many0_count(preceded(char(','), member)))),
        char('}'),
    ));
    let array = recognize((
        char('['),
        ws,
        opt((
            nested(depth),
            many0_count(preceded(char(','), nested(depth))),
        )),
        char(']'),
    ));
    let (i, _) = ws(i)?;
    let (i, v) = alt((
        object,
        array,
        string,
        number,
        tag("true"),
        tag("false"),
        tag("null"),
    ))
    .parse(i)?;
    let (i, _) = ws(i)?;
    Ok((i, v))
}

/// One JSON value, blanks around it allowed.
pub fn value(i: &[u8]) -> R<'_> {
    value_at(i, 0)
}

/// Whether `text` is exactly one JSON value: what [`crate::json::Scanner::skip`] followed
/// by its `end` must answer.
pub fn is_value(text: &[u8]) -> bool {
    matches!(value(text), Ok((rest, _)) if rest.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::Scanner;
    use proptest::prelude::*;

    fn fast(text: &[u8]) -> bool {
        let mut sc = Scanner::new(text);
        sc.skip().and_then(|_| sc.end()).is_ok()
    }

    fn serde(text: &[u8]) -> bool {
        serde_json::from_slice::<serde_json::Value>(text).is_ok()
    }

    #[test]
    fn values() {
        for (t, ok) in [
            (
                &br#"{"a": [1, -0.5e3, "x\u00e9\n", true, null, {}]}"#[..],
                true,
            ),
            (b" 0 ", true),
            (b"01", false),
            (b"[1,]", false),
            (b"{\"a\" 1}", false),
            (b"\"\x01\"", false),
            (b"\"\\x\"", false),
            (b"1.", false),
            (b"-", false),
            (b"\"\xff\"", false),
        ] {
            assert_eq!(is_value(t), ok, "{}", String::from_utf8_lossy(t));
            assert_eq!(serde(t), ok, "{}", String::from_utf8_lossy(t));
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_a_crash() {
        let deep = "[".repeat(100_000);
        assert!(!is_value(deep.as_bytes()));
    }

    fn json() -> impl Strategy<Value = serde_json::Value> {
        use serde_json::Value;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            (-1e12f64..1e12).prop_map(Value::from),
            ".{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::btree_map("[a-z_]{0,8}", inner, 0..6)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn the_fast_scanner_agrees_on_valid_values(v in json(), pretty in any::<bool>()) {
            let text = if pretty { serde_json::to_string_pretty(&v) } else { serde_json::to_string(&v) };
            let text = text.unwrap();
            prop_assert!(is_value(text.as_bytes()));
            prop_assert!(fast(text.as_bytes()));
        }

        #[test]
        fn the_fast_scanner_agrees_on_broken_values(v in json(), cut in 0usize..200, junk in prop::sample::select(vec![",", "]", "}", ":", "\"", "\\", "x", "\u{1}", "-"])) {
            let text = serde_json::to_string(&v).unwrap();
            let cut = cut.min(text.len());
            let mut broken = text.as_bytes()[..cut].to_vec();
            broken.extend_from_slice(junk.as_bytes());
            broken.extend_from_slice(&text.as_bytes()[cut..]);
            prop_assert_eq!(fast(&broken), is_value(&broken), "{}", String::from_utf8_lossy(&broken));
            prop_assert_eq!(serde(&broken), is_value(&broken), "{}", String::from_utf8_lossy(&broken));
        }
    }
}
