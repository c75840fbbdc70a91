//! Congestion controllers, one file each behind one small trait (after Linux's
//! `tcp_congestion_ops` and quinn's `Controller`). The connection owns the window numbers;
//! a controller only decides how they move. Loss recovery (`connection/recovery/`) is a
//! separate component: it asks the controller for ssthresh and drives cwnd while repairing.

mod bbr;
mod bbr3;
mod bic;
mod cubic;
mod frac;
mod highspeed;
mod hybla;
mod hystart;
mod max_filter;
mod newreno;
pub(crate) mod nucc;
mod registry;
mod scalable;
mod vegas;
mod westwood;

#[cfg(test)]
mod tests_transfer;

pub use bbr::{Bbr, BbrMode, BbrParams};
pub use bbr3::{Bbr3, Bbr3Params, Bbr3State};
pub use bic::{Bic, BicParams};
pub use cubic::{Cubic, CubicParams};
pub use highspeed::{HighSpeed, HighSpeedParams};
pub use hybla::{Hybla, HyblaParams};
pub use newreno::NewReno;
pub use nucc::Nucc;
pub use registry::{CongestionControlKind, ControllerFactory, ControllerParams};
pub use scalable::{Scalable, ScalableParams};
pub use vegas::{Vegas, VegasLossResponse, VegasParams, VegasRttSample};
pub use westwood::{Westwood, WestwoodFilter, WestwoodParams};

use crate::time::Time;

/// The numbers a controller moves, in bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Sender maximum segment size (payload bytes per full segment).
    pub mss: u64,
}

impl Window {
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
}

/// What an arriving ACK tells the controller.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckEvent {
    pub now: Time,
    /// Bytes newly acknowledged cumulatively (0 for a duplicate ACK).
    pub acked: u64,
    /// Bytes in flight before this ACK.
    pub flight_before: u64,
    /// The cumulative ACK point after this ACK (absolute stream position).
    pub ack: u64,
    /// The next position the sender will send (absolute).
    pub snd_nxt: u64,
    /// RTT sample carried by this ACK (timestamps, or the timed segment), if any.
    pub rtt: Option<Time>,
    /// Smoothed and minimum RTT when known.
    pub srtt: Option<Time>,
    pub min_rtt: Option<Time>,
    /// The delivery-rate sample of this ACK, for a controller that asked for them.
    pub rate: Option<RateSample>,
    /// RFC 3465 appropriate byte counting, when on: slow start adds up to this many SMSS per
    /// ACK (not 1), and congestion avoidance counts the bytes acknowledged (not the ACKs).
    pub abc_limit: Option<u32>,
}

impl AckEvent {
    /// What slow start adds for this ACK: min(acked, SMSS) (RFC 5681), or min(acked, L x
    /// SMSS) with byte counting (RFC 3465).
    pub fn slow_start_increase(&self, mss: u64) -> u64 {
        let cap = self.abc_limit.map_or(mss, |l| l as u64 * mss);
        self.acked.min(cap)
    }
}

/// The sender's loss state, as Linux's `icsk_ca_state` (Disorder and CWR are not told apart
/// from Open: no controller here needs them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum LossState {
    #[default]
    Open,
    /// Fast recovery after duplicate ACKs or SACK.
    Recovery,
    /// After a retransmission timeout, until what was outstanding then is acknowledged.
    Loss,
}

/// What the connection tells a controller that sets cwnd itself on every ACK (Linux's
/// `cong_control` hook, which BBR uses instead of `cong_avoid` and the recovery's window).
#[derive(Clone, Copy, Debug, Default)]
pub struct ControlInput {
    pub state: LossState,
    /// Bytes in the network after this ACK (Linux `tcp_packets_in_flight`: what recovery
    /// counts in flight).
    pub in_flight: u64,
    /// Bytes newly acknowledged or SACKed by this ACK (`rs->acked_sacked`).
    pub acked_sacked: u64,
    /// Bytes delivered since the connection began (`tp->delivered`).
    pub delivered: u64,
    /// Bytes marked lost since the connection began (`tp->lost`): here the bytes resent
    /// because recovery, a timeout or a SNACK deemed them lost.
    pub lost: u64,
    /// Bytes marked lost since the previous ACK (`rs->losses`).
    pub losses: u64,
    /// Bytes delivered that arrived marked CE, since the connection began
    /// (`tp->delivered_ce`). Always 0 today: no simulated link marks CE yet.
    pub ce_delivered: u64,
    /// The connection can learn of more than one loss per round trip (SACK negotiated;
    /// draft-ietf-ccwg-bbr's `C.has_selective_acks`).
    pub has_selective_acks: bool,
}

/// What such a controller asks of the connection in return.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ControlRequest {
    /// Mark the connection application-limited until what is in flight is delivered, so
    /// rate samples taken meanwhile do not lower the bandwidth estimate (BBR's ProbeRTT).
    pub mark_app_limited: bool,
}

