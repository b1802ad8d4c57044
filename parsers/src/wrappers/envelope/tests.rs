use super::unwrap::{self, needs_stamp, Plan, Shared, Unwrap};
use super::write::{wrap, Wrapping, ALL};
use super::*;
use crate::source::MadeLines;
use crate::stamp::Ts;
use proptest::prelude::*;
use std::sync::Arc;

/// A collector's file unwrapped whole, as the CLI reads it: documents read and put in
/// order, line files through [`Unwrap`] in cells of 64 bytes of rows (so that cells cut
/// where pieces are joined and terminals' rows wrapped, as the scan's cells do in big files).
fn unwrapped(c: Collector, file: &str, who: Option<Who<'static>>) -> (String, unwrap::Counts) {
    let plan = Plan {
        collector: c,
        who,
        offset_ms: 0,
        counts_unowned: true,
    };
    if c.per_line() {
        let bytes: Shared = Arc::new(file.as_bytes().to_vec());
        let u = Unwrap::new(bytes, plan);
        let out = String::from_utf8(u.make_in_cells(64)).unwrap();
        (out, u.counts())
    } else {
        let (pieces, _) = documents::read(c, file.as_bytes()).unwrap();
        let (out, counts) = unwrap::plain(pieces.into_iter(), &plan);
        (String::from_utf8(out).unwrap(), counts)
    }
}

/// Each output line is its input line, or (when the input has no stamp of its own) the
/// input after the collector's stamp.
fn same_lines(c: Collector, plain: &str, out: &str) {
    let a: Vec<&str> = plain.lines().collect();
    let b: Vec<&str> = out.lines().collect();
    assert_eq!(a.len(), b.len(), "{c:?}: line count");
    for (x, y) in a.iter().zip(&b) {
        if x == y {
            continue;
        }
        let stamped = y.split_once("Z ");
        match stamped {
            Some((s, rest)) if rest == *x && needs_stamp(x.as_bytes()) => {
                assert!(time::rfc3339(format!("{s}Z").as_bytes()).is_some(), "{y:?}")
            }
            _ => panic!("{c:?}: {x:?} came out as {y:?}"),
        }
    }
}

/// Every fixture log wrapped by every collector (lines cut into 40-byte pieces where the
/// collector cuts them) comes out line for line.
#[test]
fn every_fixture_log_through_every_collector() {
    let lines = crate::testing::fixture_lines(&["sglang", "vllm", "messy", "incidents"]);
    let plain: String = lines
        .iter()
        .filter(|l| !l.contains('\r'))
        .map(|l| format!("{l}\n"))
        .collect();
    for c in ALL {
        let w = Wrapping {
            piece: 40,
            ..Wrapping::default()
        };
        let file = wrap(c, &plain, &w);
        assert_eq!(sniff(file.as_bytes()), Some(c), "{c:?} sniffed");
        let (out, counts) = unwrapped(c, &file, None);
        same_lines(c, &plain, &out);
        assert_eq!(counts.broken, 0, "{c:?}");
        if matches!(c, Collector::DockerJson | Collector::Cri) {
            assert!(counts.joined > 1000, "{c:?}: {counts:?}");
            assert_eq!(counts.rows, counts.lines + counts.joined);
        }
    }
}

/// The collectors' times are read to the millisecond; identities as the records name them.
#[test]
fn times_and_identities() {
    let w = Wrapping::default();
    for c in ALL {
        let file = wrap(c, "a\nb\n", &w);
        let pieces: Vec<Piece<'_>> = if c.per_line() {
            file.lines()
                .filter_map(|l| match row(c, l.as_bytes()) {
                    Row::Piece(p) => Some(p),
                    _ => None,
                })
                .collect()
        } else {
            documents::read(c, file.as_bytes()).unwrap().0
        };
        assert_eq!(pieces.len(), 2, "{c:?}");
        assert_eq!(pieces[0].text.as_ref(), b"a", "{c:?}");
        assert_eq!(pieces[0].time.ms(), Some(w.start_ms), "{c:?}");
        assert_eq!(pieces[1].time.ms(), Some(w.start_ms + w.step_ms), "{c:?}");
        let label = pieces[0].who.label();
        let want = match c {
            Collector::DockerJson | Collector::Cri => "",
            Collector::CloudWatch => "vllm-0",
            _ => "vllm-0/vllm",
        };
        assert_eq!(label, want, "{c:?}");
    }
}

