//! Which entries an ACK's SACK block asks RACK and the delivery-rate sampler to look at.
//! An ACK repeats the last one's SACK blocks, grown at their edges: a block of a thousand
//! segments above a hole is otherwise walked whole on every ACK of the recovery. Each
//! remembers the blocks it scanned; what a block settled (RACK: the segments wholly inside
//! it SACKed; the sampler: the entries ending inside it delivered) stays settled until a
//! retransmission lands among the entries (the caller forgets then), so only the stretches
//! around the largest such block inside a new block are scanned. (The sampler scans whole
//! while any of its entries overlap another: a retransmission from inside a segment.)

/// Scanned blocks remembered at most (an ACK carries up to 4; forgetting one only costs a
/// longer scan).
const KEPT: usize = 16;

#[derive(Debug, Default)]
pub(super) struct SackScan {
    scanned: Vec<(u64, u64)>,
}

impl SackScan {
    /// The stretches of block `[start, end)` to scan (the segments that reach into them):
    /// all of it, or what lies below and above the largest block scanned before inside
    /// it. Records the block as scanned.
    pub fn stretches(&mut self, start: u64, end: u64) -> [(u64, u64); 2] {
        let inner = self
            .scanned
            .iter()
            .filter(|&&(l, r)| start <= l && r <= end)
            .max_by_key(|&&(l, r)| r - l)
            .copied();
        self.scanned.retain(|&(l, r)| !(start <= l && r <= end));
        if self.scanned.len() == KEPT {
            self.scanned.remove(0);
        }
        self.scanned.push((start, end));
        match inner {
            Some((l, r)) => [(start, l), (r, end)],
            None => [(start, end), (end, end)],
        }
    }

    /// Everything below `ack` has left the caller's segments.
    pub fn forget_below(&mut self, ack: u64) {
        self.scanned.retain(|&(_, r)| r > ack);
    }

    /// A transmission landed among the segments: nothing scanned is known settled.
    pub fn forget(&mut self) {
        self.scanned.clear();
    }
}

/// What the randomized tests of the shortcut's users share: a story of SACK blocks.
#[cfg(test)]
pub(super) mod story {
    /// A pseudo-random stream (a linear congruential generator).
    pub struct Rnd(pub u64);

    impl Rnd {
        /// A number below `n`.
        pub fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }
    }

    /// The next SACK block of a story of `seg`-byte segments, `next` sent and those below
    /// `una` acknowledged: mostly the last block again, grown at either end; else a new one
    /// (its left edge sometimes inside a segment with `mid_edges`).
    pub fn block(
        rnd: &mut Rnd,
        last: &mut Option<(u64, u64)>,
        (una, next, seg): (u64, u64, u64),
        mid_edges: bool,
    ) -> (u64, u64) {
        let b = match *last {
            Some((l, r)) if rnd.below(4) != 0 && l / seg > una => (
                (l - rnd.below(2) * seg).max((una + 1) * seg),
                (r + rnd.below(3) * seg).min(next * seg),
            ),
            _ => {
                let l = una + 1 + rnd.below(next - una - 1);
                let r = (l + 1 + rnd.below(30)).min(next);
                let inside = if mid_edges { rnd.below(2) * seg / 2 } else { 0 };
                (l * seg - inside, r * seg)
            }
        };
        *last = Some(b);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grown_block_is_scanned_around_the_block_it_contains() {
        let mut s = SackScan::default();
        assert_eq!(s.stretches(10, 20), [(10, 20), (20, 20)]);
        assert_eq!(s.stretches(5, 30), [(5, 10), (20, 30)]);
        assert_eq!(
            s.stretches(5, 30),
            [(5, 5), (30, 30)],
            "the same block: nothing"
        );
        assert_eq!(
            s.stretches(40, 50),
            [(40, 50), (50, 50)],
            "another block: whole"
        );
        s.forget_below(35);
        assert_eq!(
            s.stretches(5, 30),
            [(5, 30), (30, 30)],
            "forgotten below the ACK"
        );
        s.forget();
        assert_eq!(s.stretches(40, 50), [(40, 50), (50, 50)]);
    }
}
