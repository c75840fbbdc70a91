//! SCPS-TP (CCSDS 714.0-B-2) on the TCP connection: what the capabilities option negotiated,
//! token-bucket rate control, and the SNACK option (kind 21) in both directions.
//!
//! SNACK: the receiver reports each hole above the cumulative ACK as `offset` and `size` in
//! segments (the hole starts at ACK + offset x segment), one option per hole as option space
//! allows; with the long form (SNACK2) the first option carries a bit vector in which bit i
//! (most significant bit of byte 0 first) set means "the i-th segment after the first hole is
//! missing too". The sender retransmits the named segments at once, without waiting for
//! duplicate ACKs.

use super::recovery::LossRecovery;
use super::timer::Timer;
use super::{Connection, State};
use crate::config::LossSource;
use crate::time::{ceil_to_u64, Time};
use spacetp_wire::{ScpsCapabilities, Snack, SnackList};

/// A connection's SCPS-TP state.
#[derive(Clone, Debug)]
pub(crate) struct ScpsState {
    /// The features both ends offered.
    pub agreed: Negotiated,
    /// Rate control (`scps.rate`).
    pub bucket: Option<TokenBucket>,
    /// SNACK congestion response: once per window of data (like NewReno's `recover`).
    pub snack_recover: u64,
    /// An explicit corruption signal (Corruption Experienced option, or a router's notice)
    /// holds corruption handling until then.
    pub corruption_until: Time,
    /// Link-outage persist mode: data stops, the retransmission timer is suspended, probes
    /// go out every `outage_probe` until the link is reported back.
    pub in_outage: bool,
}

impl ScpsState {
    pub fn new(cfg: &crate::config::ScpsConfig) -> Self {
        ScpsState {
            agreed: Negotiated::default(),
            bucket: cfg.rate.map(|r| TokenBucket::new(r.0, cfg.bucket.0)),
            snack_recover: 0,
            corruption_until: 0,
            in_outage: false,
        }
    }
}

/// The SCPS features both ends offered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Negotiated {
    pub scps: bool,
    pub snack: bool,
    pub snack_bitvector: bool,
    pub compression: bool,
    pub bets: bool,
}

impl Negotiated {
    pub fn from(ours: &crate::config::ScpsConfig, peer: Option<ScpsCapabilities>) -> Self {
        let Some(p) = peer.filter(|_| ours.enabled) else {
            return Negotiated::default();
        };
        let has = |bit: u8| p.vector & bit != 0;
        Negotiated {
            scps: true,
            snack: ours.snack && has(ScpsCapabilities::SNACK1),
            snack_bitvector: ours.snack_bitvector && has(ScpsCapabilities::SNACK2),
            compression: ours.compression && has(ScpsCapabilities::COMP),
            bets: ours.bets.is_some() && has(ScpsCapabilities::BETS),
        }
    }
}

/// The capability vector we offer.
pub fn offer(cfg: &crate::config::ScpsConfig) -> u8 {
    let mut v = 0;
    if cfg.snack {
        v |= ScpsCapabilities::SNACK1;
    }
    if cfg.snack_bitvector {
        v |= ScpsCapabilities::SNACK2;
    }
    if cfg.compression {
        v |= ScpsCapabilities::COMP;
    }
    if cfg.bets.is_some() {
        v |= ScpsCapabilities::BETS;
    }
    v
}

/// Token bucket: `rate` bytes per second, at most `depth` bytes of burst.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    bytes_per_ns: f64,
    depth: f64,
    tokens: f64,
    last: Time,
}

impl TokenBucket {
    pub fn new(rate_bps: f64, depth: u64) -> Self {
        TokenBucket {
            bytes_per_ns: rate_bps / 8e9,
            depth: depth as f64,
            tokens: depth as f64,
            last: 0,
        }
    }

    fn refill(&mut self, now: Time) {
        let dt = now.saturating_sub(self.last) as f64;
        self.tokens = (self.tokens + dt * self.bytes_per_ns).min(self.depth);
        self.last = now;
    }

