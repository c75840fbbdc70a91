//! Bytes as operations on two LTP engines over a link the bytes control
//! (spacetp_ltp::fuzzing::engines).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spacetp_ltp::fuzzing::engines(data);
});
