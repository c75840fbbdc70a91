//! Undoing a spurious retransmission timeout (`rto_undo`), as Linux does with timestamps
//! (`tcp_try_undo_loss` after `tcp_may_undo` / `tcp_packet_delayed`, tcp_input.c; the Eifel
//! detection of RFC 3522): when the first ACK of new data after a timeout echoes a timestamp
//! older than our first retransmission, the original segments arrived and only their ACKs were
//! late or lost. The window and ssthresh come back (`tcp_undo_cwnd_reduction`), no segment
//! stays marked lost, and what was sent before the timeout counts as in flight again instead
//! of being sent a second time.
//!
//! On a long outage this matters both ways: the data sent just before it got through, so the
//! timeout that fires during it is "spurious" and is undone, and everything sent into the
//! outage is then believed in flight until a loss probe or RACK says otherwise.

use super::output::ts_clock;
use super::recovery::LossRecovery;
use super::Connection;
use spacetp_wire::TcpOptions;

use crate::time::Time;

/// What a timeout changed, kept until the first ACK of new data after it.
pub(super) struct RtoUndo {
    prior_cwnd: u64,
    prior_ssthresh: u64,
    snd_nxt: u64,
    /// Our timestamp on the first retransmission (`retrans_stamp`).
    retransmitted_at: u32,
}

impl Connection {
    /// A timeout is about to reduce the window: remember what an undo restores. Only the
    /// first timeout of an episode counts (Linux keeps `prior_ssthresh` and `retrans_stamp`
    /// across the backoffs). `prior_ssthresh` is `tcp_current_ssthresh`: outside recovery at
    /// least three quarters of cwnd.
    pub(super) fn note_timeout_for_undo(&mut self, now: Time) {
        if !self.cfg.rto_undo || !self.options.timestamps || self.rto_undo.is_some() {
            return;
        }
        let (cwnd, ssthresh) = (self.win.cwnd, self.win.ssthresh);
        let prior_ssthresh = if self.recovery.in_recovery() {
            ssthresh
        } else {
            ssthresh.max(cwnd / 2 + cwnd / 4)
        };
        self.rto_undo = Some(RtoUndo {
            prior_cwnd: cwnd,
            prior_ssthresh,
            snd_nxt: self.snd_nxt,
            retransmitted_at: ts_clock(now),
        });
    }

    /// The first ACK of new data since a timeout: undo it if the echo shows the original
    /// segments arrived (the echo predates the first retransmission).
    pub(super) fn undo_timeout_if_spurious(&mut self, opts: &TcpOptions) {
        let Some(u) = self.rto_undo.take() else {
            return;
        };
        let Some(ts) = opts.timestamps else { return };
        if (ts.ecr.wrapping_sub(u.retransmitted_at) as i32) >= 0 {
            return; // the retransmission was needed
        }
        self.stats.spurious_timeouts += 1;
        self.cc
            .undo_cwnd(&mut self.win, u.prior_cwnd, u.prior_ssthresh);
        self.snd_nxt = self.snd_nxt.max(u.snd_nxt.min(self.snd_max));
        self.recovery.on_timeout_undone();
        if let Some(r) = &mut self.rack {
            r.on_timeout_undone();
        }
        if let Some(ctl) = &mut self.control {
            ctl.on_timeout_undone();
        }
    }
}
