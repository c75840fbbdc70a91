//! ACK processing: SACK and SNACK information, duplicate ACKs handed to the loss-recovery
//! policy, RTT samples (RFC 6298 and RFC 7323 RTTM), new data acknowledged, our FIN
//! acknowledged.

use super::output::ts_clock;
use super::recovery::{Ctx, LossRecovery, Policy};
use super::timer::Timer;
use super::{CloseReason, Connection, State};
use crate::cc::{AckEvent, Window};
use crate::seq::from_wire;
use crate::time::{Time, MS};
use spacetp_wire::{flags, TcpHeader, TcpOptions};

impl Connection {
    pub(super) fn on_ack(&mut self, now: Time, hdr: &TcpHeader, len: u32) {
        if self.rack.is_none() {
            return self.on_ack_inner(now, hdr, len);
        }
        let was_recovering = self.recovery.in_recovery();
        self.on_ack_inner(now, hdr, len);
        self.rack_after_ack(now, was_recovering);
    }

    fn on_ack_inner(&mut self, now: Time, hdr: &TcpHeader, len: u32) {
        let ack = from_wire(self.iss, hdr.ack, self.snd_una);
        if self.state == State::SynReceived {
            if ack < 1 {
                return;
            }
            self.state = State::Established;
            self.snd_wnd = (hdr.window as u64) << self.options.snd_wscale;
            self.take_handshake_rtt(now, &hdr.options);
            self.retries = 0;
        }
        let wnd = (hdr.window as u64) << self.options.snd_wscale;
        if ack < self.snd_una {
            return; // old ACK
        }
        if self.scps.agreed.scps && hdr.options.corruption_experienced {
            self.on_corruption_notice(now);
        }
        if self.scps.agreed.snack && !hdr.options.snacks.is_empty() {
            self.on_snack(now, ack, &hdr.options.snacks);
        }
        // Nothing outstanding, nothing acknowledged, no loss probe awaiting its answer (a
        // duplicate ACK after the probe's own says it repaired a loss): the receiving end
        // of a one-way transfer, once per data segment. No segment to SACK, time, sample or
        // mark lost.
        if ack == self.snd_una
            && self.snd_max == self.snd_una
            && hdr.options.sack.is_empty()
            && self.peach.is_none()
            && self.rack.as_ref().is_none_or(|r| r.probe().is_none())
        {
            self.snd_wnd = wnd;
            return;
        }
        // The SACK blocks as stream positions, converted once for every user of this ACK.
        let sacks = if self.options.sack {
            self.sack_positions(&hdr.options)
        } else {
            SackPositions::default()
        };
        let newly_sacked = if self.options.sack {
            self.board.add(sacks.as_slice(), self.snd_una, self.snd_max)
        } else {
            0
        };
        // RFC 6937 DeliveredData: the change in snd_una plus the change in SACKed bytes, which
        // falls by what the cumulative ACK now covers (those bytes were delivered when SACKed).
        let sacked_below = if ack > self.snd_una && self.options.sack {
            self.board.sacked_in(self.snd_una, ack)
        } else {
            0
        };
        self.delivered_now = newly_sacked + ack.saturating_sub(self.snd_una) - sacked_below;
        if self.rack.is_some() {
            self.rack_on_ack(now, ack, sacks.as_slice(), len);
        }
        if self.rate.is_some() {
            self.sample_delivery_rate(now, ack, sacks.as_slice());
        }
        let nil_ack = self.on_nil_ack(hdr);
        if ack == self.snd_una {
            let is_dup = !nil_ack
                && len == 0
                && !hdr.has(flags::FIN)
                && self.snd_max > self.snd_una
                && wnd == self.snd_wnd;
            self.snd_wnd = wnd;
            if is_dup {
                self.on_dupack(now, newly_sacked > 0);
            }
            return;
        }
        self.snd_wnd = wnd;
        self.max_snd_wnd = self.max_snd_wnd.max(wnd);
        self.widen_jump_start(now, wnd);
        self.on_new_ack(now, ack, &hdr.options);
    }

