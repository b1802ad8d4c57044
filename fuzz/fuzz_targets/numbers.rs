//! Fuzz target `numbers`: the check is in `../checks/numbers.rs`.
#![no_main]
include!("../checks/numbers.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
