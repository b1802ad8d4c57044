//! Fuzz target `log_line`: the check is in `../checks/log_line.rs`.
#![no_main]
include!("../checks/log_line.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
