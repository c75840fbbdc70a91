//! The sender's SACK scoreboard (RFC 6675 section 3): which bytes above the cumulative ACK the
//! receiver holds, kept as sorted disjoint `[start, end)` ranges of absolute positions. Every
//! query is a scan of the ranges (a few dozen at most), never of the window.

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    sacked: Vec<(u64, u64)>,
}

impl Scoreboard {
    /// Merge SACK blocks (absolute positions), keeping only what lies in `(una, max]`.
    /// Returns how many bytes were newly SACKed.
    pub fn add(&mut self, blocks: &[(u64, u64)], una: u64, max: u64) -> u64 {
        let before = self.sacked_bytes();
        for &(s, e) in blocks {
            let (s, e) = (s.max(una), e.min(max));
            if s < e {
                crate::ranges::insert(&mut self.sacked, s, e);
            }
        }
        self.sacked_bytes() - before
    }

    /// Forget everything below the new cumulative ACK.
    pub fn advance(&mut self, una: u64) {
        self.sacked.retain_mut(|r| {
            r.0 = r.0.max(una);
            r.0 < r.1
        });
    }

    pub fn sacked_bytes(&self) -> u64 {
        self.sacked.iter().map(|r| r.1 - r.0).sum()
    }

    /// Highest SACKed position (exclusive end), or `una` when nothing is SACKed (FACK's
    /// snd.fack).
    pub fn highest(&self, una: u64) -> u64 {
        self.sacked.last().map_or(una, |r| r.1).max(una)
    }

    /// SACKed bytes in `[a, b)`.
    pub fn sacked_in(&self, a: u64, b: u64) -> u64 {
        self.sacked
            .iter()
            .map(|&(s, e)| e.min(b).saturating_sub(s.max(a)))
            .sum()
    }

    /// Bytes not SACKed in `[a, b)`.
    pub fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        b.saturating_sub(a) - self.sacked_in(a, b)
    }

    /// If `pos` is SACKed, the end of its range.
    pub fn sacked_end(&self, pos: u64) -> Option<u64> {
        let i = self.sacked.partition_point(|&(_, e)| e <= pos);
        self.sacked.get(i).filter(|r| r.0 <= pos).map(|r| r.1)
    }

    /// The first SACKed position at or after `pos` (where an unSACKed run starting at `pos`
    /// ends), or `u64::MAX`.
    pub fn next_sacked(&self, pos: u64) -> u64 {
        let i = self.sacked.partition_point(|&(_, e)| e <= pos);
        self.sacked.get(i).map_or(u64::MAX, |r| r.0.max(pos))
    }

    /// The first unSACKed position at or after `pos`.
    pub fn next_unsacked(&self, pos: u64) -> u64 {
        self.sacked_end(pos).unwrap_or(pos)
    }

    /// RFC 6675 IsLost: an unSACKed position is lost when more than (DupThresh - 1) x SMSS
    /// bytes above it are SACKed. Lost positions are exactly the unSACKed ones below the
    /// returned (exclusive) boundary.
    pub fn lost_boundary(&self, dupthresh: u32, mss: u64) -> u64 {
        let need = (dupthresh.max(1) as u64 - 1) * mss;
        let mut above = 0u64;
        for &(s, e) in self.sacked.iter().rev() {
            if above + (e - s) > need {
                // positions below this one have more than `need` SACKed bytes above them
                return e - (need - above);
            }
            above += e - s;
        }
        0
    }

    /// Sorted, disjoint, non-empty ranges, all within `[una, max]` (a fuzzing invariant).
    pub(crate) fn check(&self, una: u64, max: u64) -> Result<(), String> {
        let mut last = una;
        for &(a, b) in &self.sacked {
            if a >= b || a < last || b > max {
                return Err(format!("range [{a}, {b}) after {last}, snd_max {max}"));
            }
            last = b;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_and_advances() {
        let mut b = Scoreboard::default();
        assert_eq!(b.add(&[(300, 400), (100, 200)], 0, 1000), 200);
        assert_eq!(b.add(&[(200, 300)], 0, 1000), 100);
        assert_eq!(b.add(&[(150, 250)], 0, 1000), 0, "nothing new");
        assert_eq!(b.sacked, vec![(100, 400)]);
        b.advance(250);
        assert_eq!(b.sacked, vec![(250, 400)]);
        assert_eq!(b.highest(0), 400);
        assert_eq!(b.unsacked_in(200, 500), 150);
    }

    #[test]
    fn lost_boundary_is_rfc6675_is_lost() {
        // MSS 100, DupThresh 3: a segment is lost when more than 200 bytes are SACKed above.
        let mut b = Scoreboard::default();
        b.add(&[(200, 300), (500, 600)], 0, 1000);
        assert_eq!(
            b.lost_boundary(3, 100),
            0,
            "200 bytes above 0 is not more than 200"
        );
        b.add(&[(700, 800)], 0, 1000);
        // 300 bytes SACKed: the 201st SACKed byte from the top is 299
        let lb = b.lost_boundary(3, 100);
        assert_eq!(lb, 300);
        assert!(b.sacked_in(lb - 1, 1000) > 200 && b.sacked_in(lb, 1000) <= 200);
        assert!(b.unsacked_in(0, lb) == 200, "bytes 0..200 are lost");
    }

    #[test]
    fn sacked_lookups() {
        let mut b = Scoreboard::default();
        b.add(&[(100, 200), (300, 400)], 0, 1000);
        assert_eq!(b.sacked_end(150), Some(200));
        assert_eq!(b.sacked_end(250), None);
        assert_eq!(b.next_sacked(210), 300);
        assert_eq!(b.next_unsacked(100), 200);
        assert_eq!(b.next_sacked(450), u64::MAX);
    }
}
