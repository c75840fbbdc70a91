//! Export (sending) sessions: RFC 5326 sections 6.1, 6.2, 6.7, 6.12, 6.13, 6.15-6.19 as
//! ION's libltpP.c carries them out (handleRS, ltpResendCheckpoint, cancelSessionBySender,
//! handleCR, handleCAS).
//!
//! Where ION and the RFC differ, ION is followed:
//! - Reception claims are merged across reports (ION keeps the session's claims list); the
//!   data resent for a report is what lies within the report's bounds and no claim so far
//!   has covered (RFC 6.13 looks at the one report).
//! - The number of checkpoints a session may issue is bounded (ION's maxCheckpoints, from
//!   getMaxReports); past it the session is canceled with RLEXC, not RXMTCYCEXC.
//! - A report for a recently closed session is still acknowledged (ION's
//!   acknowledgeLateReport, CLOSED_EXPORTS_ENABLED), so a receiver whose final RA was lost
//!   closes instead of canceling.

use std::collections::BTreeSet;

use spacetp_proto::Time;

use crate::config::derived_max_cycles;
use crate::event::{CanceledBy, Event, Limit};
use crate::ranges::RangeSet;
use crate::shared::{ClosedExport, Shared};
use crate::span::aggregation::Block;
use crate::span::{EndMark, Out, Span};
use crate::timer::{Timer, TimerRef};
use crate::wire::{CancelReason, ReportSegment, SegmentType};

/// A checkpoint as it was first sent: sent again as is on its timer (RFC 5326 section
/// 3.2.1: "its serial number MUST be the same").
#[derive(Clone, Debug)]
pub(crate) struct Checkpoint {
    pub serial: u64,
    pub report: u64,
    pub offset: u64,
    pub len: u64,
    pub kind: SegmentType,
    pub timer: Timer,
}

#[derive(Clone, Debug)]
pub(crate) enum ExportState {
    Active,
    /// Canceled here; the CS waits for its CAS.
    Canceling {
        reason: CancelReason,
        timer: Timer,
    },
}

pub(crate) struct ExportSession {
    pub block: Block,
    /// What the receiver's reports have claimed, merged.
    pub claims: RangeSet,
    pub checkpoints: Vec<Checkpoint>,
    /// Serial numbers of the reports applied (a repeat is only acknowledged).
    pub reports_seen: BTreeSet<u64>,
    pub last_checkpoint_serial: u64,
    /// The serial of the checkpoint that ends the first transmission.
    pub first_checkpoint_serial: u64,
    pub checkpoints_issued: u32,
    pub max_cycles: u32,
    pub eob_sent: bool,
    pub red_done: bool,
    pub state: ExportState,
}

impl ExportSession {
    pub(crate) fn cancel_timer_mut(&mut self) -> Option<&mut Timer> {
        match &mut self.state {
            ExportState::Canceling { timer, .. } => Some(timer),
            ExportState::Active => None,
        }
    }
    pub(crate) fn is_active(&self) -> bool {
        matches!(self.state, ExportState::Active)
    }
    fn green_done(&self) -> bool {
        self.block.red_len == self.block.len || self.eob_sent
    }
}

impl Span {
    /// Opens an export session for a closed block and queues its first transmission: the
    /// red part ending in a checkpoint (EORP, and EOB without green data), then the green
    /// part ending in a green EOB (RFC 5326 section 6.1; ION's ltpmeter).
    pub(crate) fn start_export(&mut self, sh: &mut Shared, block: Block, waited: Time) {
        let session = sh.new_session_number();
        let first_serial = sh.rng.serial();
        let max_cycles = self.cfg.max_retransmission_cycles.unwrap_or_else(|| {
            derived_max_cycles(block.red_len, sh.cfg.max_ber, self.cfg.max_segment_size.0)
        });
        if block.red_len > 0 {
            self.data.push_back(Out::Data {
                session,
                start: 0,
                end: block.red_len,
                mark: EndMark::Checkpoint {
                    serial: first_serial,
                    report: 0,
                },
                retransmission: false,
            });
        }
        if block.len > block.red_len {
            self.data.push_back(Out::Data {
                session,
                start: block.red_len,
                end: block.len,
                mark: EndMark::Eob,
                retransmission: false,
            });
        }
        sh.events.push_back(Event::ExportStarted {
            peer: self.peer,
            session,
            client_service_id: block.client_service_id,
            length: block.len,
            red_length: block.red_len,
            waited,
        });
        self.stats.export_sessions_started += 1;
        if block.red_len > 0 {
            self.open_exports += 1;
        }
        sh.export_index.insert(session, self.peer);
        self.exports.insert(
            session,
            ExportSession {
                block,
                claims: RangeSet::new(),
                checkpoints: Vec::new(),
                reports_seen: BTreeSet::new(),
                last_checkpoint_serial: first_serial,
                first_checkpoint_serial: first_serial,
                checkpoints_issued: 1,
                max_cycles,
                eob_sent: false,
                red_done: false,
                state: ExportState::Active,
            },
        );
    }

