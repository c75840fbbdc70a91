//! `[flows.quic]`: what a user may set, in human units, checked before a run with errors
//! that name the field, and the quinn `TransportConfig` it makes. Defaults are quinn's.

use crate::sizes::CryptoMode;
use quinn_proto::congestion::{BbrConfig, CubicConfig, NewRenoConfig};
use quinn_proto::{AckFrequencyConfig, IdleTimeout, MtuDiscoveryConfig, TransportConfig, VarInt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::{Bytes, Duration, Rate};
use spacetp_proto::{FieldError, MS, SEC};
use std::sync::Arc;

/// quinn's congestion controllers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QuicCongestion {
    /// RFC 9002 section 7 (NewReno), quinn's `NewReno`.
    Newreno,
    /// CUBIC (RFC 9438), quinn's default.
    Cubic,
    /// quinn's BBR (version 1, marked experimental by quinn).
    Bbr,
}

/// QUIC settings (`[flows.quic]`); every default is quinn-proto 0.11's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QuicSettings {
    /// Congestion controller: "newreno", "cubic" (quinn's default) or "bbr".
    pub congestion_control: QuicCongestion,
    /// RTT assumed before the first sample (RFC 9002: 333 ms); it sets the first PTO, which
    /// matters on a 600 ms link. From 1 ms to 10 min.
    pub initial_rtt: Duration,
    /// Congestion window at the start; absent: the controller's own (quinn's NewReno and
    /// CUBIC: RFC 9002's min(10 x 1200 B, max(14720 B, 2 x 1200 B)) = 12000 B at the 1200-byte
    /// initial MTU; quinn's BBR: 200 x 1200 B). At least 2400 B.
    pub initial_window: Option<Bytes>,
    /// How much of one stream the receiver buffers ahead of the application: the stream's
    /// flow-control window (quinn: 1.25 MB, 100 Mb/s x 100 ms). At least 1200 B.
    pub stream_receive_window: Bytes,
    /// The connection's flow-control window over all streams; absent: unlimited (quinn).
    pub receive_window: Option<Bytes>,
    /// Unacknowledged data the sender buffers over all streams (quinn: 10 MB). At least
    /// 1200 B.
    pub send_window: Bytes,
    /// Largest UDP payload before path MTU discovery (RFC 9000's minimum, 1200 B, quinn's
    /// default). From 1200 B to what the flow's MTU carries.
    pub initial_mtu: u16,
    /// DPLPMTUD (RFC 8899): probe for larger packets up to what the flow's MTU carries.
    /// true (quinn).
    pub mtu_discovery: bool,
    /// Close after this long without a packet from the peer (quinn: 30 s); absent: never.
    /// An outage longer than this ends the connection.
    pub max_idle_timeout: Option<Duration>,
    /// Send a PING after this long without sending, keeping an idle connection open
    /// across outages shorter than `max_idle_timeout`; absent: none (quinn).
    pub keep_alive_interval: Option<Duration>,
    /// The flow's bytes go on this many streams at once, in turns of 16 kB (the objects of
    /// an HTTP/3 page: a loss holds up only its own stream); the flow completes when every
    /// stream has. 1 (one bulk stream). From 1 to 10000.
    pub streams: u32,
    /// Ask the peer to ACK less (or more) often: the ACK frequency extension
    /// (draft-ietf-quic-ack-frequency, as quinn implements it; both ends here support it).
    /// Absent: RFC 9000's rule, an ACK every second ack-eliciting packet or after the
    /// peer's max_ack_delay (25 ms). On an ACK-starved return link fewer ACKs leave room.
    pub ack_frequency: Option<AckFrequency>,
    /// 0-RTT on resumption (RFC 9001 4.6): a connection between two nodes that an earlier
    /// connection of the same flow definition (a workload's files, say) already joined
    /// resumes that TLS session and sends its first bytes with its first flight, one round
    /// trip sooner. The first connection between two nodes has no session to resume. false.
    pub zero_rtt: bool,
    /// Send no faster than this rate, headers included (quiche's `max_pacing_rate`, Linux's
    /// `SO_MAX_PACING_RATE`): quinn paces at its controller's rate, and BBR's startup at
    /// 2.89 times the delivery rate overruns a short queue; set at the link's rate, the
    /// cap keeps it under. Absent: no cap (quinn).
    pub max_pacing_rate: Option<Rate>,
    /// Packet protection in the simulator: "real" (TLS 1.3's AES-128-GCM, what a pcap or a
    /// key log needs) or "sizes" (packets, headers, tags and padding of the real sizes,
    /// nothing encrypted: the same run, faster; `sizes.rs`). Absent: "sizes" unless the run
    /// writes a pcap or a key log. A live gateway always encrypts.
    pub crypto: Option<CryptoMode>,
}

