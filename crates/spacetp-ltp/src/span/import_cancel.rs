//! Cancelling an import (receiving) session: RFC 5326 sections 6.17-6.21 as ION's libltpP.c
//! carries them out (cancelSessionByReceiver, handleCS, handleCAR): by this receiver (a
//! retransmission limit, the user, a full import), by the sender (CS, answered with a CAS),
//! and the receiver's own CR resent on its timer until the sender's CAR.

use spacetp_proto::Time;

use crate::event::{CanceledBy, Event, Limit};
use crate::shared::Shared;
use crate::span::import::ImportState;
use crate::span::{Out, Span};
use crate::timer::Timer;
use crate::wire::CancelReason;

impl Span {
    /// Cancels an import session here (RFC 5326 section 6.19): a CR is queued.
    pub(crate) fn cancel_import(
        &mut self,
        sh: &mut Shared,
        _now: Time,
        number: u64,
        reason: CancelReason,
        limit: Option<Limit>,
    ) {
        let Some(s) = self.imports.get_mut(&number).filter(|s| s.is_active()) else {
            return;
        };
        s.state = ImportState::Canceling {
            reason,
            timer: Timer::new(),
        };
        s.buf = Vec::new();
        s.chunks.clear();
        self.ctrl.push_back(Out::CancelFromReceiver {
            session: number,
            reason,
        });
        self.stats.import_canceled_locally.add(reason);
        sh.events.push_back(Event::ImportCanceled {
            peer: self.peer,
            session: number,
            client_service_id: s.client_service_id,
            reason,
            by: CanceledBy::Local,
            limit,
        });
    }

    /// The CR's timer ran out (RFC 5326 section 6.16; ION's ltpResendRecvCancel).
    pub(crate) fn on_import_cancel_timer(&mut self, now: Time, at: Time, number: u64) {
        let max = self.max_timeouts;
        let Some(s) = self.imports.get_mut(&number) else {
            return;
        };
        let ImportState::Canceling { reason, timer } = &mut s.state else {
            return;
        };
        if !timer.is_due(at) {
            return;
        }
        timer.stop();
        if timer.expirations >= max {
            self.imports.remove(&number);
            self.note_closed_import(now, number);
            return;
        }
        timer.expirations += 1;
        let reason = *reason;
        self.ctrl.push_back(Out::CancelFromReceiver {
            session: number,
            reason,
        });
    }

    /// A CS: the sender canceled (RFC 5326 section 6.19; ION's handleCS). Always
    /// acknowledged with a CAS.
    pub(crate) fn on_cancel_from_sender(
        &mut self,
        sh: &mut Shared,
        now: Time,
        number: u64,
        reason: CancelReason,
    ) {
        self.stats.cancel_segments_received += 1;
        self.ctrl
            .push_back(Out::CancelAckToSender { session: number });
        let Some(s) = self.imports.remove(&number) else {
            return;
        };
        self.note_closed_import(now, number);
        if s.is_active() {
            self.stats.import_canceled_by_peer.add(reason);
            sh.events.push_back(Event::ImportCanceled {
                peer: self.peer,
                session: number,
                client_service_id: s.client_service_id,
                reason,
                by: CanceledBy::Peer,
                limit: None,
            });
        }
    }

    /// A CAR: our cancellation is acknowledged (RFC 5326 section 6.18).
    pub(crate) fn on_cancel_ack_to_receiver(&mut self, now: Time, number: u64) {
        self.stats.cancel_acks_received += 1;
        if self.imports.get(&number).is_some_and(|s| !s.is_active()) {
            self.imports.remove(&number);
            self.note_closed_import(now, number);
        }
    }

    /// The client gives up a reception (RFC 5326 section 4.2).
    pub(crate) fn user_cancel_import(&mut self, sh: &mut Shared, now: Time, number: u64) -> bool {
        let known = self.imports.get(&number).is_some_and(|s| s.is_active());
        if known {
            self.cancel_import(sh, now, number, CancelReason::UserCanceled, None);
        }
        known
    }
}
