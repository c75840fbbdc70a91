//! Arbitrary sequences of segments (genuine, lost, duplicated, reordered, changed, forged),
//! timer firings and application calls on a client and a server of every profile: no
//! panic, and every invariant of `spacetp_proto::fuzzing` holds after every operation.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    spacetp_proto::fuzzing::run(data);
});
