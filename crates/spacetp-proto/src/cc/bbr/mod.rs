//! BBR version 1 as Linux's `net/ipv4/tcp_bbr.c` behaves (Cardwell, Cheng, Gunn, Hassas
//! Yeganeh & Jacobson, "BBR: Congestion-Based Congestion Control", ACM Queue 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00). On every ACK (Linux's `cong_control`
//! hook, `bbr_main`):
//! - the model is updated: bottleneck bandwidth = the windowed maximum of delivery-rate
//!   samples over 10 packet-timed rounds; round-trip propagation time = the minimum RTT over
//!   10 s (`probe_rtt.rs`); the state machine moves;
//! - pacing_rate = pacing_gain x bw x 99% (`pacing.rs`);
//! - cwnd = cwnd_gain x bw x min_rtt, plus the ACK-aggregation allowance and the
//!   quantization budget, approached by slow start; packet conservation in the first round
//!   of recovery (`cwnd.rs`).
//!
//! One file per state, as s2n-quic splits its BBR: `startup.rs` (and the full-pipe
//! estimate), `drain.rs`, `probe_bw.rs` (gain cycling), `probe_rtt.rs`; `long_term.rs`
//! (policer detection), `aggregation.rs` (extra ACKed); the windowed maximum is
//! `cc/max_filter.rs` (`lib/minmax.c`), shared with BBRv3.
//!
//! Units: Linux counts packets and bandwidth in packets per microsecond; here windows are
//! bytes and bandwidth bytes per second, and the constants counted in packets (the 4-packet
//! minimum, the quantization budget, the 10-packet default BDP) are multiplied by the MSS.
//! Not modelled: restart after idle (`CA_EVENT_TX_START`: the workloads here are bulk or
//! request-response transfers whose idle periods end with a new connection), and the
//! earliest-departure-time correction of in-flight data (`bbr_packets_in_net_at_edt`: the
//! simulated sender has no qdisc holding scheduled packets, so what is in flight is in the
//! network).

mod aggregation;
mod cwnd;
mod drain;
mod long_term;
mod pacing;
mod probe_bw;
mod probe_rtt;
mod startup;

use super::{
    AckEvent, CongestionControl, ControlInput, ControlRequest, ControllerFactory, LossState, Window,
};
use crate::error::FieldError;
use crate::time::{Time, MS, SEC};
use crate::units::Duration;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// About 2/ln(2), the smallest gain that doubles the delivery rate each round in Startup;
/// Linux's fixed-point value, `BBR_UNIT * 2885 / 1000 + 1` = 739/256.
pub const HIGH_GAIN: f64 = 739.0 / 256.0;
/// About the inverse, so that Drain empties in one round the queue Startup built:
/// `BBR_UNIT * 1000 / 2885` = 88/256.
const DRAIN_GAIN: f64 = 88.0 / 256.0;
/// Rounds over which the bandwidth maximum is kept (`bbr_bw_rtts`: the gain cycle + 2).
const BW_WINDOW_ROUNDS: u64 = probe_bw::CYCLE_LEN as u64 + 2;
/// Linux's `TCP_INIT_CWND`: the BDP assumed before any RTT sample, and the delivered
/// amount below which Startup grows cwnd whatever the target.
const INIT_CWND_PACKETS: u64 = 10;
/// `bbr_cwnd_min_target`: enough for two two-packet bursts under delayed ACKs.
const MIN_CWND_PACKETS: u64 = 4;

/// BBR settings (`[flows.tcp.bbr]`); the defaults are Linux's constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BbrParams {
    /// cwnd gain in ProbeBW: cwnd = cwnd_gain x BDP. 2 (`bbr_cwnd_gain`). In [1, 10].
    pub cwnd_gain: f64,
    /// How long the minimum RTT is trusted before ProbeRTT measures it again. 10 s
    /// (`bbr_min_rtt_win_sec`). At least 1 ms.
    pub min_rtt_window: Duration,
    /// Time spent in ProbeRTT with at most 4 packets in flight. 200 ms
    /// (`bbr_probe_rtt_mode_ms`). At least 1 ms and less than `min_rtt_window`.
    pub probe_rtt_time: Duration,
    /// Long-term bandwidth sampling: pace at the policed rate when losses show a token-bucket
    /// policer. true (Linux).
    pub long_term_bw: bool,
    /// Add the recent excess of ACKed data over bw x time (ACK aggregation) to cwnd. true
    /// (Linux since 4.20, `bbr_extra_acked_gain` 1).
    pub ack_aggregation: bool,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            cwnd_gain: 2.0,
            min_rtt_window: Duration(10 * SEC),
            probe_rtt_time: Duration(200 * MS),
            long_term_bw: true,
            ack_aggregation: true,
        }
    }
}

