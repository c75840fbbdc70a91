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
    // In place rather than `splice` (which builds and drops an iterator adapter each
    // time): the usual SACK block grows the range it extends, or starts the last one.
    if j == i {
        v.insert(i, (s, e));
    } else {
        v[i] = (s, e);
        v.drain(i + 1..j);
    }
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
        insert(&mut v, 50, 60);
        insert(&mut v, 0, 1);
        insert(&mut v, 42, 45);
        assert_eq!(v, [(0, 1), (5, 40), (42, 45), (50, 60)]);
        insert(&mut v, 41, 50);
        assert_eq!(
            v,
            [(0, 1), (5, 40), (41, 60)],
            "two merged into one, the rest kept"
        );
        insert(&mut v, 1, 5);
        assert_eq!(v, [(0, 40), (41, 60)]);
    }
}
