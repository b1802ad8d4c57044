//! The log report's memory does not grow with the lines read: a log three or four times as
//! long (in lines and in time covered) must not raise the heap memory by anything like what
//! keeping a point per stats line would (32 bytes a line). Counted by an allocator that
//! tracks the bytes in use, in this test binary only.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is passed on to the system allocator unchanged; only counts are kept
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = NOW.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        NOW.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, size) };
        if !q.is_null() {
            if size > l.size() {
                let now = NOW.fetch_add(size - l.size(), Relaxed) + size - l.size();
                PEAK.fetch_max(now, Relaxed);
            } else {
                NOW.fetch_sub(l.size() - size, Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The tests count the one process's memory: one at a time.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A log of `decode` SGLang decode lines (eight a second) with a prefill batch every
/// fourth line, a start-up line, and a restart half way.
fn log(decode: usize) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::with_capacity(decode * 150);
    let base = 1_778_371_200i64; // 2026-05-10
    let stamp = |out: &mut Vec<u8>, s: i64| {
        let (d, r) = (s / 86_400, s % 86_400);
        let day = 10 + (d - 20_583) as u32;
        write!(
            out,
            "[2026-05-{day:02} {:02}:{:02}:{:02}] ",
            r / 3600,
            r / 60 % 60,
            r % 60
        )
        .unwrap();
    };
    stamp(&mut out, base);
    out.extend_from_slice(b"server_args=ServerArgs(model_path='m', max_running_requests=64)\n");
    for k in 0..decode {
        let s = base + 1 + k as i64 / 8;
        if k == decode / 2 {
            stamp(&mut out, s);
            out.extend_from_slice(
                b"server_args=ServerArgs(model_path='m', max_running_requests=96)\n",
            );
        }
        if k % 4 == 0 {
            stamp(&mut out, s);
            writeln!(out, "Prefill batch, #new-seq: 1, #new-token: {}, #cached-token: 0, token usage: 0.10, #running-req: 63, #queue-req: 2", 500 + k % 700).unwrap();
        }
        stamp(&mut out, s);
        writeln!(
            out,
            "Decode batch, #running-req: {}, #token: 150000, token usage: 0.{:02}, cuda graph: True, gen throughput (token/s): {}.{:02}, #queue-req: {}",
            40 + k % 25,
            k % 90,
            2000 + k % 700,
            k % 100,
            k % 5
        )
        .unwrap();
    }
    out
}

/// The peak of heap memory while a report reads `decode` lines on one thread, above what
/// was in use before (the log's own text is a file, not counted).
fn peak_of(decode: usize) -> usize {
    let dir = std::env::temp_dir().join(format!("tokstat-memory-{}-{decode}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("sglang.log");
    std::fs::write(&path, log(decode)).unwrap();
    let opts = tokstat::report::Options {
        inputs: vec![path.display().to_string()],
        year: Some(2026),
        ..Default::default()
    };
    // one worker: the chunks a batch holds at once are then the same on every machine
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let before = NOW.load(Relaxed);
    PEAK.store(before, Relaxed);
    let report = pool.install(|| tokstat::report::build(&opts)).unwrap();
    let peak = PEAK.load(Relaxed).saturating_sub(before);
    assert_eq!(report.instances[0].stat_lines, decode as u64);
    assert_eq!(report.segments.len(), 2, "the restart cuts the log");
    assert_eq!(report.inexact, 0);
    drop(report);
    std::fs::remove_dir_all(&dir).unwrap();
    peak
}

/// A report over a log three times as long (past the chunks one batch of the scan holds)
/// peaks at about the same heap: a point per decode line and a prefill stamp per second
/// would add 14 MB.
#[test]
fn the_report_does_not_grow_with_lines() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let (short, long) = (220_000, 660_000);
    let a = peak_of(short);
    let b = peak_of(long);
    let points = (long - short) * 32 + (long - short) / 4 * 16;
    eprintln!("peak heap: {a} bytes for {short} decode lines, {b} for {long}");
    assert!(
        b < a + points / 8,
        "peak heap {a} bytes for {short} decode lines, {b} for {long}: grew by {} \
         (points would add {points})",
        b.saturating_sub(a)
    );
}

/// What an instance's digest holds after a million lines is what it held after a quarter
/// of them: no point, interval or stamp per line is kept.
#[test]
fn a_digest_does_not_grow_with_lines() {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    use tokstat::ingest::digest::Digest;
    use tokstat::ingest::series::Series;
    use tokstat_parsers::record::{Gauges, StepKind};
    use tokstat_parsers::stamp::Ts;
    let held = |n: i64| {
        let before = NOW.load(Relaxed);
        let mut d = Digest::new(None);
        let mut k = 0;
        while k < n {
            let mut s = Series::default();
            for _ in 0..5000 {
                let ts = Ts(1_778_371_200_000 + k * 125 / 1000 * 1000);
                let g = Gauges {
                    running: Some(40 + (k % 25) as u64),
                    waiting: Some((k % 5) as u64),
                    gen_tps: Some(2000.0 + (k % 700) as f64 + (k % 100) as f64 / 100.0),
                    kv_usage: Some((k % 90) as f64 / 100.0),
                    ..Gauges::default()
                };
                s.step(ts, StepKind::Decode, &g);
                if k % 4 == 0 {
                    let p = Gauges {
                        new_tokens: Some(500),
                        ..Gauges::default()
                    };
                    s.step(ts, StepKind::Prefill, &p);
                }
                k += 1;
            }
            d.push(&mut s);
        }
        // (the digest alone: the analysis settles a copy of its stretches, of the same size,
        // and leaves the digest as it is)
        let held = NOW.load(Relaxed).saturating_sub(before);
        let settled = tokstat::analysis::settle::settle(&d);
        assert_eq!(settled.run.totals.count, n, "an interval per decode line");
        let both = NOW.load(Relaxed).saturating_sub(before);
        assert!(
            both < 2 * held + (1 << 20),
            "settled: {both} bytes with the digest's {held}"
        );
        drop(settled);
        drop(d);
        held
    };
    let a = held(250_000);
    let b = held(1_000_000);
    eprintln!("digest: {a} bytes after 250,000 lines, {b} after 1,000,000");
    assert!(
        b < a + (1 << 20),
        "held {a} bytes after 250,000 lines, {b} after 1,000,000"
    );
    assert!(
        b < 8 << 20,
        "held {b} bytes after 1,000,000 lines (points: 32 MB)"
    );
}