    /// A report segment for one of our sessions (RFC 5326 section 6.13; ION's handleRS).
    pub(crate) fn on_report(
        &mut self,
        sh: &mut Shared,
        now: Time,
        session: u64,
        rs: &ReportSegment,
    ) {
        self.stats.reports_received += 1;
        let Some(s) = self.exports.get_mut(&session).filter(|s| s.is_active()) else {
            return;
        };
        // Acknowledge first, whatever follows (RFC 6.13).
        self.ctrl.push_back(Out::ReportAck {
            session,
            serial: rs.report_serial,
        });
        if !s.reports_seen.insert(rs.report_serial) {
            return;
        }
        if rs.checkpoint_serial != 0 {
            match s
                .checkpoints
                .iter_mut()
                .find(|c| c.serial == rs.checkpoint_serial)
            {
                Some(cp) => cp.timer.stop(),
                // A report citing no checkpoint of ours is erroneous (ION ignores it).
                None => return,
            }
        }
        if rs.upper_bound > s.block.red_len
            || rs.lower_bound >= rs.upper_bound
            || rs.claims.is_empty()
        {
            return;
        }
        let first = rs.checkpoint_serial == s.first_checkpoint_serial;
        if first {
            self.stats.first_report_scope_bytes += rs.upper_bound - rs.lower_bound;
        }
        for c in rs.claims.iter() {
            s.claims.insert(c.offset, c.end());
            if first {
                self.stats.first_report_claimed_bytes += c.length;
            }
        }
        if s.claims.contains(0, s.block.red_len) {
            self.stats.positive_reports_received += 1;
            s.red_done = true;
            for cp in &mut s.checkpoints {
                cp.timer.stop();
            }
            if s.green_done() {
                self.complete_export(sh, now, session);
            }
            return;
        }
        if s.checkpoints_issued >= s.max_cycles {
            let limit = Limit::Cycles { max: s.max_cycles };
            self.cancel_export(
                sh,
                now,
                session,
                CancelReason::RetransmissionLimit,
                Some(limit),
            );
            return;
        }
        let gaps = s.claims.gaps(rs.lower_bound, rs.upper_bound);
        let Some(&(last_start, last_end)) = gaps.last() else {
            return;
        };
        s.last_checkpoint_serial += 1;
        s.checkpoints_issued += 1;
        let serial = s.last_checkpoint_serial;
        for &(start, end) in &gaps[..gaps.len() - 1] {
            self.data.push_back(Out::Data {
                session,
                start,
                end,
                mark: EndMark::None,
                retransmission: true,
            });
        }
        self.data.push_back(Out::Data {
            session,
            start: last_start,
            end: last_end,
            mark: EndMark::Checkpoint {
                serial,
                report: rs.report_serial,
            },
            retransmission: true,
        });
    }

    /// A checkpoint's timer ran out (RFC 5326 section 6.7; ION's ltpResendCheckpoint).
    pub(crate) fn on_checkpoint_timer(
        &mut self,
        sh: &mut Shared,
        now: Time,
        at: Time,
        session: u64,
        serial: u64,
    ) {
        let max = self.max_timeouts;
        let Some(s) = self
            .exports
            .get_mut(&session)
            .filter(|s| s.is_active() && !s.red_done)
        else {
            return;
        };
        let Some(cp) = s.checkpoints.iter_mut().find(|c| c.serial == serial) else {
            return;
        };
        if !cp.timer.is_due(at) {
            return;
        }
        cp.timer.stop();
        if cp.timer.expirations >= max {
            self.cancel_export(
                sh,
                now,
                session,
                CancelReason::RetransmissionLimit,
                Some(Limit::Timeouts { max }),
            );
            return;
        }
        cp.timer.expirations += 1;
        self.data.push_back(Out::Checkpoint { session, serial });
    }

    /// Cancels an export session here (RFC 5326 section 6.19): a CS is queued, the client
    /// gets its SDUs back, and the session no longer counts against the window.
    pub(crate) fn cancel_export(
        &mut self,
        sh: &mut Shared,
        now: Time,
        session: u64,
        reason: CancelReason,
        limit: Option<Limit>,
    ) {
        let Some(s) = self.exports.get_mut(&session).filter(|s| s.is_active()) else {
            return;
        };
        s.state = ExportState::Canceling {
            reason,
            timer: Timer::new(),
        };
        let sdus = std::mem::take(&mut s.block.sdus);
        let red = s.block.red_len > 0;
        let client_service_id = s.block.client_service_id;
        self.ctrl
            .push_back(Out::CancelFromSender { session, reason });
        self.stats.export_canceled_locally.add(reason);
        sh.events.push_back(Event::ExportCanceled {
            peer: self.peer,
            session,
            client_service_id,
            reason,
            by: CanceledBy::Local,
            limit,
            sdus,
        });
        if red {
            self.open_exports -= 1;
            self.start_waiting(sh, now);
        }
    }

