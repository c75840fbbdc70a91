//! RFC 7323 timestamps on the receive side: TS.Recent, PAWS, and the echo that times
//! autotuning's round trip.

use super::*;

impl Receiver {
    /// A data segment of `len` bytes echoes our timestamp `tsecr`: for autotuning.
    pub fn on_echoed_timestamp(&mut self, now: Time, tsecr: u32, len: u32) {
        if let Some(a) = &mut self.autotune {
            a.on_echoed_timestamp(now, tsecr, len);
        }
    }

    /// RFC 7323 section 4.3: record TSval of a segment `[seg_start, seg_end)` that covers
    /// the last ACK sent (the SYN's always). An old duplicate wholly below it is outside the
    /// window (5.3 R2 comes before R3; Linux `tcp_sequence` before `tcp_replace_ts_recent`):
    /// our answer echoes the TSval of the data that last advanced the window, so a
    /// retransmission of data whose ACK was lost measures the RTT of that data.
    pub fn ts_recent_from(&mut self, o: &TcpOptions, seg_start: u64, seg_end: u64) {
        if let Some(ts) = o.timestamps {
            let covers = seg_start <= self.last_ack_sent && seg_end >= self.last_ack_sent;
            if !self.ts_recent_valid || covers {
                self.ts_recent = ts.val;
                self.ts_recent_valid = true;
            }
        }
    }

    /// RFC 7323 section 5.3 (PAWS): a segment whose TSval is older than TS.Recent is an old
    /// duplicate, whatever its sequence number says.
    pub fn paws_rejects(&self, o: &TcpOptions) -> bool {
        match o.timestamps {
            Some(ts) => self.ts_recent_valid && (ts.val.wrapping_sub(self.ts_recent) as i32) < 0,
            None => false,
        }
    }

    /// RFC 7323 TS.Recent, the value our timestamps echo.
    pub fn ts_recent(&self) -> u32 {
        self.ts_recent
    }
}
