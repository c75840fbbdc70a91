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
