//! BBRv3 as draft-ietf-ccwg-bbr-06 (July 2026) specifies it; section numbers below are that
//! draft's. Google's BBRv3 Linux module (github.com/google/bbr, branch v3, `tcp_bbr.c`) is the
//! second reference, for what the draft leaves open (the ECN response, how a loss is judged
//! on an ACK). It is not what a stock Linux kernel runs (that is BBR v1, `cc/bbr/`).
//!
//! On every ACK (section 5.2.3, `UpdateOnACK`) the model is updated and the state machine
//! moves (`UpdateModelAndState`), then the pacing rate, send quantum and cwnd are set
//! (`UpdateControlParameters`). One file per concept, as s2n-quic splits its BBR:
//! `startup.rs` (full-pipe estimation, the exit on loss), `drain.rs`, `probe_bw/` (one file
//! per sub-state, `timing.rs` the wall-clock / Reno-coexistence schedule of probes),
//! `probe_rtt.rs` (the min_rtt filter, ProbeRTT), `bounds.rs` (inflight_longterm, the
//! short-term model bw_shortterm / inflight_shortterm, the loss-rate check), `ecn.rs`,
//! `aggregation.rs` (extra_acked), `cwnd.rs`, `pacing.rs` (and the send quantum).
//! The draft's inflight_longterm / inflight_shortterm / bw_shortterm are Linux's
//! inflight_hi / inflight_lo / bw_lo.
//!
//! Units: windows in bytes, bandwidth in bytes per second, times in ns. Departures from the
//! draft, each because the connection does not give what it needs:
//! - losses are judged on each ACK from the delivered segment's send-time snapshot
//!   (`RS.tx_in_flight`, `RS.lost`), as Linux's `bbr_adapt_upper_bounds` does, not per lost
//!   packet (`HandleLostPacket`, `InflightAtLoss`): the connection reports lost bytes, not
//!   packets. "Lost" is what the connection resent as lost (`ControlInput::lost`).
//! - no undo after a spurious recovery (5.5.11): the connection does not report one.
//! - no restart from idle (5.4), as for `cc/bbr/`.

mod aggregation;
mod bounds;
mod cwnd;
mod drain;
mod ecn;
mod pacing;
mod params;
mod probe_bw;
mod probe_rtt;
mod startup;

pub use params::Bbr3Params;

use super::max_filter::MaxFilter;
use super::Window;
use super::{AckEvent, CongestionControl, ControlInput, ControlRequest, LossState, RateSample};
use crate::time::Time;

/// 2.5 BBR.StartupPacingGain: 4 ln 2, the least that doubles the rate each round.
const STARTUP_PACING_GAIN: f64 = 2.77;
/// 2.5 BBR.DrainPacingGain.
const DRAIN_PACING_GAIN: f64 = 0.5;
/// 2.5 BBR.PacingMarginPercent.
const PACING_MARGIN_PERCENT: f64 = 1.0;
/// 2.6 BBR.DefaultCwndGain.
const DEFAULT_CWND_GAIN: f64 = 2.0;
/// 5.3.3.1 ProbeBW_DOWN pacing gain.
const PROBE_DOWN_PACING_GAIN: f64 = 0.90;
/// 5.3.3.5 ProbeBW_UP pacing and cwnd gains.
const PROBE_UP_PACING_GAIN: f64 = 1.25;
const PROBE_UP_CWND_GAIN: f64 = 2.25;
/// 2.16.2 BBR.ProbeRTTCwndGain.
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// 2.8 BBR.MinPipeCwnd, in SMSS.
const MIN_PIPE_CWND_SEGMENTS: u64 = 4;
/// 2.11 BBR.MaxBwFilterLen: the current and the previous ProbeBW cycle.
const MAX_BW_FILTER_LEN: u64 = 2;
/// 2.12 BBR.ExtraAckedFilterLen, rounds.
const EXTRA_ACKED_FILTER_LEN: u64 = 10;

/// The draft's "Infinity" for a volume of data.
const INF: u64 = u64::MAX;

/// BBR's states (5.1.1), ProbeBW's four sub-states apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bbr3State {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

