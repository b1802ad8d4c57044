//! The parallel chunked scan over any bytes sees every line exactly once, in order.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tokstat_parsers::scan::{lines, scan, Mode};
use tokstat_parsers::source::Data;
use tokstat_parsers::stamp::Calendar;

fuzz_target!(|data: &[u8]| {
    let Some((&k, rest)) = data.split_first() else { return };
    let mut got = 0u64;
    let n = scan(Data::Owned(rest.to_vec()), Calendar::new(2026, 0), Mode { chunk: usize::from(k) + 1, ..Mode::LOG }, |c| {
        let mut scratch = String::new();
        let mut cal = c.calendar;
        for l in lines(c.bytes) {
            let line = tokstat_parsers::parse_line(l, &mut scratch);
            cal.resolve(line.prefix.stamp);
        }
        (lines(c.bytes).count() as u64, cal)
    }, |n| got += n).unwrap();
    assert_eq!(n, got);
    assert_eq!(n, lines(rest).count() as u64);
});
