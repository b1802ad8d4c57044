//! Bad input of every kind: each case asserts the exit code, the message, and the line
//! accounting (`total = parsed + other + malformed` for every file). Nothing panics, nothing
//! is dropped without a word.

use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use tokstat_tests::tokstat;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `report --format json` on `paths`: (exit code, report, stderr), with every file's
/// accounting checked.
fn report(paths: &[&Path], extra: &[&str]) -> (i32, Value, String) {
    let mut args = vec!["report", "--format", "json"];
    args.extend_from_slice(extra);
    let owned: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    args.extend(owned.iter().map(String::as_str));
    let (code, out, err) = tokstat(&args);
    let r: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}\n{err}"));
    accounted(&r);
    (code, r, err)
}

/// Every file's lines, and the total's, add up.
fn accounted(r: &Value) {
    let add = |v: &Value| {
        let n = |k: &str| v[k].as_u64().unwrap();
        assert_eq!(
            n("total"),
            n("parsed") + n("other") + n("malformed"),
            "accounting of {v}"
        );
    };
    add(&r["lines"]);
    for f in r["files"].as_array().unwrap() {
        add(f);
    }
}

fn skipped(r: &Value) -> Vec<(String, String, bool, bool)> {
    r["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                Path::new(s["source"].as_str().unwrap())
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
                s["reason"].as_str().unwrap().to_string(),
                s["failed"].as_bool().unwrap(),
                s["partly_read"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn lines(r: &Value) -> [u64; 4] {
    let l = &r["lines"];
    ["total", "parsed", "other", "malformed"].map(|k| l[k].as_u64().unwrap())
}

/// The demo's first GPU log: 2,340 lines of SGLang.
fn demo_log() -> Vec<u8> {
    std::fs::read(root().join("fixtures/runs/demo/sglang_gpu0.log")).unwrap()
}

const STATS: &str = "[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 40, #token: 51200, token usage: 0.12, gen throughput (token/s): 1863.65, #queue-req: 81\n";

#[test]
fn an_empty_file_says_there_is_nothing_to_report() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("empty.log");
    std::fs::write(&p, "").unwrap();
    let (code, r, err) = report(&[&p], &[]);
    assert_eq!(code, 1);
    assert_eq!(lines(&r), [0, 0, 0, 0]);
    assert!(
        err.contains("nothing to report: no line of the inputs (0 in all)"),
        "{err}"
    );
}

#[test]
fn random_bytes_are_listed_as_binary_and_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("random.bin");
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let bytes: Vec<u8> = (0..100_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(&p, bytes).unwrap();
    let (code, r, _) = report(&[&p], &[]);
    assert_eq!(code, 1);
    assert_eq!(lines(&r), [0, 0, 0, 0]);
    let s = skipped(&r);
    assert_eq!(s.len(), 1);
    assert!(s[0].1.starts_with("binary content, not read"), "{s:?}");
    assert!(!s[0].2, "a binary file is not an I/O failure");
}

#[test]
fn a_single_line_of_200_mb_is_one_line_read_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("oneline.log");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&p).unwrap());
    f.write_all(b"[2026-05-09 22:29:22 TP0] Decode batch, #running-req: 40, ")
        .unwrap();
    let block = vec![b'x'; 1 << 20];
    for _ in 0..200 {
        f.write_all(&block).unwrap();
    }
    f.write_all(b"\n").unwrap();
    f.write_all(STATS.as_bytes()).unwrap();
    drop(f);
    let (code, r, _) = report(&[&p], &[]);
    assert_eq!(code, 0);
    assert_eq!(lines(&r), [2, 1, 0, 1]);
    let m = &r["files"][0]["malformed_samples"][0];
    assert_eq!(m["line"], 1);
}

