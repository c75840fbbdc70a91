//! Congestion controllers, one file each behind one small trait (after Linux's
//! `tcp_congestion_ops` and quinn's `Controller`). The connection owns the window numbers;
//! a controller only decides how they move.

mod newreno;

pub use newreno::NewReno;

use crate::config::CongestionControlKind;
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

/// What an ACK that advanced the left edge tells the controller.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: Time,
    /// Bytes newly acknowledged.
    pub acked: u64,
    /// Bytes in flight before this ACK.
    pub flight_before: u64,
    /// Smoothed and minimum RTT when known.
    pub srtt: Option<Time>,
    pub min_rtt: Option<Time>,
}

pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;

    /// New data acknowledged outside loss recovery: grow the window.
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent);

    /// A loss detected by duplicate ACKs (or by an explicit signal): return the new ssthresh.
    /// The recovery algorithm sets cwnd from it.
    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64) -> u64 {
        (flight / 2).max(2 * w.mss)
    }

    /// The retransmission timer expired (RFC 5681 eq. 4: ssthresh = max(FlightSize/2, 2 SMSS),
    /// cwnd = 1 SMSS).
    fn on_timeout(&mut self, w: &mut Window, flight: u64) {
        w.ssthresh = (flight / 2).max(2 * w.mss);
        w.cwnd = w.mss;
    }

    /// Every valid RTT sample (delay-based controllers use it).
    fn on_rtt_sample(&mut self, _rtt: Time, _now: Time) {}
}

pub fn new_controller(kind: CongestionControlKind) -> Box<dyn CongestionControl> {
    match kind {
        CongestionControlKind::Newreno => Box::new(NewReno),
    }
}