    /// A duplicate ACK: the recovery policy decides whether it starts a fast retransmit.
    fn on_dupack(&mut self, now: Time, new_sack: bool) {
        self.stats.dupacks_received += 1;
        self.dupacks += 1;
        let ev = self.ack_event(now, 0, None);
        self.cc.on_any_ack(&ev, true);
        let dupacks = self.dupacks;
        let cwnd_before = self.win.cwnd;
        let saved = self.win;
        // A SNACK that named this loss has already reduced the window once.
        let snack_episode = self.scps.agreed.snack && self.snd_una < self.scps.snack_recover;
        let (recovery, mut ctx) = self.recovery_ctx(now);
        ctx.keep_ssthresh = snack_episode;
        if recovery.on_dupack(&mut ctx, dupacks, new_sack) {
            if snack_episode {
                self.win = saved;
            } else {
                self.stats.fast_retransmits += 1;
                self.scps.snack_recover = self.snd_max;
            }
            self.quick_recovery(now, cwnd_before);
        }
        if self.corruption(now) {
            self.win = saved; // retransmit, but corruption is not congestion
        }
        if self.control.is_some() {
            self.control_window(now, &ev, cwnd_before);
        }
    }

    /// The loss-recovery policy beside its view of the sender, borrowed from disjoint fields.
    pub(super) fn recovery_ctx(&mut self, now: Time) -> (&mut Policy, Ctx<'_>) {
        let ctx = Ctx {
            win: &mut self.win,
            cc: &mut *self.cc,
            board: &self.board,
            snd_una: self.snd_una,
            snd_nxt: &mut self.snd_nxt,
            snd_max: self.snd_max,
            new_data: self.snd_max < self.data_end,
            now,
            dupthresh: self.cfg.dupack_threshold,
            delivered: self.delivered_now,
            keep_ssthresh: false,
            rack_lost: self.rack.as_ref(),
        };
        (&mut self.recovery, ctx)
    }

    /// What the recovery policy counts in flight. Outside a recovery every policy counts
    /// snd_nxt - snd_una (the contract of `LossRecovery::flight`), so the policy's view of
    /// the sender is built only during one: the output path asks on every poll.
    pub(super) fn recovery_flight(&mut self, now: Time) -> u64 {
        if !self.recovery.in_recovery() {
            return self.snd_nxt - self.snd_una;
        }
        let (recovery, ctx) = self.recovery_ctx(now);
        recovery.flight(&ctx)
    }

    /// Whether the recovery policy keeps the promises the output path relies on to skip
    /// asking it: outside a recovery it counts snd_nxt - snd_una in flight
    /// (`recovery_flight`), and when it says it may not retransmit it has nothing to
    /// retransmit (`LossRecovery::may_retransmit`). Tests check it after every event.
    #[cfg(test)]
    pub(crate) fn recovery_shortcuts_hold(&mut self, now: Time) -> bool {
        let plain = self.snd_nxt - self.snd_una;
        let (in_recovery, may) = (self.recovery.in_recovery(), self.recovery.may_retransmit());
        let (recovery, ctx) = self.recovery_ctx(now);
        (in_recovery || recovery.flight(&ctx) == plain)
            && (may || recovery.next_retransmission(&ctx).is_none())
    }

    /// The controller's view of an ACK; `flight_before` is taken before snd_una moves.
    fn ack_event(&self, now: Time, acked: u64, rtt: Option<Time>) -> AckEvent {
        AckEvent {
            now,
            acked,
            flight_before: self.snd_max - self.snd_una + acked,
            ack: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            rate: self.rate_sample,
            abc_limit: self.cfg.abc_limit,
        }
    }

