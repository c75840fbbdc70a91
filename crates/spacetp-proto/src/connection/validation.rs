//! Which received segments a synchronized connection may act on: RFC 9293's acceptability
//! test and RFC 5961's defences against blind in-window attacks.
//!
//! - An RST resets the connection only when its sequence number is exactly the next one
//!   expected; anywhere else in the receive window it draws a challenge ACK (the true peer,
//!   which really reset, answers that with an RST at the exact number); outside the window it
//!   is dropped (RFC 5961 section 3.2).
//! - A SYN on a synchronized connection draws a challenge ACK and is dropped, whatever its
//!   sequence number (section 4.2).
//! - An ACK for data never sent, or older than the largest window the peer ever offered
//!   below `snd_una`, drops its segment and draws an ACK (section 5.2).
//! - Data entirely beyond the right edge of the receive window is dropped and answered with
//!   an ACK (RFC 9293 section 3.10.7.4).
//!
//! Challenge and out-of-window ACKs are rate-limited per connection, as Linux does with
//! `tcp_invalid_ratelimit` (500 ms), so a flood of spoofed segments cannot turn the
//! connection into an ACK generator.

use super::{CloseReason, Connection, State};
use crate::seq::from_wire;
use crate::time::{Time, MS};
use spacetp_wire::{flags, TcpHeader};

/// At most one challenge or out-of-window ACK per this interval (Linux's
/// `net.ipv4.tcp_invalid_ratelimit` default).
pub(super) const INVALID_ACK_INTERVAL: Time = 500 * MS;

/// What the connection does with an incoming RST (RFC 5961 section 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RstVerdict {
    Reset,
    Challenge,
    Drop,
}

impl Connection {
    /// RFC 5961 section 3.2 for an RST starting at absolute position `start`.
    pub(super) fn rst_verdict(&self, start: u64) -> RstVerdict {
        let next = self.rx.next_expected();
        if start == next {
            RstVerdict::Reset
        } else if start > next && start < next + self.rx.window() {
            RstVerdict::Challenge
        } else {
            RstVerdict::Drop
        }
    }

    /// An RST arrived on a synchronized connection.
    pub(super) fn on_rst(&mut self, now: Time, start: u64) {
        match self.rst_verdict(start) {
            RstVerdict::Reset => {
                self.state = State::Closed;
                self.close_reason = Some(CloseReason::Reset);
                self.stop_timers();
            }
            RstVerdict::Challenge => {
                self.stats.rst_rejected += 1;
                self.challenge_ack(now);
            }
            RstVerdict::Drop => self.stats.rst_rejected += 1,
        }
    }

    /// A SYN arrived after the handshake began. In SYN-RECEIVED a copy of the peer's SYN
    /// means our SYN-ACK was lost: send it again. Anything else is RFC 5961 section 4.2.
    pub(super) fn on_syn_when_synchronized(&mut self, now: Time, start: u64) {
        if self.state == State::SynReceived && start == 0 {
            self.syn_pending = true;
            return;
        }
        self.stats.syn_rejected += 1;
        self.challenge_ack(now);
    }

    /// RFC 5961 section 5.2: is the ACK field of this segment acceptable? `ack` is absolute.
    /// An unacceptable one drops the whole segment and draws a (rate-limited) ACK.
    pub(super) fn ack_acceptable(&mut self, now: Time, ack: u64) -> bool {
        // MAX.SND.WND: the largest window the peer offered, its SYN's included.
        let too_old = ack + self.max_snd_wnd.max(self.snd_wnd) < self.snd_una;
        if ack > self.snd_max || too_old {
            self.stats.ack_rejected += 1;
            self.challenge_ack(now);
            return false;
        }
        true
    }

    /// RFC 9293 3.10.7.4: data that starts at or beyond the right edge of the receive window
    /// is not acceptable (old duplicates below it are, and are answered as duplicates).
    pub(super) fn beyond_window(&mut self, now: Time, start: u64, len: u32) -> bool {
        if len == 0 || start < self.rx.next_expected() + self.rx.window() {
            return false;
        }
        self.stats.out_of_window_segments += 1;
        self.challenge_ack(now);
        true
    }

    /// Send an ACK now unless one of these went out less than `INVALID_ACK_INTERVAL` ago.
    fn challenge_ack(&mut self, now: Time) {
        if self
            .last_challenge_ack
            .is_some_and(|t| now < t + INVALID_ACK_INTERVAL)
        {
            self.stats.challenge_acks_suppressed += 1;
            return;
        }
        self.last_challenge_ack = Some(now);
        self.stats.challenge_acks += 1;
        self.rx.request_ack();
    }

    /// RFC 9293 3.10.7.1 for a connection that ended by a reset, ours or the peer's: a
    /// segment from the peer, which has not heard of it (our RST lost, or answered with a
    /// challenge ACK), is answered with an RST at the sequence number it acknowledges, which
    /// it accepts as exact. (A connection closed normally stays silent: TIME-WAIT answers.)
    pub(super) fn on_segment_after_abort(&mut self, hdr: &TcpHeader) {
        let reset = self.we_aborted() || self.close_reason == Some(CloseReason::Reset);
        if !reset || hdr.has(flags::RST) || !hdr.has(flags::ACK) {
            return;
        }
        self.rst_at = Some(from_wire(self.iss, hdr.ack, self.snd_una));
    }
}

/// RFC 9293 3.10.7.1: the RST that answers a segment `hdr` (with `len` payload bytes) that
/// arrived for no connection. An RST is never answered (None). With the ACK bit on, the
/// reset carries the number the segment acknowledges, which its sender accepts as exact
/// (RFC 5961); otherwise it acknowledges the segment.
pub fn reset_reply(hdr: &TcpHeader, len: u32) -> Option<TcpHeader> {
    if hdr.has(flags::RST) {
        return None;
    }
    let mut r = TcpHeader {
        src_port: hdr.dst_port,
        dst_port: hdr.src_port,
        ..Default::default()
    };
    if hdr.has(flags::ACK) {
        r.seq = hdr.ack;
        r.flags = flags::RST;
    } else {
        let consumed = len + hdr.has(flags::SYN) as u32 + hdr.has(flags::FIN) as u32;
        r.ack = hdr.seq.wrapping_add(consumed);
        r.flags = flags::RST | flags::ACK;
    }
    Some(r)
}
