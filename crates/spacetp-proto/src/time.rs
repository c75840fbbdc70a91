//! Time is an integer count of nanoseconds since the start of the run: exact, and ordered
//! identically on every machine.

/// Nanoseconds since the start of the run.
pub type Time = u64;

pub const US: Time = 1_000;
pub const MS: Time = 1_000_000;
pub const SEC: Time = 1_000_000_000;

/// Seconds as a float, for reports.
pub fn secs(t: Time) -> f64 {
    t as f64 / SEC as f64
}