/// journald writes `MESSAGE` as an array of bytes for any line with a control byte (every
/// coloured vLLM line): read as the bytes.
#[test]
fn journald_byte_arrays() {
    let line = "\u{1b}[32mINFO\u{1b}[0m 05-09 22:00:00 [loggers.py:116] Engine 000: x";
    let file = wrap(
        Collector::Journald,
        &format!("{line}\n"),
        &Wrapping::default(),
    );
    assert!(file.contains("\"MESSAGE\":[27,91,51,50"));
    let (out, _) = unwrapped(Collector::Journald, &file, None);
    assert_eq!(
        out.trim_end()
            .split_once("Z ")
            .map_or(out.trim_end(), |x| x.1),
        line
    );
}

/// A broken row is malformed with its row number; the rows around it are read.
#[test]
fn broken_rows_are_counted_with_their_numbers() {
    let mut file = wrap(Collector::DockerJson, "a\nb\nc\n", &Wrapping::default());
    file = file.replacen("b\\n\",\"stream\"", "b\\n\",\"stream", 1);
    file.push_str("{\"log\":\"cut sh");
    let (out, counts) = unwrapped(Collector::DockerJson, &file, None);
    assert_eq!(out.lines().count(), 2);
    assert_eq!(counts.broken, 2);
    assert_eq!(
        counts.broken_rows.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![2, 4]
    );
    let mut cri = wrap(Collector::Cri, "a\nb\n", &Wrapping::default());
    cri.push_str("not a cri line\n");
    let (_, counts) = unwrapped(Collector::Cri, &cri, None);
    assert_eq!((counts.broken, counts.broken_rows[0].0), (1, 3));
}

/// Two pods in one file: each plan keeps its own pod's lines.
#[test]
fn two_pods_are_read_apart() {
    let a = wrap(
        Collector::KubectlPrefix,
        "a1\na2\n",
        &Wrapping {
            pod: "vllm-0",
            ..Wrapping::default()
        },
    );
    let b = wrap(
        Collector::KubectlPrefix,
        "b1\n",
        &Wrapping {
            pod: "vllm-1",
            ..Wrapping::default()
        },
    );
    let mut a = a.lines();
    let file = format!(
        "{}\n{}\n{}\n",
        a.next().unwrap(),
        b.trim_end(),
        a.next().unwrap()
    );
    let s = unwrap::survey(Collector::KubectlPrefix, file.as_bytes());
    let names: Vec<String> = s.whos.iter().map(|w| w.0.label()).collect();
    assert_eq!(names, ["vllm-0/vllm", "vllm-1/vllm"]);
    let (out, counts) = unwrapped(Collector::KubectlPrefix, &file, Some(s.whos[1].0.clone()));
    assert!(out.ends_with(" b1\n") && out.lines().count() == 1, "{out}");
    assert_eq!(counts.foreign, 2);
}

/// The clock: a server logging UTC+8 with vLLM's year-less stamps, behind a UTC collector,
/// is 8 hours ahead (less the stamps' truncation to seconds).
#[test]
fn a_server_eight_hours_ahead() {
    let utc = 1_778_364_000_123; // 2026-05-09T22:00:00.123Z
    let lines: String = (0..100)
        .map(|i| {
            let local = Ts(utc + 8 * 3_600_000 + i * 1000);
            let (_, m, d, ms) = local.parts();
            format!(
                "INFO {m:02}-{d:02} {:02}:{:02}:{:02} [loggers.py:116] x\n",
                ms / 3_600_000,
                ms / 60_000 % 60,
                ms / 1000 % 60
            )
        })
        .collect();
    let w = Wrapping {
        start_ms: utc,
        step_ms: 1000,
        ..Wrapping::default()
    };
    let file = wrap(Collector::Cri, &lines, &w);
    let clock = unwrap::clock(unwrap::first_pieces(Collector::Cri, file.as_bytes(), None)).unwrap();
    assert_eq!(clock.offset_ms, 8 * 3_600_000 - 123);
    assert_eq!(clock.zone_and_skew(), (8 * 3_600_000, -123));
    assert_eq!(clock.pairs, 100);
}

#[test]
fn stamps_needed() {
    for (line, needs) in [
        ("[2026-05-09 22:29:22 TP0] Decode batch", false),
        ("[22:29:22 TP0] Decode batch", false),
        ("2025-11-04 17:40:09 INFO 20457 [DP1 x.py:2] y", false),
        ("INFO 05-27 09:10:11 [loggers.py:116] y", false),
        (
            "(APIServer pid=1) INFO 05-27 09:10:11 [loggers.py:116] y",
            false,
        ),
        ("INFO:     127.0.0.1:1 - \"POST /v1 HTTP/1.1\" 200 OK", true),
        ("[gpu=0] Decode out of memory", true),
        ("Traceback (most recent call last):", true),
        ("", true),
    ] {
        assert_eq!(needs_stamp(line.as_bytes()), needs, "{line:?}");
    }
}

