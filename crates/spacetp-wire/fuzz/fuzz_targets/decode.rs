//! Every decoder of spacetp-wire (IPv4, TCP, options, SCPS options, compressed headers, UDP
//! encapsulation, pcap) on libFuzzer's inputs: none may panic.
#![no_main]

#[path = "../../tests/common/decode_all.rs"]
mod decode_all;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    decode_all::decode_everything(data);
});