/// What an endpoint asks its peer with the ACK frequency extension.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AckFrequency {
    /// Ack-eliciting packets the peer may receive without ACKing at once: 1 (quinn) is an ACK
    /// every second packet, 0 every packet, 9 every tenth. From 0 to 1000.
    pub ack_eliciting_threshold: u32,
    /// The longest the peer waits before ACKing; quinn clamps it to at most max(RTT, 25 ms).
    /// Absent: the peer's own max_ack_delay (25 ms). From 1 ms to 10 s.
    pub max_ack_delay: Option<Duration>,
    /// Out-of-order packets that trigger an ACK at once: 2 (quinn), 0 never, 1 any.
    /// From 0 to 1000.
    pub reordering_threshold: u32,
}

impl Default for AckFrequency {
    fn default() -> Self {
        AckFrequency {
            ack_eliciting_threshold: 1,
            max_ack_delay: None,
            reordering_threshold: 2,
        }
    }
}

impl Default for QuicSettings {
    fn default() -> Self {
        QuicSettings {
            congestion_control: QuicCongestion::Cubic,
            initial_rtt: Duration(333 * MS),
            initial_window: None,
            stream_receive_window: Bytes(1_250_000),
            receive_window: None,
            send_window: Bytes(10_000_000),
            initial_mtu: 1200,
            mtu_discovery: true,
            max_idle_timeout: Some(Duration(30 * SEC)),
            keep_alive_interval: None,
            streams: 1,
            ack_frequency: None,
            zero_rtt: false,
            max_pacing_rate: None,
            crypto: None,
        }
    }
}

const VARINT_MAX: u64 = (1 << 62) - 1;

/// The QUIC profiles: a name, what it is, and its controller (quinn's defaults otherwise).
pub const PROFILES: &[(&str, &str, QuicCongestion)] = &[
    (
        "quic",
        "QUIC (RFC 9000/9001/9002) as quinn-proto 0.11 does it by default: CUBIC",
        QuicCongestion::Cubic,
    ),
    (
        "quic-cubic",
        "QUIC with quinn's CUBIC (RFC 9438)",
        QuicCongestion::Cubic,
    ),
    (
        "quic-newreno",
        "QUIC with quinn's NewReno (RFC 9002 section 7)",
        QuicCongestion::Newreno,
    ),
    (
        "quic-bbr",
        "QUIC with quinn's BBR (version 1, experimental in quinn)",
        QuicCongestion::Bbr,
    ),
];

/// Whether `protocol` names a QUIC profile.
pub fn is_quic(protocol: &str) -> bool {
    PROFILES.iter().any(|p| p.0 == protocol)
}

/// A QUIC flow's settings as a user writes them: the profile `protocol`, then the
/// `[flows.quic]` overrides, checked against the flow's largest UDP payload. Errors name
/// the field under `path`.
pub fn quic_config(
    protocol: &str,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    max_payload: u16,
    path: &str,
) -> Result<QuicSettings, FieldError> {
    quic_config_on(
        QuicSettings::default(),
        protocol,
        overrides,
        max_payload,
        path,
    )
}

/// The same with `base` in place of quinn's defaults under the profile (a gateway keeps its
/// tunnel alive across outages by default, which a flow does not).
pub fn quic_config_on(
    base: QuicSettings,
    protocol: &str,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    max_payload: u16,
    path: &str,
) -> Result<QuicSettings, FieldError> {
    let Some(&(_, _, cc)) = PROFILES.iter().find(|p| p.0 == protocol) else {
        return Err(FieldError::new(
            format!("{path}.protocol"),
            format!("\"{protocol}\" is not a QUIC profile"),
        ));
    };
    let profile = QuicSettings {
        congestion_control: cc,
        ..base
    };
    let s = match overrides {
        Some(o) => spacetp_proto::settings::overlay(&profile, o, &format!("{path}.quic"))?,
        None => profile,
    };
    s.validate(max_payload)
        .map_err(|e| e.within("quic").within(path))?;
    Ok(s)
}

