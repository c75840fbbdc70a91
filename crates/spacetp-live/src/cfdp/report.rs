//! What a live CFDP entity reports at its stop (JSON): each transaction it sent and
//! received, how it ended (CFDP's condition code, delivery, file status) with the SHA-256
//! of the file at both ends, and the PDUs, timer expiries and faults behind it.

use serde::Serialize;
use spacetp_cfdp::outbox::PduCounts;
use spacetp_cfdp::EntityStats;
use std::collections::BTreeMap;

/// How one transaction went at this end.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Transaction {
    /// The peer entity, and the transaction's sequence number (from the sender).
    pub peer: u16,
    pub seq: u64,
    /// The file here (the source sent, or where the received one was written), and its
    /// name at the receiver.
    pub file: Option<String>,
    pub name: String,
    pub bytes: u64,
    /// SHA-256 of the file here: the source's; a received file's once complete.
    pub sha256: Option<String>,
    /// The transaction's end: CFDP's condition code ("NoError", "NakLimitReached"...),
    /// whether the file was delivered complete, and its status ("Retained"...). None while
    /// it runs (at a stop by signal or duration).
    pub condition: Option<String>,
    pub complete: bool,
    pub file_status: Option<String>,
    /// Seconds since this entity started at the transaction's first PDU and at its end.
    pub began_s: f64,
    pub ended_s: Option<f64>,
    /// PDUs this end produced, by kind (file data counts repairs).
    pub pdus: PduCounts,
    /// Check-limit, NAK, positive-ACK and inactivity timer expiries here.
    pub timer_expiries: BTreeMap<&'static str, u64>,
    pub faults: BTreeMap<String, u64>,
    /// PDUs the handler refused.
    pub refused: u64,
}

impl Transaction {
    /// The entity's counters and, once said, the transaction's end.
    pub fn set_stats(&mut self, st: &EntityStats) {
        self.set_counts(st);
        if let Some(f) = &st.finished {
            self.condition = Some(f.condition.clone());
            self.complete = f.complete;
            self.file_status = Some(f.file_status.clone());
        }
    }

    /// The entity's counters only (PDUs, timer expiries, faults added to those noted here).
    pub fn set_counts(&mut self, st: &EntityStats) {
        self.pdus = st.pdus;
        let names = ["check_limit", "nak", "positive_ack", "inactivity"];
        self.timer_expiries = names.into_iter().zip(st.timer_expiries).collect();
        self.faults.extend(st.faults.clone());
        self.refused = st.refused;
    }

    /// Whether the file arrived whole and checked (a sender: as the receiver's Finished
    /// PDU said, or, in class 1 without closure, as far as the sender can tell).
    pub fn succeeded(&self) -> bool {
        self.complete && self.condition.as_deref() == Some("NoError")
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct CfdpReport {
    pub entity: u16,
    pub elapsed_s: f64,
    /// Why it stopped: "sent", "received", "sent and received", "duration", "signal".
    pub stopped: String,
    pub sent: Vec<Transaction>,
    pub received: Vec<Transaction>,
    /// PDUs sent and received (datagrams over UDP, bundles over BP), and their bytes.
    pub datagrams_out: u64,
    pub bytes_out: u64,
    pub datagrams_in: u64,
    pub bytes_in: u64,
    /// Datagrams that were no CFDP PDU, or for no transaction of this entity.
    pub datagrams_ignored: u64,
    /// Over BP: the report of the node the entity ran on (its bundles, LTP spans).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bp: Option<crate::dtn::DtnReport>,
}

impl CfdpReport {
    /// Transactions (sent or received) that ended without the file, or had not ended.
    pub fn failures(&self) -> usize {
        let sent = self.sent.iter().filter(|t| !t.succeeded()).count();
        sent + self.received.iter().filter(|t| !t.succeeded()).count()
    }
}
