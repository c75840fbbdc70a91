//! Settings of an engine and of its spans, in human units, named as ION's `ltprc` names
//! them where ION has the setting. Validation names the field and the rule; nothing is
//! clamped behind the user's back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::{Bytes, Duration, Rate};
use spacetp_proto::{FieldError, Time, SEC};

/// The engine as a whole (ION's `m` commands).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Seed of the engine's only randomness: its first session number and the first
    /// checkpoint and report serial numbers of each session (RFC 5326 section 3.2.1 asks
    /// for random ones; ION draws them from rand()). Default 1.
    pub seed: u64,
    /// The local engine's own processing time, added to every acknowledgment deadline
    /// (ION `m ownqtime`, default 1 s).
    pub own_queuing_latency: Duration,
    /// The bit error rate the retransmission limits are derived from when a span does not
    /// set them (ION `m maxber`, default 1e-6).
    pub max_ber: f64,
    /// The client service IDs that are registered here; a red segment for another one is
    /// answered with a CR of reason UNREACH (RFC 5326 section 6.21 / ION's
    /// handleDataSegment). Empty (the default) accepts every client service.
    pub client_services: Vec<u64>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            seed: 1,
            own_queuing_latency: Duration(SEC),
            max_ber: 1e-6,
            client_services: Vec::new(),
        }
    }
}

impl EngineConfig {
    pub fn validate(&self) -> Result<(), FieldError> {
        if !(self.max_ber > 0.0 && self.max_ber < 1.0) {
            return Err(FieldError::new(
                "max_ber",
                format!("{} must be above 0 and below 1", self.max_ber),
            ));
        }
        Ok(())
    }
}

/// What a receiver does with a red segment that would open an import session beyond
/// `max_import_sessions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, Default)]
#[serde(rename_all = "snake_case")]
pub enum ImportLimitPolicy {
    /// Discard the segment; the sender's checkpoint timer tries again later (ION's
    /// startImportSession).
    #[default]
    Discard,
    /// Cancel the session with a CR of reason SYS_CNCLD (RFC 5326 section 6.22, a resource
    /// condition of the receiving engine).
    Cancel,
}

/// One span: the local engine's exchange with one peer engine (ION `a span`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpanConfig {
    /// The peer's engine ID.
    pub peer_engine_id: u64,
    /// Export sessions open at once: the span's retransmission window (ION
    /// `max_export_sessions`). Default 10.
    #[serde(default = "d_sessions")]
    pub max_export_sessions: u32,
    /// Import sessions open at once: the peer's own export window (ION
    /// `max_import_sessions`). Default 10.
    #[serde(default = "d_sessions")]
    pub max_import_sessions: u32,
    /// Size of a whole segment, header included (ION `max_segment_size`: the segment must
    /// fit in one frame of the link service). Default 1400 B.
    #[serde(default = "d_mss")]
    pub max_segment_size: Bytes,
    /// A block closes once its SDUs add up to this (ION `aggregation_size_threshold`).
    /// Default 64 kB.
    #[serde(default = "d_agg_size")]
    pub aggregation_size_limit: Bytes,
    /// A block closes this long after its first SDU whatever its size (ION
    /// `aggregation_time_limit`). Default 1 s.
    #[serde(default = "d_agg_time")]
    pub aggregation_time_limit: Duration,
    /// Signal propagation time to the peer (ION: the contact plan's range).
    pub one_way_light_time: Duration,
    /// Propagation time back from the peer, when it differs. Default: `one_way_light_time`.
    #[serde(default)]
    pub one_way_light_time_back: Option<Duration>,
    /// The peer's turnaround: time from a segment's arrival there to the departure of its
    /// acknowledgment (ION `a span ... queuing_latency`, default 1 s).
    #[serde(default = "d_qtime")]
    pub queuing_latency: Duration,
    /// The rate this engine's segments leave at (ION meters output to the contact's rate;
    /// LTP has no congestion control). `None`: segments leave as fast as they are polled.
    #[serde(default)]
    pub transmission_rate: Option<Rate>,
    /// Times a checkpoint, report or cancel segment is sent again on its timer before the
    /// session is canceled with RLEXC (RFC 5326 sections 6.7, 6.8, 6.16). `None`: derived
    /// from `max_ber` and `max_segment_size` as ION's computeRetransmissionLimits does (at
    /// least 3).
    #[serde(default)]
    pub max_retransmissions: Option<u32>,
    /// Checkpoints a sender issues, and reports a receiver issues, in one session before it
    /// cancels with RLEXC (RFC 5326 section 6.11's limit on reception problems). `None`:
    /// ION's getMaxReports, from the red part's size, `max_ber` and the segment size.
    #[serde(default)]
    pub max_retransmission_cycles: Option<u32>,
    /// Largest block this engine takes in (a receiving engine's resource bound; a block
    /// beyond it is canceled with SYS_CNCLD). Default 1 GB.
    #[serde(default = "d_max_block")]
    pub max_block_size: Bytes,
    /// What a red segment that would exceed `max_import_sessions` does. Default `discard`.
    #[serde(default)]
    pub on_import_limit: ImportLimitPolicy,
    /// How long the numbers of closed sessions are kept so that late segments do not reopen
    /// them. `None`: ION's 10 s + 2 x max_retransmissions x round-trip light time.
    #[serde(default)]
    pub closed_session_retention: Option<Duration>,
}

