//! Fuzz target `json_record`: the check is in `../checks/json_record.rs`.
#![no_main]
include!("../checks/json_record.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
