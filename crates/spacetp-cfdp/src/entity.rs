//! The two CFDP entities of a file transfer, sans-IO: the caller hands in the PDUs that
//! arrive and the time, takes out the PDUs to send (file data one at a time, so it paces
//! them), and wakes each entity at its next timer. cfdp-rs's handlers do the protocol.
//! Here: what both entities keep alike (their outbox, events, files, clock, inactivity
//! limit) and what they report; the sending entity is `sender.rs`, the receiving one
//! `receiver.rs`.

use crate::clock::{SimCountdown, TimerKind, Timers};
use crate::events::{Events, Finished};
use crate::filestore::Files;
use crate::outbox::{Outbox, PduCounts};
use crate::settings::CfdpSettings;
use cfdp::time::Countdown;
use cfdp::{IndicationConfig, LocalEntityConfig};
use spacepackets::util::UnsignedByteFieldU16;
use spacetp_proto::Time;

/// The name the file has at both ends (in the simulator's in-memory filestore).
pub(crate) const SOURCE_FILE: &str = "/send/file";
pub(crate) const DEST_FILE: &str = "/recv/file";

/// What one entity did: PDUs it produced, timer expiries, PDUs it could not take, its
/// transaction's end and faults.
#[derive(Clone, Debug, Default)]
pub struct EntityStats {
    pub pdus: PduCounts,
    /// Check-limit, NAK, positive-ACK and inactivity timer expiries.
    pub timer_expiries: [u64; 4],
    /// PDUs the handler refused (out of place, malformed, for another transaction).
    pub refused: u64,
    /// Times its timers were suspended (link outages).
    pub suspensions: u64,
    /// Prompts (sender) or Keep Alives (receiver) it sent, and the last progress a Keep
    /// Alive reported (sender: received; receiver: sent).
    pub prompts: u64,
    pub keep_alives: u64,
    pub reported_progress: Option<u64>,
    pub finished: Option<Finished>,
    /// Faults declared, by CFDP condition code, with how many times each.
    pub faults: std::collections::BTreeMap<String, u64>,
}

/// State both entities keep alike.
pub(crate) struct Parts {
    pub(crate) outbox: Outbox,
    pub(crate) events: Events,
    pub(crate) files: Files,
    pub(crate) timers: Timers,
    pub(crate) refused: u64,
    /// The inactivity limit, and its countdown once the transaction waits for the peer
    /// (armed by each PDU that arrives).
    pub(crate) inactivity_period: Time,
    pub(crate) inactivity: Option<SimCountdown>,
}

impl Parts {
    pub(crate) fn new(
        s: &CfdpSettings,
        local: u16,
        files: Files,
    ) -> (Parts, LocalEntityConfig<Events>) {
        let p = Parts {
            outbox: Outbox::default(),
            events: Events::default(),
            files,
            timers: Timers::new(s.check_timer.0),
            refused: 0,
            inactivity_period: s.inactivity_timeout.0,
            inactivity: None,
        };
        let local = LocalEntityConfig::new(
            UnsignedByteFieldU16::new(local).into(),
            IndicationConfig::default(),
            p.events.clone(),
        );
        (p, local)
    }

    /// The peer was heard from (or is now waited for): the inactivity limit counts anew.
    pub(crate) fn heard(&mut self) {
        match &mut self.inactivity {
            Some(c) => c.reset(),
            None => {
                let c = self
                    .timers
                    .start(self.inactivity_period, TimerKind::Inactivity);
                self.inactivity = Some(c);
            }
        }
    }

    /// The inactivity limit ran out in a transaction still open: say so (the fault is
    /// this crate's, cfdp-rs has none) and end the transaction without the file.
    pub(crate) fn inactive(&mut self) -> bool {
        let expired = self.inactivity.as_ref().is_some_and(|c| c.has_expired());
        expired && self.give_up("InactivityDetected")
    }

    /// A fault this crate declares (`condition`, a 727.0-B-5 condition code) ends a
    /// transaction still open without the file; false if it had ended.
    pub(crate) fn give_up(&mut self, condition: &str) -> bool {
        let mut log = self.events.log();
        if log.finished.is_some() {
            return false;
        }
        *log.faults.entry(condition.into()).or_default() += 1;
        log.finished = Some(Finished {
            condition: condition.into(),
            complete: false,
            file_status: "Unreported".into(),
        });
        drop(log);
        self.inactivity = None;
        true
    }

    pub(crate) fn stats(&self) -> EntityStats {
        let log = self.events.log();
        EntityStats {
            pdus: self.outbox.counts(),
            timer_expiries: self.timers.expired(),
            refused: self.refused,
            suspensions: self.timers.suspended().1,
            prompts: 0,
            keep_alives: 0,
            reported_progress: None,
            finished: log.finished.clone(),
            faults: log.faults.clone(),
        }
    }
}
