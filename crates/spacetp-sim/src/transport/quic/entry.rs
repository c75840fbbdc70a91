//! QUIC in the transport registry: the quinn-proto profiles with their `[flows.quic]`
//! settings, for flows, workloads and (as DATAGRAM frames) traffic sources.

use super::fit as quic_fit;
use super::QuicSpec;
use crate::config::{DatagramCfg, FlowCfg, WorkloadCfg};
use crate::fit::Fitted;
use crate::transport::registry::{Context, EndsSpec, Profile, TransportEntry, TransportSpec};
use crate::transport::{Ends, Transport};
use spacetp_proto::FieldError;
use std::sync::Arc;

pub struct QuicEntry;
pub static QUIC: QuicEntry = QuicEntry;

impl TransportEntry for QuicEntry {
    fn title(&self) -> &'static str {
        "QUIC"
    }

    fn settings_key(&self) -> &'static str {
        "quic"
    }

    fn protocols(&self) -> Vec<&'static str> {
        spacetp_quic::PROFILES.iter().map(|p| p.0).collect()
    }

    fn profiles(&self) -> Vec<Profile> {
        spacetp_quic::PROFILES
            .iter()
            .map(|&(name, description, _)| Profile {
                name,
                description,
                settings: spacetp_quic::quic_config(name, None, 1472, "")
                    .ok()
                    .and_then(|s| serde_json::to_value(s).ok())
                    .unwrap_or_default(),
                family: "quic",
            })
            .collect()
    }

    fn settings_schema(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(spacetp_quic::QuicSettings)).unwrap_or_default()
    }

    fn takes(&self) -> &'static [&'static str] {
        &["write_rate"]
    }

    fn why_not(&self, field: &str, _table: &str) -> Option<String> {
        match field {
            "receive_buffer" => Some(
                "QUIC's receive windows are quic.stream_receive_window and quic.receive_window"
                    .into(),
            ),
            "send_buffer" => Some("QUIC's send buffer is quic.send_window".into()),
            _ => None,
        }
    }

    fn flow(&self, f: &FlowCfg, cx: Context) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
        let (spec, fitted) = quic_spec(&f.protocol, f.quic.as_ref(), cx)?;
        Ok((TransportSpec::Ends(Arc::new(spec)), fitted))
    }

    fn carries_workloads(&self) -> bool {
        true
    }

    /// The run's key log is shared; qlogs are written for `[[flows]]` only.
    fn workload(
        &self,
        wl: &WorkloadCfg,
        cx: Context,
    ) -> Result<(Arc<dyn EndsSpec>, Vec<Fitted>), FieldError> {
        let cx = Context {
            qlog_prefix: None,
            ..cx
        };
        let (spec, fitted) = quic_spec(&wl.protocol, wl.quic.as_ref(), cx)?;
        Ok((Arc::new(spec), fitted))
    }
}

impl EndsSpec for QuicSpec {
    fn open(
        &self,
        ends: Ends,
        isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>) {
        let seed = (isn() as u64) << 32 | isn() as u64;
        let (client, server) = QuicSpec::open(self, ends, seed);
        (Box::new(client), Box::new(server))
    }

    fn mss(&self) -> u32 {
        self.max_payload as u32
    }
}

/// A QUIC profile with its settings, for connections whose MTU gives segments of `cx.mss`.
fn quic_spec(
    protocol: &str,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    cx: Context,
) -> Result<(QuicSpec, Vec<Fitted>), FieldError> {
    let max_payload = max_udp_payload(cx.mss + 40);
    let mut settings = spacetp_quic::quic_config(protocol, overrides, max_payload, cx.path)?;
    let fitted = cx
        .fit
        .map_or_else(Vec::new, |fp| quic_fit::fit(&mut settings, overrides, fp));
    let crypto = settings.crypto_mode(cx.needs_ciphertext, cx.path)?;
    let spec = QuicSpec {
        resumption: settings.zero_rtt.then(Default::default),
        crypto,
        settings,
        max_payload,
        key_log: cx.key_log,
        qlog_prefix: cx.qlog_prefix,
        datagrams: false,
    };
    Ok((spec, fitted))
}

/// A traffic source over QUIC (`protocol = "quic..."`): its settings, its datagrams sent as
/// DATAGRAM frames; None for `udp`. A frame's payload (`size`) must fit a packet of 1500 B,
/// as a flow's default `mtu`, or of the path's MTU if smaller.
pub fn source_spec(
    t: &DatagramCfg,
    path_mtu: u32,
    p: &str,
    key_log: Option<Arc<spacetp_quic::KeyLogFile>>,
    needs_ciphertext: Option<&str>,
) -> Result<Option<QuicSpec>, FieldError> {
    let names = || QUIC.protocols().join(", ");
    if t.protocol == "udp" {
        if t.quic.is_some() {
            return Err(FieldError::new(
                format!("{p}.quic"),
                format!(
                    "QUIC settings need a QUIC protocol ({}), not \"udp\"",
                    names()
                ),
            ));
        }
        return Ok(None);
    }
    if !spacetp_quic::is_quic(&t.protocol) {
        return Err(FieldError::new(
            format!("{p}.protocol"),
            format!(
                "\"{}\" is not udp or a QUIC profile ({})",
                t.protocol,
                names()
            ),
        ));
    }
    let mtu = path_mtu.min(1500);
    let max_payload = max_udp_payload(mtu);
    if t.size.0 < 1 || t.size.0 > max_payload as u64 {
        return Err(FieldError::new(
            format!("{p}.size"),
            format!(
                "{} B must be from 1 B to {max_payload} B, the UDP payload of a {mtu}-byte \
                 packet (less QUIC's own overhead in practice)",
                t.size.0
            ),
        ));
    }
    let settings = spacetp_quic::quic_config(&t.protocol, t.quic.as_ref(), max_payload, p)?;
    let crypto = settings.crypto_mode(needs_ciphertext, p)?;
    Ok(Some(QuicSpec {
        resumption: settings.zero_rtt.then(Default::default),
        crypto,
        settings,
        max_payload,
        key_log,
        qlog_prefix: None,
        datagrams: true,
    }))
}

/// The largest UDP payload a packet of `mtu` bytes carries (IPv4 and UDP headers: 28 B).
fn max_udp_payload(mtu: u32) -> u16 {
    (mtu - 28).min(65527) as u16
}