#[test]
fn nul_bytes_and_invalid_utf8_inside_stats_lines_are_malformed_not_misread() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nul.log");
    let mut text = STATS.repeat(10).into_bytes();
    // a NUL inside a number, and a bad byte inside another number, on lines 3 and 7
    let at = |line: usize, pat: &[u8]| {
        let start = STATS.len() * (line - 1);
        start
            + STATS
                .as_bytes()
                .windows(pat.len())
                .position(|w| w == pat)
                .unwrap()
    };
    let i = at(3, b"40,");
    text[i + 1] = 0;
    let j = at(7, b"51200");
    text[j + 2] = 0xff;
    // a NUL and an invalid byte in a word outside every field, on line 9
    let k = at(9, b"Decode");
    text[k + 1] = 0;
    std::fs::write(&p, &text).unwrap();
    let (code, r, _) = report(&[&p], &[]);
    assert_eq!(code, 0);
    let [total, parsed, other, malformed] = lines(&r);
    assert_eq!(
        (total, parsed + other, malformed),
        (10, 8, 2),
        "{}",
        r["lines"]
    );
    let bad: Vec<u64> = r["files"][0]["malformed_samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["line"].as_u64().unwrap())
        .collect();
    assert_eq!(bad, [3, 7]);
    // what was read is never a misread number: the 8 good lines' running requests are 40
    assert_eq!(r["instances"][0]["running_mean"], 40.0);
    let (strict, _, err) = report(&[&p], &["--strict"]);
    assert_eq!(strict, 1);
    assert!(err.contains("--strict: 2 malformed line(s)"), "{err}");
}

#[test]
fn crlf_line_ends_read_as_lf() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("lf.log");
    let crlf = dir.path().join("crlf.log");
    let text = demo_log();
    std::fs::write(&lf, &text).unwrap();
    let mut with_cr = Vec::new();
    for l in text.split_inclusive(|&c| c == b'\n') {
        with_cr.extend_from_slice(&l[..l.len() - 1]);
        with_cr.extend_from_slice(b"\r\n");
    }
    std::fs::write(&crlf, &with_cr).unwrap();
    let (a, ra, _) = report(&[&lf], &[]);
    let (b, rb, _) = report(&[&crlf], &[]);
    assert_eq!((a, b), (0, 0));
    assert_eq!(lines(&ra), lines(&rb));
    assert_eq!(
        ra["instances"][0]["gen_tokens"],
        rb["instances"][0]["gen_tokens"]
    );
    assert_eq!(ra["steady"], rb["steady"]);
}

/// A file whose lines end in a lone `\r` (old Mac line ends, a terminal capture) is one
/// physical line: its records are read one by one, with the figures of the same file with
/// `\n`, and the line counts once.
#[test]
fn lone_cr_line_ends_read_record_by_record() {
    let dir = tempfile::tempdir().unwrap();
    let lf = dir.path().join("lf.log");
    let cr = dir.path().join("cr.log");
    let text = demo_log();
    std::fs::write(&lf, &text).unwrap();
    let with_cr: Vec<u8> = text
        .iter()
        .map(|&c| if c == b'\n' { b'\r' } else { c })
        .collect();
    std::fs::write(&cr, &with_cr).unwrap();
    let (a, ra, _) = report(&[&lf], &[]);
    let (b, rb, _) = report(&[&cr], &[]);
    assert_eq!((a, b), (0, 0));
    assert_eq!(lines(&rb), [1, 1, 0, 0]);
    for k in ["gen_tokens", "stat_lines", "prefill_lines", "running_mean"] {
        assert_eq!(ra["instances"][0][k], rb["instances"][0][k], "{k}");
    }
}

/// A compressed stream cut short: the lines decoded before the cut are read and counted,
/// and the file is reported as partly read (exit code 1).
#[test]
fn cut_gzip_and_zstd_streams_keep_what_came_before() {
    let dir = tempfile::tempdir().unwrap();
    let text = demo_log();
    let gz = {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(&text).unwrap();
        e.finish().unwrap()
    };
    let zst = zstd::encode_all(&text[..], 3).unwrap();
    for (name, whole) in [("cut.log.gz", gz), ("cut.log.zst", zst)] {
        let cut = &whole[..whole.len() * 6 / 10];
        let p = dir.path().join(name);
        std::fs::write(&p, cut).unwrap();
        // the truth: what a decoder gives before it fails
        let mut got = Vec::new();
        let failed = if name.ends_with(".gz") {
            flate2::read::MultiGzDecoder::new(cut).read_to_end(&mut got)
        } else {
            zstd::stream::read::Decoder::new(cut)
                .unwrap()
                .read_to_end(&mut got)
        };
        assert!(failed.is_err());
        let want = got.split(|&c| c == b'\n').filter(|l| !l.is_empty()).count() as u64;
        let (code, r, _) = report(&[&p], &[]);
        assert_eq!(code, 1, "{name}");
        let [total, ..] = lines(&r);
        assert!(
            total > 0 && total.abs_diff(want) <= 1,
            "{name}: {total} vs {want}"
        );
        let s = skipped(&r);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(
            s[0].1.starts_with(&format!(
                "read error after {total} lines (they are in the report)"
            )),
            "{s:?}"
        );
        assert!(s[0].2 && s[0].3, "failed and partly read: {s:?}");
    }
}

