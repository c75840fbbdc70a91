//! Controllers that set cwnd themselves on every ACK (Linux's `cong_control` hook; BBR):
//! after loss recovery has done its part, the connection puts back the cwnd that recovery
//! changed, and tells the controller the loss state, what is in flight, what was delivered
//! and what was lost, as Linux's `tcp_cong_control` does; the controller may ask for the
//! connection to be marked application-limited. Connections with other controllers keep
//! `control` as None and pay nothing here.

use super::recovery::LossRecovery;
use super::Connection;
use crate::cc::{AckEvent, ControlInput, LossState};
use crate::time::Time;

#[derive(Debug, Default)]
pub(super) struct WindowControl {
    /// After a timeout, the loss state lasts until this position is acknowledged (Linux's
    /// `high_seq`); 0: not in it.
    loss_until: u64,
    /// Bytes deemed lost (resent) when the previous ACK was handed on.
    lost_at_last_ack: u64,
}

impl WindowControl {
    pub fn on_timeout(&mut self, snd_max: u64) {
        self.loss_until = snd_max;
    }

    /// In the loss state a timeout began (Linux's `TCP_CA_Loss`).
    pub fn in_loss(&self) -> bool {
        self.loss_until != 0
    }

    /// The timeout was spurious: the loss state ends (the controller restores its window
    /// as on leaving it).
    pub fn on_timeout_undone(&mut self) {
        self.loss_until = 0;
    }
}

impl Connection {
    /// Hand the ACK to a window-controlling controller; `cwnd_before`: cwnd before recovery
    /// processed this ACK.
    pub(super) fn control_window(&mut self, now: Time, ev: &AckEvent, cwnd_before: u64) {
        let Some(ctl) = &mut self.control else { return };
        if ctl.loss_until != 0 && self.snd_una >= ctl.loss_until {
            ctl.loss_until = 0;
        }
        let lost = self.stats.retransmitted_bytes;
        let losses = lost - ctl.lost_at_last_ack;
        ctl.lost_at_last_ack = lost;
        // Linux leaves recovery and enters the next one within the same ACK when the
        // scoreboard already shows the new first hole lost (`tcp_fastretrans_alert`), so its
        // controller never sees Open in between; here the next recovery starts on the next
        // duplicate ACK, and until then the state is reported as Linux would have it.
        let next_hole_lost = self.options.sack
            && self
                .board
                .lost_boundary(self.cfg.dupack_threshold, self.win.mss)
                > self.snd_una;
        let state = if ctl.loss_until != 0 {
            LossState::Loss
        } else if self.recovery.in_recovery() || next_hole_lost {
            LossState::Recovery
        } else {
            LossState::Open
        };
        let delivered = self.rate.as_ref().map_or(0, |r| r.delivered());
        let (recovery, ctx) = self.recovery_ctx(now);
        let in_flight = LossRecovery::flight(recovery, &ctx);
        let input = ControlInput {
            state,
            in_flight,
            acked_sacked: self.delivered_now,
            delivered,
            lost,
            losses,
            // No simulated link marks CE yet.
            ce_delivered: 0,
            has_selective_acks: self.options.sack,
        };
        self.win.cwnd = cwnd_before;
        let req = self.cc.cong_control(&mut self.win, ev, &input);
        if req.mark_app_limited {
            if let Some(rate) = &mut self.rate {
                rate.on_app_limited(in_flight);
            }
        }
    }
}