    /// Whether `size` bytes could be taken now; otherwise the time at which they could.
    pub fn ready(&mut self, now: Time, size: u64) -> Result<(), Time> {
        self.refill(now);
        let need = (size as f64).min(self.depth);
        if self.tokens >= need {
            Ok(())
        } else {
            Err(now + ceil_to_u64((need - self.tokens) / self.bytes_per_ns))
        }
    }

    /// Whether `size` bytes could be taken at `now` (read-only: what `ready` answers).
    pub fn holds(&self, now: Time, size: u64) -> bool {
        let dt = now.saturating_sub(self.last) as f64;
        let tokens = (self.tokens + dt * self.bytes_per_ns).min(self.depth);
        tokens >= (size as f64).min(self.depth)
    }

    /// Take `size` bytes if the bucket holds them; otherwise the time at which it will.
    pub fn take(&mut self, now: Time, size: u64) -> Result<(), Time> {
        self.refill(now);
        let need = (size as f64).min(self.depth);
        if self.tokens >= need {
            self.tokens -= size as f64;
            Ok(())
        } else {
            Err(now + ceil_to_u64((need - self.tokens) / self.bytes_per_ns))
        }
    }
}

/// SNACK options describing `holes` (absolute `[start, end)`, ascending, all above `ack`), in
/// segments of `seg` bytes, using at most `room` bytes of option space.
pub fn snacks_for(
    holes: &[(u64, u64)],
    ack: u64,
    seg: u64,
    bitvector: bool,
    room: u32,
) -> SnackList {
    let mut out = SnackList::default();
    let mut used = 0u32;
    let mut i = 0;
    while i < holes.len() {
        let (s, e) = holes[i];
        let offset = ((s - ack) / seg).min(u16::MAX as u64) as u16;
        let size = (e - s).div_ceil(seg).clamp(1, u16::MAX as u64) as u16;
        let mut sn = Snack {
            offset,
            size,
            ..Default::default()
        };
        i += 1;
        // A hole longer than the size field can say (65535 units) ends no bit vector: the
        // following holes would lie before the vector's base.
        let described = s + size as u64 * seg >= e;
        if bitvector && out.len == 0 && described {
            // Mark the segments of the following holes that fall within 64 segments.
            let base = s + size as u64 * seg;
            while i < holes.len() && holes[i].0 < base + 64 * seg {
                let (hs, he) = holes[i];
                // Holes need not be whole segments (a peer can send any length): one that
                // starts inside the last segment the option's size covers begins after it.
                let mut pos = hs.max(base);
                while pos < he && pos < base + 64 * seg {
                    let bit = ((pos - base) / seg) as usize;
                    sn.bitvec[bit / 8] |= 0x80 >> (bit % 8);
                    pos += seg;
                }
                if he > base + 64 * seg {
                    break; // the rest of this hole goes in the next option
                }
                i += 1;
            }
            let used_bits = sn.bitvec.iter().rposition(|&b| b != 0).map_or(0, |j| j + 1);
            sn.bitvec_len = used_bits as u8;
        }
        let len = 6 + sn.bitvec_len as u32;
        if used + len > room || !out.push(sn) {
            break;
        }
        used += len;
    }
    out
}

/// The segment starts to resend for a SNACK, relative to the cumulative ACK `ack`: each hole
/// (and each bit-vector bit) covers `unit` bytes per count, resent in segments of `seg` bytes.
/// The two are equal unless the ends offered different MSS values (see `snack_unit`).
pub fn snacked_positions(list: &SnackList, ack: u64, unit: u64, seg: u64, mut f: impl FnMut(u64)) {
    let mut range = |a: u64, b: u64| {
        let mut pos = a;
        while pos < b {
            f(pos);
            pos += seg;
        }
    };
    for sn in list.as_slice() {
        let start = ack + sn.offset as u64 * unit;
        let base = start + sn.size as u64 * unit;
        range(start, base);
        for bit in 0..(sn.bitvec_len as usize * 8) {
            if sn.bitvec[bit / 8] & (0x80 >> (bit % 8)) != 0 {
                let a = base + bit as u64 * unit;
                range(a, a + unit);
            }
        }
    }
}

