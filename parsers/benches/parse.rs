//! Parser micro-benchmarks: one line of each common kind, a 10 KB completion record (beside
//! serde_json), and the parallel scan over a simulated SGLang log held in memory
//! (`cargo bench -p tokstat-parsers`).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use tokstat_parsers::record::Body;
use tokstat_parsers::scan::{scan, str_lines, Mode};
use tokstat_parsers::source::Data;
use tokstat_parsers::stamp::Calendar;

const LINES: &[(&str, &str)] = &[
    ("sglang_decode", "[2026-05-09 22:29:23 TP0] Decode batch, #running-req: 45, #token: 44672, token usage: 0.12, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81"),
    ("sglang_prefill", "[2026-05-09 22:29:22 TP0] Prefill batch, #new-seq: 1, #new-token: 896, #cached-token: 0, token usage: 0.12, #running-req: 45, #queue-req: 81, #pending-token: 70187, cuda graph: False, input throughput (token/s): 3521.40"),
    ("sglang_access", "[2026-10-30 10:00:13] INFO:     127.0.0.1:40052 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK"),
    ("vllm_stats", "(APIServer pid=1) INFO 05-29 09:10:11 [loggers.py:271] Engine 000: Avg prompt throughput: 4120.0 tokens/s, Avg generation throughput: 512.3 tokens/s, Running: 64 reqs, Waiting: 40 reqs, Preemptions: 3, GPU KV cache usage: 98.1%, Prefix cache hit rate: 41.2%"),
    ("vllm_ansi", "\x1b[1;36m(APIServer pid=31337)\x1b[0;0m INFO 08-18 09:10:11 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 640.0 tokens/s, Running: 16 reqs, Waiting: 2 reqs, GPU KV cache usage: 33.7%, Prefix cache hit rate: 0.0%"),
];

fn lines(c: &mut Criterion) {
    let mut g = c.benchmark_group("line");
    for (name, line) in LINES {
        g.throughput(Throughput::Bytes(line.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), line, |b, line| {
            let mut scratch = String::new();
            b.iter(|| {
                let l = tokstat_parsers::parse_line(black_box(line.as_bytes()), &mut scratch);
                black_box(matches!(l.body, Body::Step(_)))
            })
        });
    }
    g.finish();
}

/// 16 MiB of SGLang decode, prefill and access lines in simulator proportions.
fn mixed_log() -> String {
    let mut text = String::new();
    let pattern = [1usize, 0, 2, 1, 2, 1, 0, 2, 1, 2];
    let mut i = 0;
    while text.len() < 16 << 20 {
        text.push_str(LINES[pattern[i % pattern.len()]].1);
        text.push('\n');
        i += 1;
    }
    text
}

/// 16 MiB of the three SGLang line kinds in simulator proportions (decode 21%, prefill 39%,
/// access 40%), scanned in parallel with a per-chunk aggregate, as `tokstat report` does.
fn scan_log(c: &mut Criterion) {
    let text = mixed_log();
    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("sglang_16MiB", |b| {
        b.iter(|| {
            let mut total = 0.0;
            scan(
                Data::Owned(text.clone().into_bytes()),
                Calendar::new(2026, 0),
                Mode::LOG,
                |chunk| {
                    let mut cal = chunk.calendar;
                    let mut scratch = String::new();
                    let mut sum = 0.0;
                    let text = std::str::from_utf8(chunk.bytes).unwrap();
                    for l in str_lines(text) {
                        let line = tokstat_parsers::parse_str_line(l, &mut scratch, true);
                        cal.resolve(line.prefix.stamp);
                        if let Body::Step(s) = line.body {
                            sum += s.gen_tps.unwrap_or(0.0);
                        }
                    }
                    (sum, cal)
                },
                |s| total += s,
            )
            .unwrap();
            black_box(total)
        })
    });
    g.finish();
}