/// The first reading of [`needs_stamp`], by loops of digit tests: the patterns that
/// replaced it must judge every line as it did.
fn needs_stamp_by_loops(line: &[u8]) -> bool {
    let digit = |i: usize| line.get(i).is_some_and(u8::is_ascii_digit);
    match line.first() {
        Some(b'[') => {
            let full = (1..5).all(digit) && line.get(5) == Some(&b'-');
            let time_only = digit(1) && digit(2) && line.get(3) == Some(&b':');
            !(full || time_only)
        }
        Some(b'0'..=b'9') => !((0..4).all(digit) && line.get(4) == Some(&b'-')),
        Some(b'(') => match memchr::memmem::find(&line[..line.len().min(120)], b") ") {
            Some(i) => needs_stamp_by_loops(&line[i + 2..]),
            None => true,
        },
        Some(b'I' | b'W' | b'E' | b'D' | b'C') => {
            let Some(sp) = memchr::memchr(b' ', &line[..line.len().min(10)]) else {
                return true;
            };
            let word = &line[..sp];
            let level = matches!(
                word,
                b"INFO" | b"WARNING" | b"WARN" | b"ERROR" | b"DEBUG" | b"CRITICAL"
            );
            let md = |i: usize| digit(i) && digit(i + 1);
            !(level && md(sp + 1) && line.get(sp + 3) == Some(&b'-') && md(sp + 4))
        }
        _ => true,
    }
}

proptest! {
    /// The patterns judge any line as the loops did: lines made of the pieces the tests
    /// turn on, cut anywhere.
    #[test]
    fn needs_stamp_patterns_are_the_loops(
        parts in prop::collection::vec(
            prop::sample::select(vec![
                "[", "2026", "-", "05", ":", "22", "1", "x", " ", "(", ")", ") ", "INFO", "INFO ",
                "WARN", "WARNING ", "ERROR ", "DEBUG ", "CRITICAL ", "CRIT ", "E", "I", "05-27",
                "0", "pid=1", "INFO:",
            ]),
            0..8,
        ),
        cut in 0usize..60,
    ) {
        let line = parts.concat();
        let line = &line.as_bytes()[..line.len().min(cut)];
        prop_assert_eq!(needs_stamp(line), needs_stamp_by_loops(line), "{:?}", String::from_utf8_lossy(line));
        // the judgement of a line not opening with `(` reads its first 14 bytes, no more
        // (the Docker reading trusts a raw text's where the decoded one opens alike)
        if line.len() >= 14 && line[0] != b'(' {
            let other = [&line[..14], b"\"]x"].concat();
            prop_assert_eq!(needs_stamp(line), needs_stamp(&other));
        }
    }

    /// Any lines (quotes, backslashes, `<>&`, colour codes, any Unicode) through any
    /// collector come out as they went in.
    #[test]
    fn any_lines_through_any_collector(
        lines in prop::collection::vec("[ -~\u{1b}\u{e9}\u{4e2d}\u{1F600}\t]{0,60}", 1..20),
        k in 0..ALL.len(),
        piece in 4usize..30,
    ) {
        let c = ALL[k];
        let plain: String = lines.iter().map(|l| format!("{}\n", l.trim_end())).collect();
        let file = wrap(c, &plain, &Wrapping { piece, ..Wrapping::default() });
        let (out, counts) = unwrapped(c, &file, None);
        prop_assert_eq!(counts.broken, 0);
        same_lines(c, &plain, &out);
    }

    /// No row, however broken, makes the unwrapping panic; every row is counted once.
    #[test]
    fn any_bytes_are_counted(rows in prop::collection::vec(any::<Vec<u8>>(), 0..8), k in 0..ALL.len()) {
        let c = ALL[k];
        let mut file = Vec::new();
        for r in &rows {
            file.extend(r.iter().filter(|&&b| b != b'\n'));
            file.push(b'\n');
        }
        if c.per_line() {
            let bytes: Shared = Arc::new(file.clone());
            let u = Unwrap::new(bytes, Plan { collector: c, who: None, offset_ms: 0, counts_unowned: true });
            let _ = u.make_in_cells(16);
            let n = u.counts();
            prop_assert_eq!(n.rows, rows.len() as u64);
            prop_assert!(n.joined + n.other + n.broken + n.foreign <= n.rows);
        } else {
            let _ = documents::read(c, &file);
        }
    }
}

