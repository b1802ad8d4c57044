//! The unwrapping of a collector's file alone, to its plain log's bytes (its speed apart
//! from the engines' parsers): `cargo run --release -p tokstat-parsers --example unwrap FILE`.

use std::sync::Arc;
use tokstat_parsers::source::MadeLines;
use tokstat_parsers::wrappers::envelope::unwrap::{Plan, Shared, Unwrap};

fn main() {
    let path = std::env::args().nth(1).expect("usage: unwrap FILE");
    let file = std::fs::File::open(&path).expect("open");
    // SAFETY: a file the benchmark made, not changed while it runs
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("map");
    let c = tokstat_parsers::wrappers::envelope::sniff(&map[..map.len().min(8192)])
        .expect("a collector's file");
    let t = std::time::Instant::now();
    let bytes: Shared = Arc::new(map);
    let plan = Plan {
        collector: c,
        who: None,
        offset_ms: 0,
        counts_unowned: true,
    };
    let u = Unwrap::new(bytes, plan);
    // (on this thread: the unwrapping's own cost a core)
    let n = u.make_all().len();
    let s = t.elapsed().as_secs_f64();
    println!(
        "{c:?}: {n} bytes of plain log in {s:.3} s ({:.2} GB/s on one core); {:?}",
        n as f64 / s / 1e9,
        u.counts()
    );
}
