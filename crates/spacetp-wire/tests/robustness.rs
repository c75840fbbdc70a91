//! No input makes a decoder panic: arbitrary bytes, bytes shaped like headers, and mutated
//! real packets and capture files. A panic fails the test; errors are expected.

mod common;
#[path = "common/decode_all.rs"]
mod decode_all;

use decode_all::decode_everything;

use common::*;
use proptest::prelude::*;
use spacetp_wire::*;

/// xorshift64*: a fixed-seed generator so the fuzz run is reproducible.
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

/// One random edit: flip a bit, set a byte to a boundary value, truncate, cut a range, insert
/// or duplicate bytes.
fn mutate(rng: &mut Rng, b: &mut Vec<u8>) {
    if b.is_empty() {
        b.push(rng.next() as u8);
        return;
    }
    let i = rng.below(b.len());
    match rng.below(7) {
        0 => b[i] ^= 1 << rng.below(8),
        1 => b[i] = [0, 1, 2, 4, 5, 6, 0x0f, 0x45, 0x7f, 0x80, 0xff][rng.below(11)],
        2 => b[i] = rng.next() as u8,
        3 => b.truncate(i),
        4 => {
            let j = (i + rng.below(16)).min(b.len());
            b.drain(i..j);
        }
        5 => {
            let v = rng.next() as u8;
            b.insert(i, v);
        }
        _ => {
            let j = (i + rng.below(8)).min(b.len());
            let dup: Vec<u8> = b[i..j].to_vec();
            b.splice(i..i, dup);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100_000))]

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..120)) {
        decode_everything(&b);
    }

    /// Bytes that start like an IPv4 + TCP header, so the option walker sees garbage.
    #[test]
    fn header_shaped_bytes_never_panic(
        ihl in 0u8..16,
        total in any::<u16>(),
        proto in prop_oneof![Just(6u8), Just(17), Just(105), Just(106), any::<u8>()],
        frag in prop_oneof![Just(0x4000u16), any::<u16>()],
        doff in 0u8..16,
        rest in proptest::collection::vec(any::<u8>(), 0..80),
    ) {
        let mut b = vec![0x40 | ihl, 0];
        b.extend_from_slice(&total.to_be_bytes());
        b.extend_from_slice(&[0, 1]);
        b.extend_from_slice(&frag.to_be_bytes());
        b.extend_from_slice(&[64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        b.extend_from_slice(&[0x13, 0x89, 0x13, 0x89, 0, 0, 0, 1, 0, 0, 0, 2, doff << 4, 0x10]);
        b.extend_from_slice(&[0xff, 0xff, 0, 0, 0, 0]);
        b.extend_from_slice(&rest);
        decode_everything(&b);
    }
}

#[test]
fn mutated_real_packets_never_panic() {
    let packets = all_anchor_ipv4_packets();
    assert!(packets.len() > 3000, "{} packets", packets.len());
    let mut rng = Rng(0x5eed_5ca1_ab1e_0001);
    let (mut runs, mut accepted) = (0usize, 0usize);
    // Every packet eight times, 1 to 4 edits each.
    for _round in 0..8 {
        for p in &packets {
            let mut b = p.clone();
            for _ in 0..1 + rng.below(4) {
                mutate(&mut rng, &mut b);
            }
            accepted += decode_ipv4_tcp(&b).is_ok() as usize;
            decode_everything(&b);
            runs += 1;
        }
    }
    println!("{runs} mutated packets, {accepted} still decoded as TCP");
    assert!(runs > 25_000);
}

#[test]
fn mutated_capture_files_never_panic() {
    let mut files = Vec::new();
    for sub in ["scps-ri", "tshark"] {
        for f in pcaps_in(sub) {
            let mut bytes = std::fs::read(&f).unwrap();
            bytes.truncate(20_000); // the headers and first blocks are what matter
            files.push(bytes);
        }
    }
    let mut rng = Rng(0x0ddb_a11c_afe0_0002);
    let mut runs = 0;
    for f in &files {
        for _ in 0..150 {
            let mut b = f.clone();
            // Edits in the first bytes hit the file and block headers.
            for _ in 0..1 + rng.below(3) {
                if rng.below(2) == 0 && b.len() > 64 {
                    let i = rng.below(64);
                    b[i] = rng.next() as u8;
                } else {
                    mutate(&mut rng, &mut b);
                }
            }
            if let Ok(r) = PcapReader::new(b) {
                for p in r.take(500).flatten() {
                    if let Ok(ip) = p.ipv4() {
                        decode_everything(ip);
                    }
                }
            }
            runs += 1;
        }
    }
    assert_eq!(runs, files.len() * 150);
}
