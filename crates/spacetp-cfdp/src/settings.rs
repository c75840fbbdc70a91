//! `[flows.cfdp]`: a transaction's class and the remote entity's settings (CCSDS 727.0-B-5
//! chapter 8's MIB, as cfdp-rs's `RemoteEntityConfig` holds them), checked, with errors
//! that name the field.

use cfdp::RemoteEntityConfig;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacepackets::cfdp::{ChecksumType, TransmissionMode};
use spacepackets::util::UnsignedByteFieldU16;
use spacetp_proto::units::{Bytes, Duration, Rate};
use spacetp_proto::{FieldError, Time, MS, SEC};

/// When the receiver asks for missing file data in class 2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NakMode {
    /// As soon as a gap is seen (727.0-B-5 4.6.4.3.3).
    #[default]
    Immediate,
    /// Only after EOF, for the whole file (4.6.4.3.2).
    Deferred,
}

/// The checksum of the file that the receiver verifies (SANA checksum identifiers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    /// CFDP's modular checksum (type 0, 727.0-B-5 4.2.2.2).
    #[default]
    Modular,
    /// CRC-32 (type 2, ISO HDLC).
    Crc32,
    /// CRC-32C (type 3, iSCSI).
    Crc32c,
    /// No checksum (type 15).
    Null,
}

/// What carries the PDUs between the two entities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Carrier {
    /// A PDU per UDP datagram (port 4556), as cfdp-py's and ION's UDP entities send them.
    #[default]
    Udp,
    /// Each PDU a client service data unit of an LTP span, all red: LTP resends what is
    /// lost (CFDP over LTP, CCSDS 734.1-B-1; the span set by `[flows.ltp]`).
    Ltp,
    /// Each PDU a bundle from the sender's node to the receiver's and back, through the
    /// bundle agents by the contact plan (as ION's bputa; `[flows.bp]` sets the lifetime).
    Bp,
}

/// A CFDP flow's settings (`[flows.cfdp]`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CfdpSettings {
    /// 1: unacknowledged (no retransmission); 2: acknowledged (EOF and Finished
    /// acknowledged, missing data asked for with NAKs).
    pub class: u8,
    /// Class 1: the receiver answers with a Finished PDU (transaction closure).
    pub closure: bool,
    pub nak_mode: NakMode,
    /// Positive-ACK timer: an unacknowledged EOF or Finished is sent again after this.
    pub positive_ack_timer: Duration,
    /// Positive-ACK expiries before the fault "positive ACK limit reached".
    pub positive_ack_limit: u32,
    /// NAK timer: a NAK still unanswered is sent again after this.
    pub nak_timer: Duration,
    /// NAK timer expiries before the fault "NAK limit reached".
    pub nak_limit: u32,
    /// Check timer (class 1): after EOF, the receiver waits this long for missing data.
    pub check_timer: Duration,
    /// Check timer expiries before the fault "check limit reached".
    pub check_limit: u32,
    /// An entity that hears nothing of its peer for this long in a transaction that waits
    /// for it declares "inactivity detected" and cancels the transaction (727.0-B-5
    /// 4.6.5.3; cfdp-rs 0.3 has no inactivity timer: this crate keeps it).
    pub inactivity_timeout: Duration,
    /// Class 2: the sender prompts the receiver for a Keep Alive this often (727.0-B-5
    /// 5.2.7); none by default.
    pub keep_alive_interval: Option<Duration>,
    /// With prompts: a receiver whose progress lags the sender's by more than this is
    /// declared "keep alive limit reached" (4.6.5.2), and the transaction ends.
    pub keep_alive_limit: Option<Bytes>,
    /// File data bytes per PDU (default: as many as the flow's MTU carries).
    pub segment_size: Option<Bytes>,
    pub checksum: Checksum,
    /// The sender's PDUs leave no faster than this, IPv4 and UDP headers counted (CFDP has
    /// no congestion control; ION meters it to the contact's rate). Default: the path's
    /// bottleneck.
    pub rate: Option<Rate>,
    /// While a ground station reports the link down, suspend the transaction: hold its
    /// PDUs and its timers (727.0-B-5 4.6.7), resume when the link is back. False: PDUs
    /// are still held, but the timers run (and may reach their limits).
    pub suspend_on_outage: bool,
    /// What carries the PDUs: "udp" (default), "ltp" or "bp".
    pub carrier: Carrier,
}

impl Default for CfdpSettings {
    fn default() -> Self {
        // cfdp-rs's defaults (its RemoteEntityConfig and StdTimerCreator).
        CfdpSettings {
            class: 2,
            closure: false,
            nak_mode: NakMode::Immediate,
            positive_ack_timer: Duration(10 * SEC),
            positive_ack_limit: 2,
            nak_timer: Duration(10 * SEC),
            nak_limit: 2,
            check_timer: Duration(5 * SEC),
            check_limit: 2,
            inactivity_timeout: Duration(30 * SEC),
            keep_alive_interval: None,
            keep_alive_limit: None,
            segment_size: None,
            checksum: Checksum::Modular,
            rate: None,
            suspend_on_outage: true,
            carrier: Carrier::Udp,
        }
    }
}

