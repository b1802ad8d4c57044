//! The unwrapping of a collector's file alone, to its plain log's bytes (its speed apart
//! from the engines' parsers): `cargo run --release -p tokstat-parsers --example unwrap FILE`.

use std::io::Read;
use std::sync::Arc;
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
    let (mut u, counts) = Unwrap::new(bytes, plan);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = u.read(&mut buf).expect("read");
        if k == 0 {
            break;
        }
        n += k as u64;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{c:?}: {n} bytes of plain log in {s:.3} s ({:.2} GB/s); {:?}",
        n as f64 / s / 1e9,
        counts.lock().unwrap()
    );
}