fn d_sessions() -> u32 {
    10
}
fn d_mss() -> Bytes {
    Bytes(1400)
}
fn d_agg_size() -> Bytes {
    Bytes(64_000)
}
fn d_agg_time() -> Duration {
    Duration(SEC)
}
fn d_qtime() -> Duration {
    Duration(SEC)
}
fn d_max_block() -> Bytes {
    Bytes(1_000_000_000)
}

/// The smallest segment: a header and a checkpoint's fields with 5-byte session and serial
/// numbers and 10-byte engine, client and offset fields (57 bytes), and data.
pub const MIN_SEGMENT_SIZE: u64 = 64;
const MAX_SEGMENT_SIZE: u64 = 16 * 1024 * 1024;
const MAX_SESSIONS: u32 = 100_000;

impl SpanConfig {
    /// A span with every default but the peer and the light time.
    pub fn new(peer_engine_id: u64, one_way_light_time: Time) -> Self {
        SpanConfig {
            peer_engine_id,
            max_export_sessions: d_sessions(),
            max_import_sessions: d_sessions(),
            max_segment_size: d_mss(),
            aggregation_size_limit: d_agg_size(),
            aggregation_time_limit: d_agg_time(),
            one_way_light_time: Duration(one_way_light_time),
            one_way_light_time_back: None,
            queuing_latency: d_qtime(),
            transmission_rate: None,
            max_retransmissions: None,
            max_retransmission_cycles: None,
            max_block_size: d_max_block(),
            on_import_limit: ImportLimitPolicy::Discard,
            closed_session_retention: None,
        }
    }

    pub fn validate(&self) -> Result<(), FieldError> {
        for (name, v) in [
            ("max_export_sessions", self.max_export_sessions),
            ("max_import_sessions", self.max_import_sessions),
        ] {
            if !(1..=MAX_SESSIONS).contains(&v) {
                return Err(FieldError::new(
                    name,
                    format!("{v} must be from 1 to {MAX_SESSIONS}"),
                ));
            }
        }
        let mss = self.max_segment_size.0;
        if !(MIN_SEGMENT_SIZE..=MAX_SEGMENT_SIZE).contains(&mss) {
            return Err(FieldError::new(
                "max_segment_size",
                format!(
                    "{mss} B must be at least {MIN_SEGMENT_SIZE} B (a checkpoint's header and \
                     fields) and at most {MAX_SEGMENT_SIZE} B"
                ),
            ));
        }
        if self.aggregation_size_limit.0 == 0 {
            return Err(FieldError::new(
                "aggregation_size_limit",
                "0 B must be at least 1 B (1 B sends every SDU in a block of its own)",
            ));
        }
        if self.aggregation_time_limit.0 == 0 {
            return Err(FieldError::new(
                "aggregation_time_limit",
                "must be above 0 (a size limit of 1 B sends every SDU at once)",
            ));
        }
        if let Some(r) = self.transmission_rate {
            if r.0 < 8.0 {
                return Err(FieldError::new(
                    "transmission_rate",
                    format!("{} b/s must be at least 8 b/s (1 byte a second)", r.0),
                ));
            }
        }
        if let Some(n) = self.max_retransmissions {
            if n > 1000 {
                return Err(FieldError::new(
                    "max_retransmissions",
                    format!("{n} must be at most 1000"),
                ));
            }
        }
        if let Some(n) = self.max_retransmission_cycles {
            if !(1..=100_000).contains(&n) {
                return Err(FieldError::new(
                    "max_retransmission_cycles",
                    format!("{n} must be from 1 to 100000 (the first checkpoint is a cycle)"),
                ));
            }
        }
        if self.max_block_size.0 == 0 {
            return Err(FieldError::new(
                "max_block_size",
                "0 B must be at least 1 B",
            ));
        }
        Ok(())
    }

    pub(crate) fn owlt_back(&self) -> Time {
        self.one_way_light_time_back
            .unwrap_or(self.one_way_light_time)
            .0
    }
}

/// ION's computeRetransmissionLimits: the number of timeouts after which a control segment
/// is given up, so that a segment of `segment_size` bytes is lost that often with
/// probability below 1e-6 at `max_ber`; at least 3.
pub fn derived_max_retransmissions(max_ber: f64, segment_size: u64) -> u32 {
    let loss = segment_loss_rate(max_ber, segment_size);
    let mut p = 1.0;
    let mut n = 0;
    while p > 1e-6 && n < 1000 {
        p *= loss;
        n += 1;
    }
    n.max(3)
}

