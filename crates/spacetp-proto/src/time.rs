//! Time is an integer count of nanoseconds since the start of the run: exact, and ordered
//! identically on every machine. Also the exact float-to-integer roundings the per-packet paths
//! use instead of library calls.

/// Nanoseconds since the start of the run.
pub type Time = u64;

pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// Seconds as a float, for reports.
pub fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}

/// `x.round() as Time`, exactly (half away from zero; negative or NaN give 0, beyond the
/// range `Time::MAX`), without the library call `f64::round` compiles to on x86-64 without
/// SSE4.1, paid twice per link traversal (a packet's serialisation and its delay):
/// truncate, then compare the remainder, which is exact.
#[inline]
pub fn round_to_time(x: f64) -> Time {
    let t = x as Time;
    if x - t as f64 >= 0.5 {
        t.saturating_add(1)
    } else {
        t
    }
}

/// `x.ceil() as u64`, exactly (negative or NaN give 0, beyond the range `u64::MAX`), without
/// the library call `f64::ceil` compiles to on x86-64 without SSE4.1, paid per paced
/// segment and per BBR ACK: truncate, then add one if something was cut off (the comparison is exact).
#[inline]
pub fn ceil_to_u64(x: f64) -> u64 {
    let t = x as u64;
    if (t as f64) < x {
        t.saturating_add(1)
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_to_time_rounds_as_f64_round_does() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            1e-300,
            -0.3,
            -0.7,
            -2.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
        ];
        let mut r = 1u64;
        for _ in 0..100_000 {
            r = r
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // 53 random bits at any scale: fractions from 2^-40 to none at all.
            let x = (r >> 11) as f64 / (1u64 << (r % 48)) as f64;
            xs.extend([x, x.floor() + 0.5, x.floor() + 0.5 - f64::EPSILON * x]);
        }
        for x in xs {
            assert_eq!(round_to_time(x), x.round() as Time, "{x:e}");
        }
    }

    #[test]
    fn ceil_to_u64_is_f64_ceil_cast() {
        let mut xs = vec![
            0.0,
            -0.0,
            0.5,
            1.0,
            1.0000000000000002,
            0.9999999999999999,
            1e-300,
            -0.3,
            -1.0,
            -2.5,
            4503599627370495.5,
            4503599627370496.0,
            9007199254740993.0,
            1.8446744073709552e19,
            (u64::MAX - 2047) as f64, // the largest f64 below 2^64
            1e30,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
        ];
        // Many ordinary values, near-integers among them (xorshift, exact and repeatable).
        let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..300_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let m = (s >> 11) as f64 / (1u64 << 53) as f64;
            let scale = 10f64.powi((s % 24) as i32 - 4);
            let x = m * scale;
            xs.extend([x, x.floor(), x.floor() + 1e-9, x.ceil() - 1e-12]);
        }
        for x in xs {
            assert_eq!(ceil_to_u64(x), x.ceil() as u64, "{x:e}");
        }
    }
}
