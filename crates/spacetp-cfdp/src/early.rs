//! A receiver's PDUs that come before the transaction's Metadata PDU, kept here around
//! cfdp-rs 0.3's destination handler, which
//!
//! - refuses the PDUs of a class 1 transaction before its Metadata PDU, but starts the
//!   transaction on an EOF that comes first (and refuses the EOF): the file data that
//!   follow are then written to no file (a FilestoreRejection each, the file lost);
//! - in class 2 cannot write file data before it (no file is open: a FilestoreRejection
//!   each);
//! - in class 2 asks for the missing Metadata PDU once, in the NAK the first file data
//!   triggers, and never again (no NAK timer runs for it);
//! - in class 2 ends the transaction "NoError" without the file when EOF comes while the
//!   Metadata PDU is still missing.
//!
//! A carrier that reorders (LTP blocks completing out of order) or a lost Metadata PDU then
//! loses the file. Here the PDUs that come before the Metadata PDU are kept (in class 1
//! all of them, the handler sees none; in class 2 all but a first file data PDU, which
//! lets the handler start and ask) and handed to the handler once the Metadata PDU
//! arrived, and in
//! class 2 the request for the Metadata PDU (a NAK of the segment 0-0) is sent again at
//! each NAK timer expiry up to the NAK limit.

use spacepackets::cfdp::pdu::file_data::FileDataPdu;
use spacepackets::cfdp::pdu::nak::NakPduCreator;
use spacepackets::cfdp::pdu::{CommonPduConfig, FileDirectiveType, PduHeader, WritablePduPacket};
use spacepackets::cfdp::PduType;
use spacetp_proto::Time;

/// Whether `raw` is an EOF PDU.
fn is_eof(raw: &[u8]) -> bool {
    match PduHeader::from_bytes(raw) {
        Ok((h, n)) => {
            h.pdu_type() == PduType::FileDirective
                && raw.get(n) == Some(&(FileDirectiveType::EofPdu as u8))
        }
        Err(_) => false,
    }
}

/// PDUs kept at most (bytes).
const MOST: usize = 64 << 20;

pub struct BeforeMetadata {
    pdus: Vec<Vec<u8>>,
    bytes: usize,
    /// Class 2: the EOF is held and the Metadata PDU asked for again.
    acknowledged: bool,
    nak_period: Time,
    nak_limit: u32,
    /// The transaction's header (from the first PDU), the file's end as far as seen, when
    /// the Metadata PDU is next asked for, and how often it was.
    conf: Option<CommonPduConfig>,
    end: u64,
    ask_at: Option<Time>,
    asked: u32,
}

impl BeforeMetadata {
    pub fn new(acknowledged: bool, nak_period: Time, nak_limit: u32) -> BeforeMetadata {
        BeforeMetadata {
            pdus: Vec::new(),
            bytes: 0,
            acknowledged,
            nak_period,
            nak_limit,
            conf: None,
            end: 0,
            ask_at: None,
            asked: 0,
        }
    }

    /// A PDU came while the Metadata PDU is missing; true if it is held here (kept, the
    /// handler not to see it yet). In class 2 the handler sees only the first, if it is
    /// file data (it starts the transaction and asks for the metadata); later file data
    /// would be refused (no file open) and an EOF would end the transaction without the
    /// file. In class 1 all are held: the handler must not see an EOF first.
    pub fn seen(&mut self, now: Time, raw: &[u8]) -> bool {
        let Ok((h, n)) = PduHeader::from_bytes(raw) else {
            return false;
        };
        let directive = (h.pdu_type() == PduType::FileDirective)
            .then(|| raw.get(n))
            .flatten();
        if directive == Some(&(FileDirectiveType::MetadataPdu as u8)) {
            return false; // the one it waits for
        }
        let first = self.conf.is_none();
        self.conf.get_or_insert(*h.common_pdu_conf());
        let file_data = h.pdu_type() == PduType::FileData;
        if let Ok(fd) = FileDataPdu::from_bytes(raw) {
            self.end = self.end.max(fd.offset() + fd.file_data().len() as u64);
        }
        if !self.acknowledged {
            return self.keep(raw);
        }
        // File data first: the handler asks for the metadata in its NAK; anything else
        // first (all before it lost): asked for here, now.
        let ask = if first && file_data {
            now + self.nak_period
        } else {
            now
        };
        self.ask_at.get_or_insert(ask);
        !(first && file_data) && self.keep(raw)
    }

    /// Keep `raw` to hand again after the Metadata PDU; false if there is no room.
    pub fn keep(&mut self, raw: &[u8]) -> bool {
        if self.bytes + raw.len() > MOST {
            return false;
        }
        self.bytes += raw.len();
        self.pdus.push(raw.to_vec());
        true
    }

    /// The Metadata PDU arrived: what was kept, in the order it came but an EOF last (all
    /// of it has arrived; the EOF closes the file the sender sent before it, and handed
    /// first it would fail the checksum of data the handler is about to get).
    pub fn take_all(&mut self) -> Vec<Vec<u8>> {
        self.bytes = 0;
        self.ask_at = None;
        let mut pdus = std::mem::take(&mut self.pdus);
        pdus.sort_by_key(|p| is_eof(p)); // stable: the order of arrival otherwise
        pdus
    }

    /// When the Metadata PDU is next asked for.
    pub fn ask_at(&self) -> Option<Time> {
        self.ask_at
    }

    /// At `now`: the NAK asking for the Metadata PDU if one is due, or Err once the NAK
    /// limit is reached (the transaction's fault).
    pub fn due(&mut self, now: Time) -> Result<Option<Vec<u8>>, ()> {
        match self.ask_at {
            Some(t) if t <= now => {}
            _ => return Ok(None),
        }
        if self.asked >= self.nak_limit {
            self.ask_at = None;
            return Err(());
        }
        self.asked += 1;
        self.ask_at = Some(now + self.nak_period);
        let Some(conf) = self.conf else {
            return Ok(None);
        };
        let header = PduHeader::new_for_file_directive(conf, 0);
        let end = self.end.min(u32::MAX as u64) as u32;
        let nak = NakPduCreator::new_normal_file_size(header, 0, end, &[(0, 0)])
            .ok()
            .and_then(|p| p.to_vec().ok());
        Ok(nak)
    }

    pub fn asked(&self) -> u32 {
        self.asked
    }
}
