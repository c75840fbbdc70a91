//! The writer's files read back, and bad files refused.

use super::*;
use crate::error::WireError;

fn ipv4_packet(len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len];
    p[0] = 0x45;
    p
}

#[test]
fn write_then_read_both_resolutions() {
    for res in [TsResolution::Micro, TsResolution::Nano] {
        let mut w = PcapWriter::with_options(Vec::new(), 64, res).unwrap();
        w.write_packet(1_500_000_123, &ipv4_packet(40)).unwrap();
        w.write_packet(2_000_000_999, &ipv4_packet(100)).unwrap();
        w.write_zero_filled(3_000_000_000, &ipv4_packet(40), 1000)
            .unwrap();
        let bytes = w.into_inner();
        let pk = PcapReader::new(bytes).unwrap().read_all().unwrap();
        assert_eq!(pk.len(), 3);
        let frac = if res == TsResolution::Micro { 0 } else { 123 };
        assert_eq!(pk[0].ts_ns, 1_500_000_000 + frac);
        assert_eq!((pk[0].data.len(), pk[0].orig_len), (40, 40));
        assert_eq!((pk[1].data.len(), pk[1].orig_len), (64, 100));
        assert_eq!((pk[2].data.len(), pk[2].orig_len), (64, 1000));
        assert!(pk
            .iter()
            .all(|p| p.linktype == LINKTYPE_RAW && p.ipv4().is_ok()));
    }
}

#[test]
fn big_endian_classic() {
    let mut f = Vec::new();
    f.extend_from_slice(&MAGIC_USEC.to_be_bytes());
    f.extend_from_slice(&[
        0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 228,
    ]);
    f.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 20, 0, 0, 0, 20]);
    f.extend_from_slice(&ipv4_packet(20));
    let pk = PcapReader::new(f).unwrap().read_all().unwrap();
    assert_eq!(pk[0].ts_ns, 1_000_005_000);
    assert_eq!(pk[0].linktype, LINKTYPE_IPV4);
}

#[test]
fn link_layers() {
    let ip = ipv4_packet(20);
    let mut eth = vec![0u8; 12];
    eth.extend_from_slice(&[0x81, 0, 0, 1, 0x08, 0]);
    eth.extend_from_slice(&ip);
    assert_eq!(link_payload_ipv4(LINKTYPE_ETHERNET, &eth).unwrap(), &ip[..]);
    let mut sll = vec![0u8; 14];
    sll.extend_from_slice(&[0x08, 0]);
    sll.extend_from_slice(&ip);
    assert_eq!(
        link_payload_ipv4(LINKTYPE_LINUX_SLL, &sll).unwrap(),
        &ip[..]
    );
    let mut sll2 = vec![0x08, 0];
    sll2.extend_from_slice(&[0u8; 18]);
    sll2.extend_from_slice(&ip);
    assert_eq!(
        link_payload_ipv4(LINKTYPE_LINUX_SLL2, &sll2).unwrap(),
        &ip[..]
    );
    let mut arp = vec![0u8; 12];
    arp.extend_from_slice(&[0x08, 0x06]);
    assert_eq!(
        link_payload_ipv4(LINKTYPE_ETHERNET, &arp),
        Err(WireError::NotIpv4Frame { ethertype: 0x0806 })
    );
    assert!(link_payload_ipv4(999, &ip).is_err());
}

#[test]
fn garbage_files_do_not_panic() {
    for f in [
        vec![],
        vec![0xd4, 0xc3],
        vec![0x0a, 0x0d, 0x0d, 0x0a, 0, 0, 0, 0],
    ] {
        if let Ok(r) = PcapReader::new(f) {
            for p in r {
                let _ = p;
            }
        }
    }
}
