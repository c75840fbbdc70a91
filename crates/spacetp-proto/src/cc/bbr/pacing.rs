//! The pacing rate (`bbr_set_pacing_rate`): gain x bw, less a 1% margin so that the
//! bottleneck queue drains (`bbr_pacing_margin_percent`); before the pipe is known full it
//! only rises. Until the first RTT sample it is the initial window over a nominal 1 ms, then
//! high_gain x cwnd / srtt (`bbr_init_pacing_rate_from_rtt`). The connection caps it at
//! `max_pacing_rate`. Also the TSO autosizing goal that the quantization budget counts, and
//! the segments that leave together at each paced departure (`tcp_tso_segs`).

use super::{Bbr, HIGH_GAIN};
use crate::cc::AckEvent;
use crate::time::{Time, MS};

const MARGIN: f64 = 0.99;
/// Below this rate (bytes per second) one segment per burst (`bbr_min_tso_rate`, 1.2 Mb/s).
const MIN_TSO_RATE: f64 = 1_200_000.0 / 8.0;
/// Linux sizes bursts to about 1 ms of data (`sk_pacing_shift` 10: rate / 1024).
const PACING_SHIFT_DIVISOR: f64 = 1024.0;
/// A GSO packet's payload at most (`GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`).
const GSO_MAX_PAYLOAD: f64 = 65536.0 - 1.0 - 320.0;
/// `sysctl_tcp_tso_rtt_log`: the min-RTT allowance halves for every 2^9 us of min RTT.
const TSO_RTT_LOG: u32 = 9;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Pacing {
    /// Bytes per second; None until the first ACK.
    rate: Option<f64>,
    has_seen_rtt: bool,
}

impl Pacing {
    /// Before the first ACK the initial window leaves unpaced.
    pub fn rate(&self) -> f64 {
        self.rate.unwrap_or(f64::INFINITY)
    }
}

impl Bbr {
    pub(super) fn set_pacing_rate(&mut self, bw: f64, gain: f64, ev: &AckEvent, cwnd: u64) {
        if self.pacing.rate.is_none() || (!self.pacing.has_seen_rtt && ev.srtt.is_some()) {
            let rtt: Time = ev.srtt.unwrap_or(MS).max(1);
            self.pacing.has_seen_rtt = ev.srtt.is_some();
            self.pacing.rate = Some(cwnd as f64 * 1e9 / rtt as f64 * HIGH_GAIN * MARGIN);
        }
        let rate = bw * gain * MARGIN;
        if self.startup.reached() || rate > self.pacing.rate() {
            self.pacing.rate = Some(rate);
        }
    }

    /// `bbr_tso_segs_goal`: segments per burst at the current pacing rate.
    pub(super) fn tso_segs_goal(&self) -> u64 {
        let rate = self.pacing.rate().min(1e15);
        let min = Self::min_tso_segs(rate);
        let bytes = (rate / PACING_SHIFT_DIVISOR).min(GSO_MAX_PAYLOAD);
        ((bytes / self.mss as f64) as u64).max(min).min(0x7F)
    }

    /// `bbr_min_tso_segs`: one segment per burst below 1.2 Mb/s, else two.
    fn min_tso_segs(rate: f64) -> u64 {
        if rate < MIN_TSO_RATE {
            1
        } else {
            2
        }
    }

    /// `tcp_tso_segs` with BBR's `min_tso_segs`: the segments of one paced departure at
    /// `rate` (Linux's `tcp_tso_autosize`: about 1 ms of data, `rate >> sk_pacing_shift`,
    /// plus a GSO packet halved for every 512 us of min RTT, at most one GSO packet). Seen
    /// on this machine's kernel 6.18 (bbr across `spacetp emulate`): at 50 Mb/s and 40 ms,
    /// departures of 4 segments about every 0.97 ms, 5 when probing, 3 when draining.
    pub(super) fn tso_segs(rate: f64, min_rtt: Option<Time>, mss: u64) -> u64 {
        let gso_max = GSO_MAX_PAYLOAD as u64;
        let mut bytes = rate.min(1e15) as u64 >> 10;
        let r = min_rtt.map_or(u64::MAX, |t| (t / 1000) >> TSO_RTT_LOG);
        if r < 32 {
            bytes += gso_max >> r;
        }
        (bytes.min(gso_max) / mss.max(1)).max(Self::min_tso_segs(rate))
    }
}