    fn on_new_ack(&mut self, now: Time, ack: u64, opts: &TcpOptions) {
        let acked = ack - self.snd_una;
        let sample = self.take_rtt_samples(now, ack, opts);
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.undo_timeout_if_spurious(opts);
        self.board.advance(ack);
        while self.record_ends.front().is_some_and(|&e| e <= ack) {
            self.record_ends.pop_front();
        }
        self.retries = 0;
        self.dupacks = 0;
        let ev = self.ack_event(now, acked, sample);
        self.cc.on_any_ack(&ev, false);
        let (saved, was_recovering) = (self.win, self.recovery.in_recovery());
        let (recovery, mut ctx) = self.recovery_ctx(now);
        let rto_restart = recovery.on_new_ack(&mut ctx, &ev);
        if was_recovering && self.corruption(now) {
            self.win = Window {
                cwnd: saved.cwnd.max(self.win.cwnd),
                ..saved
            };
        }
        if self.control.is_some() {
            self.control_window(now, &ev, saved.cwnd);
        }
        if rto_restart {
            self.restart_rto(now);
        }
        if self.our_fin_acked() {
            self.on_fin_acked();
        }
    }

    /// RTT samples of an ACK of new data; returns the controller's. Timestamps give a sample
    /// per ACK (RFC 7323 RTTM) to both the RTO estimator and the controller. Without them the
    /// estimator times one segment per round trip (RFC 6298) and the controller gets a sample
    /// per ACK from the send-time record.
    fn take_rtt_samples(&mut self, now: Time, ack: u64, opts: &TcpOptions) -> Option<Time> {
        let mut controller = self.sent.controller_sample(ack, now);
        let estimator = match (self.options.timestamps, opts.timestamps) {
            (true, Some(ts)) => {
                controller = Some(ts_elapsed(now, ts.ecr));
                controller
            }
            _ => self.sent.estimator_sample(ack, now),
        };
        if let Some(r) = estimator {
            self.rtt.on_sample_at(r, ack, self.snd_nxt);
        }
        if let Some(r) = controller {
            self.cc.on_rtt_sample(r, now);
        }
        controller
    }

    fn on_fin_acked(&mut self) {
        self.state = match self.state {
            State::FinWait1 => State::FinWait2,
            State::Closing => State::TimeWait,
            State::LastAck => State::Closed,
            s => s,
        };
        if self.state == State::TimeWait {
            self.enter_time_wait();
        } else if self.state == State::Closed {
            self.close_reason.get_or_insert(CloseReason::Normal);
            self.timers.stop(Timer::Rto);
        }
    }

    /// Delivery-rate estimation, for a controller that asked for it: what this ACK and its
    /// SACK blocks (`sacks`, stream positions) delivered, and the sample `ack_event` hands
    /// on. (Out of line: most controllers do not ask.)
    #[inline(never)]
    fn sample_delivery_rate(&mut self, now: Time, ack: u64, sacks: &[(u64, u64)]) {
        let Some(rate) = &mut self.rate else { return };
        for &(l, r) in sacks {
            rate.on_sacked(l, r, now);
        }
        rate.on_cumulative_ack(ack, now);
        self.rate_sample = rate.take_sample(self.rtt.min_rtt());
    }

    /// An ACK's SACK blocks as absolute stream positions.
    fn sack_positions(&self, o: &TcpOptions) -> SackPositions {
        let mut p = SackPositions::default();
        for (b, &(l, r)) in p.blocks.iter_mut().zip(o.sack.as_slice()) {
            *b = (
                from_wire(self.iss, l, self.snd_una),
                from_wire(self.iss, r, self.snd_una),
            );
        }
        p.len = o.sack.as_slice().len();
        p
    }

    pub(super) fn rtt_sample(&mut self, now: Time, rtt: Time) {
        self.rtt.on_sample_at(rtt, self.snd_una, self.snd_nxt);
        self.cc.on_rtt_sample(rtt, now);
    }
}

/// The round trip a timestamp echo measures.
pub(super) fn ts_elapsed(now: Time, ecr: u32) -> Time {
    ts_clock(now).wrapping_sub(ecr) as Time * MS
}

/// Up to `MAX_SACK_BLOCKS` SACK blocks of one ACK, as absolute positions, in the ACK's order.
#[derive(Clone, Copy, Default)]
pub(super) struct SackPositions {
    blocks: [(u64, u64); spacetp_wire::MAX_SACK_BLOCKS],
    len: usize,
}

impl SackPositions {
    pub fn as_slice(&self) -> &[(u64, u64)] {
        &self.blocks[..self.len]
    }
}