/// Docker's layout read at its fixed places gives what the general reading gives, on every
/// fixture line (escapes, quotes, colour codes) and on the rows it must leave to it.
#[test]
fn docker_at_fixed_places_reads_as_the_general_reading() {
    let lines = crate::testing::fixture_lines(&["sglang", "vllm", "messy", "incidents"]);
    let plain: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = wrap(
        Collector::DockerJson,
        &plain,
        &Wrapping {
            piece: 50,
            ..Wrapping::default()
        },
    );
    let mut fast = 0;
    for raw in file.lines() {
        let mut sc = crate::json::Scanner::line(raw.as_bytes());
        let general = record::json_record(&mut sc, true).unwrap().unwrap();
        if let Some(p) = docker::docker(raw.as_bytes()) {
            assert_eq!(p, general, "{raw}");
            fast += 1;
        }
    }
    assert!(fast * 10 > file.lines().count() * 9, "{fast}");
    for other in [
        r#"{"log":"a\n","stream":"stderr","attrs":{"tag":"x"},"time":"2026-05-09T22:00:00Z"}"#,
        r#"{"log":"a"b\n","stream":"stderr","time":"2026-05-09T22:00:00Z"}"#,
        r#"{"log":"a\q\n","stream":"stderr","time":"2026-05-09T22:00:00Z"}"#,
        r#"{"log":"a\\n","stream":"stderr","time":"2026-05-09T22:00:00Z"}"#,
        r#"{"log":"a\u12\n","stream":"stderr","time":"2026-05-09T22:00:00Z"}"#,
        r#"{"log":"a\ud83d\u12zz\n","stream":"stderr","time":"2026-05-09T22:00:00Z"}"#,
        "{\"log\":\"a\u{1}b\\n\",\"stream\":\"stderr\",\"time\":\"2026-05-09T22:00:00Z\"}",
    ] {
        let p = docker::docker(other.as_bytes());
        assert!(p.is_none() || !p.unwrap().ends, "{other}");
    }
    // checked and decoded in one pass: as the general reading, and into a reused buffer
    let mut scratch = Vec::new();
    for raw in [
        r#"{"log":"é \ud83d\ude00 \"q\" \/ \t\n","stream":"stdout","time":"2026-05-09T22:00:00Z"}"#,
        r#"{"log":"\u001b[32mINFO\u001b[0m 05-09 22:00:00 x\n","stream":"stderr","time":"2026-05-09T22:00:00.5Z"}"#,
    ] {
        let mut sc = crate::json::Scanner::line(raw.as_bytes());
        let general = record::json_record(&mut sc, true).unwrap().unwrap();
        assert_eq!(docker::docker(raw.as_bytes()).unwrap(), general, "{raw}");
        assert_eq!(
            docker::docker_in(raw.as_bytes(), &mut scratch).unwrap(),
            general,
            "{raw}"
        );
    }
}

/// A mapped collector's file gives the lines its bytes in memory give, though each cell's
/// pages are dropped once made, and again when made a second time (a second identity's
/// reading, a malformed row looked up).
#[test]
fn mapped_rows_dropped_as_made_read_the_same() {
    let lines = crate::testing::fixture_lines(&["sglang", "vllm"]);
    let plain: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let file = wrap(Collector::DockerJson, &plain, &Wrapping::default());
    let path = std::env::temp_dir().join(format!("tokstat-made-{}", std::process::id()));
    std::fs::write(&path, &file).unwrap();
    let map = unsafe { memmap2::Mmap::map(&std::fs::File::open(&path).unwrap()).unwrap() };
    let _ = std::fs::remove_file(&path);
    let plan = Plan {
        collector: Collector::DockerJson,
        who: None,
        offset_ms: 0,
        counts_unowned: true,
    };
    let in_memory = Unwrap::new(Arc::new(file.into_bytes()), plan.clone()).make_in_cells(7000);
    let mapped = Unwrap::new(Arc::new(map), plan);
    assert!(in_memory.len() > 3 * 4096, "{} bytes", in_memory.len());
    assert_eq!(mapped.make_in_cells(3000), in_memory);
    assert_eq!(mapped.make_in_cells(5000), in_memory);
}