/// The longest a timer may be set to: over bundles a PDU may wait days in a store for its
/// contact (a Mars relay's DSN windows), so the timers that wait for the peer can be long.
pub const MAX_TIMER: Time = 30 * 86_400 * SEC;

/// The largest PDU the handlers build (cfdp-rs's default buffer: its `packet-buf-2k`).
pub const MAX_PDU: usize = 2048;
/// A PDU's header and file data PDU's offset with 2-byte entity IDs and sequence numbers.
pub const FILE_DATA_OVERHEAD: usize = 4 + 2 + 2 + 2 + 4;

impl CfdpSettings {
    /// `[flows.cfdp]` from its JSON table; errors under `path` (e.g. `flows[0].cfdp`).
    pub fn from_map(
        m: Option<&serde_json::Map<String, serde_json::Value>>,
        path: &str,
    ) -> Result<CfdpSettings, FieldError> {
        let v = serde_json::Value::Object(m.cloned().unwrap_or_default());
        let s: CfdpSettings = serde_path_to_error::deserialize(v).map_err(|e| {
            let at = e.path().to_string();
            let msg = e.into_inner().to_string();
            match at.as_str() {
                "." => FieldError::new(path, msg),
                _ => FieldError::new(format!("{path}.{at}"), msg),
            }
        })?;
        s.check(path)?;
        Ok(s)
    }

    fn check(&self, p: &str) -> Result<(), FieldError> {
        let err = |f: &str, m: String| Err(FieldError::new(format!("{p}.{f}"), m));
        if !matches!(self.class, 1 | 2) {
            return err(
                "class",
                format!(
                    "{} must be 1 (unacknowledged) or 2 (acknowledged)",
                    self.class
                ),
            );
        }
        for (f, d) in [
            ("positive_ack_timer", self.positive_ack_timer),
            ("nak_timer", self.nak_timer),
            ("check_timer", self.check_timer),
            ("inactivity_timeout", self.inactivity_timeout),
        ] {
            if d.0 < MS || d.0 > MAX_TIMER {
                return err(f, format!("{d} must be from 1 ms to 30 days"));
            }
        }
        for (f, n) in [
            ("positive_ack_limit", self.positive_ack_limit),
            ("nak_limit", self.nak_limit),
            ("check_limit", self.check_limit),
        ] {
            if n == 0 || n > 1000 {
                return err(f, format!("{n} must be from 1 to 1000"));
            }
        }
        if let Some(d) = self.keep_alive_interval {
            if d.0 < MS {
                return err("keep_alive_interval", format!("{d} must be at least 1 ms"));
            }
        }
        if self.keep_alive_limit.is_some() && self.keep_alive_interval.is_none() {
            return err(
                "keep_alive_limit",
                "needs keep_alive_interval: the receiver reports its progress only when prompted"
                    .into(),
            );
        }
        if let Some(b) = self.segment_size {
            let most = (MAX_PDU - FILE_DATA_OVERHEAD) as u64;
            if b.0 == 0 || b.0 > most {
                return err("segment_size", format!("{b} must be from 1 B to {most} B (cfdp-rs builds PDUs of at most {MAX_PDU} B)"));
            }
        }
        if let Some(r) = self.rate {
            if !(r.0 > 0.0 && r.0.is_finite()) {
                return err("rate", format!("{r} must be above 0 b/s"));
            }
        }
        Ok(())
    }

    pub fn mode(&self) -> TransmissionMode {
        match self.class {
            1 => TransmissionMode::Unacknowledged,
            _ => TransmissionMode::Acknowledged,
        }
    }

    fn checksum_type(&self) -> ChecksumType {
        match self.checksum {
            Checksum::Modular => ChecksumType::Modular,
            Checksum::Crc32 => ChecksumType::Crc32,
            Checksum::Crc32c => ChecksumType::Crc32C,
            Checksum::Null => ChecksumType::NullChecksum,
        }
    }

    /// What an entity knows of its peer `peer`, with file data PDUs of `segment` bytes.
    pub fn remote(&self, peer: u16, segment: usize) -> RemoteEntityConfig {
        let mut r = RemoteEntityConfig::new_with_default_values(
            UnsignedByteFieldU16::new(peer).into(),
            MAX_PDU,
            self.closure || self.class == 2,
            false,
            self.mode(),
            self.checksum_type(),
        );
        r.max_file_segment_len = Some(segment);
        r.positive_ack_timer_interval = std_duration(self.positive_ack_timer.0);
        r.positive_ack_timer_expiration_limit = self.positive_ack_limit;
        r.nak_timer_interval = std_duration(self.nak_timer.0);
        r.nak_timer_expiration_limit = self.nak_limit;
        r.check_limit = self.check_limit;
        r.immediate_nak_mode = self.nak_mode == NakMode::Immediate;
        r
    }
}

fn std_duration(t: Time) -> std::time::Duration {
    std::time::Duration::from_nanos(t)
}
