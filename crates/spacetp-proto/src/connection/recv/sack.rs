//! Out-of-order data: the ranges held above rcv_nxt, the holes between them, and the SACK
//! blocks (RFC 2018, D-SACK RFC 2883) that report them.

use super::*;

impl Receiver {
    /// The holes between rcv_nxt and the highest out-of-order byte, ascending (at most
    /// `out.len()`); returns how many.
    pub fn holes(&self, out: &mut [(u64, u64)]) -> usize {
        let mut n = 0;
        let mut from = self.rcv_nxt;
        for &(s, e) in &self.ooo {
            if n == out.len() {
                break;
            }
            if s > from {
                out[n] = (from, s);
                n += 1;
            }
            from = e;
        }
        n
    }

    /// RFC 2883: a segment received twice is reported in the next ACK's first SACK block.
    pub(super) fn note_duplicate(&mut self, start: u64, end: u64) {
        if self.dsack {
            self.pending_dsack = Some((start, end));
        }
    }

    pub(super) fn note_recent(&mut self, pos: u64) {
        let n = self.recent_len.min(self.recent.len() - 1);
        self.recent.copy_within(0..n, 1);
        self.recent[0] = pos;
        self.recent_len = n + 1;
    }

    /// Fill `out` with up to `max` SACK blocks (wire sequence numbers), newest first.
    #[inline]
    pub fn sack_blocks(&self, max: usize, out: &mut SackBlocks) {
        *out = SackBlocks::default();
        if let Some((s, e)) = self.pending_dsack {
            out.push(to_wire(self.irs, s), to_wire(self.irs, e));
        }
        for &pos in &self.recent[..self.recent_len] {
            if out.len as usize >= max {
                break;
            }
            let i = self.ooo.partition_point(|&(_, e)| e <= pos);
            let Some(&(s, e)) = self.ooo.get(i).filter(|r| r.0 <= pos) else {
                continue;
            };
            let (ws, we) = (to_wire(self.irs, s), to_wire(self.irs, e));
            if !out.as_slice().iter().any(|b| b.0 == ws) {
                out.push(ws, we);
            }
        }
    }

    pub(super) fn insert_ooo(&mut self, start: u64, end: u64) {
        crate::ranges::insert(&mut self.ooo, start, end);
    }

    pub(super) fn absorb_ooo(&mut self) {
        let n = self
            .ooo
            .iter()
            .take_while(|&&(s, _)| s <= self.rcv_nxt)
            .count();
        for &(_, e) in &self.ooo[..n] {
            self.rcv_nxt = self.rcv_nxt.max(e);
        }
        self.ooo.drain(..n);
    }
}