#[derive(Debug)]
pub struct Bbr3 {
    p: Bbr3Params,
    state: Bbr3State,
    mss: u64,
    /// C.InitialCwnd: the window on the first ACK.
    init_cwnd: u64,
    /// cwnd and C.delivered as this ACK found them, for the helpers.
    cwnd: u64,
    delivered: u64,
    now: Time,
    // 5.5.1 packet-timed rounds.
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    // 5.5.2-5.5.6 max_bw over ProbeBW cycles; bw = min(max_bw, bw_shortterm).
    max_bw_filter: MaxFilter,
    cycle_count: u64,
    max_bw: f64,
    bw: f64,
    // 5.5.7, 5.3.4 min_rtt and ProbeRTT.
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    probe_rtt: probe_rtt::ProbeRtt,
    // 5.3.1.2 full pipe.
    full_bw_reached: bool,
    full: startup::FullPipe,
    drain_start_round: u64,
    /// Startup's loss exit: ACKs that marked losses in this loss round.
    loss_events_in_round: u32,
    // 5.5.10 bounds.
    b: bounds::Bounds,
    ecn: ecn::Ecn,
    probe: probe_bw::Probe,
    agg: aggregation::Aggregation,
    pacing: pacing::Pacing,
    max_inflight: u64,
    prior_cwnd: u64,
    prev_state: LossState,
    /// C.is_cwnd_limited, this round and the one before.
    cwnd_limited_round: bool,
    cwnd_limited_prev: bool,
    rng: u64,
}

impl Bbr3 {
    pub fn new(p: &Bbr3Params) -> Self {
        Bbr3 {
            p: p.clone(),
            state: Bbr3State::Startup,
            mss: 1,
            init_cwnd: 0,
            cwnd: 0,
            delivered: 0,
            now: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            max_bw_filter: MaxFilter::default(),
            cycle_count: 0,
            max_bw: 0.0,
            bw: 0.0,
            min_rtt: None,
            min_rtt_stamp: 0,
            probe_rtt: Default::default(),
            full_bw_reached: false,
            full: Default::default(),
            drain_start_round: 0,
            loss_events_in_round: 0,
            b: Default::default(),
            ecn: Default::default(),
            probe: Default::default(),
            agg: Default::default(),
            pacing: Default::default(),
            max_inflight: 0,
            prior_cwnd: 0,
            prev_state: LossState::Open,
            cwnd_limited_round: false,
            cwnd_limited_prev: false,
            rng: 0,
        }
    }

    pub fn state(&self) -> Bbr3State {
        self.state
    }

    /// 5.6.1: the pacing and cwnd gains of the current state.
    fn gains(&self) -> (f64, f64) {
        use Bbr3State::*;
        match self.state {
            Startup => (STARTUP_PACING_GAIN, DEFAULT_CWND_GAIN),
            Drain => (DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN),
            ProbeBwDown => (PROBE_DOWN_PACING_GAIN, DEFAULT_CWND_GAIN),
            ProbeBwCruise | ProbeBwRefill => (1.0, DEFAULT_CWND_GAIN),
            ProbeBwUp => (PROBE_UP_PACING_GAIN, PROBE_UP_CWND_GAIN),
            ProbeRtt => (1.0, PROBE_RTT_CWND_GAIN),
        }
    }

    fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_CWND_SEGMENTS * self.mss
    }

    /// 5.5.1 UpdateRound, inside UpdateMaxBw (5.5.5).
    fn update_max_bw(&mut self, rs: Option<&RateSample>) {
        self.round_start = false;
        let Some(rs) = rs else { return };
        if rs.prior_delivered >= self.next_round_delivered {
            self.start_round();
            self.round_count += 1;
            self.probe.rounds_since_probe_up += 1;
            self.round_start = true;
        }
        let rate = rs.rate();
        if rate > 0.0 && (rate >= self.max_bw || !rs.is_app_limited) {
            self.max_bw_filter
                .update(MAX_BW_FILTER_LEN - 1, self.cycle_count, rate);
            self.max_bw = self.max_bw_filter.get();
        }
    }

    /// 5.5.1 StartRound.
    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    /// 5.6.4.4 SaveCwnd.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_state < LossState::Recovery && self.state != Bbr3State::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// 5.6.4.4 RestoreCwnd.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// C.is_cwnd_limited: what was in flight before this ACK filled cwnd (to a segment) at
    /// some point in this round or the last.
    fn track_cwnd_limited(&mut self, c: &ControlInput) {
        if self.round_start {
            self.cwnd_limited_prev = self.cwnd_limited_round;
            self.cwnd_limited_round = false;
        }
        self.cwnd_limited_round |= c.in_flight + c.acked_sacked + self.mss > self.cwnd;
    }

    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_round || self.cwnd_limited_prev
    }

    /// A pseudo-random number (xorshift64*), seeded on first use from the clock so that runs
    /// repeat and flows that start apart differ.
    fn random(&mut self) -> u64 {
        if self.rng == 0 {
            self.rng = self.now.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// 5.2.3 UpdateOnACK. Returns whether to mark the connection application-limited.
    fn update_on_ack(&mut self, ev: &AckEvent, c: &ControlInput) -> bool {
        let rs = ev.rate;
        let rs = rs.as_ref();
        if c.losses > 0 {
            self.note_loss();
            self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
        }
        self.ecn.on_ack(c.ce_delivered);
        // UpdateModelAndState.
        self.update_latest_delivery_signals(rs, c);
        self.update_congestion_signals(rs, c);
        self.track_cwnd_limited(c);
        if c.acked_sacked > 0 {
            self.update_ack_aggregation(c.acked_sacked);
        }
        self.check_full_bw_reached(rs);
        self.check_startup_done(rs, c);
        self.check_drain_done(c);
        if c.acked_sacked > 0 {
            self.update_probe_bw_cycle_phase(rs, c);
        }
        self.update_min_rtt(ev);
        let mark_app_limited = self.check_probe_rtt(c);
        self.advance_latest_delivery_signals(rs);
        self.bound_bw_for_model();
        // UpdateControlParameters.
        self.set_pacing_rate(ev);
        self.set_send_quantum();
        self.set_cwnd(c);
        mark_app_limited
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn wants_delivery_rate(&self) -> bool {
        true
    }

    fn controls_window(&self) -> bool {
        true
    }

    fn pacing_rate(&self) -> Option<f64> {
        Some(self.pacing.rate())
    }

    /// 5.6.3: the send quantum at the connection's pacing rate, in whole segments.
    fn pacing_burst(&self, rate: f64, _min_rtt: Option<Time>, mss: u64) -> u64 {
        Self::send_quantum(rate, mss) / mss.max(1)
    }

    /// The window moves only in `cong_control`.
    fn on_ack(&mut self, _w: &mut Window, _ev: &AckEvent) {}

    /// 5.6.4.4 OnEnterFastRecovery: SaveCwnd (and SaveStateUponLoss, of which only the cwnd
    /// is kept: no undo); ssthresh itself is not lowered.
    fn ssthresh_after_loss(&mut self, w: &Window, _flight: u64, _now: Time) -> u64 {
        self.save_cwnd(w.cwnd);
        w.ssthresh
    }

    /// 5.6.4.4 OnEnterRTO: SaveCwnd, then cwnd = C.inflight + 1 packet, everything
    /// outstanding being deemed lost: one segment. The timeout is a loss (NoteLoss).
    fn on_timeout(&mut self, w: &mut Window, _flight: u64, now: Time) {
        self.save_cwnd(w.cwnd);
        self.prev_state = LossState::Loss;
        self.now = now;
        self.note_loss();
        w.cwnd = w.mss;
        self.cwnd = w.cwnd;
    }

    fn cong_control(&mut self, w: &mut Window, ev: &AckEvent, c: &ControlInput) -> ControlRequest {
        self.mss = w.mss;
        if self.init_cwnd == 0 {
            self.init_cwnd = w.cwnd;
        }
        self.cwnd = w.cwnd;
        self.delivered = c.delivered;
        self.now = ev.now;
        // 5.6.4.4: leaving recovery restores the last known good cwnd.
        if self.prev_state >= LossState::Recovery && c.state < LossState::Recovery {
            self.restore_cwnd();
        }
        self.prev_state = c.state;
        let mark_app_limited = self.update_on_ack(ev, c);
        w.cwnd = self.cwnd;
        ControlRequest { mark_app_limited }
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_probe_bw;
#[cfg(test)]
mod tests_transfer;
