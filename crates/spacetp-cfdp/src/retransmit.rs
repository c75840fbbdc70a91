//! The sender's answer to a NAK, done here instead of in cfdp-rs 0.3.0's source handler,
//! whose `handle_retransmission` (source.rs) has two faults: it resends only the first
//! segment of a request that spans several (it zeroes the remaining length after one chunk
//! and never advances the offset), and every file data PDU it sends, a retransmission too,
//! advances the transaction's progress (`prepare_and_send_file_data_pdu` adds its size), so
//! a repair sent during the first pass makes the pass skip a segment of new data, whose
//! loss is then NAKed and repaired, which skips another. 727.0-B-5 4.6.4.3.4 asks the sender
//! to send every byte a NAK requests: this module does, in file data PDUs of at most one
//! segment with the transaction's own header, and leaves to the handler only what it does
//! right (metadata requested again: the segment request 0-0). Remove when cfdp-rs is fixed.

use crate::filestore::Files;
use cfdp::filestore::VirtualFilestore;
use spacepackets::cfdp::pdu::file_data::FileDataPdu;
use spacepackets::cfdp::pdu::nak::{NakPduCreator, NakPduReader, SegmentRequests};
use spacepackets::cfdp::pdu::{CfdpPdu, CommonPduConfig, PduHeader, WritablePduPacket};
use spacepackets::cfdp::{SegmentMetadataFlag, SegmentationControl};

/// What answers a NAK.
pub struct Answer {
    /// File data PDUs of every byte requested (each request cut into segments, clamped to
    /// the file).
    pub repairs: Vec<Vec<u8>>,
    /// The NAK to hand the handler if it asks for the metadata again.
    pub metadata_nak: Option<Vec<u8>>,
}

/// The answer to NAK `raw`; None when `raw` is no NAK.
pub fn answer(
    raw: &[u8],
    conf: &CommonPduConfig,
    files: &Files,
    path: &str,
    file_size: u64,
    segment: u64,
) -> Option<Answer> {
    let nak = NakPduReader::new(raw).ok()?;
    let mut pdus = Vec::new();
    let mut metadata = false;
    let mut buf = vec![0u8; segment as usize];
    for (s, e) in nak.get_segment_requests_iterator()? {
        if s == 0 && e == 0 {
            metadata = true;
            continue;
        }
        let mut o = s;
        while o < e.min(file_size) {
            let n = (e.min(file_size) - o).min(segment);
            let data = &mut buf[..n as usize];
            files.read_data(path, o, n, data).ok()?;
            let header = PduHeader::new_for_file_data(
                *conf,
                0,
                SegmentMetadataFlag::NotPresent,
                SegmentationControl::NoRecordBoundaryPreservation,
            );
            pdus.push(
                FileDataPdu::new_no_seg_metadata(header, o, data)
                    .to_vec()
                    .ok()?,
            );
            o += n;
        }
    }
    let metadata_nak = metadata.then(|| {
        let header = *nak.pdu_header();
        NakPduCreator::new(header, 0, 0, Some(SegmentRequests::U32Pairs(&[(0, 0)])))
            .ok()
            .and_then(|p| p.to_vec().ok())
    });
    Some(Answer {
        repairs: pdus,
        metadata_nak: metadata_nak.flatten(),
    })
}

/// The transaction's PDU configuration, from a PDU the sender's handler wrote.
pub fn conf_of(raw: &[u8]) -> Option<CommonPduConfig> {
    PduHeader::from_bytes(raw)
        .ok()
        .map(|(h, _)| *h.common_pdu_conf())
}
