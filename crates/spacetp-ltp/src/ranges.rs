//! Sorted, disjoint byte ranges `[start, end)` of a block: what a receiver holds, what a
//! sender's reports have claimed.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    v: Vec<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> Self {
        RangeSet { v: Vec::new() }
    }

    #[cfg(test)]
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.v
    }

    /// Adds `[start, end)`; returns how many of its bytes were not yet held.
    pub fn insert(&mut self, start: u64, end: u64) -> u64 {
        if start >= end {
            return 0;
        }
        // First range that ends at or after `start` (touching ranges merge).
        let i = self.v.partition_point(|&(_, e)| e < start);
        let mut j = i;
        let mut new_start = start;
        let mut new_end = end;
        let mut held = 0;
        while j < self.v.len() && self.v[j].0 <= end {
            let (s, e) = self.v[j];
            held += e.min(end).saturating_sub(s.max(start));
            new_start = new_start.min(s);
            new_end = new_end.max(e);
            j += 1;
        }
        self.v.splice(i..j, [(new_start, new_end)]);
        (end - start) - held
    }

    /// Whether every byte of `[start, end)` is held.
    pub fn contains(&self, start: u64, end: u64) -> bool {
        if start >= end {
            return true;
        }
        let i = self.v.partition_point(|&(_, e)| e <= start);
        self.v.get(i).is_some_and(|&(s, e)| s <= start && end <= e)
    }

    /// The held ranges clipped to `[lo, hi)`.
    pub fn within(&self, lo: u64, hi: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let i = self.v.partition_point(|&(_, e)| e <= lo);
        self.v[i..]
            .iter()
            .take_while(move |&&(s, _)| s < hi)
            .map(move |&(s, e)| (s.max(lo), e.min(hi)))
    }

    /// The ranges of `[lo, hi)` not held.
    pub fn gaps(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        let mut at = lo;
        for (s, e) in self.within(lo, hi) {
            if s > at {
                out.push((at, s));
            }
            at = e;
        }
        if at < hi {
            out.push((at, hi));
        }
        out
    }

    /// Bytes held in all.
    #[cfg(test)]
    pub fn total(&self) -> u64 {
        self.v.iter().map(|&(s, e)| e - s).sum()
    }

    /// The end of the highest range, 0 when empty.
    pub fn end(&self) -> u64 {
        self.v.last().map_or(0, |r| r.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inserting_counts_only_new_bytes_and_merges_neighbours() {
        let mut r = RangeSet::new();
        assert_eq!(r.insert(10, 20), 10);
        assert_eq!(r.insert(30, 40), 10);
        assert_eq!(r.insert(15, 35), 10);
        assert_eq!(r.ranges(), [(10, 40)]);
        assert_eq!(r.insert(40, 50), 10);
        assert_eq!(r.insert(0, 5), 5);
        assert_eq!(r.ranges(), [(0, 5), (10, 50)]);
        assert_eq!(r.insert(0, 60), 15);
        assert_eq!(r.ranges(), [(0, 60)]);
        assert_eq!(r.insert(5, 5), 0);
    }

    #[test]
    fn gaps_and_clipping_are_within_the_asked_bounds() {
        let mut r = RangeSet::new();
        r.insert(10, 20);
        r.insert(30, 40);
        assert_eq!(r.gaps(0, 50), [(0, 10), (20, 30), (40, 50)]);
        assert_eq!(r.gaps(15, 35), [(20, 30)]);
        assert_eq!(r.within(15, 35).collect::<Vec<_>>(), [(15, 20), (30, 35)]);
        assert!(r.contains(12, 18) && !r.contains(12, 22) && r.contains(7, 7));
        assert_eq!((r.total(), r.end()), (20, 40));
    }
}
