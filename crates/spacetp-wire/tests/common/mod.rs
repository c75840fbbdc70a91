//! Shared helpers for the integration tests: where the reference captures live and how to
//! load them.
#![allow(dead_code)]

use std::path::PathBuf;

use spacetp_wire::{PcapPacket, PcapReader};

/// `tests/data/<sub>` of this crate: the reference captures, in the repository with their
/// provenance (`tests/data/*/README.md`). Panics (fails the test) with a clear message when the
/// directory is missing: these tests must not pass silently.
pub fn anchor_dir(sub: &str) -> PathBuf {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(sub);
    assert!(
        p.is_dir(),
        "anchor directory {} is missing: the reference captures are test data of this crate \
         (crates/spacetp-wire/tests/data/{sub})",
        p.display()
    );
    p
}

pub fn anchor(sub: &str, file: &str) -> PathBuf {
    let p = anchor_dir(sub).join(file);
    assert!(p.is_file(), "anchor file {} is missing", p.display());
    p
}

/// Every `*.pcap` / `*.pcapng` file of an anchor directory, sorted; fails if there are none.
pub fn pcaps_in(sub: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(anchor_dir(sub))
        .expect("read anchor dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("pcap" | "pcapng")
            )
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no pcap in tests/data/{sub}");
    v
}

pub fn read_pcap(path: &std::path::Path) -> Vec<PcapPacket> {
    PcapReader::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .read_all()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

pub fn file_name(p: &std::path::Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Every IPv4 packet (link layer stripped) of every anchor capture, for fuzzing.
pub fn all_anchor_ipv4_packets() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for sub in ["scps-ri", "tshark"] {
        for f in pcaps_in(sub) {
            for p in read_pcap(&f) {
                if let Ok(ip) = p.ipv4() {
                    out.push(ip.to_vec());
                }
            }
        }
    }
    out
}
