//! The connection fuzzer's interpreter without libFuzzer: every input of the kept corpus
//! (`fuzz/corpus/connection`, grown by `cargo fuzz run connection`) and a few thousand
//! pseudo-random ones, each a run of operations on two connections with every invariant
//! checked (see `spacetp_proto::fuzzing`).

use std::path::Path;

#[test]
fn every_kept_corpus_input_keeps_the_invariants() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/connection");
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            let data = std::fs::read(e.path()).unwrap();
            spacetp_proto::fuzzing::run(&data);
            n += 1;
        }
    }
    println!("{n} corpus inputs from {}", dir.display());
}

#[test]
fn pseudo_random_operation_sequences_keep_the_invariants() {
    // A fixed LCG: the same inputs on every machine.
    let mut x: u64 = 0x005E_ED0F_5A7E;
    for case in 0..3000u32 {
        let len = 64 + (case % 16) as usize * 64;
        let data: Vec<u8> = (0..len)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) as u8
            })
            .collect();
        spacetp_proto::fuzzing::run(&data);
    }
}

#[test]
fn inputs_that_once_crashed_keep_the_invariants() {
    // Crashes the fuzzer found, kept after the fix (fuzz/regressions/).
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        spacetp_proto::fuzzing::run(&std::fs::read(e.path()).unwrap());
    }
}
