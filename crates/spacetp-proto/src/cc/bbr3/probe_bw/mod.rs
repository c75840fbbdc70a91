//! ProbeBW (5.3.3): four sub-states, one file each: DOWN (pace at 0.90 x bw until the queue
//! and the headroom are drained), CRUISE (1.0, until it is time to probe), REFILL (1.0 for
//! one round, the short-term model forgotten), UP (1.25, cwnd gain 2.25, inflight_longterm
//! raised by growing steps) and back to DOWN. `timing.rs`: when to probe again, the
//! wall-clock / Reno-coexistence schedule (5.3.3.8). The max_bw filter's time advances one
//! ProbeBW cycle a round after UP ends (5.5.6).

mod cruise;
mod down;
mod refill;
mod timing;
mod up;

use super::{Bbr3, Bbr3State, RateSample, INF};
use crate::cc::ControlInput;
use crate::time::Time;

/// 2.14 BBR.ack_phase: what the ACKs now arriving say about bandwidth probing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) enum AckPhase {
    /// Not probing; no probe feedback.
    #[default]
    Init,
    /// Sending at the estimated bandwidth to fill the pipe.
    Refilling,
    /// Inflight rising to probe.
    ProbeStarting,
    /// Feedback from the probe arriving.
    ProbeFeedback,
    /// Probing stopped; its feedback still arriving.
    ProbeStopping,
}

/// 2.14 ProbeBW state.
#[derive(Clone, Copy, Debug)]
pub(super) struct Probe {
    pub ack_phase: AckPhase,
    pub is_bw_probe_sample: bool,
    pub bw_probe_up_acked: u64,
    pub probe_up_acked_per_inc: u64,
    pub bw_probe_up_rounds: u32,
    pub rounds_since_probe_up: u64,
    pub bw_probe_wait: Time,
    pub cycle_stamp: Time,
    pub prev_probe_too_high: bool,
    pub prev_probe_precautionary: bool,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INF,
            bw_probe_up_rounds: 0,
            rounds_since_probe_up: 0,
            bw_probe_wait: 0,
            cycle_stamp: 0,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
        }
    }
}

impl Bbr3 {
    /// 5.3.3.9 EnterProbeBW (cwnd gain 2 follows the state).
    pub(super) fn enter_probe_bw(&mut self) {
        self.start_probe_bw_down();
    }

    /// 5.3.3.9 IsInAProbeBWState.
    pub(super) fn in_probe_bw(&self) -> bool {
        use Bbr3State::*;
        matches!(
            self.state,
            ProbeBwDown | ProbeBwCruise | ProbeBwRefill | ProbeBwUp
        )
    }

    /// 5.3.3.9 IsProbingBW.
    pub(super) fn is_probing_bw(&self) -> bool {
        use Bbr3State::*;
        matches!(self.state, Startup | ProbeBwRefill | ProbeBwUp)
    }

    /// 5.3.3.9 UpdateProbeBWCyclePhase, on ACKs of new data.
    pub(super) fn update_probe_bw_cycle_phase(
        &mut self,
        rs: Option<&RateSample>,
        c: &ControlInput,
    ) {
        if !self.full_bw_reached {
            return;
        }
        if self.adapt_long_term_model(rs, c) {
            return;
        }
        let state = self.state;
        match state {
            Bbr3State::ProbeBwDown => {
                if self.is_time_to_probe_bw() {
                    return;
                }
                if self.is_time_to_cruise(c) {
                    self.start_probe_bw_cruise();
                }
            }
            Bbr3State::ProbeBwCruise => {
                self.is_time_to_probe_bw();
            }
            // After one round of REFILL, UP.
            Bbr3State::ProbeBwRefill if self.round_start => {
                self.probe.is_bw_probe_sample = true;
                self.start_probe_bw_up(rs);
            }
            Bbr3State::ProbeBwUp if self.is_time_to_go_down(rs, c) => {
                self.probe.prev_probe_too_high = false;
                self.start_probe_bw_down();
            }
            _ => {}
        }
    }

    /// 5.3.3.9 AdaptLongTermModel, with Linux's `bbr_adapt_upper_bounds` reaction to a
    /// probe's samples showing inflight too high (the draft reacts per lost packet, 5.5.10.2).
    /// Returns whether it changed state.
    fn adapt_long_term_model(&mut self, rs: Option<&RateSample>, c: &ControlInput) -> bool {
        let round_start = self.round_start;
        if self.probe.ack_phase == AckPhase::ProbeStarting && round_start {
            self.probe.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.probe.ack_phase == AckPhase::ProbeStopping && round_start {
            self.probe.is_bw_probe_sample = false;
            self.probe.ack_phase = AckPhase::Init;
            if self.in_probe_bw() && !rs.is_some_and(|r| r.is_app_limited) {
                // 5.5.6 AdvanceMaxBwFilter.
                self.cycle_count += 1;
            }
            if self.in_probe_bw()
                && self.probe.prev_probe_precautionary
                && !self.probe.prev_probe_too_high
            {
                self.start_probe_bw_refill();
                return true;
            }
        }
        let Some(rs) = rs else { return false };
        if self.is_inflight_too_high(rs, c) {
            if self.probe.is_bw_probe_sample {
                let was_up = self.state == Bbr3State::ProbeBwUp;
                self.handle_inflight_too_high(rs);
                return was_up;
            }
            return false;
        }
        if self.b.inflight_longterm == INF {
            return false;
        }
        if rs.tx_in_flight > self.b.inflight_longterm {
            self.b.inflight_longterm = rs.tx_in_flight;
        }
        if self.state == Bbr3State::ProbeBwUp {
            self.probe_inflight_longterm_upward(c);
        }
        false
    }
}
