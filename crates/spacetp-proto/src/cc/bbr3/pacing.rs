//! The pacing rate (5.6.2) and send quantum (5.6.3). Pacing: pacing_gain x bw x 99%; before
//! the pipe is known full it only rises. It starts at 2.77 x C.InitialCwnd / SRTT (1 ms
//! before any RTT sample); before the first ACK, segments leave unpaced. The connection caps
//! it at `max_pacing_rate`. The send quantum, pacing_rate x 1 ms within [2 SMSS, 64 kB],
//! sets the offload budget (3 quanta for TCP, 5.5.8.1) that the cwnd target keeps room for.

use super::{Bbr3, PACING_MARGIN_PERCENT, STARTUP_PACING_GAIN};
use crate::cc::AckEvent;
use crate::time::{Time, MS};

/// 5.6.3: the most a quantum holds, bytes.
const MAX_SEND_QUANTUM: u64 = 64 * 1024;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pacing {
    /// Bytes per second; None until the first ACK.
    rate: Option<f64>,
    has_seen_rtt: bool,
    pub send_quantum: u64,
    pub offload_budget: u64,
}

impl Pacing {
    pub fn rate(&self) -> f64 {
        self.rate.unwrap_or(f64::INFINITY)
    }
}

impl Bbr3 {
    /// 5.6.2 InitPacingRate (again once the first RTT sample arrives) and SetPacingRate.
    pub(super) fn set_pacing_rate(&mut self, ev: &AckEvent) {
        if self.pacing.rate.is_none() || (!self.pacing.has_seen_rtt && ev.srtt.is_some()) {
            let rtt: Time = ev.srtt.unwrap_or(MS).max(1);
            self.pacing.has_seen_rtt = ev.srtt.is_some();
            let nominal = self.init_cwnd as f64 * 1e9 / rtt as f64;
            self.pacing.rate = Some(STARTUP_PACING_GAIN * nominal);
        }
        let rate = self.gains().0 * self.bw * (100.0 - PACING_MARGIN_PERCENT) / 100.0;
        if self.full_bw_reached || rate > self.pacing.rate() {
            self.pacing.rate = Some(rate);
        }
    }

    /// 5.6.3 SetSendQuantum and 5.5.8.1 UpdateOffloadBudget.
    pub(super) fn set_send_quantum(&mut self) {
        let q = Self::send_quantum(self.pacing.rate(), self.mss);
        self.pacing.send_quantum = q;
        self.pacing.offload_budget = 3 * q;
    }

    /// 5.6.3: the bytes of one transmission aggregate at `rate` bytes per second: 1 ms of
    /// data within [2 SMSS, 64 kB]. The connection sends them together at a paced departure.
    pub(super) fn send_quantum(rate: f64, mss: u64) -> u64 {
        let per_ms = (rate.min(1e15) / 1000.0) as u64;
        per_ms.min(MAX_SEND_QUANTUM).max(2 * mss)
    }
}
