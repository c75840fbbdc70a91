//! The fuzz bodies without libFuzzer: every input kept in `fuzz/corpus/*` and
//! `fuzz/regressions/`, then thousands of generated ones: valid segments of every type
//! mutated (bytes flipped, cut, inserted, SDNVs lengthened) and random bytes through the
//! decoder, and random operation sequences through two engines.

use std::path::Path;

use spacetp_ltp::fuzzing;
use spacetp_ltp::wire::*;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n.max(1)
    }
}

fn kept(dir: &str, f: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut n = 0;
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for e in entries.flatten() {
            f(&std::fs::read(e.path()).unwrap());
            n += 1;
        }
    }
    n
}

#[test]
fn every_kept_input_passes() {
    let n = kept("fuzz/corpus/decode", fuzzing::decode)
        + kept("fuzz/corpus/engines", fuzzing::engines)
        + kept("fuzz/regressions/decode", fuzzing::decode)
        + kept("fuzz/regressions/engines", fuzzing::engines);
    println!("{n} kept inputs");
}

/// One valid segment of each type, with extensions on some.
fn seeds() -> Vec<Vec<u8>> {
    let session = SessionId {
        originator: 300,
        number: 70_000,
    };
    let claims = [
        Claim {
            offset: 10,
            length: 90,
        },
        Claim {
            offset: 200,
            length: 50,
        },
    ];
    let ext = [Extension {
        tag: 1,
        value: b"cookie",
    }];
    let data = |serials| {
        Content::Data(DataSegment {
            client_service_id: 1,
            offset: 1000,
            data: b"some client data",
            serials,
        })
    };
    let cp = Some(Serials {
        checkpoint: 1234,
        report: 77,
    });
    let contents = [
        (SegmentType::RedData, data(None)),
        (SegmentType::RedCheckpoint, data(cp)),
        (SegmentType::RedCheckpointEorp, data(cp)),
        (SegmentType::RedCheckpointEorpEob, data(cp)),
        (SegmentType::GreenData, data(None)),
        (SegmentType::GreenEob, data(None)),
        (
            SegmentType::Report,
            Content::Report(ReportSegment {
                report_serial: 5,
                checkpoint_serial: 1234,
                upper_bound: 300,
                lower_bound: 0,
                claims: Claims::List(&claims),
            }),
        ),
        (
            SegmentType::ReportAck,
            Content::ReportAck { report_serial: 5 },
        ),
        (
            SegmentType::CancelFromSender,
            Content::Cancel {
                reason: CancelReason::RetransmissionLimit,
            },
        ),
        (SegmentType::CancelAckToSender, Content::CancelAck),
        (
            SegmentType::CancelFromReceiver,
            Content::Cancel {
                reason: CancelReason::Miscolored,
            },
        ),
        (SegmentType::CancelAckToReceiver, Content::CancelAck),
    ];
    let mut out = Vec::new();
    for (i, (kind, content)) in contents.into_iter().enumerate() {
        let e: &[Extension] = if i % 2 == 0 { &ext } else { &[] };
        let s = Segment {
            kind,
            session,
            header_extensions: Extensions::List(e),
            content,
            trailer_extensions: Extensions::List(e),
        };
        let mut b = Vec::new();
        encode(&s, &mut b).unwrap();
        out.push(b);
    }
    out
}

#[test]
fn mutated_and_random_segments_never_panic_the_decoder() {
    let seeds = seeds();
    for s in &seeds {
        fuzzing::decode(s);
        assert!(decode(s).is_ok());
    }
    let mut r = Lcg(0x0017_5326);
    let mut decoded = 0;
    for case in 0..6000usize {
        let mut b = seeds[case % seeds.len()].clone();
        match case % 5 {
            0 => {
                for _ in 0..1 + r.below(4) {
                    let i = r.below(b.len());
                    b[i] ^= 1 << r.below(8);
                }
            }
            1 => b.truncate(r.below(b.len())),
            2 => {
                let i = r.below(b.len() + 1);
                b.insert(i, r.next() as u8);
            }
            3 => {
                // A longer SDNV: a leading 0x80 group before a field.
                let i = 1 + r.below(b.len() - 1);
                b.insert(i, 0x80);
            }
            _ => {
                b = (0..r.below(64)).map(|_| r.next() as u8).collect();
            }
        }
        fuzzing::decode(&b);
        decoded += decode(&b).is_ok() as u32;
    }
    // The mutations must leave some segments whole, or the test tests nothing.
    assert!(decoded > 300, "{decoded}");
}

#[test]
fn random_operation_sequences_keep_the_engines_promises() {
    let mut r = Lcg(0x5EED_0F17);
    for case in 0..800u32 {
        let len = 32 + (case % 24) as usize * 40;
        let data: Vec<u8> = (0..len).map(|_| r.next() as u8).collect();
        fuzzing::engines(&data);
    }
}
