//! Fuzz target `bench_console`: the check is in `../checks/bench_console.rs`.
#![no_main]
include!("../checks/bench_console.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