impl ControllerFactory for BbrParams {
    fn build(&self) -> Box<dyn CongestionControl> {
        Box::new(Bbr::new(self))
    }

    fn validate(&self) -> Result<(), FieldError> {
        if !(1.0..=10.0).contains(&self.cwnd_gain) {
            return Err(FieldError::new(
                "cwnd_gain",
                format!("{} must be between 1 and 10", self.cwnd_gain),
            ));
        }
        if self.min_rtt_window.0 < MS {
            return Err(FieldError::new("min_rtt_window", "must be at least 1 ms"));
        }
        if self.probe_rtt_time.0 < MS || self.probe_rtt_time.0 >= self.min_rtt_window.0 {
            return Err(FieldError::new(
                "probe_rtt_time",
                "must be at least 1 ms and shorter than min_rtt_window",
            ));
        }
        Ok(())
    }
}

/// BBR's states (`bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up the sending rate rapidly to fill the pipe.
    Startup,
    /// Drain the queue Startup created.
    Drain,
    /// Discover and share bandwidth: pace around the estimate, cycling the gain.
    ProbeBw,
    /// Cut what is in flight to the minimum to measure the propagation delay.
    ProbeRtt,
}

#[derive(Debug)]
pub struct Bbr {
    p: BbrParams,
    mode: BbrMode,
    /// Bandwidth samples (bytes per second) by round.
    bw: super::max_filter::MaxFilter,
    /// Packet-timed rounds so far, and the delivered count that ends the current one.
    rtt_cnt: u64,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<Time>,
    min_rtt_stamp: Time,
    /// The time of the latest delivery (`tp->delivered_mstamp`).
    delivered_stamp: Time,
    pacing_gain: f64,
    cwnd_gain: f64,
    startup: startup::FullPipe,
    cycle: probe_bw::Cycle,
    probe_rtt: probe_rtt::ProbeRtt,
    lt: long_term::LongTerm,
    aggregation: aggregation::AckAggregation,
    pacing: pacing::Pacing,
    /// cwnd before recovery or ProbeRTT cut it, to restore afterwards.
    prior_cwnd: u64,
    prev_state: LossState,
    packet_conservation: bool,
    /// The last connection state seen, for events between ACKs (a timeout).
    last: ControlInput,
    last_now: Time,
    mss: u64,
    /// Random start of the gain cycle (Linux: `prandom_u32_max`), seeded from the first
    /// ACK's time so that runs are repeatable and flows that start apart differ.
    rng: u64,
}

impl Bbr {
    pub fn new(p: &BbrParams) -> Self {
        Bbr {
            p: p.clone(),
            mode: BbrMode::Startup,
            bw: Default::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: 0,
            delivered_stamp: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            startup: Default::default(),
            cycle: Default::default(),
            probe_rtt: Default::default(),
            lt: Default::default(),
            aggregation: Default::default(),
            pacing: Default::default(),
            prior_cwnd: 0,
            prev_state: LossState::Open,
            packet_conservation: false,
            last: ControlInput::default(),
            last_now: 0,
            mss: 1,
            rng: 0,
        }
    }

    pub fn mode(&self) -> BbrMode {
        self.mode
    }

    /// The windowed maximum of the delivery rate, bytes per second.
    fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    /// The bandwidth the model uses: the policed rate when one was detected, else the max.
    fn bw(&self) -> f64 {
        self.lt.bw_in_use().unwrap_or_else(|| self.max_bw())
    }

