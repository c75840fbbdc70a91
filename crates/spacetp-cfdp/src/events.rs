//! What a handler tells its user and its fault hook, kept for the caller: the transaction's
//! end (its condition and file status), faults, EOF, and how much file data arrived.

use cfdp::user::{
    CfdpUser, FileSegmentRecvdParams, MetadataReceivedParams, TransactionFinishedParams,
};
use cfdp::{FaultInfo, TransactionId, UserFaultHook};
use spacepackets::cfdp::ConditionCode;
use std::sync::{Arc, Mutex};

/// How a transaction ended, as the handler said.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// CFDP's condition code (727.0-B-5 5.2.2): "NoError", "CheckLimitReached"...
    pub condition: String,
    /// The file delivered complete (delivery code "complete").
    pub complete: bool,
    /// The file status: "Retained", "DiscardDeliberately"...
    pub file_status: String,
}

#[derive(Debug, Default)]
pub struct Log {
    pub finished: Option<Finished>,
    /// Faults declared, by condition code, and how many times each.
    pub faults: std::collections::BTreeMap<String, u64>,
    pub eof_sent: bool,
    pub eof_received: bool,
    pub metadata_received: bool,
    /// The file's name at the receiver and its size, as the Metadata PDU said.
    pub dest_file: Option<String>,
    pub file_size: Option<u64>,
    /// File data bytes received (retransmitted ones counted again).
    pub segment_bytes: u64,
}

/// The user of one handler (and its fault hook: the same log).
#[derive(Clone, Debug, Default)]
pub struct Events(pub Arc<Mutex<Log>>);

impl Events {
    pub fn log(&self) -> std::sync::MutexGuard<'_, Log> {
        self.0.lock().expect("events")
    }

    fn fault(&self, c: ConditionCode) {
        *self.log().faults.entry(format!("{c:?}")).or_default() += 1;
    }
}

impl CfdpUser for Events {
    fn transaction_indication(&mut self, _id: &TransactionId) {}

    fn eof_sent_indication(&mut self, _id: &TransactionId) {
        self.log().eof_sent = true;
    }

    fn transaction_finished_indication(&mut self, p: &TransactionFinishedParams) {
        self.log().finished = Some(Finished {
            condition: format!("{:?}", p.condition_code),
            complete: format!("{:?}", p.delivery_code) == "Complete",
            file_status: format!("{:?}", p.file_status),
        });
    }

    fn metadata_recvd_indication(&mut self, p: &MetadataReceivedParams) {
        let mut log = self.log();
        log.metadata_received = true;
        log.dest_file = Some(p.dest_file_name.to_string());
        log.file_size = Some(p.file_size);
    }

    fn file_segment_recvd_indication(&mut self, p: &FileSegmentRecvdParams) {
        self.log().segment_bytes += p.length as u64;
    }

    fn report_indication(&mut self, _id: &TransactionId) {}

    // Faults are logged once, by the fault hook below, which every fault reaches.
    fn suspended_indication(&mut self, _id: &TransactionId, _c: ConditionCode) {}

    fn resumed_indication(&mut self, _id: &TransactionId, _progress: u64) {}

    fn fault_indication(&mut self, _id: &TransactionId, _c: ConditionCode, _progress: u64) {}

    fn abandoned_indication(&mut self, _id: &TransactionId, _c: ConditionCode, _progress: u64) {}

    fn eof_recvd_indication(&mut self, _id: &TransactionId) {
        self.log().eof_received = true;
    }
}

impl UserFaultHook for Events {
    fn notice_of_suspension_cb(&mut self, f: FaultInfo) {
        self.fault(f.condition_code());
    }

    fn notice_of_cancellation_cb(&mut self, f: FaultInfo) {
        self.fault(f.condition_code());
    }

    fn abandoned_cb(&mut self, f: FaultInfo) {
        self.fault(f.condition_code());
    }

    fn ignore_cb(&mut self, f: FaultInfo) {
        self.fault(f.condition_code());
    }
}
