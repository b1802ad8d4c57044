//! Fuzz target `scan`: the check is in `../checks/scan.rs`.
#![no_main]
include!("../checks/scan.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
