//! The Internet checksum (RFC 1071) as an accumulator, so that a pseudo-header, a header and a
//! payload held in different buffers (or a payload of zeros never materialised) can be summed
//! piecewise. Pieces of odd length are handled: the next piece continues the 16-bit word.

/// Running one's-complement sum of big-endian 16-bit words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checksum {
    sum: u64,
    /// The first byte of an unfinished word (after an odd-length piece).
    pending: Option<u8>,
}

impl Checksum {
    pub fn new() -> Self {
        Self::default()
    }

    /// The TCP/UDP pseudo-header of IPv4: src, dst, zero, protocol, transport length.
    /// `len` is taken modulo 2^16 as the wire field is 16 bits.
    pub fn pseudo_header(src: [u8; 4], dst: [u8; 4], protocol: u8, len: usize) -> Self {
        let mut c = Self::new();
        c.add_bytes(&src);
        c.add_bytes(&dst);
        c.add_u16(protocol as u16);
        c.add_u16(len as u16);
        c
    }

    pub fn add_u16(&mut self, v: u16) -> &mut Self {
        self.add_bytes(&v.to_be_bytes())
    }

    pub fn add_u32(&mut self, v: u32) -> &mut Self {
        self.add_bytes(&v.to_be_bytes())
    }

    pub fn add_bytes(&mut self, mut data: &[u8]) -> &mut Self {
        if let Some(hi) = self.pending.take() {
            match data.split_first() {
                Some((&lo, rest)) => {
                    self.sum += u16::from_be_bytes([hi, lo]) as u64;
                    data = rest;
                }
                None => {
                    self.pending = Some(hi);
                    return self;
                }
            }
        }
        let mut chunks = data.chunks_exact(2);
        for w in &mut chunks {
            self.sum += u16::from_be_bytes([w[0], w[1]]) as u64;
        }
        if let [last] = chunks.remainder() {
            self.pending = Some(*last);
        }
        self
    }

    /// Zero bytes add nothing to the sum; they only shift the word alignment when odd.
    pub fn add_zeros(&mut self, n: usize) -> &mut Self {
        if n == 0 {
            return self;
        }
        if let Some(hi) = self.pending.take() {
            self.sum += u16::from_be_bytes([hi, 0]) as u64;
            if (n - 1) % 2 == 1 {
                self.pending = Some(0);
            }
        } else if n % 2 == 1 {
            self.pending = Some(0);
        }
        self
    }

    /// The folded (end-around carry) 16-bit sum, not complemented. A trailing odd byte is
    /// padded with zero, as RFC 1071 says.
    pub fn fold(&self) -> u16 {
        let mut s = self.sum;
        if let Some(hi) = self.pending {
            s += u16::from_be_bytes([hi, 0]) as u64;
        }
        while s >> 16 != 0 {
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    /// The value to store in a checksum field (the complement of the sum).
    pub fn finish(&self) -> u16 {
        !self.fold()
    }

    /// True when the data summed (checksum field included) verifies.
    pub fn is_valid(&self) -> bool {
        self.fold() == 0xffff
    }
}

/// Checksum of `data` alone (e.g. an IPv4 header with its checksum field zeroed).
pub fn checksum(data: &[u8]) -> u16 {
    Checksum::new().add_bytes(data).finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3: words 0001 f203 f4f5 f6f7 sum to ddf2 (folded).
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(Checksum::new().add_bytes(&data).fold(), 0xddf2);
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn odd_pieces_equal_one_piece() {
        let data: Vec<u8> = (0..=200u8).map(|i| i.wrapping_mul(37)).collect();
        let whole = Checksum::new().add_bytes(&data).fold();
        for split in 0..data.len() {
            let mut c = Checksum::new();
            c.add_bytes(&data[..split]).add_bytes(&data[split..]);
            assert_eq!(c.fold(), whole, "split at {split}");
        }
    }

    #[test]
    fn zeros_equal_materialised_zeros() {
        for pre in 0..4usize {
            for n in 0..6usize {
                let head: Vec<u8> = (1..=pre as u8).collect();
                let tail = [0xab, 0xcd, 0xef];
                let mut a = Checksum::new();
                a.add_bytes(&head).add_zeros(n).add_bytes(&tail);
                let mut b = Checksum::new();
                b.add_bytes(&head).add_bytes(&vec![0; n]).add_bytes(&tail);
                assert_eq!(a.fold(), b.fold(), "pre {pre} n {n}");
            }
        }
    }
}