criterion_group!(benches, lines, scan_log);
/// The hand-written fast paths against the nom reference grammars (`grammar::*`) on the same
/// inputs: the stats bodies of the three stats lines above, and records of both JSONL shapes
/// (UTF-8 text, and the same text `\u`-escaped as Python's `json.dumps` writes it).
fn grammars(c: &mut Criterion) {
    use tokstat_parsers::grammar;
    use tokstat_parsers::json::Scanner;
    let bodies = [
        ("sglang_decode", "#running-req: 45, #token: 44672, token usage: 0.12, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81"),
        ("sglang_prefill", "#new-seq: 1, #new-token: 896, #cached-token: 0, token usage: 0.12, #running-req: 45, #queue-req: 81, #pending-token: 70187, cuda graph: False, input throughput (token/s): 3521.40"),
        ("vllm_stats", "Avg prompt throughput: 4120.0 tokens/s, Avg generation throughput: 512.3 tokens/s, Running: 64 reqs, Waiting: 40 reqs, Preemptions: 3, GPU KV cache usage: 98.1%, Prefix cache hit rate: 41.2%"),
    ];
    let mut g = c.benchmark_group("grammar");
    for (name, body) in bodies {
        assert_eq!(
            grammar::stats::count(body),
            tokstat_parsers::kv::pairs(body).count()
        );
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_function(format!("{name}/hand"), |b| {
            b.iter(|| tokstat_parsers::kv::pairs(black_box(body)).count())
        });
        g.bench_function(format!("{name}/nom"), |b| {
            b.iter(|| grammar::stats::count(black_box(body)))
        });
    }
    let utf8 = record();
    let value: serde_json::Value = serde_json::from_str(&utf8).unwrap();
    let mut escaped = String::new();
    for c in serde_json::to_string(&value).unwrap().chars() {
        if c.is_ascii() {
            escaped.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                escaped.push_str(&format!("\\u{:04x}", u));
            }
        }
    }
    for (name, rec) in [
        ("record_utf8", utf8.as_str()),
        ("record_escaped", escaped.as_str()),
    ] {
        assert!(grammar::json::is_value(rec.as_bytes()));
        g.throughput(Throughput::Bytes(rec.len() as u64));
        g.bench_function(format!("{name}/hand"), |b| {
            b.iter(|| {
                let mut sc = Scanner::new(black_box(rec.as_bytes()));
                sc.skip().and_then(|_| sc.end()).is_ok()
            })
        });
        g.bench_function(format!("{name}/nom"), |b| {
            b.iter(|| grammar::json::is_value(black_box(rec.as_bytes())))
        });
    }
    g.finish();
}

criterion_group!(grammar_benches, grammars);

criterion_main!(
    grammar_benches,
    calendar_benches,
    json_benches,
    benches,
    floor_benches,
    piece_benches
);

/// Floors: how fast the line loop goes with less work per line (for judging the budget).
fn floors(c: &mut Criterion) {
    let text = mixed_log();
    let mut g = c.benchmark_group("floor");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.sample_size(20);
    g.bench_function("lines_only", |b| {
        b.iter(|| str_lines(black_box(&text)).map(|l| l.len()).sum::<usize>())
    });
    g.bench_function("prefix_only", |b| {
        b.iter(|| {
            let mut n = 0;
            for l in str_lines(black_box(&text)) {
                let (p, m) = tokstat_parsers::wrappers::prefix::split(l);
                n += m.len() + p.stamp.is_some() as usize;
            }
            n
        })
    });
    g.bench_function("parse_str_line", |b| {
        let mut scratch = String::new();
        b.iter(|| {
            let mut n = 0;
            for l in str_lines(black_box(&text)) {
                n += matches!(
                    tokstat_parsers::parse_str_line(l, &mut scratch, true).body,
                    Body::Step(_)
                ) as usize;
            }
            n
        })
    });
    g.finish();
}

criterion_group!(floor_benches, floors);

