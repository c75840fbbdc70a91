//! Fractional window growth shared by the controllers whose per-ACK increase is a fraction of a
//! byte-sized step (Scalable adds 0.01 MSS per segment acknowledged, HighSpeed a(w)/w, ...).
//! The remainder is carried in micro-bytes, an integer, so that a sum of increments is exact to
//! 10^-6 byte whatever the order (100 ACKs of 0.01 x 1460 B add exactly 1460 B).

use super::{AckEvent, Window};

const MICRO: u64 = 1_000_000;

/// The part of a window increase not yet added to cwnd, in millionths of a byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Carry {
    micro: u64,
}

impl Carry {
    /// Add `bytes` (fractional, negative counts as 0) to the carry and return the whole bytes
    /// now due to cwnd.
    pub fn take(&mut self, bytes: f64) -> u64 {
        if bytes.is_finite() && bytes > 0.0 {
            self.micro = self
                .micro
                .saturating_add((bytes * MICRO as f64).round() as u64);
        }
        let whole = self.micro / MICRO;
        self.micro %= MICRO;
        whole
    }

    /// Grow `w.cwnd` by `bytes` (fractional).
    pub fn grow(&mut self, w: &mut Window, bytes: f64) {
        w.cwnd = w.cwnd.saturating_add(self.take(bytes));
    }

    /// Forget the remainder (after a window reduction).
    pub fn clear(&mut self) {
        self.micro = 0;
    }
}

/// Segments an ACK covers, fractional: bytes acknowledged / MSS (RFC 9438's `segments_acked`).
pub(crate) fn segments_acked(w: &Window, ev: &AckEvent) -> f64 {
    ev.acked as f64 / w.mss.max(1) as f64
}

/// cwnd in segments, fractional.
pub(crate) fn cwnd_segments(w: &Window) -> f64 {
    w.cwnd as f64 / w.mss.max(1) as f64
}

/// RFC 5681 slow start, as NewReno here: min(acked, SMSS) per ACK (or up to L SMSS with
/// RFC 3465 byte counting).
pub(crate) fn slow_start(w: &mut Window, ev: &AckEvent) {
    w.cwnd = w.cwnd.saturating_add(ev.slow_start_increase(w.mss));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn carry_sums_fractions_exactly() {
        let mut c = Carry::default();
        let mut total = 0;
        for _ in 0..100 {
            total += c.take((1.01 - 1.0) * 1460.0);
        }
        assert_eq!(total, 1460);
        assert_eq!(c.take(0.4), 0);
        assert_eq!(c.take(0.6), 1);
        assert_eq!(c.take(-5.0), 0);
    }
}
