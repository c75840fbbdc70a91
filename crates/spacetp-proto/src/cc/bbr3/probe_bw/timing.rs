//! When ProbeBW probes again (5.3.3.8): from DOWN or CRUISE to REFILL once the randomized
//! wall-clock wait BBR.bw_probe_wait (2 to 3 s) has elapsed since the cycle began, or once
//! as many rounds have passed as a Reno flow would need to grow its window by the BDP (one
//! round per segment of min(BDP, cwnd), at most 63, less a random 0 or 1): on long paths the
//! wall clock decides, on short ones the Reno-coexistence count (5.3.3.8.3).

use crate::cc::bbr3::Bbr3;
use crate::time::{Time, SEC};

/// 5.3.3.8.3: the most rounds between probes, and the wall-clock wait's fixed part and
/// random span.
const MAX_RENO_ROUNDS: u64 = 63;
const PROBE_WAIT_BASE: Time = 2 * SEC;
const PROBE_WAIT_RAND: Time = SEC;

impl Bbr3 {
    /// 5.3.3.8.3 PickProbeWait.
    pub(super) fn pick_probe_wait(&mut self) {
        self.probe.rounds_since_probe_up = self.random() % 2;
        self.probe.bw_probe_wait = PROBE_WAIT_BASE + self.random() % PROBE_WAIT_RAND;
    }

    /// 5.3.3.8.3 IsTimeToProbeBW: if so, REFILL starts.
    pub(super) fn is_time_to_probe_bw(&mut self) -> bool {
        if self.has_elapsed_in_phase(self.probe.bw_probe_wait)
            || self.is_reno_coexistence_probe_time()
        {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// 5.3.3.9 HasElapsedInPhase.
    fn has_elapsed_in_phase(&self, interval: Time) -> bool {
        self.now > self.probe.cycle_stamp + interval
    }

    /// 5.3.3.8.3 IsRenoCoexistenceProbeTime: TargetInflight() counted in segments.
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss;
        self.probe.rounds_since_probe_up >= reno_rounds.min(MAX_RENO_ROUNDS)
    }
}
