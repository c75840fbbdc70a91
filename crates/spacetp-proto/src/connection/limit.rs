//! Why the sender is not sending: the reason a driver that has just polled the connection
//! dry attributes the time to, until the next event. Linux keeps part of this in its chrono
//! statistics (`tcp_chrono_start`: busy, receive-window limited, send-buffer limited); the
//! simulator's limit analysis names every reason, in the order the output path checks them.

use super::recovery::LossRecovery;
use super::{Connection, State};
use crate::time::Time;

/// What keeps the sender from sending now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendLimit {
    /// The handshake has not completed.
    Handshake,
    /// Waiting out a link outage a ground station announced (SCPS-TP persist mode).
    Outage,
    /// Loss recovery, or the wait for a retransmission timeout (backed off).
    Recovery,
    /// Everything the application wrote has been sent.
    AllSent,
    /// Everything written has been sent and the send buffer holds `buffer` bytes (in
    /// flight, not yet acknowledged): the application can write no more.
    SendBuffer { buffer: u64 },
    /// The peer's advertised window, `window` bytes, is full.
    ReceiveWindow { window: u64 },
    /// The congestion window, `window` bytes, is full.
    CongestionWindow { window: u64 },
    /// SCPS-TP rate control's token bucket is empty.
    RateControl,
    /// Pacing holds the next segment.
    Pacing,
    /// The connection has ended.
    Closed,
    /// Nothing holds it: a segment could leave now.
    Ready,
}

impl Connection {
    /// Why the sender is not sending at `now` (read-only: the output path's checks, in its
    /// order). Meaningful right after the driver polled every segment out.
    pub fn send_limit(&self, now: Time) -> SendLimit {
        match self.state {
            State::Closed | State::TimeWait => return SendLimit::Closed,
            State::Listen | State::SynSent | State::SynReceived => return SendLimit::Handshake,
            _ => {}
        }
        if self.scps.in_outage {
            return SendLimit::Outage;
        }
        if self.rtt.backoff_count() > 0 || self.recovery.in_recovery() {
            return SendLimit::Recovery;
        }
        if self.snd_nxt >= self.data_end {
            let buffered = self.data_end - self.snd_una.max(1);
            if buffered + self.seg_size as u64 > self.cfg.send_buffer.0 {
                return SendLimit::SendBuffer {
                    buffer: self.cfg.send_buffer.0,
                };
            }
            return SendLimit::AllSent;
        }
        let seg = (self.seg_size as u64).min(self.data_end - self.snd_nxt);
        let flight = self.bytes_in_flight();
        let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let cwnd_room = self.win.cwnd.saturating_sub(flight);
        let (rwnd_full, cwnd_full) = (rwnd_room < seg, cwnd_room < seg);
        if rwnd_full && (!cwnd_full || self.snd_wnd <= self.win.cwnd) {
            return SendLimit::ReceiveWindow {
                window: self.snd_wnd,
            };
        }
        if cwnd_full {
            return SendLimit::CongestionWindow {
                window: self.win.cwnd,
            };
        }
        let seg_bytes = self.seg_size as u64 + super::output::RATE_HEADER_BYTES;
        if self
            .scps
            .bucket
            .as_ref()
            .is_some_and(|b| !b.holds(now, seg_bytes))
        {
            return SendLimit::RateControl;
        }
        if self.pacing.is_some_and(|p| now < p.next_departure) {
            return SendLimit::Pacing;
        }
        SendLimit::Ready
    }
}
