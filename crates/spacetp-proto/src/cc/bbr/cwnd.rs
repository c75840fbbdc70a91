//! cwnd (`bbr_set_cwnd`): towards cwnd_gain x BDP plus the ACK-aggregation allowance and the
//! quantization budget, growing by what each ACK delivered (slow start towards the target)
//! and, once the pipe was full, cut to the target at once. In the first round of recovery,
//! packet conservation: what is in flight plus what this ACK delivered; leaving recovery
//! restores the cwnd from before it (`bbr_set_cwnd_to_recover_or_restore`). At least 4
//! packets; at most 4 in ProbeRTT.

use super::{Bbr, BbrMode, INIT_CWND_PACKETS, MIN_CWND_PACKETS};
use crate::cc::{ControlInput, LossState, Window};
use crate::time::ceil_to_u64;

impl Bbr {
    /// `bbr_bdp`: gain x bw x min_rtt in packets, rounded up; 10 before any RTT sample.
    fn bdp_packets(&self, bw: f64, gain: f64) -> u64 {
        let Some(min_rtt) = self.min_rtt else {
            return INIT_CWND_PACKETS;
        };
        let bytes = bw * min_rtt as f64 / 1e9 * gain;
        ceil_to_u64(bytes / self.mss as f64)
    }

    /// `bbr_quantization_budget`: room for three bursts in the end hosts, an even number of
    /// packets (delayed ACKs), and 2 more while probing so that small BDPs probe at all.
    fn quantization_budget(&self, packets: u64) -> u64 {
        let mut cwnd = packets + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle.probing() {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`: the in-flight target for `gain`, bytes.
    pub(super) fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_packets(bw, gain)) * self.mss
    }

    pub(super) fn set_cwnd(&mut self, w: &mut Window, c: &ControlInput, bw: f64, gain: f64) {
        let mss = w.mss;
        let acked = c.acked_sacked;
        let mut cwnd = w.cwnd;
        if acked > 0 {
            let (restored, conserving) = self.recover_or_restore(cwnd, c);
            cwnd = restored;
            if !conserving {
                let mut target = self.bdp_packets(bw, gain);
                if self.p.ack_aggregation && self.startup.reached() {
                    target += self.aggregation.cwnd(bw) / mss;
                }
                let target = self.quantization_budget(target) * mss;
                if self.startup.reached() {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || c.delivered < INIT_CWND_PACKETS * mss {
                    cwnd += acked;
                }
                cwnd = cwnd.max(MIN_CWND_PACKETS * mss);
            }
        }
        if self.mode == BbrMode::ProbeRtt {
            cwnd = cwnd.min(MIN_CWND_PACKETS * mss);
        }
        w.cwnd = cwnd;
    }

    /// Returns the cwnd and whether packet conservation holds it.
    fn recover_or_restore(&mut self, cwnd: u64, c: &ControlInput) -> (u64, bool) {
        let mut cwnd = cwnd;
        if c.losses > 0 {
            cwnd = cwnd.saturating_sub(c.losses).max(self.mss);
        }
        let (prev, state) = (self.prev_state, c.state);
        if state == LossState::Recovery && prev != LossState::Recovery {
            // The first round of recovery: send one packet per packet delivered.
            self.packet_conservation = true;
            self.next_rtt_delivered = c.delivered;
            cwnd = c.in_flight + c.acked_sacked;
        } else if prev >= LossState::Recovery && state < LossState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_state = state;
        if self.packet_conservation {
            return (cwnd.max(c.in_flight + c.acked_sacked), true);
        }
        (cwnd, false)
    }
}