/// The SCPS-TP behaviour of a connection: record boundaries, the loss-source policy and its
/// corruption signals, link-outage persist mode, SNACKs received, rate control.
impl Connection {
    /// The end of the record that `pos` lies in, when records are marked with an SCPS-TP peer.
    pub(super) fn record_end_after(&self, pos: u64) -> Option<u64> {
        if !self.scps.agreed.scps {
            return None;
        }
        // Ends at or below snd_una were dropped as the ACKs came (`on_new_ack`).
        let i = self.record_ends.partition_point(|&e| e <= pos);
        self.record_ends.get(i).copied()
    }

    /// Is a loss to be treated as corruption now (SCPS-TP loss-source policy, or an explicit
    /// corruption signal within the last two round trips)?
    pub(super) fn corruption(&self, now: Time) -> bool {
        (self.cfg.scps.enabled && self.cfg.scps.loss_source == LossSource::Corruption)
            || now < self.scps.corruption_until
    }

    /// The peer (or its ground station, through the simulator) reports corrupted packets on
    /// this connection's path: treat losses as corruption for two round trips.
    pub fn on_corruption_notice(&mut self, now: Time) {
        let two_rtt = 2 * self.rtt.srtt().unwrap_or(self.rtt.rto());
        self.scps.corruption_until = self.scps.corruption_until.max(now + two_rtt);
    }

    /// This endpoint's link layer discarded a corrupted packet addressed to it: echo it to the
    /// peer with the Corruption Experienced option (SCPS-TP).
    pub fn on_corruption_detected(&mut self) {
        if self.scps.agreed.scps {
            self.rx.echo_corruption();
        }
    }

