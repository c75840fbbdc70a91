//! BBR.extra_acked (5.5.9): the data ACKed beyond bw x the time since the current
//! aggregation interval began, at most cwnd; its windowed maximum over 10 rounds (1 in
//! Startup) is added to the cwnd target so the sender keeps sending through ACK silences.

use super::{Bbr3, EXTRA_ACKED_FILTER_LEN};
use crate::cc::max_filter::MaxFilter;
use crate::time::Time;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Aggregation {
    interval_start: Time,
    delivered: u64,
    filter: MaxFilter,
    pub extra_acked: u64,
}

impl Bbr3 {
    /// 5.5.9 UpdateACKAggregation.
    pub(super) fn update_ack_aggregation(&mut self, newly_acked: u64) {
        let a = &mut self.agg;
        let interval = self.now.saturating_sub(a.interval_start);
        let mut expected = (self.bw * interval as f64 / 1e9) as u64;
        if a.delivered <= expected {
            a.delivered = 0;
            a.interval_start = self.now;
            expected = 0;
        }
        a.delivered += newly_acked;
        let extra = (a.delivered - expected).min(self.cwnd);
        let len = if self.full_bw_reached {
            EXTRA_ACKED_FILTER_LEN
        } else {
            1
        };
        // The filter keeps samples less than `window + 1` rounds old.
        a.filter.update(len - 1, self.round_count, extra as f64);
        a.extra_acked = a.filter.get() as u64;
    }
}
