//! Fuzz target `envelope`: the check is in `../checks/envelope.rs`.
#![no_main]
include!("../checks/envelope.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