#[test]
fn a_zstd_frame_with_a_corrupt_checksum_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let text = demo_log();
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 3).unwrap();
    enc.include_checksum(true).unwrap();
    enc.write_all(&text).unwrap();
    let mut z = enc.finish().unwrap();
    *z.last_mut().unwrap() ^= 0xff;
    let p = dir.path().join("badsum.log.zst");
    std::fs::write(&p, z).unwrap();
    let (code, r, _) = report(&[&p], &[]);
    assert_eq!(code, 1);
    let s = skipped(&r);
    assert_eq!(s.len(), 1);
    assert!(s[0].1.contains("checksum"), "{s:?}");
    assert!(s[0].2);
}

/// A folder of a log, completions, a scrape, an image, an empty file and a link back to
/// itself: the known ones are read, the image listed, the loop noted once; exit code 0.
#[test]
fn a_folder_of_mixed_and_unknown_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("gpu0.log"), demo_log()).unwrap();
    std::fs::write(
        d.join("out.jsonl"),
        "{\"finish_reason\": \"stop\", \"usage\": {\"completion_tokens\": 5}}\n",
    )
    .unwrap();
    std::fs::copy(
        root().join("fixtures/formats/prometheus/vllm-metrics-v1-v0.8.5.prom"),
        d.join("scrape.prom"),
    )
    .unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
    std::fs::write(d.join("chart.png"), png).unwrap();
    std::fs::write(d.join("notes.txt"), "").unwrap();
    std::os::unix::fs::symlink(d, d.join("again")).unwrap();
    let (code, r, _) = report(&[d], &[]);
    assert_eq!(code, 0);
    let kinds: Vec<(&str, &str)> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = f["source"].as_str().unwrap();
            (&s[s.rfind('/').unwrap() + 1..], f["kind"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("gpu0.log", "log"),
            ("notes.txt", "empty"),
            ("out.jsonl", "json"),
            ("scrape.prom", "prometheus")
        ]
    );
    let s = skipped(&r);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0].0, "again");
    assert!(s[0].1.starts_with("a link back to"), "{s:?}");
    assert!(!s[0].2);
    assert_eq!(s[1].0, "chart.png");
    assert!(s[1].1.starts_with("binary content"), "{s:?}");
}

/// A path that cannot be opened even by root (a Unix socket) is listed with the system's
/// reason, exit code 1; the other inputs are still read.
#[test]
fn an_input_that_cannot_be_opened_is_listed_with_its_reason() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("server.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let log = dir.path().join("gpu0.log");
    std::fs::write(&log, demo_log()).unwrap();
    let (code, r, _) = report(&[&sock, &log], &[]);
    assert_eq!(code, 1);
    assert_eq!(lines(&r)[0], 2340);
    let s = skipped(&r);
    assert_eq!(s.len(), 1);
    assert!(s[0].1.starts_with("cannot open"), "{s:?}");
    assert!(s[0].1.contains("No such device or address"), "{s:?}");
}

#[test]
fn a_glob_matching_nothing_fails_with_its_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let pattern = format!("{}/*.nothing", dir.path().display());
    let (code, out, err) = tokstat(&["report", &pattern]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(
        err.contains(&format!(
            "{pattern}: no such file or directory, and no file matches it as a glob"
        )),
        "{err}"
    );
}

#[test]
fn a_named_pipe_with_no_writer_gives_up_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("live.log");
    let c = std::ffi::CString::new(fifo.display().to_string()).unwrap();
    assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
    let start = std::time::Instant::now();
    let (code, r, _) = report(&[&fifo], &["--timeout", "300ms"]);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(code, 1);
    let s = skipped(&r);
    assert_eq!(s.len(), 1);
    assert!(
        s[0].1
            .ends_with("a named pipe with no writer after 0.3s (--timeout)"),
        "{s:?}"
    );
}

