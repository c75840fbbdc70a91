//! Self-Delimiting Numeric Values (RFC 6256; RFC 5326 section 3.1.2 uses them for every
//! integer field but the type and counts): seven bits per byte, most significant group
//! first, the high bit set on every byte but the last.
//!
//! Values are `u64`. A longer encoding of a value that fits in 64 bits (leading `0x80`
//! groups) is accepted, as RFC 6256 does not forbid it; a value that needs more than 64 bits
//! is an error, never a silent wrap.

/// Why an SDNV could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SdnvError {
    /// The bytes ended before a byte without the continuation bit.
    Truncated,
    /// The value needs more than 64 bits.
    Overflow,
}

/// The number of bytes `v` takes as an SDNV (1 to 10).
pub fn len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Appends `v` as an SDNV.
pub fn encode(v: u64, out: &mut Vec<u8>) {
    let n = len(v);
    for i in (0..n).rev() {
        let group = ((v >> (7 * i)) & 0x7f) as u8;
        out.push(if i == 0 { group } else { group | 0x80 });
    }
}

/// Reads one SDNV from the start of `bytes`: its value and how many bytes it took.
pub fn decode(bytes: &[u8]) -> Result<(u64, usize), SdnvError> {
    let mut v: u64 = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if v > (u64::MAX >> 7) {
            return Err(SdnvError::Overflow);
        }
        v = (v << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err(SdnvError::Truncated)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, &mut out);
        out
    }

    #[test]
    fn rfc6256_examples_encode_as_the_rfc_shows() {
        // RFC 6256 section 2.1: 0xABC -> 10010101 00111100; 0x1234 -> 10100100 00110100;
        // 0x4234 -> 10000001 10000100 00110100; 0x7F -> 01111111.
        assert_eq!(enc(0xABC), [0x95, 0x3C]);
        assert_eq!(enc(0x1234), [0xA4, 0x34]);
        assert_eq!(enc(0x4234), [0x81, 0x84, 0x34]);
        assert_eq!(enc(0x7F), [0x7F]);
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(u64::MAX).len(), 10);
        assert_eq!(enc(u64::MAX)[0], 0x81);
    }

    #[test]
    fn every_width_round_trips() {
        for shift in 0..64 {
            for v in [1u64 << shift, (1u64 << shift) - 1, (1u64 << shift) + 1] {
                let e = enc(v);
                assert_eq!(e.len(), len(v), "{v}");
                assert_eq!(decode(&e), Ok((v, e.len())), "{v}");
            }
        }
        let e = enc(u64::MAX);
        assert_eq!(decode(&e), Ok((u64::MAX, 10)));
    }

    #[test]
    fn a_value_beyond_64_bits_is_an_overflow_not_a_wrap() {
        // 2^64 = 0x82 0x80 ... 0x00 (10 bytes after the leading group).
        let mut b = vec![0x82];
        b.extend([0x80; 8]);
        b.push(0x00);
        assert_eq!(decode(&b), Err(SdnvError::Overflow));
        assert_eq!(decode(&[0xff; 11]), Err(SdnvError::Overflow));
    }

    #[test]
    fn a_value_cut_short_is_truncated() {
        assert_eq!(decode(&[]), Err(SdnvError::Truncated));
        assert_eq!(decode(&[0x81, 0x80]), Err(SdnvError::Truncated));
    }

    #[test]
    fn leading_zero_groups_are_accepted() {
        assert_eq!(decode(&[0x80, 0x80, 0x01]), Ok((1, 3)));
    }
}
