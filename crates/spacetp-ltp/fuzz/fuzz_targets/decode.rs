//! Any bytes through the LTP segment decoder: no panic; what decodes re-encodes and decodes
//! back to itself (spacetp_ltp::fuzzing::decode).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spacetp_ltp::fuzzing::decode(data);
});
