//! SCPS-TP's best-effort delivery on the receive side: BETS gives up a hole at rcv_nxt after
//! a wait, and the record-boundary option counts whole records delivered (a record that lost
//! bytes to a hole is not whole).

use super::Receiver;
use crate::connection::timer::{Timer, TimerTable};
use crate::connection::ConnStats;
use crate::time::Time;

impl Receiver {
    /// Start of the data (or FIN) waiting beyond a hole at rcv_nxt, if any.
    pub(super) fn beyond_hole(&self) -> Option<u64> {
        let fin = self
            .fin_at
            .filter(|&f| !self.fin_received && f > self.rcv_nxt);
        self.ooo.first().map(|r| r.0).or(fin)
    }

    /// When BETS gives up the current hole.
    pub(super) fn bets_deadline(&self) -> Option<Time> {
        Some(self.hole_since? + self.bets_wait?)
    }

    /// BETS: move past the hole at rcv_nxt (the table stopped its timer); its bytes are lost
    /// to the application. Returns true when this reaches the FIN.
    pub fn give_up_hole(
        &mut self,
        now: Time,
        stats: &mut ConnStats,
        timers: &mut TimerTable,
    ) -> bool {
        let Some(next) = self.beyond_hole() else {
            self.hole_since = None;
            return false;
        };
        let gap = next - self.rcv_nxt;
        self.skipped += gap;
        stats.bets_holes += 1;
        stats.bets_bytes_skipped += gap;
        self.rcv_nxt = next;
        // Records that lost bytes to the hole are not delivered whole: forget their ends, and
        // unless a record ended exactly where the hole ends, the record running on past it
        // is damaged too.
        let n = self.record_ends.partition_point(|&e| e <= next);
        let clean_cut = n > 0 && self.record_ends[n - 1] == next;
        self.record_ends.drain(..n);
        self.damaged_record = !clean_cut;
        self.absorb_ooo();
        self.complete_records();
        self.hole_since = self.beyond_hole().map(|_| now);
        timers.put(Timer::Bets, self.bets_deadline());
        self.ack_now = true;
        self.consume_fin()
    }

    /// A segment ending at `end` carried the record boundary option.
    pub fn note_record_end(&mut self, end: u64) {
        if end > self.rcv_nxt {
            let i = self.record_ends.partition_point(|&e| e < end);
            if self.record_ends.get(i) != Some(&end) {
                self.record_ends.insert(i, end);
            }
        }
    }

    /// Counts the records that rcv_nxt has passed the end of.
    pub(super) fn complete_records(&mut self) {
        let n = self.record_ends.partition_point(|&e| e <= self.rcv_nxt);
        if n > 0 {
            self.records += n as u64 - self.damaged_record as u64;
            self.damaged_record = false;
            self.record_ends.drain(..n);
        }
    }

    pub fn records_delivered(&self) -> u64 {
        self.records
    }

    /// Bytes given up by BETS.
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
}