extern "C" {
    #[link_name = "mkfifo"]
    fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

/// A file listed from a folder and deleted before it is read is listed as not read, with the
/// system's reason; the other files are read.
#[test]
fn a_file_deleted_after_listing_is_listed_not_lost() {
    let dir = tempfile::tempdir().unwrap();
    for n in ["gpu0.log", "gpu1.log"] {
        std::fs::write(dir.path().join(n), demo_log()).unwrap();
    }
    let listed = tokstat_parsers::source::expand(&[dir.path().display().to_string()]).unwrap();
    assert_eq!(listed.inputs.len(), 2);
    std::fs::remove_file(dir.path().join("gpu1.log")).unwrap();
    let read = tokstat::ingest::read(&listed.inputs, &Default::default());
    assert_eq!(read.files.len(), 1);
    assert_eq!(read.files[0].tally.total, 2340);
    assert_eq!(read.skipped.len(), 1);
    assert!(read.skipped[0].source.ends_with("gpu1.log"));
    assert!(
        read.skipped[0].why.starts_with("cannot open")
            && read.skipped[0].why.contains("No such file"),
        "{}",
        read.skipped[0].why
    );
    assert!(read.skipped[0].failed);
}

/// Regression (issue 40, item 6): a record a terminal wrapped over rows, whose rows fall on
/// both sides of a chunk's edge (every 1 MiB of a file, and of a stream), was read as a
/// record cut short and rows of other text. A log of 4 MiB of stats lines wrapped at 80
/// columns, each record starting at a different offset from the edges, read mapped and
/// through gzip, has every record whole: the same steps and tokens as the clean log.
#[test]
fn a_wrapped_record_across_a_chunk_edge_is_joined() {
    let dir = tempfile::tempdir().unwrap();
    let mut clean = String::new();
    let mut rows = String::new();
    let mut k = 0u64;
    while rows.len() < 4 << 20 {
        let line = format!(
            "[2026-05-09 {:02}:{:02}:{:02} TP0] Decode batch, #running-req: {}, #token: {}, token usage: 0.{:02}, gen throughput (token/s): {}.{:02}, #queue-req: {}",
            k / 3600 % 24,
            k / 60 % 60,
            k % 60,
            1 + k % 97,
            1000 + k % 7919,
            k % 100,
            1000 + k % 3001,
            k % 100,
            k % 13
        );
        clean.push_str(&line);
        clean.push('\n');
        let chars: Vec<char> = line.chars().collect();
        for row in chars.chunks(80) {
            rows.extend(row);
            rows.push('\n');
        }
        // a line between records now and then, so that records start at every offset
        if k.is_multiple_of(7) {
            rows.push_str("[2026-05-09 00:00:00 TP0] Cache flushed successfully!\n");
            clean.push_str("[2026-05-09 00:00:00 TP0] Cache flushed successfully!\n");
        }
        k += 1;
    }
    let clean_path = dir.path().join("clean.log");
    std::fs::write(&clean_path, &clean).unwrap();
    let wrapped_path = dir.path().join("wrapped.log");
    std::fs::write(&wrapped_path, &rows).unwrap();
    let gz_path = dir.path().join("wrapped.log.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(rows.as_bytes()).unwrap();
    std::fs::write(&gz_path, gz.finish().unwrap()).unwrap();
    let (_, truth, _) = report(&[&clean_path], &["--year", "2026"]);
    let steps = truth["instances"][0]["stat_lines"].as_u64().unwrap();
    assert_eq!(steps, k);
    for p in [&wrapped_path, &gz_path] {
        let (code, r, err) = report(&[p], &["--year", "2026"]);
        assert_eq!(code, 0, "{err}");
        let i = &r["instances"][0];
        assert_eq!(i["stat_lines"].as_u64().unwrap(), k, "{}", p.display());
        assert_eq!(i["gen_tokens"], truth["instances"][0]["gen_tokens"]);
        assert_eq!(r["lines"]["malformed"], 0, "{}", p.display());
        assert_eq!(r["steady"], truth["steady"]);
    }
}
