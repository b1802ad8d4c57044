//! Property tests: stats lines rendered from random valid fields (in every punctuation
//! variant the engines used) parse back to the same values; arbitrary input never panics;
//! the parallel scan sees every line exactly once whatever the chunking.

use proptest::prelude::*;
use tokstat_parsers::record::{Body, StepKind};
use tokstat_parsers::scan::{count_lines, lines};
use tokstat_parsers::stamp::Calendar;

fn f2(cents: u32) -> (String, f64) {
    let s = format!("{}.{:02}", cents / 100, cents % 100);
    let v: f64 = s.parse().unwrap();
    (s, v)
}

#[derive(Debug, Clone)]
struct Decode {
    label_sep: u8,
    trailing: bool,
    ranks: Vec<(&'static str, u32)>,
    ms: Option<u32>,
    running: u64,
    tokens: u64,
    usage: u32,
    accept: Option<(u32, u32)>,
    graph: Option<(&'static str, bool)>,
    gen: u32,
    queue: u64,
    suffix: bool,
}

fn decode_strategy() -> impl Strategy<Value = Decode> {
    (
        (
            0u8..4,
            any::<bool>(),
            proptest::sample::subsequence(
                vec![
                    ("DP", 0u32),
                    ("PP", 1),
                    ("ATTN_CP", 0),
                    ("TP", 3),
                    ("EP", 2),
                ],
                0..=5,
            ),
            proptest::option::of(0u32..1000),
        ),
        (
            0u64..100_000,
            0u64..10_000_000,
            0u32..=100,
            proptest::option::of((100u32..1000, 0u32..=100)),
        ),
        (
            proptest::option::of((
                prop_oneof![
                    Just("cuda graph"),
                    Just("cpu graph"),
                    Just("npu graph"),
                    Just("musa graph")
                ],
                any::<bool>(),
            )),
            0u32..10_000_000,
            0u64..100_000,
            any::<bool>(),
        ),
    )
        .prop_map(
            |(
                (label_sep, trailing, ranks, ms),
                (running, tokens, usage, accept),
                (graph, gen, queue, suffix),
            )| Decode {
                label_sep,
                trailing,
                ranks,
                ms,
                running,
                tokens,
                usage,
                accept,
                graph,
                gen,
                queue,
                suffix,
            },
        )
}

fn render_decode(d: &Decode) -> String {
    let mut s = String::from("[2026-05-09 22:29:22");
    if let Some(ms) = d.ms {
        s += &format!(".{ms:03}");
    }
    for (k, v) in &d.ranks {
        s += &format!(" {k}{v}");
    }
    s += "] Decode batch";
    s += match d.label_sep {
        0 => ". ",
        1 => ", ",
        2 => " [440], ",
        _ => ", ",
    };
    s += &format!(
        "#running-req: {}, #token: {}, token usage: {}, ",
        d.running,
        d.tokens,
        f2(d.usage).0
    );
    if let Some((len, rate)) = d.accept {
        s += &format!("accept len: {}, accept rate: {}, ", f2(len).0, f2(rate).0);
    }
    if let Some((label, b)) = d.graph {
        s += &format!("{label}: {}, ", if b { "True" } else { "False" });
    }
    s += &format!(
        "gen throughput (token/s): {}, #queue-req: {}",
        f2(d.gen).0,
        d.queue
    );
    if d.suffix {
        s += ", fwd occupancy: 97.41%";
    }
    if d.trailing {
        s += ", ";
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn sglang_decode_round_trips(d in decode_strategy()) {
        let text = render_decode(&d);
        let mut scratch = String::new();
        let line = tokstat_parsers::parse_line(text.as_bytes(), &mut scratch);
        let Body::Step(s) = line.body else { panic!("not a step: {text}") };
        prop_assert_eq!(s.kind, Some(StepKind::Decode));
        prop_assert_eq!(s.running, Some(d.running));
        prop_assert_eq!(s.tokens, Some(d.tokens));
        prop_assert_eq!(s.kv_usage, Some(f2(d.usage).1));
        prop_assert_eq!(s.gen_tps, Some(f2(d.gen).1));
        prop_assert_eq!(s.waiting, Some(d.queue));
        prop_assert_eq!(s.accept_len, d.accept.map(|a| f2(a.0).1));
        prop_assert_eq!(s.accept_rate, d.accept.map(|a| f2(a.1).1));
        prop_assert_eq!(s.graph, d.graph.map(|g| g.1));
        let tp = d.ranks.iter().find(|r| r.0 == "TP").map(|r| r.1);
        prop_assert_eq!(line.prefix.ranks.tp, tp);
        prop_assert_eq!(s.extra.get("fwd occupancy"), d.suffix.then_some("97.41%"));
    }

    #[test]
    fn vllm_stats_round_trip(
        v0 in any::<bool>(), prompt in 0u32..1_000_000, gen in 0u32..1_000_000, running in 0u64..5000,
        waiting in 0u64..5000, kv in 0u32..=1000, engine in proptest::option::of(0u32..8),
        preempt in proptest::option::of(1u64..100), ansi in any::<bool>(), period in any::<bool>(),
    ) {
        let mut s = String::new();
        if ansi {
            s += "\x1b[1;36m(APIServer pid=7)\x1b[0;0m ";
        }
        s += "INFO 05-27 09:10:11 [loggers.py:116] ";
        if let Some(e) = engine {
            s += &format!("Engine {e:03}: ");
        }
        let one = |t: u32| format!("{}.{}", t / 10, t % 10);
        s += &format!("Avg prompt throughput: {} tokens/s, Avg generation throughput: {} tokens/s, Running: {running} reqs, ", one(prompt), one(gen));
        if v0 {
            s += &format!("Swapped: 0 reqs, Pending: {waiting} reqs, GPU KV cache usage: {}%, CPU KV cache usage: 0.0%", one(kv));
        } else {
            s += &format!("Waiting: {waiting} reqs, ");
            if let Some(p) = preempt {
                s += &format!("Preemptions: {p}, ");
            }
            s += &format!("GPU KV cache usage: {}%, Prefix cache hit rate: 12.5%", one(kv));
        }
        if period {
            s += ".";
        }
        let mut scratch = String::new();
        let line = tokstat_parsers::parse_line(s.as_bytes(), &mut scratch);
        let Body::Step(st) = line.body else { panic!("not a step: {s}") };
        prop_assert_eq!(st.prompt_tps, Some(one(prompt).parse::<f64>().unwrap()));
        prop_assert_eq!(st.gen_tps, Some(one(gen).parse::<f64>().unwrap()));
        prop_assert_eq!(st.running, Some(running));
        prop_assert_eq!(st.waiting, Some(waiting));
        // the percent becomes the exactly rounded fraction
        prop_assert_eq!(st.kv_usage, Some(format!("{}e-3", kv).parse::<f64>().unwrap()));
        prop_assert_eq!(st.engine_index, engine);
        prop_assert_eq!(st.preemptions, if v0 { None } else { preempt });
    }

    /// vLLM's iteration-details line (0.26+) reads back its values; cut anywhere after its
    /// counts, it reads as partial, never as whole, and keeps only values the whole line has.
    #[test]
    fn vllm_iteration_round_trips_and_cuts_are_partial(
        index in 0u64..10_000_000, ctx_reqs in 0u64..64, ctx_tokens in 0u64..100_000,
        gen_reqs in 0u64..1024, gen_tokens in 0u64..4096, elapsed in 0u32..100_000, kv in 0u32..=1000,
        dummy in any::<bool>(), device in prop_oneof![Just("GPU"), Just("XPU"), Just("NPU")],
        encoder in proptest::option::of((1u64..16, 1u64..10_000)), engine in 0u32..8, cut in any::<prop::sample::Index>(),
    ) {
        let one = |t: u32| format!("{}.{}", t / 10, t % 10);
        let mut s = format!(
            "(APIServer pid=77) INFO 11-20 10:00:03 [loggers.py:199] Engine {engine:03}: Iteration({index}): \
             {ctx_reqs} context requests, {ctx_tokens} context tokens, {gen_reqs} generation requests, \
             {gen_tokens} generation tokens, iteration elapsed time: {}.{:02} ms{}, {device} KV cache usage: {}%",
            elapsed / 100, elapsed % 100, if dummy { " (dummy)" } else { "" }, one(kv),
        );
        if let Some((inputs, embeddings)) = encoder {
            s += &format!(", encoder inputs: {inputs}, encoder output embeddings: {embeddings}");
        }
        let mut scratch = String::new();
        let line = tokstat_parsers::parse_line(s.as_bytes(), &mut scratch);
        let Body::Step(whole) = line.body else { panic!("not a step: {s}") };
        prop_assert!(!whole.partial);
        prop_assert_eq!(whole.engine_index, Some(engine));
        prop_assert_eq!((whole.new_seq, whole.new_tokens, whole.running), (Some(ctx_reqs), Some(ctx_tokens), Some(gen_reqs)));
        prop_assert_eq!(whole.kv_usage, Some(format!("{}e-3", kv).parse::<f64>().unwrap()));
        let tokens = gen_tokens.to_string();
        prop_assert_eq!(whole.extra.get("generation tokens"), Some(tokens.as_str()));
        let index = index.to_string();
        prop_assert_eq!(whole.extra.get("iteration"), Some(index.as_str()));
        // cut after the context counts and before the last value: a
        // partial step or a malformed line, whose every value is the whole line's (a cut
        // just after the KV cache usage, when the encoder parts follow, reads as a whole line
        // without them)
        let from = s.find(" generation requests").unwrap();
        let last_value = s.rfind(": ").unwrap() + 2;
        let at = from + cut.index(last_value - from);
        let short = &s[..at];
        let kv_end = s.find('%').unwrap() + 1;
        let mut scratch = String::new();
        match tokstat_parsers::parse_line(short.as_bytes(), &mut scratch).body {
            Body::Step(st) => {
                prop_assert!(st.partial || (at == kv_end && encoder.is_some()), "{}", short);
                prop_assert_eq!((st.new_seq, st.new_tokens), (whole.new_seq, whole.new_tokens));
                prop_assert!(st.running.is_none() || st.running == whole.running, "{}", short);
                prop_assert!(st.kv_usage.is_none() || st.kv_usage == whole.kv_usage, "{}", short);
                for (k, v) in st.extra.iter() {
                    prop_assert_eq!(whole.extra.get(k), Some(v), "{}", short);
                }
            }
            Body::Malformed(_) => {}
            other => panic!("{short}: {other:?}"),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let mut scratch = String::new();
        for raw in lines(&bytes) {
            let _ = tokstat_parsers::parse_line(raw, &mut scratch);
        }
    }

    #[test]
    fn near_miss_lines_never_panic(parts in proptest::collection::vec(prop_oneof![
        Just("["), Just("]"), Just(" "), Just(", "), Just(": "), Just("."), Just("="), Just("("), Just(")"),
        Just("2026-05-09 "), Just("22:29:22"), Just(".104"), Just(" TP0"), Just(" DP"), Just("Decode batch"),
        Just("Prefill batch"), Just("#running-req"), Just("token usage"), Just("full="), Just("swa="),
        Just("INFO 05-27 09:10:11 "), Just("[loggers.py:116] "), Just("Engine 000"), Just("Avg prompt throughput"),
        Just("12 reqs"), Just("1,048,576"), Just("nan"), Just("%"), Just("\x1b[1;36m"), Just("[0m"), Just("\u{fffd}"),
        Just("SpecDecoding metrics"), Just("Iteration(12): "), Just("3 context requests"), Just("iteration elapsed time"), Just("server_args="), Just("{'a': "), Just("GPU KV cache size"), Just("Maximum concurrency for "),
    ], 0..40)) {
        let text = parts.concat();
        let mut scratch = String::new();
        let _ = tokstat_parsers::parse_line(text.as_bytes(), &mut scratch);
    }

    #[test]
    fn number_parser_matches_std(int in 0u64..10_000_000, frac in 0u32..10_000, digits in 0usize..5) {
        let s = if digits == 0 { int.to_string() } else { format!("{int}.{:0width$}", frac % 10u32.pow(digits as u32), width = digits) };
        prop_assert_eq!(tokstat_parsers::num::float(&s), Some(s.parse::<f64>().unwrap()));
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn scan_sees_every_line_once(text in "[a-z0-9 \\[\\]:\n]{0,3000}", chunk in 1usize..200, stream in any::<bool>()) {
        let bytes = text.clone().into_bytes();
        let data = if stream {
            tokstat_parsers::source::Data::Stream(Box::new(std::io::Cursor::new(bytes)))
        } else {
            tokstat_parsers::source::Data::Owned(bytes)
        };
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        let n = tokstat_parsers::scan::scan(data, Calendar::new(2026, 0), tokstat_parsers::scan::Mode { chunk, ..tokstat_parsers::scan::Mode::LOG }, |c| {
            let v: Vec<(u64, Vec<u8>)> = lines(c.bytes).enumerate().map(|(i, l)| (c.first_line + i as u64, l.to_vec())).collect();
            (v, c.calendar)
        }, |v| got.extend(v)).unwrap();
        let want: Vec<(u64, Vec<u8>)> = lines(text.as_bytes()).enumerate().map(|(i, l)| (i as u64, l.to_vec())).collect();
        prop_assert_eq!(n, count_lines(text.as_bytes()));
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// Stamps completed by the parallel scan (any chunking) equal a sequential pass, also for
    /// time-only logs that cross midnight several times within one chunk.
    #[test]
    fn parallel_calendar_equals_sequential(gaps in proptest::collection::vec(0u32..50_000, 1..300), chunk in 30usize..2000, vllm in any::<bool>()) {
        let mut text = String::new();
        let mut t: u64 = 0;
        for g in gaps {
            t += u64::from(g) * 7; // up to ~4 days between lines
            let sod = t % 86_400;
            let (h, m, s) = (sod / 3600, sod / 60 % 60, sod % 60);
            if vllm {
                let day = 1 + (t / 86_400) % 28;
                let month = 1 + (t / (86_400 * 28)) % 12;
                text += &format!("INFO {month:02}-{day:02} {h:02}:{m:02}:{s:02} [loggers.py:1] x\n");
            } else {
                text += &format!("[{h:02}:{m:02}:{s:02} TP0] x\n");
            }
        }
        let start = Calendar::new(2025, 20_000);
        let mut seq = start;
        let mut scratch = String::new();
        let want: Vec<_> = lines(text.as_bytes()).map(|l| seq.resolve(tokstat_parsers::wrappers::prefix::stamp_of(l, &mut scratch))).collect();
        let mut got = Vec::new();
        tokstat_parsers::scan::scan(tokstat_parsers::source::Data::Owned(text.into_bytes()), start, tokstat_parsers::scan::Mode { chunk, ..tokstat_parsers::scan::Mode::LOG }, |c| {
            let mut cal = c.calendar;
            let mut scratch = String::new();
            let v: Vec<_> = lines(c.bytes).map(|l| cal.resolve(tokstat_parsers::wrappers::prefix::stamp_of(l, &mut scratch))).collect();
            (v, cal)
        }, |v| got.extend(v)).unwrap();
        prop_assert_eq!(got, want);
    }
}

/// Day numbers agree with Howard Hinnant's `days_from_civil` (the hand-written conversion
/// jiff replaced) on every day from year 1 to 9999, both ways; no other date has one.
#[test]
fn calendar_agrees_with_hinnant() {
    use tokstat_parsers::stamp::{civil_from_days, days_from_civil};
    fn hinnant(y: i32, m: u8, d: u8) -> i32 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = if y >= 0 { y } else { y - 399 } / 400;
        let yoe = y - era * 400;
        let m = i32::from(m);
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i32::from(d) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }
    let dim = |y: i32, m: u8| match m {
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let mut expected = hinnant(1, 1, 1);
    for y in 1..=9999 {
        for m in 1..=12u8 {
            for d in 1..=dim(y, m) {
                assert_eq!(days_from_civil(y, m, d), Some(expected), "{y}-{m}-{d}");
                assert_eq!(hinnant(y, m, d), expected, "{y}-{m}-{d}");
                assert_eq!(civil_from_days(expected), (y, m, d), "{expected}");
                expected += 1;
            }
            assert_eq!(days_from_civil(y, m, dim(y, m) + 1), None, "{y}-{m}");
        }
    }
    assert_eq!(days_from_civil(1970, 1, 1), Some(0));
    for (y, m, d) in [
        (2026, 13, 1),
        (2026, 0, 1),
        (2026, 1, 0),
        (10_000, 1, 1),
        (-10_000, 1, 1),
    ] {
        assert_eq!(days_from_civil(y, m, d), None, "{y}-{m}-{d}");
    }
}
