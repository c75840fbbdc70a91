//! BPv7 bundles (RFC 9171) as spacetp sends and reads them, encoded and decoded by the
//! `bp7` crate (dtn7-rs's codec): ipn endpoint IDs, a primary block with a CRC-16 (the
//! other blocks without, as ION sends them), a previous-node block, a bundle age block, a
//! hop count block and the payload; fragments carry their offset and the application
//! data's total length. Bundles with CRCs on every block (other implementations') are read
//! and checked too.
//!
//! Times: a node without an accurate clock (the simulator) writes creation time 0, which
//! RFC 9171 4.2.7 allows with a bundle age block; the age block then says how old a bundle
//! is (milliseconds), and each node adds the time the bundle stayed with it. A node with
//! a clock (a live node) writes DTN time (milliseconds since 2000-01-01) as ION does.
//!
//! An LTP block may hold several bundles back to back, with no length before each (ION's
//! LTP convergence layer): [`split_block`] reads them in turn (a bundle is an
//! indefinite-length CBOR array, so each one's end is found by decoding it).

use bp7::canonical::{
    new_bundle_age_block, new_hop_count_block, new_payload_block, new_previous_node_block,
    BUNDLE_AGE_BLOCK, HOP_COUNT_BLOCK, PAYLOAD_BLOCK, PREVIOUS_NODE_BLOCK,
};
use bp7::crc::CrcBlock;
use bp7::flags::{BlockControlFlags, BundleControlFlags};
use bp7::{crc, CreationTimestamp, EndpointID};
use std::time::Duration;

/// The largest hop count a bundle of ours may take (RFC 9171 4.4.3's limit field).
pub const HOP_LIMIT: u8 = 32;

/// An ipn endpoint: node and service numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Eid {
    pub node: u64,
    pub service: u64,
}

impl Eid {
    fn to_bp7(self) -> EndpointID {
        EndpointID::with_ipn(self.node, self.service).expect("ipn node and service numbers")
    }

    fn from_bp7(e: &EndpointID) -> Option<Eid> {
        let a = e.scheme_specific_part_ipn()?;
        Some(Eid {
            node: a.node_number(),
            service: a.service_number(),
        })
    }
}

/// What identifies a bundle (RFC 9171 4.2.7's source and creation timestamp) and, for a
/// fragment, where its payload lies in the application data unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BundleId {
    pub source: Eid,
    /// Creation time (DTN ms, 0 without a clock) and sequence number.
    pub created_ms: u64,
    pub seq: u64,
}

/// A bundle's fields, decoded; the payload bytes stay in the bundle.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub id: BundleId,
    pub destination: Eid,
    /// Milliseconds after creation the bundle may live.
    pub lifetime_ms: u64,
    /// (offset, total application data length), for a fragment.
    pub fragment: Option<(u64, u64)>,
    /// Age in milliseconds (bundle age block), if the bundle has one.
    pub age_ms: Option<u64>,
    /// (limit, count) of the hop count block, if any.
    pub hops: Option<(u8, u8)>,
    pub previous_node: Option<Eid>,
    pub payload_len: u64,
}

/// A bundle in memory: the `bp7` structure with its decoded header.
#[derive(Clone, Debug)]
pub struct Bundle {
    inner: bp7::Bundle,
    pub header: Header,
}

/// Why bytes are not a bundle we take.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bundle: {0}")]
pub struct BundleError(pub String);

