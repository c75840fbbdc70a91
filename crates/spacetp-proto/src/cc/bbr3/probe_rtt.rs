//! The min_rtt filter and ProbeRTT (5.3.4, 5.5.7). BBR.probe_rtt_min_delay is the least RTT
//! sample of the last BBR.ProbeRTTInterval (5 s); BBR.min_rtt takes it when it is lower or
//! when min_rtt is older than BBR.MinRTTFilterLen (10 s). When probe_rtt_min_delay has not
//! been lowered for 5 s, ProbeRTT caps cwnd at max(BBR.ProbeRTTCwndGain (0.5) x BDP, 4
//! segments); once in flight is that low, it holds for BBR.ProbeRTTDuration (200 ms) and a
//! round trip, then restores cwnd and goes to ProbeBW_CRUISE (via DOWN, restarting the
//! probe clock) or, if the pipe was never filled, Startup. Samples meanwhile are marked
//! application-limited.

use super::{probe_bw::AckPhase, Bbr3, Bbr3State};
use crate::cc::{AckEvent, ControlInput};
use crate::time::Time;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ProbeRtt {
    /// BBR.probe_rtt_min_delay and its stamp.
    pub min_delay: Option<Time>,
    pub min_stamp: Time,
    pub expired: bool,
    pub done_stamp: Option<Time>,
    pub round_done: bool,
}

impl Bbr3 {
    /// 5.3.4.3 UpdateMinRTT. The RTT sample: the ACK's own, or the rate sample's unless it
    /// timed a retransmission (Karn).
    pub(super) fn update_min_rtt(&mut self, ev: &AckEvent) {
        let now = self.now;
        let pr = &mut self.probe_rtt;
        pr.expired = now > pr.min_stamp + self.p.probe_rtt_interval.0;
        let sample = ev.rtt.or(ev.rate.filter(|r| !r.is_retrans).map(|r| r.rtt));
        if let Some(rtt) = sample {
            if pr.min_delay.is_none_or(|d| rtt < d) || pr.expired {
                pr.min_delay = Some(rtt);
                pr.min_stamp = now;
            }
        }
        let min_rtt_expired = now > self.min_rtt_stamp + self.p.min_rtt_window.0;
        if let Some(d) = pr.min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || min_rtt_expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = pr.min_stamp;
            }
        }
    }

    /// 5.3.4.3 CheckProbeRTT. Returns whether to mark the connection application-limited.
    pub(super) fn check_probe_rtt(&mut self, c: &ControlInput) -> bool {
        if self.state != Bbr3State::ProbeRtt && self.probe_rtt.expired {
            self.state = Bbr3State::ProbeRtt;
            let cwnd = self.cwnd;
            self.save_cwnd(cwnd);
            self.probe_rtt.done_stamp = None;
            self.probe.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state != Bbr3State::ProbeRtt {
            return false;
        }
        self.handle_probe_rtt(c);
        true
    }

    /// 5.3.4.3 HandleProbeRTT (the caller marks the connection application-limited).
    fn handle_probe_rtt(&mut self, c: &ControlInput) {
        match self.probe_rtt.done_stamp {
            None if c.in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt.done_stamp = Some(self.now + self.p.probe_rtt_duration.0);
                self.probe_rtt.round_done = false;
                self.start_round();
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt.round_done = true;
                }
                if self.probe_rtt.round_done && self.now > done {
                    // 5.3.4.3 CheckProbeRTTDone: schedule the next ProbeRTT.
                    self.probe_rtt.min_stamp = self.now;
                    self.restore_cwnd();
                    self.exit_probe_rtt();
                }
            }
            None => {}
        }
    }

    /// 5.3.4.4 ExitProbeRTT.
    fn exit_probe_rtt(&mut self) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down();
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }
}