impl QuicSettings {
    /// The packet protection of a flow: `crypto` as set, else "sizes" unless something
    /// needs real ciphertext (`needs_ciphertext`: why, as "this run writes a pcap").
    pub fn crypto_mode(
        &self,
        needs_ciphertext: Option<&str>,
        path: &str,
    ) -> Result<CryptoMode, FieldError> {
        match (self.crypto, needs_ciphertext) {
            (Some(CryptoMode::Sizes), Some(why)) => Err(FieldError::new(
                format!("{path}.quic.crypto"),
                format!(
                    "\"sizes\" encrypts nothing, and {why}, which needs real ciphertext: set \
                     \"real\" or leave it unset"
                ),
            )),
            (Some(mode), _) => Ok(mode),
            (None, Some(_)) => Ok(CryptoMode::Real),
            (None, None) => Ok(CryptoMode::Sizes),
        }
    }

    /// Check every field against what quinn and the flow's MTU allow: `max_payload` is the
    /// largest UDP payload the flow's MTU carries.
    pub fn validate(&self, max_payload: u16) -> Result<(), FieldError> {
        let rtt = self.initial_rtt.0;
        if !(MS..=600 * SEC).contains(&rtt) {
            return Err(FieldError::new(
                "initial_rtt",
                format!("{} must be from 1 ms to 10 min", self.initial_rtt),
            ));
        }
        if let Some(w) = self.initial_window.filter(|w| w.0 < 2400) {
            return Err(FieldError::new(
                "initial_window",
                format!("{w} must be at least 2400 B (2 x 1200 B)"),
            ));
        }
        for (name, b) in [
            ("stream_receive_window", Some(self.stream_receive_window)),
            ("receive_window", self.receive_window),
            ("send_window", Some(self.send_window)),
        ] {
            if let Some(b) = b {
                if !(1200..=VARINT_MAX).contains(&b.0) {
                    return Err(FieldError::new(
                        name,
                        format!("{b} must be from 1200 B to 2^62 - 1 B"),
                    ));
                }
            }
        }
        if self.initial_mtu < 1200 || self.initial_mtu > max_payload {
            return Err(FieldError::new(
                "initial_mtu",
                format!(
                    "{} must be from 1200 (RFC 9000's minimum) to {max_payload}, the largest UDP \
                     payload the flow's MTU carries",
                    self.initial_mtu
                ),
            ));
        }
        if let Some(t) = self.max_idle_timeout {
            if t.0 < MS {
                return Err(FieldError::new("max_idle_timeout", "must be at least 1 ms"));
            }
        }
        if let Some(k) = self.keep_alive_interval {
            if k.0 < MS {
                return Err(FieldError::new(
                    "keep_alive_interval",
                    "must be at least 1 ms",
                ));
            }
        }
        if let Some(a) = &self.ack_frequency {
            for (name, v) in [
                (
                    "ack_frequency.ack_eliciting_threshold",
                    a.ack_eliciting_threshold,
                ),
                ("ack_frequency.reordering_threshold", a.reordering_threshold),
            ] {
                if v > 1000 {
                    return Err(FieldError::new(name, format!("{v} must be from 0 to 1000")));
                }
            }
            if let Some(d) = a.max_ack_delay.filter(|d| !(MS..=10 * SEC).contains(&d.0)) {
                return Err(FieldError::new(
                    "ack_frequency.max_ack_delay",
                    format!("{d} must be from 1 ms to 10 s"),
                ));
            }
        }
        if let Some(r) = self
            .max_pacing_rate
            .filter(|r| !(r.0.is_finite() && r.0 >= 8_000.0))
        {
            return Err(FieldError::new(
                "max_pacing_rate",
                format!("{r} must be at least 8 kb/s (one 1200-byte datagram a second)"),
            ));
        }
        if !(1..=10_000).contains(&self.streams) {
            return Err(FieldError::new(
                "streams",
                format!("{} must be from 1 to 10000", self.streams),
            ));
        }
        Ok(())
    }