/// The probability that a segment of `size` bytes has a bit error (ION caps it at 0.99).
pub fn segment_loss_rate(max_ber: f64, size: u64) -> f64 {
    (1.0 - (1.0 - max_ber).powf(size as f64 * 8.0)).min(0.99)
}

/// ION's getMaxReports: at least 2 (one negative report, the final positive one), plus the
/// reports expected for the gaps that the loss rate predicts on each round of
/// retransmission, at 19 gaps a report (20 claims).
pub fn derived_max_cycles(red_len: u64, max_ber: f64, segment_size: u64) -> u32 {
    let loss = segment_loss_rate(max_ber, segment_size);
    let gaps_per_report = 19u64;
    let mut reports: u64 = 2;
    let mut bytes = red_len;
    loop {
        let segments = bytes / segment_size.max(1);
        let lost = segments as f64 * loss;
        if lost < 1.0 {
            break;
        }
        let gaps = lost as u64;
        reports += gaps.div_ceil(gaps_per_report);
        bytes = (lost * segment_size as f64) as u64;
    }
    reports.min(u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(json: &str) -> Result<SpanConfig, String> {
        serde_json::from_str::<SpanConfig>(json).map_err(|e| e.to_string())
    }

    #[test]
    fn settings_read_in_human_units_with_ion_defaults() {
        let s = span(
            r#"{"peer_engine_id": 19, "one_way_light_time": "1.3 s",
                "transmission_rate": "1 Mb/s", "max_segment_size": "1 KiB"}"#,
        )
        .unwrap();
        assert_eq!(s.one_way_light_time.0, 1_300_000_000);
        assert_eq!(s.max_segment_size.0, 1024);
        assert_eq!(s.transmission_rate.unwrap().0, 1e6);
        assert_eq!(s.queuing_latency.0, SEC);
        assert_eq!(s.aggregation_time_limit.0, SEC);
        assert_eq!(s.owlt_back(), 1_300_000_000);
        assert!(s.validate().is_ok());
    }

    #[test]
    fn the_json_schema_names_every_setting() {
        let schema = serde_json::to_string(&schemars::schema_for!(SpanConfig)).unwrap();
        for f in [
            "max_export_sessions",
            "aggregation_time_limit",
            "queuing_latency",
            "transmission_rate",
            "on_import_limit",
        ] {
            assert!(schema.contains(f), "{f}");
        }
        let e = serde_json::to_string(&schemars::schema_for!(EngineConfig)).unwrap();
        assert!(e.contains("own_queuing_latency"));
    }

    #[test]
    fn an_unknown_setting_is_refused() {
        let e = span(r#"{"peer_engine_id": 1, "one_way_light_time": "1 s", "max_sessions": 3}"#)
            .unwrap_err();
        assert!(e.contains("unknown field `max_sessions`"), "{e}");
    }

    #[test]
    fn validation_names_the_field_and_the_rule_and_never_clamps() {
        let mut s = SpanConfig::new(2, SEC);
        s.max_segment_size = Bytes(20);
        let e = s.validate().unwrap_err();
        assert_eq!(e.path, "max_segment_size");
        assert!(
            e.to_string()
                .starts_with("max_segment_size: 20 B must be at least 64 B"),
            "{e}"
        );
        let mut s = SpanConfig::new(2, SEC);
        s.max_export_sessions = 0;
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "max_export_sessions: 0 must be from 1 to 100000"
        );
        let mut s = SpanConfig::new(2, SEC);
        s.aggregation_time_limit = Duration(0);
        assert_eq!(s.validate().unwrap_err().path, "aggregation_time_limit");
        let mut s = SpanConfig::new(2, SEC);
        s.transmission_rate = Some(Rate(1.0));
        assert_eq!(s.validate().unwrap_err().path, "transmission_rate");
        let e = EngineConfig {
            max_ber: 1.5,
            ..Default::default()
        };
        assert_eq!(e.validate().unwrap_err().path, "max_ber");
    }

    #[test]
    fn ion_retransmission_limits_follow_its_formulas() {
        // 1400-byte segments at BER 1e-6: 1.1% of them lost; 0.011^3 > 1e-6 > 0.011^4.
        assert_eq!(derived_max_retransmissions(1e-6, 1400), 4);
        // Small segments are rarely hit: the floor of 3 applies.
        assert_eq!(derived_max_retransmissions(1e-9, 100), 3);
        // A 1 MB red part in 1400-byte segments loses ~7.9 segments: one more report.
        assert_eq!(derived_max_cycles(1_000_000, 1e-6, 1400), 3);
        assert_eq!(derived_max_cycles(10_000, 1e-6, 1400), 2);
    }
}