fn pieces(c: &mut Criterion) {
    let body = "#running-req: 45, #token: 44672, token usage: 0.12, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81";
    let msg = "Decode batch, #running-req: 45, #token: 44672, token usage: 0.12, cuda graph: True, gen throughput (token/s): 1863.65, #queue-req: 81";
    let line = LINES[0].1;
    let mut g = c.benchmark_group("piece");
    g.bench_function("pairs_count", |b| {
        b.iter(|| tokstat_parsers::kv::pairs(black_box(body)).count())
    });
    g.bench_function("sglang_message", |b| {
        b.iter(|| {
            matches!(
                tokstat_parsers::sglang::parse(black_box(msg)),
                Some(Body::Step(_))
            )
        })
    });
    g.bench_function("prefix_split", |b| {
        b.iter(|| {
            tokstat_parsers::wrappers::prefix::split(black_box(line))
                .1
                .len()
        })
    });
    g.bench_function("normalize_str", |b| {
        let mut scratch = String::new();
        b.iter(|| {
            tokstat_parsers::wrappers::prefix::normalize_str(black_box(line), &mut scratch, true)
                .len()
        })
    });
    g.finish();
}

criterion_group!(piece_benches, pieces);

/// A pipeline record with about 10 KB of escape-dense reasoning text, like the simulator's.
fn record() -> String {
    let words = [
        "\\\"quoted\\\"",
        "推理",
        "proof",
        "token",
        "∑",
        "tab\\t",
        "cap",
        "the",
        "ë",
        "\\u00e9",
        "模型",
        "\\n",
        "naïve",
        "→",
        "x²",
        "Hence",
    ];
    let mut text = String::new();
    let mut k = 7usize;
    while text.len() < 10_000 {
        k = k.wrapping_mul(2_654_435_761).wrapping_add(12_345);
        text.push_str(words[(k >> 7) % words.len()]);
        text.push(' ');
    }
    format!(
        r#"{{"idx": 1, "reasoning": "{text}", "content": "The answer is 1.", "finish_reason": "stop", "usage": {{"prompt_tokens": 512, "completion_tokens": 2048, "total_tokens": 2560}}}}"#
    )
}

fn json(c: &mut Criterion) {
    use tokstat_parsers::completion::{read_record, Paths};
    use tokstat_parsers::json::Scanner;
    let rec = record();
    assert!(serde_json::from_str::<serde_json::Value>(&rec).is_ok());
    let mut g = c.benchmark_group("json");
    g.throughput(Throughput::Bytes(rec.len() as u64));
    g.bench_function("record_10KB", |b| {
        b.iter(|| read_record(black_box(rec.as_bytes()), &Paths::default()))
    });
    g.bench_function("skip_10KB", |b| {
        b.iter(|| {
            let mut sc = Scanner::new(black_box(rec.as_bytes()));
            sc.skip().and_then(|_| sc.end()).is_ok()
        })
    });
    g.bench_function("serde_json_10KB", |b| {
        b.iter(|| serde_json::from_str::<serde_json::Value>(black_box(&rec)).is_ok())
    });
    g.finish();
}

criterion_group!(json_benches, json);

/// Day numbers of dates and dates of day numbers (jiff), as every stamp read or written
/// needs them.
fn calendar(c: &mut Criterion) {
    use tokstat_parsers::stamp::{civil_from_days, days_from_civil};
    let dates: Vec<(i32, u8, u8)> = (0..1024)
        .map(|k| (2020 + k % 8, (k % 12 + 1) as u8, (k % 28 + 1) as u8))
        .collect();
    let mut g = c.benchmark_group("calendar");
    g.throughput(Throughput::Elements(dates.len() as u64));
    g.bench_function("days_from_civil", |b| {
        b.iter(|| {
            black_box(&dates)
                .iter()
                .filter_map(|&(y, m, d)| days_from_civil(y, m, d))
                .map(i64::from)
                .sum::<i64>()
        })
    });
    let days: Vec<i32> = dates
        .iter()
        .filter_map(|&(y, m, d)| days_from_civil(y, m, d))
        .collect();
    g.bench_function("civil_from_days", |b| {
        b.iter(|| {
            black_box(&days)
                .iter()
                .map(|&z| {
                    let (y, m, d) = civil_from_days(z);
                    i64::from(y) + i64::from(m) + i64::from(d)
                })
                .sum::<i64>()
        })
    });
    g.finish();
}

criterion_group!(calendar_benches, calendar);