    /// The CS's timer ran out (RFC 5326 section 6.16; ION's ltpResendXmitCancel).
    pub(crate) fn on_export_cancel_timer(&mut self, sh: &mut Shared, at: Time, session: u64) {
        let max = self.max_timeouts;
        let Some(s) = self.exports.get_mut(&session) else {
            return;
        };
        let ExportState::Canceling { reason, timer } = &mut s.state else {
            return;
        };
        if !timer.is_due(at) {
            return;
        }
        timer.stop();
        if timer.expirations >= max {
            self.exports.remove(&session);
            sh.export_index.remove(&session);
            return;
        }
        timer.expirations += 1;
        let reason = *reason;
        self.ctrl
            .push_back(Out::CancelFromSender { session, reason });
    }

    /// A CAS: our cancellation is acknowledged (RFC 5326 section 6.18).
    pub(crate) fn on_cancel_ack_to_sender(&mut self, sh: &mut Shared, session: u64) {
        self.stats.cancel_acks_received += 1;
        if self.exports.get(&session).is_some_and(|s| !s.is_active()) {
            self.exports.remove(&session);
            sh.export_index.remove(&session);
        }
    }

    /// A CR: the receiver canceled (RFC 5326 section 6.19; ION's handleCR). Always
    /// acknowledged with a CAR.
    pub(crate) fn on_cancel_from_receiver(
        &mut self,
        sh: &mut Shared,
        now: Time,
        session: u64,
        reason: CancelReason,
    ) {
        self.stats.cancel_segments_received += 1;
        self.ctrl.push_back(Out::CancelAckToReceiver { session });
        let Some(mut s) = self.exports.remove(&session) else {
            return;
        };
        sh.export_index.remove(&session);
        if !s.is_active() {
            return;
        }
        self.stats.export_canceled_by_peer.add(reason);
        sh.events.push_back(Event::ExportCanceled {
            peer: self.peer,
            session,
            client_service_id: s.block.client_service_id,
            reason,
            by: CanceledBy::Peer,
            limit: None,
            sdus: std::mem::take(&mut s.block.sdus),
        });
        if s.block.red_len > 0 {
            self.open_exports -= 1;
            self.start_waiting(sh, now);
        }
    }

    /// The red part is acknowledged and the green part sent (RFC 5326 section 6.12): the
    /// session closes, its number is kept a while to acknowledge late reports.
    pub(crate) fn complete_export(&mut self, sh: &mut Shared, now: Time, session: u64) {
        let Some(s) = self.exports.remove(&session) else {
            return;
        };
        sh.export_index.remove(&session);
        self.stats.export_sessions_completed += 1;
        sh.events.push_back(Event::ExportCompleted {
            peer: self.peer,
            session,
            client_service_id: s.block.client_service_id,
        });
        sh.note_closed_export(
            session,
            ClosedExport {
                peer: self.peer,
                until: now + self.retention(),
                answers_left: self.max_timeouts,
            },
        );
        if s.block.red_len > 0 {
            self.open_exports -= 1;
            self.start_waiting(sh, now);
        }
    }

    /// The green EOB has left: a session whose red part is done (or absent) is complete.
    pub(crate) fn on_eob_sent(&mut self, sh: &mut Shared, now: Time, session: u64) {
        let Some(s) = self.exports.get_mut(&session) else {
            return;
        };
        s.eob_sent = true;
        if s.is_active() && (s.red_done || s.block.red_len == 0) {
            self.complete_export(sh, now, session);
        }
    }

    /// The client gives up a session (RFC 5326 section 4.2, cancellation request).
    pub(crate) fn user_cancel_export(&mut self, sh: &mut Shared, now: Time, session: u64) -> bool {
        let known = self.exports.get(&session).is_some_and(|s| s.is_active());
        if known {
            self.cancel_export(sh, now, session, CancelReason::UserCanceled, None);
        }
        known
    }

    /// The timer behind `TimerRef::Checkpoint` of `session`.
    pub(crate) fn checkpoint_timer_ref(&self, session: u64, serial: u64) -> TimerRef {
        TimerRef::Checkpoint {
            peer: self.peer,
            session,
            serial,
        }
    }
}
