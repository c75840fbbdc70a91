//! Sorted, disjoint ranges of stream positions `[start, end)`: what a receiver holds out of
//! order, what a relay holds, what a fuzzer saw taken in. One merge rule for all of them.

/// Add `[start, end)` to `v` (sorted, disjoint), merging it with every range it overlaps
/// or touches.
pub fn insert(v: &mut Vec<(u64, u64)>, start: u64, end: u64) {
    let i = v.partition_point(|&(_, e)| e < start);
    let (mut s, mut e, mut j) = (start, end, i);
    while j < v.len() && v[j].0 <= e {
        s = s.min(v[j].0);
        e = e.max(v[j].1);
        j += 1;
    }
    v.splice(i..j, [(s, e)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_and_touching_ranges_merge() {
        let mut v = vec![];
        insert(&mut v, 10, 20);
        insert(&mut v, 30, 40);
        insert(&mut v, 20, 25);
        assert_eq!(v, [(10, 25), (30, 40)]);
        insert(&mut v, 5, 35);
        assert_eq!(v, [(5, 40)]);
    }
}