    /// `bbr_update_bw`: count rounds, feed the long-term sampler and the max filter.
    fn update_bw(&mut self, ev: &AckEvent, c: &ControlInput) {
        self.round_start = false;
        let Some(rs) = ev.rate else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = c.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if self.p.long_term_bw {
            self.long_term_sampling(rs.is_app_limited, c);
        }
        let bw = rs.rate();
        // An application-limited sample only raises the estimate (it shows at least that).
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.update(BW_WINDOW_ROUNDS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, w: &mut Window, ev: &AckEvent, c: &ControlInput) -> bool {
        self.update_bw(ev, c);
        if self.p.ack_aggregation && ev.rate.is_some() && c.acked_sacked > 0 {
            let bw = self.bw();
            let round_start = self.round_start;
            let stamp = self.delivered_stamp;
            self.aggregation
                .update(round_start, stamp, bw, c.acked_sacked, w.cwnd);
        }
        self.update_cycle_phase(ev, c);
        self.check_full_bw_reached(ev);
        self.check_drain(w, c);
        let mark_app_limited = self.update_min_rtt(w, ev, c);
        self.update_gains();
        mark_app_limited
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            BbrMode::Startup => (HIGH_GAIN, HIGH_GAIN),
            BbrMode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            BbrMode::ProbeBw => {
                let pacing = if self.lt.bw_in_use().is_some() {
                    1.0
                } else {
                    self.cycle.gain()
                };
                (pacing, self.p.cwnd_gain)
            }
            BbrMode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_reset_mode`: back to Startup if the pipe was never filled, else to ProbeBW.
    fn reset_mode(&mut self) {
        if self.startup.reached() {
            self.enter_probe_bw();
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    /// `bbr_save_cwnd`: the last cwnd known good, kept across recovery and ProbeRTT.
    fn save_cwnd(&mut self, cwnd: u64) {
        if self.prev_state < LossState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// The next pseudo-random number (xorshift64*), seeded on first use from `seed`.
    fn random(&mut self, seed: Time) -> u64 {
        if self.rng == 0 {
            self.rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
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

    fn pacing_burst(&self, rate: f64, min_rtt: Option<Time>, mss: u64) -> u64 {
        Self::tso_segs(rate, min_rtt, mss)
    }

    fn linux_tso(&self) -> bool {
        true
    }

    /// BBR's window moves only in `cong_control`.
    fn on_ack(&mut self, _w: &mut Window, _ev: &AckEvent) {}

    /// `bbr_init`: the handshake's RTT (`tcp_min_rtt`) is the first minimum, stamped when
    /// the connection is established, so the first ProbeRTT comes 10 s after that.
    fn on_rtt_sample(&mut self, rtt: Time, now: Time) {
        if self.min_rtt.is_none() {
            self.min_rtt = Some(rtt);
            self.min_rtt_stamp = now;
        }
    }

    /// `bbr_ssthresh`: remember cwnd for after recovery; ssthresh itself is not lowered.
    fn ssthresh_after_loss(&mut self, w: &Window, _flight: u64, _now: Time) -> u64 {
        self.save_cwnd(w.cwnd);
        w.ssthresh
    }

    /// `tcp_enter_loss` (cwnd = what is in flight + 1 = one segment, all of it deemed lost)
    /// and `bbr_set_state(TCP_CA_Loss)`: a timeout ends a round and restarts the
    /// full-pipe check; it counts as a loss for the long-term sampler.
    fn on_timeout(&mut self, w: &mut Window, _flight: u64, now: Time) {
        self.save_cwnd(w.cwnd);
        w.cwnd = w.mss;
        self.prev_state = LossState::Loss;
        self.startup.restart_full_bw();
        self.round_start = true;
        if self.p.long_term_bw {
            let c = ControlInput {
                losses: 1,
                ..self.last
            };
            self.last_now = now;
            self.long_term_sampling(false, &c);
        }
    }

    /// `bbr_undo_cwnd`: a spurious timeout restarts the full-pipe check and the long-term
    /// sampler and keeps cwnd as it is (BBR puts back its saved window itself when the loss
    /// state ends).
    fn undo_cwnd(&mut self, w: &mut Window, _prior_cwnd: u64, prior_ssthresh: u64) {
        self.startup.restart_full_bw();
        self.reset_long_term();
        w.ssthresh = w.ssthresh.max(prior_ssthresh);
    }

    fn cong_control(&mut self, w: &mut Window, ev: &AckEvent, c: &ControlInput) -> ControlRequest {
        self.mss = w.mss;
        if c.acked_sacked > 0 {
            self.delivered_stamp = ev.now;
        }
        self.last = *c;
        self.last_now = ev.now;
        let mark_app_limited = self.update_model(w, ev, c);
        let bw = self.bw();
        self.set_pacing_rate(bw, self.pacing_gain, ev, w.cwnd);
        self.set_cwnd(w, c, bw, self.cwnd_gain);
        ControlRequest { mark_app_limited }
    }
}

#[cfg(test)]
mod tests;
