//! Where a handler's PDUs go: a queue the caller empties at its own pace (the handlers
//! produce a retransmission burst at once; the link takes it at its rate), with counts of
//! what was produced by kind.

use cfdp::{GenericSendError, PduSender};
use spacepackets::cfdp::pdu::FileDirectiveType;
use spacepackets::cfdp::PduType;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// PDUs produced, by kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct PduCounts {
    pub metadata: u64,
    pub file_data: u64,
    pub eof: u64,
    pub finished: u64,
    pub ack: u64,
    pub nak: u64,
    pub other: u64,
}

impl PduCounts {
    pub fn total(&self) -> u64 {
        self.metadata + self.file_data + self.eof + self.finished + self.ack + self.nak + self.other
    }

    fn count(&mut self, kind: PduType, directive: Option<FileDirectiveType>) {
        let n = match (kind, directive) {
            (PduType::FileData, _) => &mut self.file_data,
            (_, Some(FileDirectiveType::MetadataPdu)) => &mut self.metadata,
            (_, Some(FileDirectiveType::EofPdu)) => &mut self.eof,
            (_, Some(FileDirectiveType::FinishedPdu)) => &mut self.finished,
            (_, Some(FileDirectiveType::AckPdu)) => &mut self.ack,
            (_, Some(FileDirectiveType::NakPdu)) => &mut self.nak,
            _ => &mut self.other,
        };
        *n += 1;
    }
}

#[derive(Debug, Default)]
struct Queue {
    pdus: VecDeque<(Vec<u8>, bool)>,
    counts: PduCounts,
}

/// A handler's PDUs, in the order produced; each with whether it is file data.
#[derive(Clone, Debug, Default)]
pub struct Outbox(Arc<Mutex<Queue>>);

impl Outbox {
    pub fn pop(&self) -> Option<(Vec<u8>, bool)> {
        self.0.lock().expect("outbox").pdus.pop_front()
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().expect("outbox").pdus.is_empty()
    }

    pub fn counts(&self) -> PduCounts {
        self.0.lock().expect("outbox").counts
    }
}

impl PduSender for Outbox {
    fn send_pdu(
        &self,
        kind: PduType,
        directive: Option<FileDirectiveType>,
        raw: &[u8],
    ) -> Result<(), GenericSendError> {
        let mut q = self.0.lock().expect("outbox");
        q.counts.count(kind, directive);
        q.pdus.push_back((raw.to_vec(), kind == PduType::FileData));
        Ok(())
    }
}

/// The PDUs one after another in `block` (a carrier that joins them, as an LTP block of
/// several): each as long as its header says; a cut or garbled tail is left out.
pub fn split_pdus(block: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = block;
    while let Ok((h, _)) = spacepackets::cfdp::pdu::PduHeader::from_bytes(rest) {
        let n = h.pdu_len();
        if n == 0 || n > rest.len() {
            break;
        }
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::split_pdus;
    use spacepackets::cfdp::pdu::eof::EofPdu;
    use spacepackets::cfdp::pdu::{CommonPduConfig, PduHeader, WritablePduPacket};

    #[test]
    fn a_block_of_pdus_splits_at_each_headers_length_and_drops_a_cut_tail() {
        let header = PduHeader::new_for_file_directive(CommonPduConfig::default(), 0);
        let eof = EofPdu::new_no_error(header, 0x1234_5678, 1000)
            .to_vec()
            .unwrap();
        let mut block = eof.repeat(3);
        assert_eq!(split_pdus(&block), vec![&eof[..], &eof[..], &eof[..]]);
        block.truncate(block.len() - 1);
        assert_eq!(split_pdus(&block).len(), 2, "the cut third is left out");
        assert!(split_pdus(&[0xff; 3]).is_empty());
    }
}