    /// quinn's transport configuration for these settings on a flow whose MTU carries UDP
    /// payloads of up to `max_payload` bytes. Call `validate` first.
    pub fn transport_config(&self, max_payload: u16) -> TransportConfig {
        let mut t = TransportConfig::default();
        t.initial_rtt(std::time::Duration::from_nanos(self.initial_rtt.0));
        t.stream_receive_window(varint(self.stream_receive_window.0));
        t.receive_window(self.receive_window.map_or(VarInt::MAX, |b| varint(b.0)));
        t.send_window(self.send_window.0);
        t.initial_mtu(self.initial_mtu);
        t.min_mtu(1200);
        t.mtu_discovery_config(self.mtu_discovery.then(|| {
            let mut m = MtuDiscoveryConfig::default();
            m.upper_bound(max_payload);
            m
        }));
        t.max_idle_timeout(self.max_idle_timeout.map(|d| {
            let ms = (d.0 / MS).min(VARINT_MAX);
            IdleTimeout::from(varint(ms))
        }));
        t.keep_alive_interval(
            self.keep_alive_interval
                .map(|d| std::time::Duration::from_nanos(d.0)),
        );
        // The peer may open every stream of the transfer at once.
        t.max_concurrent_uni_streams(VarInt::from_u32(self.streams.max(100)));
        t.ack_frequency_config(self.ack_frequency.map(|a| {
            let mut c = AckFrequencyConfig::default();
            c.ack_eliciting_threshold(VarInt::from_u32(a.ack_eliciting_threshold));
            c.reordering_threshold(VarInt::from_u32(a.reordering_threshold));
            c.max_ack_delay(
                a.max_ack_delay
                    .map(|d| std::time::Duration::from_nanos(d.0)),
            );
            c
        }));
        // One datagram per transmit: the links carry packets, not GSO batches.
        t.enable_segmentation_offload(false);
        let w = self.initial_window.map(|b| b.0);
        match self.congestion_control {
            QuicCongestion::Newreno => {
                let mut c = NewRenoConfig::default();
                if let Some(w) = w {
                    c.initial_window(w);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
            QuicCongestion::Cubic => {
                let mut c = CubicConfig::default();
                if let Some(w) = w {
                    c.initial_window(w);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
            QuicCongestion::Bbr => {
                let mut c = BbrConfig::default();
                if let Some(w) = w {
                    c.initial_window(w);
                }
                t.congestion_controller_factory(Arc::new(c));
            }
        }
        t
    }
}

fn varint(v: u64) -> VarInt {
    VarInt::from_u64(v.min(VARINT_MAX)).expect("clamped below 2^62")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_apply_over_the_profile_and_errors_name_the_field() {
        let o: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"initial_rtt": "600 ms"}"#).unwrap();
        let s = quic_config("quic-bbr", Some(&o), 1472, "flows[0]").unwrap();
        assert_eq!(s.congestion_control, QuicCongestion::Bbr);
        assert_eq!(s.initial_rtt.0, 600 * MS);
        let bad: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"congestion_control": "vegas"}"#).unwrap();
        let e = quic_config("quic", Some(&bad), 1472, "flows[0]").unwrap_err();
        assert_eq!(e.path, "flows[0].quic.congestion_control");
        let unknown: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"rto": "1 s"}"#).unwrap();
        let e = quic_config("quic", Some(&unknown), 1472, "flows[0]").unwrap_err();
        assert!(e.message.contains("rto"), "{e:?}");
        let e = quic_config("quic", None, 1100, "flows[0]").unwrap_err();
        assert_eq!(e.path, "flows[0].quic.initial_mtu");
    }

    #[test]
    fn defaults_are_valid_for_a_1500_byte_mtu() {
        QuicSettings::default().validate(1472).unwrap();
    }

    #[test]
    fn bad_values_name_their_field() {
        let bad = |f: fn(&mut QuicSettings)| {
            let mut s = QuicSettings::default();
            f(&mut s);
            s.validate(1472).unwrap_err().path
        };
        assert_eq!(bad(|s| s.initial_rtt = Duration(0)), "initial_rtt");
        assert_eq!(bad(|s| s.initial_mtu = 1100), "initial_mtu");
        assert_eq!(bad(|s| s.initial_mtu = 1500), "initial_mtu");
        assert_eq!(
            bad(|s| s.stream_receive_window = Bytes(10)),
            "stream_receive_window"
        );
        assert_eq!(
            bad(|s| s.receive_window = Some(Bytes(1 << 63))),
            "receive_window"
        );
        assert_eq!(
            bad(|s| s.initial_window = Some(Bytes(1000))),
            "initial_window"
        );
        assert_eq!(
            bad(|s| {
                s.ack_frequency = Some(AckFrequency {
                    max_ack_delay: Some(Duration(0)),
                    ..Default::default()
                })
            }),
            "ack_frequency.max_ack_delay"
        );
        assert_eq!(
            bad(|s| {
                s.ack_frequency = Some(AckFrequency {
                    ack_eliciting_threshold: 5000,
                    ..Default::default()
                })
            }),
            "ack_frequency.ack_eliciting_threshold"
        );
    }
}
