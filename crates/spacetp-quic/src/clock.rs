//! Simulated time as `std::time::Instant`, which quinn-proto takes: a fixed base `Instant`
//! plus the simulated offset. Only differences between instants matter to quinn, so the
//! base is arbitrary and results do not depend on the wall clock.

use spacetp_proto::Time;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct SimClock {
    base: Instant,
}

impl SimClock {
    pub fn new() -> Self {
        SimClock {
            base: Instant::now(),
        }
    }

    /// Simulated time `t` (ns) as an `Instant`.
    pub fn instant(&self, t: Time) -> Instant {
        self.base + Duration::from_nanos(t)
    }

    /// An `Instant` quinn gave back as simulated time (ns); instants before the base are 0.
    pub fn time(&self, i: Instant) -> Time {
        i.saturating_duration_since(self.base).as_nanos() as Time
    }
}

impl Default for SimClock {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::SEC;

    #[test]
    fn hours_of_simulated_time_round_trip_to_the_nanosecond() {
        let c = SimClock::new();
        let t = 7 * 3600 * SEC + 123_456_789;
        assert_eq!(c.time(c.instant(t)), t);
    }
}
