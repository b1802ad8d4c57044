//! Fuzz target `prometheus`: the check is in `../checks/prometheus.rs`.
#![no_main]
include!("../checks/prometheus.rs");
libfuzzer_sys::fuzz_target!(|data: &[u8]| check(data));
