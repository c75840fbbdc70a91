//! The advertised window and the application's reads: the buffer, manual reading, and
//! Linux's receive-buffer autotuning as data arrives and is read.

use super::*;

impl Receiver {
    /// Autotuning after the application read: the buffer may grow, and the window with it.
    pub(super) fn autotune_after_read(&mut self, now: Time) {
        let (delivered, rcv_nxt) = (self.delivered(), self.rcv_nxt);
        let ooo = self.ooo.last().map_or(0, |r| r.1.saturating_sub(rcv_nxt));
        if let Some(a) = &mut self.autotune {
            a.on_read(now, delivered, ooo);
        }
    }

    /// Window to advertise, in bytes: the buffer less what the application has not read yet
    /// (out-of-order data sits inside the window). Its right edge, read + buffer, never moves
    /// left.
    pub fn window(&self) -> u64 {
        self.buffer().saturating_sub(self.unread())
    }

    /// The most the window may be: `receive_buffer`, or what autotuning has grown it to.
    pub(super) fn buffer(&self) -> u64 {
        self.autotune.as_ref().map_or(self.rcv_buf, |a| a.limit())
    }

    /// In-order bytes received so far (holes given up by BETS excluded).
    pub(super) fn received(&self) -> u64 {
        self.rcv_nxt
            .saturating_sub(1 + self.fin_received as u64 + self.skipped)
    }

    /// Bytes delivered to the application.
    pub fn delivered(&self) -> u64 {
        if self.manual_read {
            self.read
        } else {
            self.received()
        }
    }

    /// In-order bytes waiting for the application.
    pub fn unread(&self) -> u64 {
        if self.manual_read {
            self.received() - self.read
        } else {
            0
        }
    }

    pub fn set_manual_read(&mut self) {
        self.read = self.received();
        self.manual_read = true;
    }

    /// The application reads up to `n` bytes. When this reopens a window the sender may be
    /// stalled on, send a window update (RFC 1122 4.2.3.3: once it grows by min(buffer/2, MSS)).
    pub fn read(&mut self, n: u64) -> u64 {
        let m = n.min(self.unread());
        self.read += m;
        if m > 0 {
            self.autotune_after_read(self.last_data);
        }
        let step = (self.buffer() / 2).min(self.mss);
        if self.last_adv_window < step && self.window() >= step {
            self.ack_now = true;
        }
        m
    }

    /// Autotuning on in-order data: whether the window grew.
    pub(super) fn autotune_on_data(&mut self, now: Time, len: u32) -> bool {
        let unread = self.unread();
        let (rcv_nxt, window) = (self.rcv_nxt, self.window());
        let Some(a) = &mut self.autotune else {
            return false;
        };
        if !self.ts_recent_valid {
            a.on_window_progress(now, rcv_nxt, window);
        }
        a.on_in_order_data(len, unread)
    }
}
