//! How the connection drives RACK-TLP (`rack.rs`, RFC 8985) when `recovery = "rack"` and
//! SACK was negotiated: every ACK updates RACK and runs its loss detection (arming the
//! reordering timer for segments whose window has not ended), a loss it marks starts
//! recovery at once (Linux `tcp_time_to_recover`), and the loss probe is armed while data is
//! outstanding in the open state. A probe that repaired a loss reduces the window as a
//! fast recovery would (Linux `tcp_process_tlp_ack`).

use super::rack::{Probe, ProbeOutcome};
use super::recovery::LossRecovery;
use super::timer::Timer;
use super::Connection;
use crate::time::Time;

impl Connection {
    fn rack_active(&self) -> bool {
        self.rack.is_some() && self.options.sack
    }

    /// RFC 2883 section 4: the first SACK block (`sacks`, stream positions) is a D-SACK
    /// when it lies below the cumulative ACK or inside the second block. Returns its end.
    fn dsack_end(ack: u64, sacks: &[(u64, u64)]) -> Option<u64> {
        let &(l, r) = sacks.first()?;
        let inside_second = sacks.get(1).is_some_and(|&(l2, r2)| l2 <= l && r <= r2);
        (r <= ack || inside_second).then_some(r)
    }

    /// Before the ACK's other processing: RACK learns what it delivered, the probe's answer
    /// is read, and losses are marked.
    pub(super) fn rack_on_ack(&mut self, now: Time, ack: u64, sacks: &[(u64, u64)], len: u32) {
        if !self.rack_active() {
            return;
        }
        let dsack_end = Self::dsack_end(ack, sacks);
        let min_rtt = self.rtt.min_rtt();
        let dupack_without_sack = ack == self.snd_una && len == 0 && sacks.is_empty();
        let Some(rack) = &mut self.rack else { return };
        rack.on_ack(ack, sacks, now, min_rtt);
        match rack.on_probe_ack(ack, dsack_end, dupack_without_sack) {
            ProbeOutcome::RepairedLoss => self.on_probe_repaired_loss(now),
            ProbeOutcome::NoLoss | ProbeOutcome::Pending => {}
        }
        self.rack_detect(now, dsack_end.is_some());
    }

    /// RFC 8985 steps 4 and 5: the reordering window, then the losses; the reordering timer
    /// waits for the next segment's window to end.
    fn rack_detect(&mut self, now: Time, dsack: bool) {
        let in_recovery = self.recovery.in_recovery();
        let sacked_segments = self.board.sacked_bytes() / self.win.mss.max(1);
        let srtt = self.rtt.srtt().unwrap_or(self.rtt.rto());
        let min_rtt = self.rtt.min_rtt().unwrap_or(srtt);
        let (una, nxt, dupthresh) = (self.snd_una, self.snd_nxt, self.cfg.dupack_threshold);
        let Some(rack) = &mut self.rack else { return };
        let reo_wnd = rack.reo_wnd(
            dsack,
            una,
            nxt,
            in_recovery,
            sacked_segments,
            dupthresh,
            srtt,
            min_rtt,
        );
        let wait = if rack.has_delivery() {
            rack.detect_loss(now, reo_wnd)
        } else {
            0
        };
        if wait > 0 {
            self.timers.set(Timer::RackReorder, now + wait);
        } else {
            self.timers.stop(Timer::RackReorder);
        }
    }

    /// After the ACK's processing: a loss RACK marked starts recovery if none runs, and the
    /// loss probe is re-armed. `was_recovering`: in recovery before this ACK.
    pub(super) fn rack_after_ack(&mut self, now: Time, was_recovering: bool) {
        if !self.rack_active() {
            return;
        }
        if was_recovering && !self.recovery.in_recovery() {
            if let Some(r) = &mut self.rack {
                r.on_recovery_exit();
            }
        }
        self.rack_enter_recovery(now);
        self.arm_tlp(now);
    }

    /// Start recovery for what RACK marked lost (the dupack path enters through the same
    /// policy check; a cumulative ACK or the reordering timer come here).
    fn rack_enter_recovery(&mut self, now: Time) {
        if self.recovery.in_recovery() || self.rack.as_ref().is_none_or(|r| r.lost_bytes() == 0) {
            return;
        }
        let dupacks = self.dupacks;
        let (recovery, mut ctx) = self.recovery_ctx(now);
        if recovery.on_dupack(&mut ctx, dupacks, false) {
            self.stats.fast_retransmits += 1;
            self.timers.stop(Timer::Tlp);
        }
    }

    pub(super) fn on_rack_timer(&mut self, now: Time) {
        self.timers.stop(Timer::RackReorder);
        if !self.rack_active() {
            return;
        }
        self.rack_detect(now, false);
        self.rack_enter_recovery(now);
    }

    /// Section 7.2: arm the probe while data is outstanding, no probe is unanswered and the
    /// sender is not recovering.
    pub(super) fn arm_tlp(&mut self, now: Time) {
        let flight = self.snd_max - self.snd_una;
        let idle = self.rack.as_ref().is_none_or(|r| r.probe().is_none());
        if !self.rack_active() || flight == 0 || !idle || self.recovery.in_recovery() {
            self.timers.stop(Timer::Tlp);
            return;
        }
        let pto = super::rack::Rack::pto(
            self.rtt.srtt(),
            flight,
            self.win.mss,
            now,
            self.timers.get(Timer::Rto),
        );
        self.timers.set(Timer::Tlp, now + pto);
    }

    /// Section 7.3: send one new segment if the peer's window allows, else resend the last.
    pub(super) fn on_tlp_timer(&mut self, now: Time) {
        self.timers.stop(Timer::Tlp);
        let flight = self.snd_max - self.snd_una;
        if !self.rack_active() || flight == 0 || self.recovery.in_recovery() {
            return;
        }
        if self.rack.as_ref().is_some_and(|r| r.probe().is_some()) {
            return;
        }
        let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let new_data = self.snd_nxt < self.data_end && rwnd_room >= self.seg_size as u64;
        let snd_una = self.snd_una;
        let Some(rack) = &mut self.rack else { return };
        rack.due_probe = match (new_data, rack.last_segment_start()) {
            (true, _) => Some(None),
            (false, Some(pos)) => Some(Some(pos.max(snd_una))),
            (false, None) => return,
        };
        self.stats.loss_probes += 1;
        self.restart_rto(now);
    }

    /// The probe left: remember it (section 7.3 TLP.end_seq) and restart the RTO.
    pub(super) fn on_probe_sent(&mut self, now: Time, retransmission: bool) {
        let end_seq = self.snd_max;
        if let Some(r) = &mut self.rack {
            r.set_probe(Probe {
                end_seq,
                is_retrans: retransmission,
            });
        }
        self.restart_rto(now);
    }

    /// Section 7.4.2: the probe repaired a loss: the congestion controller reacts as to a
    /// fast retransmit (cwnd = the new ssthresh), unless it sets cwnd itself.
    fn on_probe_repaired_loss(&mut self, now: Time) {
        self.stats.loss_probe_recoveries += 1;
        let flight = self.snd_max - self.snd_una;
        self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, now);
        if !self.cc.controls_window() {
            self.win.cwnd = self.win.ssthresh;
        }
    }
}
