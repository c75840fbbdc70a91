//! 32-bit wire sequence numbers versus 64-bit stream positions.
//!
//! Inside a connection every sequence number is an absolute `u64` position (0 = the SYN), so
//! transfers beyond 4 GiB need no modular arithmetic anywhere but here, at the wire boundary.

/// Wire value of absolute position `abs` for initial sequence number `isn`.
pub fn to_wire(isn: u32, abs: u64) -> u32 {
    isn.wrapping_add(abs as u32)
}

/// The absolute position nearest to `reference` whose wire value is `wire`.
/// Correct as long as the true position lies within 2^31 of `reference`.
pub fn from_wire(isn: u32, wire: u32, reference: u64) -> u64 {
    let rel = wire.wrapping_sub(isn);
    let diff = rel.wrapping_sub(reference as u32) as i32 as i64;
    (reference as i64 + diff).max(0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_across_wrap() {
        let isn = 0xFFFF_FF00;
        for abs in [0u64, 1, 255, 256, 257, 1 << 32, (1 << 32) + 300, 5 << 32] {
            let w = to_wire(isn, abs);
            assert_eq!(from_wire(isn, w, abs), abs);
            assert_eq!(from_wire(isn, w, abs.saturating_sub(1000)), abs);
            assert_eq!(from_wire(isn, w, abs + 1000), abs);
        }
    }

    #[test]
    fn wire_values_wrap() {
        assert_eq!(to_wire(u32::MAX, 1), 0);
        assert_eq!(to_wire(10, 1 << 32), 10);
    }
}
