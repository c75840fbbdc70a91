//! Congestion controllers, one file each behind one small trait (after Linux's
//! `tcp_congestion_ops` and quinn's `Controller`). The connection owns the window numbers;
//! a controller only decides how they move. Loss recovery (`connection/recovery/`) is a
//! separate component: it asks the controller for ssthresh and drives cwnd while repairing.

mod bic;
mod cubic;
mod frac;
mod highspeed;
mod hybla;
mod newreno;
pub(crate) mod nucc;
mod scalable;
mod vegas;
mod westwood;

#[cfg(test)]
mod tests_transfer;

pub use bic::{Bic, BicParams};
pub use cubic::{Cubic, CubicParams};
pub use highspeed::{HighSpeed, HighSpeedParams};
pub use hybla::{Hybla, HyblaParams};
pub use newreno::NewReno;
pub use nucc::Nucc;
pub use scalable::{Scalable, ScalableParams};
pub use vegas::{Vegas, VegasLossResponse, VegasParams, VegasRttSample};
pub use westwood::{Westwood, WestwoodFilter, WestwoodParams};

use crate::time::Time;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Congestion controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControlKind {
    /// RFC 5681 AIMD (the controller of Reno and NewReno).
    Newreno,
    /// TCP Vegas (Brakmo, O'Malley & Peterson 1994): delay-based, with its modified slow start.
    Vegas,
    /// TCP Westwood+ (Mascolo et al.): ssthresh from a bandwidth estimate after a loss.
    Westwood,
    /// HighSpeed TCP (RFC 3649): a(w), b(w) from the response function.
    Highspeed,
    /// TCP Hybla (Caini & Firrincieli 2004): growth normalised to a 25 ms reference RTT.
    Hybla,
    /// Scalable TCP (Kelly 2003): multiplicative increase, multiplicative decrease.
    Scalable,
    /// BIC TCP (Xu, Harfoush & Rhee 2004): binary search increase.
    Bic,
    /// CUBIC (RFC 9438).
    Cubic,
    /// No congestion control (SCPS-TP NUCC): the window is the receiver's, and `scps.rate`
    /// clocks transmissions out.
    None,
}

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
    /// RTT of the most recently sent segment this ACK delivered.
    pub rtt: Time,
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

    /// Every valid RTT sample (delay-based controllers use it).
    fn on_rtt_sample(&mut self, _rtt: Time, _now: Time) {}
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
