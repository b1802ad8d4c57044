//! Fuzz target `loadgen`: the check is in `../checks/loadgen.rs`.
#![no_main]
include!("../checks/loadgen.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
