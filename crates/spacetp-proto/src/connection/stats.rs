//! The counters of one endpoint.

/// Counters of one endpoint.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnStats {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub payload_bytes_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub pure_acks_sent: u64,
    pub timeouts: u64,
    /// Timeouts found spurious by the timestamp echo and undone (`rto_undo`).
    pub spurious_timeouts: u64,
    pub fast_retransmits: u64,
    pub dupacks_received: u64,
    pub segments_received: u64,
    pub out_of_order_segments: u64,
    pub duplicate_segments: u64,
    /// Zero-window probes sent (persist timer).
    pub persist_probes: u64,
    /// Segments discarded by PAWS (RFC 7323 section 5).
    pub paws_rejected: u64,
    /// TCP-Peach+ NIL segments sent.
    pub nil_segments_sent: u64,
    /// ACKs carrying SNACK options received, and segments resent because a SNACK named them.
    pub snacks_received: u64,
    pub snack_retransmits: u64,
    /// RFC 8985 tail loss probes sent, and those whose answer showed they repaired a loss.
    pub loss_probes: u64,
    pub loss_probe_recoveries: u64,
    /// Timeouts handled as corruption (no window reduction, no backoff).
    pub corruption_timeouts: u64,
    /// SCPS-TP link outages entered (persist mode).
    pub outages: u64,
    /// SCPS-TP BETS (receiver): holes given up, and their bytes (lost to the application).
    pub bets_holes: u64,
    pub bets_bytes_skipped: u64,
    /// RFC 5961: RSTs not at the exact next sequence number, SYNs on a synchronized
    /// connection, segments with an unacceptable ACK field, data beyond the receive window;
    /// challenge ACKs sent for them, and those the rate limit held back.
    pub rst_rejected: u64,
    pub syn_rejected: u64,
    pub ack_rejected: u64,
    pub out_of_window_segments: u64,
    pub challenge_acks: u64,
    pub challenge_acks_suppressed: u64,
    /// RFC 9293 3.10.7.4: FINs on a sequence number the stream had passed (stale or
    /// forged): dropped and acknowledged.
    pub old_fins: u64,
}
