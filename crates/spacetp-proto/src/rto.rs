//! Retransmission timeout estimation, RFC 6298, with Karn's rule applied by the caller
//! (samples are taken only from segments never retransmitted) and exponential backoff.

use crate::time::Time;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Time>,
    rttvar: Time,
    min_rtt: Option<Time>,
    latest: Option<Time>,
    /// RTO before backoff.
    base_rto: Time,
    backoff: u32,
    min_rto: Time,
    max_rto: Time,
    granularity: Time,
    pub samples: u64,
    pub sum_rtt: u128,
}

impl RttEstimator {
    pub fn new(initial_rto: Time, min_rto: Time, max_rto: Time, granularity: Time) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: 0,
            min_rtt: None,
            latest: None,
            base_rto: initial_rto,
            backoff: 0,
            min_rto,
            max_rto,
            granularity,
            samples: 0,
            sum_rtt: 0,
        }
    }

    /// RFC 6298 section 2.2 and 2.3. A valid sample also ends any backoff (section 5.7 note).
    pub fn on_sample(&mut self, rtt: Time) {
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                self.rttvar = rtt / 2;
            }
            Some(srtt) => {
                let err = srtt.abs_diff(rtt);
                self.rttvar = (3 * self.rttvar + err) / 4;
                self.srtt = Some((7 * srtt + rtt) / 8);
            }
        }
        let srtt = self.srtt.unwrap_or(rtt);
        self.base_rto = srtt + self.granularity.max(4 * self.rttvar);
        self.backoff = 0;
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.latest = Some(rtt);
        self.samples += 1;
        self.sum_rtt += rtt as u128;
    }

    /// Current timeout including backoff, clamped to [min_rto, max_rto].
    pub fn rto(&self) -> Time {
        let base = self.base_rto.max(self.min_rto);
        let backed = base.saturating_mul(1u64 << self.backoff.min(30));
        backed.min(self.max_rto)
    }

    /// Double the timeout (RFC 6298 5.5).
    pub fn back_off(&mut self) {
        if self.backoff < 30 {
            self.backoff += 1;
        }
    }

    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
    pub fn srtt(&self) -> Option<Time> {
        self.srtt
    }
    pub fn rttvar(&self) -> Time {
        self.rttvar
    }
    pub fn min_rtt(&self) -> Option<Time> {
        self.min_rtt
    }
    pub fn latest(&self) -> Option<Time> {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MS, SEC};

    #[test]
    fn rfc6298_first_and_second_sample() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 60 * SEC, MS);
        assert_eq!(e.rto(), SEC);
        e.on_sample(100 * MS);
        // SRTT = R, RTTVAR = R/2, RTO = SRTT + max(G, 4 RTTVAR) = 100 + 200 = 300 ms
        assert_eq!(e.srtt(), Some(100 * MS));
        assert_eq!(e.rto(), 300 * MS);
        e.on_sample(200 * MS);
        // RTTVAR = 3/4*50 + 1/4*|100-200| = 62.5; SRTT = 7/8*100 + 1/8*200 = 112.5
        assert_eq!(e.rttvar(), 62_500_000);
        assert_eq!(e.srtt(), Some(112_500_000));
        assert_eq!(e.rto(), 112_500_000 + 250 * MS);
    }

    #[test]
    fn min_rto_backoff_and_cap() {
        let mut e = RttEstimator::new(SEC, SEC, 60 * SEC, MS);
        e.on_sample(10 * MS);
        assert_eq!(e.rto(), SEC); // clamped up to min RTO
        e.back_off();
        assert_eq!(e.rto(), 2 * SEC);
        for _ in 0..10 {
            e.back_off();
        }
        assert_eq!(e.rto(), 60 * SEC); // capped at max RTO
        e.on_sample(10 * MS);
        assert_eq!(e.rto(), SEC); // a valid sample ends the backoff
    }
}