impl Bundle {
    /// A new bundle from `source` to `destination` with `payload`, created at `created_ms`
    /// (0: no clock; its age is then counted from `age_ms`), sequence `seq`.
    pub fn new(
        source: Eid,
        destination: Eid,
        created_ms: u64,
        seq: u64,
        lifetime_ms: u64,
        payload: Vec<u8>,
    ) -> Bundle {
        Self::build(
            source,
            destination,
            created_ms,
            seq,
            lifetime_ms,
            None,
            0,
            payload,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn build(
        source: Eid,
        destination: Eid,
        created_ms: u64,
        seq: u64,
        lifetime_ms: u64,
        fragment: Option<(u64, u64)>,
        age_ms: u64,
        payload: Vec<u8>,
    ) -> Bundle {
        let mut flags = BundleControlFlags::empty();
        if fragment.is_some() {
            flags |= BundleControlFlags::BUNDLE_IS_FRAGMENT;
        }
        let mut b = bp7::primary::PrimaryBlockBuilder::default()
            .bundle_control_flags(flags.bits())
            .destination(destination.to_bp7())
            .source(source.to_bp7())
            .report_to(source.to_bp7())
            .creation_timestamp(CreationTimestamp::with_time_and_seq(created_ms, seq))
            .lifetime(Duration::from_millis(lifetime_ms));
        if let Some((offset, total)) = fragment {
            b = b.fragmentation_offset(offset).total_data_length(total);
        }
        let primary = b.build().expect("every field of the primary block is set");
        // Replicated in every fragment (RFC 9171 4.2.4): the age and hop count travel with
        // each piece.
        let rep = || BlockControlFlags::BLOCK_REPLICATE;
        let canonicals = vec![
            new_previous_node_block(2, rep(), source.to_bp7()),
            new_bundle_age_block(3, rep(), age_ms),
            new_hop_count_block(4, rep(), HOP_LIMIT),
            new_payload_block(BlockControlFlags::empty(), payload),
        ];
        let mut inner = bp7::Bundle::new(primary, canonicals);
        // A CRC-16 on the primary block only, as ION sends them: the other blocks ride in
        // LTP's red part (and UDP's checksum), and a CRC over megabytes of payload at every
        // hop was most of a simulation's time.
        inner.primary.set_crc_type(crc::CRC_16);
        let header = header_of(&inner).expect("a bundle built here reads back");
        Bundle { inner, header }
    }

    /// The bundle's bytes (an indefinite-length CBOR array, CRCs computed).
    pub fn to_bytes(&mut self) -> Vec<u8> {
        self.inner.to_cbor()
    }

    /// Encoded size, bytes.
    pub fn encoded_len(&mut self) -> u64 {
        self.to_bytes().len() as u64
    }

    /// One bundle from `bytes` (all of them); its CRCs checked.
    pub fn decode(bytes: &[u8]) -> Result<Bundle, BundleError> {
        let mut inner = bp7::Bundle::try_from(bytes).map_err(|e| BundleError(e.to_string()))?;
        check(&mut inner)?;
        let header = header_of(&inner)?;
        Ok(Bundle { inner, header })
    }

    pub fn payload(&self) -> &[u8] {
        self.inner.payload().map_or(&[][..], |p| &p[..])
    }

    /// This node forwards the bundle after keeping it `residence_ms`: the previous node
    /// becomes `node`, the age grows by the residence, the hop count by one (RFC 9171
    /// 4.4.1-4.4.3). False when the hop limit is exceeded (the bundle must be deleted).
    pub fn forwarded_by(&mut self, node: Eid, residence_ms: u64) -> bool {
        for c in self.inner.canonicals.iter_mut() {
            match c.block_type {
                PREVIOUS_NODE_BLOCK => {
                    c.previous_node_update(node.to_bp7());
                }
                BUNDLE_AGE_BLOCK => {
                    let age = c.bundle_age_get().unwrap_or(0) as u64 + residence_ms;
                    c.bundle_age_update(age as u128);
                }
                HOP_COUNT_BLOCK => {
                    c.hop_count_increase();
                }
                _ => {}
            }
        }
        self.header = header_of(&self.inner).expect("updated blocks read back");
        self.header
            .hops
            .map_or(true, |(limit, count)| count <= limit)
    }

    /// The bundle spent `ms` more (on a link, say): its age block grows by that much.
    pub fn add_age(&mut self, ms: u64) {
        for c in self.inner.canonicals.iter_mut() {
            if c.block_type == BUNDLE_AGE_BLOCK {
                let age = c.bundle_age_get().unwrap_or(0) as u64 + ms;
                c.bundle_age_update(age as u128);
            }
        }
        self.header = header_of(&self.inner).expect("updated blocks read back");
    }

    /// Split the payload at `at` bytes (0 < at < payload length): two fragments that
    /// together carry it (RFC 9171 5.8), each with the blocks marked for replication.
    pub fn fragment(&self, at: u64) -> (Bundle, Bundle) {
        let p = self.payload();
        assert!(
            at > 0 && at < p.len() as u64,
            "a fragment boundary inside the payload"
        );
        let (offset, total) = self.header.fragment.unwrap_or((0, p.len() as u64));
        let h = &self.header;
        let age = h.age_ms.unwrap_or(0);
        let piece = |off: u64, data: &[u8]| {
            Bundle::build(
                h.id.source,
                h.destination,
                h.id.created_ms,
                h.id.seq,
                h.lifetime_ms,
                Some((offset + off, total)),
                age,
                data.to_vec(),
            )
        };
        let (a, b) = p.split_at(at as usize);
        let (mut first, mut second) = (piece(0, a), piece(at, b));
        // The hop count and previous node go on as the whole bundle's.
        for f in [&mut first, &mut second] {
            for (c, o) in f.inner.canonicals.iter_mut().zip(&self.inner.canonicals) {
                if c.block_type != PAYLOAD_BLOCK {
                    c.set_data(o.data().clone());
                }
            }
            f.header = header_of(&f.inner).expect("copied blocks read back");
        }
        (first, second)
    }
}

/// Every bundle of an LTP block (bundles back to back, no length prefix); a bundle that
/// does not decode ends the reading (nothing after it can be delimited).
pub fn split_block(block: &[u8]) -> Vec<Result<Bundle, BundleError>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < block.len() {
        let mut de = serde_cbor::Deserializer::from_slice(&block[at..]);
        let item: Result<bp7::Bundle, _> = serde::Deserialize::deserialize(&mut de);
        let end = de.byte_offset();
        match item {
            Ok(mut b) => {
                let r = check(&mut b).and_then(|_| {
                    let header = header_of(&b)?;
                    Ok(Bundle { inner: b, header })
                });
                out.push(r);
                at += end.max(1);
            }
            Err(e) => {
                out.push(Err(BundleError(format!("at byte {at} of the block: {e}"))));
                break;
            }
        }
    }
    out
}

/// The CRCs of every block, and the fields RFC 9171 requires of ours.
fn check(b: &mut bp7::Bundle) -> Result<(), BundleError> {
    if !b.crc_valid() {
        return Err(BundleError(
            "a block's CRC does not match its contents".into(),
        ));
    }
    renumber_ion_fragment_blocks(b);
    b.validate().map_err(|errs| {
        BundleError(
            errs.iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("; "),
        )
    })
}

/// ION 4.1.3 sends the extension blocks of a fragment it made with block number 0, all of
/// them (RFC 9171 4.3.2 reserves 0 for the primary block and wants the numbers unique);
/// ION takes its own fragments back. Such blocks are numbered again here, after the
/// highest number in use, when they carry no CRC (a CRC covers the number). Nothing else
/// is forgiven: duplicate non-zero numbers are still refused.
fn renumber_ion_fragment_blocks(b: &mut bp7::Bundle) {
    let mut next = b
        .canonicals
        .iter()
        .map(|c| c.block_number)
        .max()
        .unwrap_or(1)
        .max(1);
    for c in b.canonicals.iter_mut() {
        if c.block_number == 0 && !c.crc.has_crc() {
            next += 1;
            c.block_number = next;
        }
    }
}

fn header_of(b: &bp7::Bundle) -> Result<Header, BundleError> {
    let p = &b.primary;
    let eid = |e: &EndpointID, what: &str| {
        Eid::from_bp7(e).ok_or_else(|| BundleError(format!("{what} {e} is not an ipn endpoint")))
    };
    let source = eid(&p.source, "source")?;
    let destination = eid(&p.destination, "destination")?;
    let mut age_ms = None;
    let mut hops = None;
    let mut previous_node = None;
    let mut payload_len = None;
    for c in &b.canonicals {
        match c.block_type {
            BUNDLE_AGE_BLOCK => age_ms = c.bundle_age_get().map(|a| a as u64),
            HOP_COUNT_BLOCK => hops = c.hop_count_get(),
            PREVIOUS_NODE_BLOCK => previous_node = c.previous_node_get().and_then(Eid::from_bp7),
            PAYLOAD_BLOCK => payload_len = c.payload_data().map(|d| d.len() as u64),
            _ => {}
        }
    }
    let created_ms = p.creation_timestamp.dtntime();
    if created_ms == 0 && age_ms.is_none() {
        return Err(BundleError(
            "creation time 0 (no clock) needs a bundle age block (RFC 9171 4.2.7)".into(),
        ));
    }
    Ok(Header {
        id: BundleId {
            source,
            created_ms,
            seq: p.creation_timestamp.seqno(),
        },
        destination,
        lifetime_ms: p.lifetime.as_millis() as u64,
        fragment: p
            .has_fragmentation()
            .then_some((p.fragmentation_offset, p.total_data_length)),
        age_ms,
        hops,
        previous_node,
        payload_len: payload_len.ok_or_else(|| BundleError("no payload block".into()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eid(node: u64, service: u64) -> Eid {
        Eid { node, service }
    }

    #[test]
    fn a_fragment_numbered_as_ion_numbers_its_fragments_is_read() {
        // ION 4.1.3's fragments (captured from its udpclo) number every extension block 0.
        let whole = Bundle::new(eid(1, 2), eid(2, 1), 5, 0, 300_000, vec![9u8; 500]);
        let (mut first, _) = whole.fragment(200);
        for c in first.inner.canonicals.iter_mut() {
            if c.block_type != PAYLOAD_BLOCK {
                c.block_number = 0;
            }
        }
        let back = Bundle::decode(&first.to_bytes()).expect("read as ION reads it");
        assert_eq!(back.header.fragment, Some((0, 500)));
        assert_eq!(back.payload().len(), 200);
        // Two blocks with the same non-zero number stay an error.
        let (mut second, _) = whole.fragment(300);
        for c in second.inner.canonicals.iter_mut() {
            if c.block_type != PAYLOAD_BLOCK {
                c.block_number = 5;
            }
        }
        assert!(Bundle::decode(&second.to_bytes()).is_err());
    }

    #[test]
    fn a_bundle_reads_back_with_every_block_as_rfc_9171_lays_it_out() {
        let mut b = Bundle::new(eid(1, 1), eid(3, 7), 0, 42, 3_600_000, vec![7u8; 1000]);
        let bytes = b.to_bytes();
        // RFC 9171 4.1: an indefinite-length array (0x9f ... 0xff) whose first item is the
        // primary block, a 9- or 11-item array (version 7).
        assert_eq!(bytes[0], 0x9f);
        assert_eq!(*bytes.last().unwrap(), 0xff);
        assert_eq!(bytes[1] & 0xe0, 0x80, "the primary block is an array");
        assert_eq!(bytes[2], 7, "BPv7");
        let back = Bundle::decode(&bytes).unwrap();
        assert_eq!(
            back.header.id,
            BundleId {
                source: eid(1, 1),
                created_ms: 0,
                seq: 42
            }
        );
        assert_eq!(back.header.destination, eid(3, 7));
        assert_eq!(back.header.age_ms, Some(0));
        assert_eq!(back.header.hops, Some((HOP_LIMIT, 0)));
        assert_eq!(back.payload(), &[7u8; 1000][..]);
        assert_eq!(back.header.fragment, None);
    }

    #[test]
    fn a_flipped_byte_of_the_primary_block_fails_its_crc() {
        let mut b = Bundle::new(eid(1, 1), eid(2, 1), 0, 1, 60_000, vec![1u8; 100]);
        let mut bytes = b.to_bytes();
        // The lifetime, 60 000 ms, is CBOR 0x19 0xea 0x60 inside the primary block: change
        // its value (the encoding stays valid CBOR), and only the CRC can tell.
        let at = bytes
            .windows(3)
            .position(|w| w == [0x19, 0xea, 0x60])
            .expect("the lifetime's encoding");
        bytes[at + 2] ^= 0x01;
        let e = Bundle::decode(&bytes).expect_err("the CRC-16 catches it");
        assert!(e.0.contains("CRC"), "{e}");
    }

    #[test]
    fn forwarding_ages_the_bundle_and_counts_the_hop() {
        let mut b = Bundle::new(eid(1, 1), eid(3, 1), 0, 1, 60_000, vec![0u8; 10]);
        assert!(b.forwarded_by(eid(2, 0), 1500));
        let back = Bundle::decode(&b.to_bytes()).unwrap();
        assert_eq!(back.header.age_ms, Some(1500));
        assert_eq!(back.header.hops, Some((HOP_LIMIT, 1)));
        assert_eq!(back.header.previous_node, Some(eid(2, 0)));
    }

    #[test]
    fn fragments_carry_offsets_into_the_whole_and_their_payloads_join_to_it() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let b = Bundle::new(eid(1, 1), eid(3, 1), 0, 9, 60_000, data.clone());
        let (mut a, c) = b.fragment(1200);
        let (mut c1, mut c2) = c.fragment(2000);
        let parts: Vec<Bundle> = [&mut a, &mut c1, &mut c2]
            .into_iter()
            .map(|f| Bundle::decode(&f.to_bytes()).unwrap())
            .collect();
        assert_eq!(parts[0].header.fragment, Some((0, 5000)));
        assert_eq!(parts[1].header.fragment, Some((1200, 5000)));
        assert_eq!(parts[2].header.fragment, Some((3200, 5000)));
        let joined: Vec<u8> = parts.iter().flat_map(|p| p.payload().to_vec()).collect();
        assert_eq!(joined, data);
        assert!(parts.iter().all(|p| p.header.id == b.header.id));
    }

    #[test]
    fn a_block_of_bundles_back_to_back_splits_into_each() {
        let mut block = Vec::new();
        for s in 1..=3 {
            block.extend(
                Bundle::new(eid(1, 1), eid(2, 1), 0, s, 60_000, vec![s as u8; 300]).to_bytes(),
            );
        }
        let got = split_block(&block);
        assert_eq!(got.len(), 3);
        for (i, b) in got.iter().enumerate() {
            let b = b.as_ref().unwrap();
            assert_eq!(b.header.id.seq, i as u64 + 1);
            assert_eq!(b.payload().len(), 300);
        }
        // Garbage after the bundles is reported, and what came before is kept.
        block.extend([0x01, 0x02]);
        let got = split_block(&block);
        assert_eq!(got.len(), 4);
        assert!(got[3].is_err());
    }
}
