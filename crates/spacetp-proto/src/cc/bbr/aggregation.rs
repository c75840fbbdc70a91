//! ACK aggregation (`bbr_update_ack_aggregation`, Linux 4.20+): when ACKs arrive in bursts
//! (delayed ACKs, wireless MACs, ACK thinning), data is acknowledged faster than bw x time
//! for a while and the sender would idle between bursts. The excess of ACKed data over
//! what the bandwidth estimate predicts since the epoch began is tracked as a max over 5-10
//! rounds and added to cwnd (at most cwnd, and at most 100 ms at the estimated rate).

use crate::time::{Time, MS};

/// Rounds per half of the max window (`bbr_extra_acked_win_rtts`).
const WINDOW_ROUNDS: u32 = 5;
/// Bytes after which an epoch restarts however old (`bbr_ack_epoch_acked_reset_thresh`,
/// 2^20 packets in Linux; here bytes at a 1448-byte MSS).
const EPOCH_RESET_BYTES: u64 = (1 << 20) * 1448;
/// The allowance is at most this long at the estimated rate (`bbr_extra_acked_max_us`).
const MAX_TIME: Time = 100 * MS;

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckAggregation {
    epoch_start: Time,
    epoch_acked: u64,
    /// Maximum excess over the current and the previous half window, bytes.
    extra: [u64; 2],
    idx: usize,
    rounds: u32,
}

impl AckAggregation {
    pub fn update(&mut self, round_start: bool, now: Time, bw: f64, acked: u64, cwnd: u64) {
        if round_start {
            self.rounds = (self.rounds + 1).min(0x1F);
            if self.rounds >= WINDOW_ROUNDS {
                self.rounds = 0;
                self.idx ^= 1;
                self.extra[self.idx] = 0;
            }
        }
        let elapsed = now.saturating_sub(self.epoch_start);
        let mut expected = (bw * elapsed as f64 / 1e9) as u64;
        if self.epoch_acked <= expected || self.epoch_acked + acked >= EPOCH_RESET_BYTES {
            self.epoch_acked = 0;
            self.epoch_start = now;
            expected = 0;
        }
        self.epoch_acked += acked;
        let extra = (self.epoch_acked - expected).min(cwnd);
        self.extra[self.idx] = self.extra[self.idx].max(extra);
    }

    /// `bbr_ack_aggregation_cwnd`: the allowance added to cwnd, bytes.
    pub fn cwnd(&self, bw: f64) -> u64 {
        let cap = (bw * MAX_TIME as f64 / 1e9) as u64;
        self.extra[0].max(self.extra[1]).min(cap)
    }
}
