//! Every setting of a connection. Profiles (`newreno`, `scps-tp`, ...) are values of this
//! struct; a scenario's `[flows.tcp]` table overrides any field by its serde name.

use crate::units::{Bytes, Duration};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Congestion controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControlKind {
    /// RFC 5681 AIMD (the controller of Reno and NewReno).
    Newreno,
}

/// Loss recovery algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryKind {
    /// RFC 6582 fast retransmit and fast recovery with partial ACKs.
    Newreno,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control algorithm.
    pub congestion_control: CongestionControlKind,
    /// Loss recovery algorithm.
    pub recovery: RecoveryKind,
    /// Initial congestion window in segments (RFC 3390: 2-4, RFC 6928: 10).
    pub initial_window: u32,
    /// Initial slow-start threshold; absent means unbounded.
    pub initial_ssthresh: Option<Bytes>,
    /// Receive buffer: the largest window this end advertises.
    pub receive_buffer: Bytes,
    /// Send buffer: the most unacknowledged plus unsent data the sender holds.
    pub send_buffer: Bytes,
    /// Offer the window scale option (RFC 7323).
    pub window_scaling: bool,
    /// Offer the timestamps option (RFC 7323) for RTT measurement.
    pub timestamps: bool,
    /// Send an ACK after this many received segments (RFC 1122 delayed ACK; 1 = every segment).
    pub ack_every: u32,
    /// Delayed ACK timer.
    pub ack_delay: Duration,
    /// Retransmission timeout before any RTT sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Lower bound of the retransmission timeout (RFC 6298: 1 s).
    pub min_rto: Duration,
    /// Upper bound of the retransmission timeout, backoff included.
    pub max_rto: Duration,
    /// Clock granularity G of RFC 6298.
    pub clock_granularity: Duration,
    /// Consecutive timeouts of the same data before the connection aborts.
    pub max_retries: u32,
    /// Consecutive SYN (or SYN-ACK) timeouts before the connection aborts.
    pub syn_retries: u32,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
}

impl Default for TcpConfig {
    /// The `newreno` profile: RFC 5681/6582/6298 with ns-3's defaults where RFCs leave a choice
    /// (initial window 10, delayed ACK 2 segments / 200 ms, 300 kB buffers, no SACK/timestamps).
    fn default() -> Self {
        use crate::time::{MS, SEC};
        TcpConfig {
            congestion_control: CongestionControlKind::Newreno,
            recovery: RecoveryKind::Newreno,
            initial_window: 10,
            initial_ssthresh: None,
            receive_buffer: Bytes(300_000),
            send_buffer: Bytes(300_000),
            window_scaling: true,
            timestamps: false,
            ack_every: 2,
            ack_delay: Duration(200 * MS),
            initial_rto: Duration(SEC),
            min_rto: Duration(SEC),
            max_rto: Duration(60 * SEC),
            clock_granularity: Duration(MS),
            max_retries: 12,
            syn_retries: 6,
            dupack_threshold: 3,
            limited_transmit: true,
        }
    }
}

impl TcpConfig {
    /// Check the values a connection cannot work with; errors name the field and the rule.
    pub fn validate(&self) -> Result<(), String> {
        if self.initial_window == 0 {
            return Err("initial_window: must be at least 1 segment".into());
        }
        if self.ack_every == 0 {
            return Err("ack_every: must be at least 1".into());
        }
        if self.dupack_threshold == 0 {
            return Err("dupack_threshold: must be at least 1".into());
        }
        if self.min_rto.0 == 0 {
            return Err("min_rto: must be > 0".into());
        }
        if self.max_rto.0 < self.min_rto.0 {
            return Err(format!(
                "max_rto: {} is below min_rto {}",
                self.max_rto, self.min_rto
            ));
        }
        if self.initial_rto.0 == 0 {
            return Err("initial_rto: must be > 0".into());
        }
        if self.receive_buffer.0 < 1 || self.send_buffer.0 < 1 {
            return Err("receive_buffer and send_buffer: must be at least 1 byte".into());
        }
        let max_window = 65535u64 << 14;
        if self.receive_buffer.0 > max_window {
            return Err(format!(
                "receive_buffer: {} is above the largest window TCP can advertise, 65535 x 2^14 = {max_window} B",
                self.receive_buffer
            ));
        }
        Ok(())
    }
}
