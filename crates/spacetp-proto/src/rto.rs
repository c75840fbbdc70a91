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
    /// Cap of a backed-off timeout (ns-3 caps the doubled RTO at 60 s even when its minimum
    /// RTO is larger); None: `max_rto` caps it.
    max_backoff: Option<Time>,
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
            max_backoff: None,
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

    /// Cap backed-off timeouts at `cap` instead of `max_rto` (ns-3's 60 s).
    pub fn set_max_backoff(&mut self, cap: Option<Time>) {
        self.max_backoff = cap;
    }

    /// Current timeout including backoff: the RFC 6298 value clamped to [min_rto, max_rto],
    /// doubled per backoff and capped at `max_rto`, or at `max_backoff` once backed off when
    /// that is set (then a backed-off timeout can fall below `min_rto`, as in ns-3).
    pub fn rto(&self) -> Time {
        let base = self.base_rto.max(self.min_rto).min(self.max_rto);
        let backed = base.saturating_mul(1u64 << self.backoff.min(30));
        match (self.max_backoff, self.backoff) {
            (Some(cap), 1..) => backed.min(cap),
            _ => backed.min(self.max_rto),
        }
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

    #[test]
    fn a_backoff_cap_below_min_rto_behaves_as_ns3() {
        // ns-3 (TcpSocketBase::ReTxTimeout): the doubled RTO is capped at 60 s even when
        // MinRto is larger, so with MinRto 100 s the second timeout waits 60 s, not 200 s.
        let mut e = RttEstimator::new(SEC, 100 * SEC, 1000 * SEC, MS);
        e.on_sample(10 * MS);
        assert_eq!(e.rto(), 100 * SEC);
        e.back_off();
        assert_eq!(
            e.rto(),
            200 * SEC,
            "without a backoff cap: [min_rto, max_rto]"
        );
        e.set_max_backoff(Some(60 * SEC));
        assert_eq!(
            e.rto(),
            60 * SEC,
            "the backed-off RTO is capped at max_backoff"
        );
        e.on_sample(10 * MS);
        assert_eq!(e.rto(), 100 * SEC, "no backoff: the cap does not apply");
    }
}
