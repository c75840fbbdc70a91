//! Counters of a span and of the engine (ION's ltpSpanTally names most of them).

use spacetp_proto::Time;

use crate::wire::CancelReason;

/// Sessions canceled, by reason code (0 to 5; reserved codes counted together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CancelCounts {
    pub by_code: [u64; 6],
    pub reserved: u64,
}

impl CancelCounts {
    pub fn add(&mut self, reason: CancelReason) {
        match reason.code() {
            c @ 0..=5 => self.by_code[c as usize] += 1,
            _ => self.reserved += 1,
        }
    }
    pub fn get(&self, reason: CancelReason) -> u64 {
        match reason.code() {
            c @ 0..=5 => self.by_code[c as usize],
            _ => self.reserved,
        }
    }
    pub fn total(&self) -> u64 {
        self.by_code.iter().sum::<u64>() + self.reserved
    }
    fn merge(&mut self, o: &CancelCounts) {
        for (a, b) in self.by_code.iter_mut().zip(o.by_code) {
            *a += b;
        }
        self.reserved += o.reserved;
    }
}

/// What one span did, in both directions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpanStats {
    // Sending (export sessions).
    pub sdus_sent: u64,
    pub blocks_exported: u64,
    pub export_sessions_started: u64,
    pub export_sessions_completed: u64,
    /// Canceled here (CS sent).
    pub export_canceled_locally: CancelCounts,
    /// Canceled by the peer (CR received).
    pub export_canceled_by_peer: CancelCounts,
    pub data_segments_sent: u64,
    pub data_bytes_sent: u64,
    pub red_bytes_sent: u64,
    pub green_bytes_sent: u64,
    /// Data segments sent again in answer to a report, or as a checkpoint on its timer.
    pub data_segments_retransmitted: u64,
    pub data_bytes_retransmitted: u64,
    pub checkpoints_sent: u64,
    pub checkpoints_retransmitted: u64,
    pub reports_received: u64,
    /// Reports that claimed the whole red part (ION POS_RPT_RECV).
    pub positive_reports_received: u64,
    /// Reports answering a session's first checkpoint (each once): the bytes they covered
    /// (upper less lower bound) and those they claimed. 1 - claimed / covered is the share
    /// of first transmissions the peer did not get: the link's loss as it saw it.
    pub first_report_scope_bytes: u64,
    pub first_report_claimed_bytes: u64,
    pub report_acks_sent: u64,
    /// Blocks that found every export session busy and waited for one.
    pub blocks_waited_for_session: u64,
    /// Time those blocks waited, in all and at most.
    pub session_wait_total: Time,
    pub session_wait_max: Time,
    /// Time the span had nothing to send while blocks waited for an export session: every
    /// session was waiting for its report and the link sat idle (too few sessions for the
    /// bandwidth-delay product).
    pub session_limited_time: Time,
    // Receiving (import sessions).
    pub import_sessions_started: u64,
    pub import_sessions_completed: u64,
    pub import_canceled_locally: CancelCounts,
    pub import_canceled_by_peer: CancelCounts,
    pub red_segments_received: u64,
    pub green_segments_received: u64,
    /// Red segments that brought no new byte, or came for a closed session.
    pub redundant_segments_received: u64,
    pub checkpoints_received: u64,
    pub reports_sent: u64,
    pub reports_retransmitted: u64,
    pub report_acks_received: u64,
    pub blocks_delivered: u64,
    pub red_bytes_delivered: u64,
    pub green_bytes_delivered: u64,
    /// Red segments discarded because `max_import_sessions` were open.
    pub segments_refused_session_limit: u64,
    // Both directions.
    pub cancel_segments_sent: u64,
    pub cancel_segments_retransmitted: u64,
    pub cancel_segments_received: u64,
    pub cancel_acks_sent: u64,
    pub cancel_acks_received: u64,
    pub segments_sent: u64,
    pub bytes_sent: u64,
    pub segments_received: u64,
    pub bytes_received: u64,
}

impl SpanStats {
    fn merge(&mut self, o: &SpanStats) {
        macro_rules! add {
            ($($f:ident),*) => { $( self.$f += o.$f; )* };
        }
        add!(
            sdus_sent,
            blocks_exported,
            export_sessions_started,
            export_sessions_completed,
            data_segments_sent,
            data_bytes_sent,
            red_bytes_sent,
            green_bytes_sent,
            data_segments_retransmitted,
            data_bytes_retransmitted,
            checkpoints_sent,
            checkpoints_retransmitted,
            reports_received,
            positive_reports_received,
            first_report_scope_bytes,
            first_report_claimed_bytes,
            report_acks_sent,
            blocks_waited_for_session,
            session_wait_total,
            session_limited_time,
            import_sessions_started,
            import_sessions_completed,
            red_segments_received,
            green_segments_received,
            redundant_segments_received,
            checkpoints_received,
            reports_sent,
            reports_retransmitted,
            report_acks_received,
            blocks_delivered,
            red_bytes_delivered,
            green_bytes_delivered,
            segments_refused_session_limit,
            cancel_segments_sent,
            cancel_segments_retransmitted,
            cancel_segments_received,
            cancel_acks_sent,
            cancel_acks_received,
            segments_sent,
            bytes_sent,
            segments_received,
            bytes_received
        );
        self.session_wait_max = self.session_wait_max.max(o.session_wait_max);
        self.export_canceled_locally
            .merge(&o.export_canceled_locally);
        self.export_canceled_by_peer
            .merge(&o.export_canceled_by_peer);
        self.import_canceled_locally
            .merge(&o.import_canceled_locally);
        self.import_canceled_by_peer
            .merge(&o.import_canceled_by_peer);
    }
}

/// The engine: every span added up, and what belongs to no span.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    pub spans: SpanStats,
    /// Segments that did not decode.
    pub malformed_segments: u64,
    /// Segments from an engine with no span here.
    pub unknown_engine_segments: u64,
    /// Segments for no session this engine knows (late, stray, or forged).
    pub stray_segments: u64,
}

impl EngineStats {
    pub(crate) fn add_span(&mut self, s: &SpanStats) {
        self.spans.merge(s);
    }
}
