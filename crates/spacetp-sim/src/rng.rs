//! Deterministic random numbers: xoshiro256++ seeded through SplitMix64 from (run seed,
//! component), so every link, flow and workload has its own stream and adding one component
//! never shifts another's draws.

#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A stream for component `(kind, index)` of a run with `seed`.
    pub fn for_component(seed: u64, kind: u64, index: u64) -> Self {
        let mut x = seed
            ^ kind.wrapping_mul(0xD1B5_4A32_D192_ED03)
            ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        let mut s = [0u64; 4];
        for v in &mut s {
            *v = splitmix64(&mut x);
        }
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let r = (self.s[0].wrapping_add(self.s[3]))
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        r
    }

    /// Uniform in [0, 1) with 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability p.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        -mean * (1.0 - self.uniform()).ln()
    }

    /// Uniform integer in [0, n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Component kinds for `Rng::for_component`.
pub mod stream {
    pub const CHANNEL: u64 = 1;
    pub const ISN: u64 = 2;
    pub const WORKLOAD: u64 = 3;
    pub const TRAFFIC: u64 = 4;
    pub const ATTACK: u64 = 5;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4)
            .map(|_| Rng::for_component(1, 1, 0).next_u64())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::for_component(1, 1, 0);
        let mut y = Rng::for_component(1, 1, 1);
        assert_ne!(x.next_u64(), y.next_u64());
    }

    #[test]
    fn uniform_mean_is_a_half() {
        let mut r = Rng::for_component(7, 0, 0);
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.uniform()).sum::<f64>() / n as f64;
        assert!((m - 0.5).abs() < 0.005, "{m}");
        let e: f64 = (0..n).map(|_| r.exponential(3.0)).sum::<f64>() / n as f64;
        assert!((e - 3.0).abs() < 0.05, "{e}");
    }
}