/// One ACK's delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), measured by
/// the connection for controllers that ask for it (`wants_delivery_rate`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over `interval`.
    pub delivered: u64,
    /// max(send_elapsed, ack_elapsed): the ACK rate cannot exceed the send rate for long.
    pub interval: Time,
    /// The connection's delivered count when the sample's first segment was sent.
    pub prior_delivered: u64,
    /// The sending application, not the network or the windows, limited this flight.
    pub is_app_limited: bool,
    /// RTT of the most recently sent segment this ACK delivered, timed from its latest
    /// transmission.
    pub rtt: Time,
    /// That segment was a retransmission, so `rtt` may be too short (Karn; Linux's
    /// `rs->is_retrans`).
    pub is_retrans: bool,
    /// What recovery counted in flight just after that segment left, itself included
    /// (draft-ietf-ccwg-bbr `RS.tx_in_flight`).
    pub tx_in_flight: u64,
    /// The connection's lost count (`ControlInput::lost`) when it left: the bytes lost since
    /// are `lost - prior_lost` (`RS.lost`).
    pub prior_lost: u64,
}

impl RateSample {
    /// Bytes per second.
    pub fn rate(&self) -> f64 {
        self.delivered as f64 * 1e9 / self.interval as f64
    }
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;

    /// Every ACK, new or duplicate, before any other hook (bandwidth estimators count
    /// delivered data here).
    fn on_any_ack(&mut self, _ev: &AckEvent, _duplicate: bool) {}

    /// Whether the connection should measure delivery rates for this controller (it costs
    /// a snapshot per transmission).
    fn wants_delivery_rate(&self) -> bool {
        false
    }

    /// The rate, in bytes per second, at which the connection should pace its segments out
    /// (departure times spaced, not bursts); None: no pacing.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }

    /// How many segments leave together at one paced departure, at a pacing rate of `rate`
    /// bytes per second, a minimum RTT of `min_rtt` and `mss`-byte segments: Linux's TSO/GSO
    /// autosizing (`tcp_tso_segs`), draft-ietf-ccwg-bbr's send quantum. The next departure
    /// waits until all of them have left at the pacing rate. 1 (the default): each segment
    /// is paced on its own.
    fn pacing_burst(&self, _rate: f64, _min_rtt: Option<Time>, _mss: u64) -> u64 {
        1
    }

    /// Whether its departures are Linux TSO packets sent by Linux's TCP, so that Linux's
    /// rule for a window too small for one (`tcp_tso_should_defer`) applies. False (the
    /// default): a sender sends what its window allows.
    fn linux_tso(&self) -> bool {
        false
    }

    /// New data acknowledged outside loss recovery: grow the window.
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent);

    /// A loss detected by duplicate ACKs or SACK: return the new ssthresh. Recovery sets cwnd
    /// from it.
    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, _now: Time) -> u64 {
        reno_ssthresh(w, flight)
    }

    /// Loss recovery ended (the window is what recovery left, usually ssthresh).
    fn on_recovery_exit(&mut self, _w: &mut Window, _now: Time) {}

    /// The retransmission timer expired: ssthresh as after a loss (Reno's RFC 5681 eq. 4 by
    /// default), cwnd = 1 SMSS.
    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: Time) {
        w.ssthresh = self.ssthresh_after_loss(w, flight, now);
        w.cwnd = w.mss;
    }

    /// A timeout was found spurious (`rto_undo`): Linux's `undo_cwnd` for Reno and CUBIC
    /// (`tcp_reno_undo_cwnd`), the larger of the window now and before the timeout, and
    /// ssthresh back to at least what it was (`tcp_undo_cwnd_reduction`).
    fn undo_cwnd(&mut self, w: &mut Window, prior_cwnd: u64, prior_ssthresh: u64) {
        w.cwnd = w.cwnd.max(prior_cwnd);
        w.ssthresh = w.ssthresh.max(prior_ssthresh);
    }

    /// Every valid RTT sample (delay-based controllers use it).
    fn on_rtt_sample(&mut self, _rtt: Time, _now: Time) {}

    /// Whether this controller sets cwnd itself on every ACK through `cong_control`, after
    /// loss recovery has moved it (Linux's `cong_control`): the connection then also tells
    /// it the loss state, what is in flight and what was lost.
    fn controls_window(&self) -> bool {
        false
    }

    /// Every ACK, after loss recovery, for a controller that `controls_window`.
    fn cong_control(
        &mut self,
        _w: &mut Window,
        _ev: &AckEvent,
        _c: &ControlInput,
    ) -> ControlRequest {
        ControlRequest::default()
    }

    /// The loss state changed to `state` (Linux's `set_state`); `w` as the change left it.
    fn on_loss_state(&mut self, _state: LossState, _w: &Window) {}
}

/// RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 SMSS).
pub(crate) fn reno_ssthresh(w: &Window, flight: u64) -> u64 {
    (flight / 2).max(2 * w.mss)
}

/// A multiplicative decrease: ssthresh = max(factor x FlightSize, 2 SMSS), to the nearest byte.
pub(crate) fn scaled_ssthresh(w: &Window, flight: u64, factor: f64) -> u64 {
    ((factor * flight as f64).round() as u64).max(2 * w.mss)
}

/// Shorthands for the controllers' unit tests.
#[cfg(test)]
pub(crate) mod test_util {
    use super::{AckEvent, Window};

    /// A window of `cwnd` and `ssthresh` bytes.
    pub fn window(cwnd: u64, ssthresh: u64, mss: u64) -> Window {
        Window {
            cwnd,
            ssthresh,
            mss,
        }
    }

    /// An ACK of `acked` new bytes that carries nothing else.
    pub fn acked(acked: u64) -> AckEvent {
        AckEvent {
            acked,
            ..Default::default()
        }
    }
}
