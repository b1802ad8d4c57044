//! Fuzz target `kv_pairs`: the check is in `../checks/kv_pairs.rs`.
#![no_main]
include!("../checks/kv_pairs.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
