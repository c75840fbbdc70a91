//! Retransmission timeout estimation, RFC 6298, with Karn's rule applied by the caller
//! (samples are taken only from segments never retransmitted) and exponential backoff; or
//! Linux's variant (`tcp_rtt_estimator`, `tcp_set_rto`), where the variance term never falls
//! below the minimum RTO within a round trip, so that RTO = SRTT + max(4 x mean deviation,
//! rto_min) instead of max(SRTT + 4 RTTVAR, min_rto): on a long path the Linux timer waits
//! 200 ms beyond the RTT where RFC 6298's may wait only a few ms beyond it.

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
    /// Linux's variance tracking, when chosen.
    linux: Option<LinuxVar>,
    pub samples: u64,
    pub sum_rtt: u128,
}

/// Linux `tcp_sock` fields of the estimator, in the kernel's scale: `mdev` and `rttvar` are
/// four times the mean deviation (`mdev_us`, `rttvar_us`), `mdev_max` the largest `mdev` in
/// the current round trip, which starts over at `rto_min` (`tcp_rto_min_us`).
#[derive(Clone, Copy, Debug, Default)]
struct LinuxVar {
    mdev: Time,
    mdev_max: Time,
    rttvar: Time,
    /// The round trip ends when the cumulative ACK passes this position (`rtt_seq`).
    rtt_seq: u64,
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
            linux: None,
            samples: 0,
            sum_rtt: 0,
        }
    }

    /// Estimate as Linux does (`tcp_rtt_estimator`) instead of RFC 6298.
    pub fn use_linux_variance(&mut self) {
        self.linux = Some(LinuxVar::default());
    }

    /// A sample taken when the cumulative ACK is `snd_una` and the next new byte `snd_nxt`
    /// (Linux's estimator counts round trips by them; RFC 6298's ignores them).
    pub fn on_sample_at(&mut self, rtt: Time, snd_una: u64, snd_nxt: u64) {
        if self.linux.is_some() {
            self.on_linux_sample(rtt, snd_una, snd_nxt);
        } else {
            self.on_sample(rtt);
        }
    }

    /// Linux `tcp_rtt_estimator` and `__tcp_set_rto`: SRTT as RFC 6298; the deviation
    /// grows fast and shrinks slowly (a falling RTT moves it by 1/32, not 1/4); RTO =
    /// SRTT + rttvar, with rttvar at least rto_min in every round trip.
    fn on_linux_sample(&mut self, rtt: Time, snd_una: u64, snd_nxt: u64) {
        let rto_min = self.min_rto;
        let Some(v) = &mut self.linux else { return };
        match self.srtt {
            None => {
                self.srtt = Some(rtt);
                v.mdev = 2 * rtt;
                v.rttvar = v.mdev.max(rto_min);
                v.mdev_max = v.rttvar;
                v.rtt_seq = snd_nxt;
            }
            Some(srtt) => {
                let err = rtt as i128 - srtt as i128;
                self.srtt = Some((srtt as i128 + err / 8).max(1) as Time);
                let quarter = (v.mdev / 4) as i128;
                let delta = if err < 0 {
                    let m = -err - quarter;
                    if m > 0 {
                        m / 8
                    } else {
                        m
                    }
                } else {
                    err - quarter
                };
                v.mdev = (v.mdev as i128 + delta).max(0) as Time;
                if v.mdev > v.mdev_max {
                    v.mdev_max = v.mdev;
                    v.rttvar = v.rttvar.max(v.mdev_max);
                }
                if snd_una > v.rtt_seq {
                    if v.mdev_max < v.rttvar {
                        v.rttvar -= (v.rttvar - v.mdev_max) / 4;
                    }
                    v.rtt_seq = snd_nxt;
                    v.mdev_max = rto_min;
                }
            }
        }
        let (srtt, rttvar) = (self.srtt.unwrap_or(rtt), v.rttvar);
        self.rttvar = rttvar / 4;
        self.base_rto = srtt + rttvar;
        self.backoff = 0;
        self.note_sample(rtt);
    }

    fn note_sample(&mut self, rtt: Time) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.latest = Some(rtt);
        self.samples += 1;
        self.sum_rtt += rtt as u128;
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
        self.note_sample(rtt);
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
    fn linux_rto_is_srtt_plus_at_least_rto_min_where_rfc6298_hugs_a_steady_rtt() {
        // A steady 600 ms path: RFC 6298's RTTVAR decays to ~0 and RTO to ~SRTT + 4 ms;
        // Linux keeps 200 ms (rto_min) of variance in every round trip.
        let mut rfc = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS);
        let mut linux = rfc.clone();
        linux.use_linux_variance();
        // A round trip per sample: each cumulative ACK passes the previous snd_nxt.
        for k in 0..200u64 {
            rfc.on_sample_at(600 * MS, 1 + k * 1000, 1 + k * 1000 + 500);
            linux.on_sample_at(600 * MS, 1 + k * 1000, 1 + k * 1000 + 500);
        }
        assert!(rfc.rto() < 610 * MS, "{}", rfc.rto());
        assert!(
            (800 * MS..801 * MS).contains(&linux.rto()),
            "{}",
            linux.rto()
        );
        // The first sample: RTO = 3 RTT (mdev = 2 RTT), as tcp_rtt_estimator's comment says.
        let mut first = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS);
        first.use_linux_variance();
        first.on_sample_at(600 * MS, 1, 1000);
        assert_eq!(first.rto(), 1800 * MS);
    }

    #[test]
    fn linux_variance_rises_at_once_and_falls_slowly() {
        let mut e = RttEstimator::new(SEC, 200 * MS, 120 * SEC, MS);
        e.use_linux_variance();
        let mut una = 1;
        for _ in 0..100 {
            e.on_sample_at(100 * MS, una, una + 10_000);
            una += 20_000; // a new round trip each sample
        }
        assert!((300 * MS..301 * MS).contains(&e.rto()), "{}", e.rto());
        // A deviation within rto_min leaves the RTO alone: 200 ms late, SRTT moves by 25 ms.
        e.on_sample_at(300 * MS, una, una + 10_000);
        assert!((325 * MS..326 * MS).contains(&e.rto()), "{}", e.rto());
        // One sample 500 ms late: the variance jumps within the sample.
        una += 20_000;
        e.on_sample_at(600 * MS, una, una + 10_000);
        assert!(e.rto() > 600 * MS, "{}", e.rto());
        let high = e.rto();
        // Back to 100 ms: it shrinks by a quarter of the excess per round trip, not at once.
        una += 20_000;
        e.on_sample_at(100 * MS, una, una + 10_000);
        assert!(e.rto() > high - 100 * MS, "{} after {}", e.rto(), high);
    }

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
