//! The min_rtt filter and ProbeRTT (`bbr_update_min_rtt`): the minimum RTT is kept for
//! `min_rtt_window` (10 s); when it has not been matched or lowered for that long, BBR caps
//! cwnd at 4 packets for at least `probe_rtt_time` (200 ms) and one round, so that the
//! queue drains and the propagation delay shows; samples meanwhile are marked
//! application-limited so that the low rate does not lower the bandwidth estimate.

use super::{Bbr, BbrMode, MIN_CWND_PACKETS};
use crate::cc::{AckEvent, ControlInput, Window};
use crate::time::Time;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct ProbeRtt {
    /// When ProbeRTT may end, once in flight fell to the minimum.
    done_stamp: Option<Time>,
    round_done: bool,
}

impl Bbr {
    /// Returns whether the connection should mark itself application-limited.
    pub(super) fn update_min_rtt(
        &mut self,
        w: &mut Window,
        ev: &AckEvent,
        c: &ControlInput,
    ) -> bool {
        let now = ev.now;
        let expired = now > self.min_rtt_stamp + self.p.min_rtt_window.0;
        // The ACK's own sample, or that of the most recent segment it SACKed, unless that
        // was a retransmission (Karn: Linux's `ca_rtt_us` skips them too).
        let sacked = ev.rate.filter(|r| !r.is_retrans).map(|r| r.rtt);
        let sample = ev.rtt.or(sacked);
        if let Some(rtt) = sample {
            // Strictly lower (Linux since "tcp_bbr: fix ... min_rtt"): equal samples do not
            // refresh the stamp, or a queue-free path would never probe again.
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd(w.cwnd);
            self.probe_rtt.done_stamp = None;
        }
        if self.mode != BbrMode::ProbeRtt {
            return false;
        }
        match self.probe_rtt.done_stamp {
            None if c.in_flight <= MIN_CWND_PACKETS * w.mss => {
                self.probe_rtt.done_stamp = Some(now + self.p.probe_rtt_time.0);
                self.probe_rtt.round_done = false;
                self.next_rtt_delivered = c.delivered;
            }
            Some(done) => {
                if self.round_start {
                    self.probe_rtt.round_done = true;
                }
                if self.probe_rtt.round_done && now > done {
                    // `bbr_check_probe_rtt_done`.
                    self.min_rtt_stamp = now;
                    w.cwnd = w.cwnd.max(self.prior_cwnd);
                    self.reset_mode();
                }
            }
            None => {}
        }
        true
    }
}
