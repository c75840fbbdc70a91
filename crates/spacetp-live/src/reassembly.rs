//! The bytes a relaying gateway received from the space link, by absolute stream position,
//! until the kernel socket takes them.
//!
//! Exact relaying rests on one rule: a byte is written here only where the connection said
//! it took it in ([`Accepted`]), the first copy of a byte wins, and a byte is handed on only
//! once every byte before it was written. [`Reassembly::in_order`] is that prefix; the
//! gateway delivers `min(connection's readable, in_order)` and treats any difference as a
//! broken invariant (a debug assertion, and a reset in release builds), never filling a gap.

use spacetp_proto::Accepted;

#[derive(Default)]
pub struct Reassembly {
    /// Absolute position of `buf[0]`: the next byte to hand to the socket.
    base: u64,
    buf: std::collections::VecDeque<u8>,
    /// Written ranges `[start, end)` at or above `base`, sorted and disjoint.
    filled: Vec<(u64, u64)>,
}

impl Reassembly {
    /// Positions start at 1 (position 0 is the peer's SYN).
    pub fn new() -> Self {
        Reassembly {
            base: 1,
            ..Default::default()
        }
    }

    /// Store the part of `payload` that the connection took in. Bytes already written keep
    /// their first value.
    pub fn store(&mut self, a: Accepted, payload: &[u8]) {
        let skip = a.skip as usize;
        let Some(data) = payload.get(skip..skip + a.len as usize) else {
            debug_assert!(
                false,
                "accepted range {a:?} outside a {}-byte payload",
                payload.len()
            );
            return;
        };
        let (mut start, end) = (a.pos, a.pos + a.len as u64);
        start = start.max(self.base);
        if start >= end {
            return;
        }
        let need = (end - self.base) as usize;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        for (s, e) in self.gaps(start, end) {
            let from = &data[(s - a.pos) as usize..(e - a.pos) as usize];
            let at = (s - self.base) as usize;
            for (slot, &b) in self.buf.range_mut(at..at + from.len()).zip(from) {
                *slot = b;
            }
            self.mark(s, e);
        }
    }

    /// The parts of `[start, end)` not written yet.
    fn gaps(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut from = start;
        for &(s, e) in &self.filled {
            if e <= from {
                continue;
            }
            if s >= end {
                break;
            }
            if s > from {
                out.push((from, s));
            }
            from = from.max(e);
        }
        if from < end {
            out.push((from, end));
        }
        out
    }

    fn mark(&mut self, start: u64, end: u64) {
        spacetp_proto::ranges::insert(&mut self.filled, start, end);
    }

    /// Bytes from `base` on that were all written: the most that may be handed on.
    pub fn in_order(&self) -> u64 {
        match self.filled.first() {
            Some(&(s, e)) if s == self.base => e - s,
            _ => 0,
        }
    }

    /// Up to `n` of the next in-order bytes (fewer where the ring wraps: the caller writes
    /// what it gets and asks again).
    pub fn peek(&self, n: usize) -> &[u8] {
        let n = n.min(self.in_order() as usize);
        let (a, _) = self.buf.as_slices();
        &a[..n.min(a.len())]
    }

    /// The socket took `n` in-order bytes.
    pub fn consume(&mut self, n: usize) {
        let n = n.min(self.in_order() as usize);
        self.buf.drain(..n);
        self.base += n as u64;
        if let Some(first) = self.filled.first_mut() {
            first.0 = self.base;
            if first.0 == first.1 {
                self.filled.remove(0);
            }
        }
    }

    /// Bytes held (in order or not).
    #[cfg(test)]
    pub fn held(&self) -> u64 {
        self.filled.iter().map(|&(s, e)| e - s).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acc(pos: u64, skip: u32, len: u32) -> Accepted {
        Accepted { pos, skip, len }
    }

    #[test]
    fn a_gap_is_never_handed_on() {
        let mut r = Reassembly::new();
        r.store(acc(101, 0, 100), &[7; 100]);
        assert_eq!(r.in_order(), 0, "bytes 1..101 never arrived");
        assert!(r.peek(100).is_empty());
        r.store(acc(1, 0, 100), &[5; 100]);
        assert_eq!(r.in_order(), 200);
        let got = r.peek(200).to_vec();
        assert_eq!(&got[..100], &[5; 100]);
        assert_eq!(&got[100..], &[7; 100]);
    }

    #[test]
    fn the_first_copy_of_a_byte_wins() {
        let mut r = Reassembly::new();
        r.store(acc(1, 0, 10), &[1; 10]);
        r.store(acc(6, 0, 10), &[2; 10]);
        assert_eq!(r.peek(15), &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2]);
    }

    #[test]
    fn only_the_accepted_part_of_a_payload_is_stored() {
        let mut r = Reassembly::new();
        let payload: Vec<u8> = (0..100).collect();
        r.store(acc(1, 40, 20), &payload);
        assert_eq!(r.peek(100), &payload[40..60]);
    }

    #[test]
    fn consumed_bytes_are_forgotten_and_positions_move_on() {
        let mut r = Reassembly::new();
        r.store(acc(1, 0, 10), &[1; 10]);
        r.consume(4);
        assert_eq!(r.in_order(), 6);
        r.store(acc(3, 0, 20), &[9; 20]); // 3..5 already handed on, 5..11 held
        let mut got = Vec::new();
        while !r.peek(100).is_empty() {
            let chunk = r.peek(100).to_vec();
            r.consume(chunk.len());
            got.extend(chunk);
        }
        assert_eq!(got, [1, 1, 1, 1, 1, 1, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9]);
        assert_eq!((r.in_order(), r.held()), (0, 0));
    }
}
