//! Fuzz target `engine_messages`: the check is in `../checks/engine_messages.rs`.
#![no_main]
include!("../checks/engine_messages.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