    /// A ground station on the path reports its link down (SCPS-TP link outage): enter persist
    /// mode. TCP ignores the notice (as a host ignores an unknown ICMP type).
    pub fn on_link_outage(&mut self, now: Time) {
        let sending = matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::LastAck
                | State::Closing
        );
        if !self.scps.agreed.scps || self.scps.in_outage || !sending {
            return;
        }
        self.scps.in_outage = true;
        self.stats.outages += 1;
        self.timers.stop(Timer::Rto);
        let at = now + self.outage_probe_interval();
        self.timers.set(Timer::OutageProbe, at);
    }

    /// The link is back: leave persist mode at the old window, resend the first unacknowledged
    /// segment (what was in flight when the link failed is presumed lost) and restart the timer.
    pub fn on_link_restored(&mut self, now: Time) {
        if !self.scps.in_outage {
            return;
        }
        self.scps.in_outage = false;
        self.timers.stop(Timer::OutageProbe);
        if self.snd_max > self.snd_una {
            self.resend.push_front(self.snd_una);
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
    }

    /// Probes in persist mode: one per RTO (not backed off), at most `max_rto` apart.
    pub(super) fn outage_probe_interval(&self) -> Time {
        self.rtt.rto().min(self.cfg.max_rto.0)
    }

    /// The payload of a segment of `mss` bytes once the timestamp option (if negotiated)
    /// takes its share. Applied to the data sender's offered MSS, this is also the unit of
    /// SNACK offsets and sizes: the SCPS Reference Implementation's reading (the standard
    /// says "MSS units"); it differs from the segment size only when the two ends offered
    /// different MSS values, and then it is what lets the two interoperate.
    pub(super) fn payload_of(&self, mss: u32) -> u64 {
        mss.saturating_sub(if self.options.timestamps { 12 } else { 0 })
            .max(1) as u64
    }

    /// A SNACK names holes: queue their segments for retransmission now; under the congestion
    /// policy the first SNACK of a window also reduces the window once.
    pub(super) fn on_snack(&mut self, now: Time, ack_wire_abs: u64, list: &SnackList) {
        self.stats.snacks_received += 1;
        let (unit, seg) = (self.payload_of(self.own_mss), self.seg_size as u64);
        let una = ack_wire_abs.max(self.snd_una);
        let max = self.snd_max.min(self.data_end);
        let window = self.resend_window();
        let resend = &mut self.resend;
        let mut named = false;
        snacked_positions(list, ack_wire_abs, unit, seg, |pos| {
            if pos < una || pos >= max || resend.contains(pos) {
                return;
            }
            named = true;
            if !resend.resent_within(pos, now, window) {
                resend.push_back_snacked(pos);
            }
        });
        // One reduction per window of data, whether a SNACK or duplicate ACKs saw the loss first.
        if named
            && !self.corruption(now)
            && self.snd_una >= self.scps.snack_recover
            && !self.recovery.in_recovery()
        {
            let flight = self.snd_max - self.snd_una;
            self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, now);
            self.win.cwnd = self.win.ssthresh;
            self.scps.snack_recover = self.snd_max;
            self.stats.fast_retransmits += 1;
        }
    }

    /// Rate control: could `bytes` leave now (`take`: and take the tokens)? If not, wake up
    /// when they could.
    pub(super) fn rate_check(&mut self, now: Time, bytes: u64, take: bool) -> bool {
        let Some(b) = &mut self.scps.bucket else {
            return true;
        };
        let r = if take {
            b.take(now, bytes)
        } else {
            b.ready(now, bytes)
        };
        match r {
            Ok(()) => true,
            Err(at) => {
                self.timers.set_earliest(Timer::Pace, at);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_option_per_hole_in_segment_units() {
        let holes = [(1001, 2001), (3001, 6001)];
        let l = snacks_for(&holes, 1001, 1000, false, 40);
        let got: Vec<(u16, u16)> = l.as_slice().iter().map(|s| (s.offset, s.size)).collect();
        assert_eq!(got, vec![(0, 1), (2, 3)]);
        let mut named = vec![];
        snacked_positions(&l, 1001, 1000, 1000, |p| named.push(p));
        assert_eq!(named, vec![1001, 3001, 4001, 5001]);
    }

    #[test]
    fn bit_vector_names_the_later_holes() {
        // Holes at segments 0, 2-3 and 5 after the ACK; the first option covers all three.
        let holes = [(0, 100), (200, 400), (500, 600)];
        let l = snacks_for(&holes, 0, 100, true, 40);
        assert_eq!(l.len, 1);
        let s = l.as_slice()[0];
        assert_eq!((s.offset, s.size), (0, 1));
        // bit 0 = segment 1 (present), bits 1-2 = segments 2-3, bit 4 = segment 5
        assert_eq!(s.bitvec[0], 0b0110_1000);
        assert_eq!(s.bitvec_len, 1);
        let mut named = vec![];
        snacked_positions(&l, 0, 100, 100, |p| named.push(p));
        assert_eq!(named, vec![0, 200, 300, 500]);
    }

    #[test]
    fn option_space_limits_the_holes_reported() {
        let holes: Vec<(u64, u64)> = (0..10).map(|i| (i * 200 + 100, i * 200 + 200)).collect();
        let l = snacks_for(&holes, 0, 100, false, 28);
        assert_eq!(l.len, 4, "4 x 6 bytes fit in 28");
    }

    #[test]
    fn the_bucket_clocks_out_at_its_rate() {
        let mut b = TokenBucket::new(8_000.0, 1000); // 1000 bytes/s, 1000 bytes deep
        assert!(b.take(0, 1000).is_ok());
        assert_eq!(b.take(0, 500), Err(500_000_000));
        assert!(b.take(500_000_000, 500).is_ok());
    }

    #[test]
    fn holes_that_are_not_whole_segments_still_make_a_valid_bit_vector() {
        // A hole [0, 100) with 1000-byte segments is one segment long; the next hole starts
        // at 150, inside that segment (found by the connection fuzzer: index out of bounds).
        let l = snacks_for(&[(0, 100), (150, 2100)], 0, 1000, true, 40);
        let first = l.as_slice()[0];
        assert_eq!((first.offset, first.size), (0, 1));
        assert_eq!(first.bitvec[0], 0b1100_0000, "segments 1000-3000 are named");
    }
}
