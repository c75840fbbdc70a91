//! The bundle decoder against what others send and against garbage: a bundle ION 4.1.3 put on
//! the wire (captured between two ION nodes) decodes with its fields; random bytes, truncated
//! and mutated bundles, and blocks of several bundles with damage in them never panic, and
//! what decodes re-encodes to a bundle that decodes the same. A few thousand generated inputs
//! per run, deterministic (the seed is printed on failure), so CI needs no fuzzer.

use spacetp_dtn::bundle::{split_block, Bundle, Eid};

/// An 80-byte bundle ION 4.1.3 sent from ipn:1.2 to ipn:2.2 (`bpdriver`), the first of six
/// in one LTP block: primary block with CRC-16, previous node (6), ION's private block 193,
/// bundle age (7) and a 3-byte payload, then the end of the outer array (`ff`).
const ION_BUNDLE: &str = "9f8907184001820282020282028201028202820102821b000000c5ada399e2011a\
                          000493e0424b8d85060210004582028201008518c10301004584000100008507\
                          040100410185010101004303476fff";

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_bundle_from_ion_decodes_with_its_fields() {
    let b = Bundle::decode(&unhex(ION_BUNDLE)).expect("ION's bundle decodes");
    let h = &b.header;
    assert_eq!(
        h.id.source,
        Eid {
            node: 1,
            service: 2
        }
    );
    assert_eq!(
        h.destination,
        Eid {
            node: 2,
            service: 2
        }
    );
    assert_eq!((h.id.created_ms, h.id.seq), (849_021_737_442, 1));
    assert_eq!(h.lifetime_ms, 300_000);
    assert_eq!(h.age_ms, Some(1));
    assert_eq!(
        h.previous_node,
        Some(Eid {
            node: 1,
            service: 0
        })
    );
    assert_eq!(b.payload(), &[0x03, 0x47, 0x6f]);
    assert_eq!(h.payload_len, 3);
}

#[test]
fn a_bundle_from_ion_with_a_wrong_crc_is_refused() {
    let mut bytes = unhex(ION_BUNDLE);
    // The primary block's CRC-16 (`42 4b8d`) is over the block with the field zeroed.
    let at = bytes
        .windows(3)
        .position(|w| w == [0x42, 0x4b, 0x8d])
        .unwrap();
    bytes[at + 2] ^= 1;
    let e = Bundle::decode(&bytes).unwrap_err();
    assert!(e.to_string().contains("CRC"), "{e}");
}

/// xorshift64*: a small deterministic generator.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// What decodes must encode, and decode again to the same header and payload.
fn decodes_consistently(bytes: &[u8]) {
    if let Ok(mut b) = Bundle::decode(bytes) {
        let again = Bundle::decode(&b.to_bytes()).expect("a decoded bundle re-encodes");
        assert_eq!(again.header, b.header);
        assert_eq!(again.payload(), b.payload());
    }
    for b in split_block(bytes).into_iter().flatten() {
        let _ = b.header.payload_len;
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let mut ours = Bundle::new(
        Eid {
            node: 3,
            service: 1,
        },
        Eid {
            node: 7,
            service: 9,
        },
        800_000_000_000,
        42,
        86_400_000,
        (0..=255u8).collect(),
    );
    let frag = ours.fragment(100).1.to_bytes();
    vec![unhex(ION_BUNDLE), ours.to_bytes(), frag]
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(0x5eed_0001);
    for i in 0..3000 {
        let len = rng.below(300);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let r = std::panic::catch_unwind(|| decodes_consistently(&bytes));
        assert!(r.is_ok(), "input {i} (seed 0x5eed0001): {bytes:02x?}");
    }
}

#[test]
fn truncated_and_mutated_bundles_never_panic_and_whole_ones_survive() {
    let mut rng = Rng(0x5eed_0002);
    for seed in seeds() {
        assert!(Bundle::decode(&seed).is_ok());
        for cut in 0..seed.len() {
            assert!(
                Bundle::decode(&seed[..cut]).is_err(),
                "a bundle cut at {cut} decoded"
            );
        }
        for i in 0..1500 {
            let mut b = seed.clone();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(b.len());
                match rng.below(3) {
                    0 => b[at] ^= 1 << rng.below(8),
                    1 => b[at] = rng.next() as u8,
                    _ => {
                        b.insert(at, rng.next() as u8);
                    }
                }
            }
            let r = std::panic::catch_unwind(|| decodes_consistently(&b));
            assert!(r.is_ok(), "mutation {i} (seed 0x5eed0002): {b:02x?}");
        }
    }
}

#[test]
fn a_block_reads_up_to_the_first_damaged_bundle() {
    let s = seeds();
    let mut block = [s[0].clone(), s[1].clone(), s[0].clone()].concat();
    let all = split_block(&block);
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|r| r.is_ok()));
    // Damage inside the second bundle's payload: the CRC-less payload still parses, so the
    // damage shows only if a CRC covers it; damage to its primary block is refused.
    let second = s[0].len();
    block[second + 2] ^= 0x40;
    let r = split_block(&block);
    assert!(r[0].is_ok());
    assert!(r[1].is_err(), "{:?}", r[1]);
}
