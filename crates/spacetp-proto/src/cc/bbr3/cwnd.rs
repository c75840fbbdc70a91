//! The congestion window (5.6.4): towards BBR.max_inflight = cwnd_gain x BDP + extra_acked,
//! quantized (at least the offload budget and 4 segments, 2 more in ProbeBW_UP). Once the
//! pipe was full, cwnd grows by what each ACK delivered and is cut to the target at once;
//! before, it grows by what is delivered while under the target. Then it is capped: in
//! ProbeRTT at max(0.5 x BDP, 4 segments) (5.6.4.5); by the model (5.6.4.7): by
//! inflight_longterm in ProbeBW but CRUISE, with headroom in CRUISE and ProbeRTT, and always
//! by inflight_shortterm; never below 4 segments.

use super::{Bbr3, Bbr3State, INF, PROBE_RTT_CWND_GAIN};
use crate::cc::ControlInput;

impl Bbr3 {
    /// 5.6.4.2 BDPMultiple: gain x bw x min_rtt, bytes; C.InitialCwnd before any RTT sample.
    pub(super) fn bdp_multiple(&self, bw: f64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.init_cwnd,
            Some(rtt) => (gain * bw * rtt as f64 / 1e9) as u64,
        }
    }

    /// BBR.bdp = BBR.bw x BBR.min_rtt.
    pub(super) fn bdp(&self) -> u64 {
        self.bdp_multiple(self.bw, 1.0)
    }

    /// 5.6.4.2 QuantizationBudget.
    fn quantization_budget(&self, cap: u64) -> u64 {
        let mut cap = cap
            .max(self.pacing.offload_budget)
            .max(self.min_pipe_cwnd());
        if self.state == Bbr3State::ProbeBwUp {
            cap += 2 * self.mss;
        }
        cap
    }

    /// 5.6.4.2 Inflight(bw, gain).
    pub(super) fn inflight(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// 5.3.3.8.3 TargetInflight: the BDP, unless congestion cut cwnd.
    pub(super) fn target_inflight(&self) -> u64 {
        self.bdp().min(self.cwnd)
    }

    /// 5.6.4.2 UpdateMaxInflight.
    fn update_max_inflight(&mut self) {
        let cap = self.bdp_multiple(self.bw, self.gains().1) + self.agg.extra_acked;
        self.max_inflight = self.quantization_budget(cap);
    }

    /// 5.6.4.5 ProbeRTTCwnd.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN)
            .max(self.min_pipe_cwnd())
    }

    /// 5.6.4.6 SetCwnd.
    pub(super) fn set_cwnd(&mut self, c: &ControlInput) {
        self.update_max_inflight();
        let acked = c.acked_sacked;
        if self.full_bw_reached {
            self.cwnd = (self.cwnd + acked).min(self.max_inflight);
        } else if self.cwnd < self.max_inflight || c.delivered < self.init_cwnd {
            self.cwnd += acked;
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd());
        // 5.6.4.5 BoundCwndForProbeRTT.
        if self.state == Bbr3State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        self.bound_cwnd_for_model();
    }

    /// 5.6.4.7 BoundCwndForModel.
    fn bound_cwnd_for_model(&mut self) {
        let mut cap = INF;
        if self.in_probe_bw() && self.state != Bbr3State::ProbeBwCruise {
            cap = self.b.inflight_longterm;
        } else if matches!(self.state, Bbr3State::ProbeRtt | Bbr3State::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.b.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }
}
