//! A mapped file truncated while it is scanned (logrotate's `copytruncate`): the process lives,
//! the scan keeps exactly the whole lines the file still held, in order, and says it shrank.

use std::io::Write;
use tokstat_parsers::scan::{lines, scan, Mode};
use tokstat_parsers::source::{Data, Shrank};
use tokstat_parsers::stamp::Calendar;

#[test]
fn truncated_while_scanned_keeps_the_lines_before() {
    let path = std::env::temp_dir().join(format!("tokstat-shrink-{}.log", std::process::id()));
    let mut text = Vec::new();
    for i in 0..700_000u32 {
        writeln!(text, "line {i:07}").unwrap();
    }
    std::fs::write(&path, &text).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    let map = unsafe { memmap2::Mmap::map(&std::fs::File::open(&path).unwrap()).unwrap() };
    let cut = (1 << 20) + 5;
    let truncated = std::sync::Once::new();
    let mode = Mode {
        chunk: 256 << 10,
        batch: 2,
        ..Mode::LOG_RELATIVE
    };
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let got = scan(
        Data::Mapped(map),
        Calendar::new(2026, 0),
        mode,
        |c| {
            truncated.call_once(|| file.set_len(cut as u64).unwrap());
            (
                lines(c.bytes).map(<[u8]>::to_vec).collect::<Vec<_>>(),
                c.calendar,
            )
        },
        |ls| kept.extend(ls),
    );
    std::fs::remove_file(&path).unwrap();
    let err = got.expect_err("the scan reports the shrink");
    let shrank = Shrank::of(&err).expect("a Shrank error");
    assert_eq!(shrank.len, text.len() as u64);
    assert!(
        shrank.at as usize >= cut && (shrank.at as usize) < cut + 4096 * 16,
        "{} against {cut}",
        shrank.at
    );
    let before = text[..cut].iter().filter(|&&b| b == b'\n').count();
    assert_eq!(kept.len(), before);
    for (i, l) in kept.iter().enumerate() {
        assert_eq!(l, format!("line {i:07}").as_bytes());
    }
}
