//! What the connections of a flow, a workload or a traffic source run, from the scenario: a
//! TCP profile with its `tcp` overrides, or a QUIC profile with its `quic` settings. A QUIC
//! connection refuses the settings only TCP takes, naming the first one set.

use super::*;
use crate::fit::{FitPath, Fitted};
use crate::transport::ltp::{fit as ltp_fit, LtpSpec, PathDefaults};
use crate::transport::quic::{fit as quic_fit, QuicSpec};
use crate::transport::tcp::{fit as tcp_fit, TcpSpec};
use spacetp_proto::FieldError;

pub use crate::dtn_plan::BP;
/// The `protocol` of an LTP flow.
pub const LTP: &str = "ltp";

/// Every `protocol` a `[[flows]]` entry takes, from the registries that define them: the
/// TCP and SCPS-TP profiles (spacetp-proto), the QUIC profiles (spacetp-quic), LTP and bp.
/// The unknown-protocol error lists these.
pub fn flow_protocols() -> Vec<&'static str> {
    let mut names = spacetp_proto::profiles::names();
    names.extend(quic_protocols());
    names.extend([LTP, BP]);
    names
}

/// The QUIC profiles' names.
pub fn quic_protocols() -> Vec<&'static str> {
    spacetp_quic::PROFILES.iter().map(|p| p.0).collect()
}

/// `protocol` is none of `known`: the error names the field and lists them.
fn unknown_protocol(protocol: &str, p: &str, known: &[&str], note: &str) -> FieldError {
    FieldError::new(
        format!("{p}.protocol"),
        format!(
            "unknown protocol \"{protocol}\"; known: {}{note}",
            known.join(", ")
        ),
    )
}

/// What a QUIC connection writes besides its packets, if asked for.
pub(super) struct QuicOutputs {
    pub key_log: Option<std::sync::Arc<spacetp_quic::KeyLogFile>>,
    pub qlog_prefix: Option<std::path::PathBuf>,
}

/// What a flow's two ends run: a QUIC profile with its `[flows.quic]` settings, or a TCP
/// profile (and the receiver's, if it differs) with its `[flows.tcp]` overrides; with `fit`
/// (the flow's path, when `fit = true`), fitted to it, and the settings fitted.
pub(super) fn flow_spec(
    f: &FlowCfg,
    mss: u32,
    p: &str,
    outputs: QuicOutputs,
    path: &PathDefaults,
    fit: Option<&FitPath>,
) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
    if f.protocol == BP {
        refuse_for(
            p,
            "bp",
            BP,
            &[
                ("tcp", f.tcp.is_some()),
                ("quic", f.quic.is_some()),
                ("ltp", f.ltp.is_some()),
                ("peer_protocol", f.peer_protocol.is_some()),
                ("record_size", f.record_size.is_some()),
                ("read_rate", f.read_rate.is_some()),
                ("write_rate", f.write_rate.is_some()),
                ("receive_buffer", f.receive_buffer.is_some()),
                ("send_buffer", f.send_buffer.is_some()),
            ],
        )?;
        let mut spec = crate::dtn_plan::BpSpec::from_cfg(f.bp.as_ref(), f.bytes.map(|b| b.0), p)?;
        let fitted = fit.map_or_else(Vec::new, |fp| spec.fit(f.bp.as_ref(), fp));
        return Ok((TransportSpec::Bundles(spec), fitted));
    }
    if f.bp.is_some() {
        return Err(FieldError::new(
            format!("{p}.bp"),
            format!(
                "bundle settings need protocol = \"bp\", not \"{}\"",
                f.protocol
            ),
        ));
    }
    if f.protocol == LTP {
        refuse_for(
            p,
            "LTP",
            LTP,
            &[
                ("tcp", f.tcp.is_some()),
                ("quic", f.quic.is_some()),
                ("peer_protocol", f.peer_protocol.is_some()),
                ("record_size", f.record_size.is_some()),
                ("read_rate", f.read_rate.is_some()),
                ("receive_buffer", f.receive_buffer.is_some()),
                ("send_buffer", f.send_buffer.is_some()),
            ],
        )?;
        let mut spec = LtpSpec::from_settings(f.ltp.as_ref(), path, p)?;
        let fitted = fit.map_or_else(Vec::new, |fp| ltp_fit::fit(&mut spec, f.ltp.as_ref(), fp));
        return Ok((TransportSpec::Ltp(spec), fitted));
    }
    if f.ltp.is_some() {
        return Err(FieldError::new(
            format!("{p}.ltp"),
            format!(
                "LTP settings need protocol = \"ltp\", not \"{}\"",
                f.protocol
            ),
        ));
    }
    if spacetp_quic::is_quic(&f.protocol) {
        refuse_for_quic(
            p,
            &[
                ("tcp", f.tcp.is_some()),
                ("peer_protocol", f.peer_protocol.is_some()),
                ("record_size", f.record_size.is_some()),
                ("read_rate", f.read_rate.is_some()),
                ("receive_buffer", f.receive_buffer.is_some()),
                ("send_buffer", f.send_buffer.is_some()),
            ],
        )?;
        return quic_spec(&f.protocol, f.quic.as_ref(), mss, p, outputs, fit);
    }
    if f.quic.is_some() {
        return Err(not_a_quic_protocol(&f.protocol, p));
    }
    if spacetp_proto::profiles::profile(&f.protocol).is_none() {
        return Err(unknown_protocol(&f.protocol, p, &flow_protocols(), ""));
    }
    let mut cfg = build::tcp_config(
        &f.protocol,
        f.tcp.as_ref(),
        f.receive_buffer,
        f.send_buffer,
        p,
    )?;
    let mut peer_cfg = match &f.peer_protocol {
        Some(name) => Some(
            build::tcp_config(name, f.tcp.as_ref(), f.receive_buffer, f.send_buffer, p).map_err(
                |e| FieldError {
                    path: e.path.replace(".protocol", ".peer_protocol"),
                    ..e
                },
            )?,
        ),
        None => None,
    };
    let mut fitted = Vec::new();
    if let Some(fp) = fit {
        let user = tcp_fit::UserSettings {
            tcp: f.tcp.as_ref(),
            receive_buffer: f.receive_buffer.is_some(),
            send_buffer: f.send_buffer.is_some(),
        };
        fitted = tcp_fit::fit(&mut cfg, family(&f.protocol), &user, fp);
        if let (Some(c), Some(name)) = (peer_cfg.as_mut(), &f.peer_protocol) {
            tcp_fit::fit(c, family(name), &user, fp);
        }
    }
    Ok((TransportSpec::Tcp(TcpSpec { cfg, peer_cfg, mss }), fitted))
}

/// A TCP profile's family (`spacetp_proto::profiles::family`), "" for none.
fn family(name: &str) -> &'static str {
    spacetp_proto::profiles::family(name).unwrap_or("")
}

/// What a workload's connections run: one connection per file, QUIC with its `quic`
/// settings (the run's key log shared; qlogs are written for `[[flows]]` only) or TCP with
/// its `tcp` overrides; fitted to the path of its first client with `fit`.
pub(super) fn workload_spec(
    wl: &WorkloadCfg,
    mss: u32,
    p: &str,
    key_log: Option<std::sync::Arc<spacetp_quic::KeyLogFile>>,
    fit: Option<&FitPath>,
) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
    if spacetp_quic::is_quic(&wl.protocol) {
        refuse_for_quic(
            p,
            &[
                ("tcp", wl.tcp.is_some()),
                ("receive_buffer", wl.receive_buffer.is_some()),
                ("send_buffer", wl.send_buffer.is_some()),
            ],
        )?;
        let outputs = QuicOutputs {
            key_log,
            qlog_prefix: None,
        };
        return quic_spec(&wl.protocol, wl.quic.as_ref(), mss, p, outputs, fit);
    }
    if wl.quic.is_some() {
        return Err(not_a_quic_protocol(&wl.protocol, p));
    }
    if spacetp_proto::profiles::profile(&wl.protocol).is_none() {
        let mut known = spacetp_proto::profiles::names();
        known.extend(quic_protocols());
        let note = format!(" ({LTP} and {BP} carry [[flows]] only)");
        return Err(unknown_protocol(&wl.protocol, p, &known, &note));
    }
    let mut cfg = build::tcp_config(
        &wl.protocol,
        wl.tcp.as_ref(),
        wl.receive_buffer,
        wl.send_buffer,
        p,
    )?;
    let fitted = fit.map_or_else(Vec::new, |fp| {
        let user = tcp_fit::UserSettings {
            tcp: wl.tcp.as_ref(),
            receive_buffer: wl.receive_buffer.is_some(),
            send_buffer: wl.send_buffer.is_some(),
        };
        tcp_fit::fit(&mut cfg, family(&wl.protocol), &user, fp)
    });
    let spec = TcpSpec {
        cfg,
        peer_cfg: None,
        mss,
    };
    Ok((TransportSpec::Tcp(spec), fitted))
}

/// A traffic source over QUIC (`protocol = "quic..."`): its settings, its datagrams sent as
/// DATAGRAM frames; None for `udp`. A frame's payload (`size`) must fit a packet of 1500 B,
/// as a flow's default `mtu`, or of the path's MTU if smaller.
pub(super) fn source_quic_spec(
    t: &DatagramCfg,
    path_mtu: u32,
    p: &str,
    key_log: Option<std::sync::Arc<spacetp_quic::KeyLogFile>>,
) -> Result<Option<QuicSpec>, FieldError> {
    if t.protocol == "udp" {
        if t.quic.is_some() {
            return Err(not_a_quic_protocol(&t.protocol, p));
        }
        return Ok(None);
    }
    if !spacetp_quic::is_quic(&t.protocol) {
        return Err(FieldError::new(
            format!("{p}.protocol"),
            format!(
                "\"{}\" is not udp or a QUIC profile ({})",
                t.protocol,
                quic_protocols().join(", ")
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
    Ok(Some(QuicSpec {
        resumption: settings.zero_rtt.then(Default::default),
        settings,
        max_payload,
        key_log,
        qlog_prefix: None,
        datagrams: true,
    }))
}

/// The settings only TCP takes, refused when a QUIC protocol is asked for: the first one
/// set is an error naming it and saying why.
fn refuse_for_quic(p: &str, set: &[(&str, bool)]) -> Result<(), FieldError> {
    refuse_for(p, "QUIC", "quic", set)
}

/// The settings another protocol takes, refused for `name` (whose own table is `[...key]`):
/// the first one set is an error naming it and saying why.
fn refuse_for(p: &str, name: &str, key: &str, set: &[(&str, bool)]) -> Result<(), FieldError> {
    let Some(&(field, _)) = set.iter().find(|s| s.1) else {
        return Ok(());
    };
    let table = p.split('[').next().unwrap_or(p);
    let own = format!("these are not {name} settings; {name}'s are [{table}.{key}]");
    let why = match (field, name) {
        ("peer_protocol", _) => format!("both ends of a {name} flow run the same {name}"),
        ("record_size", _) => format!("{name} has no record boundaries"),
        ("read_rate", _) => format!("a rate-limited reader is not modelled for {name} yet"),
        ("write_rate", _) => {
            format!("a bundle agent writes the file at once; {name} has no writer")
        }
        ("receive_buffer", "QUIC") => {
            "QUIC's receive windows are quic.stream_receive_window and quic.receive_window".into()
        }
        ("send_buffer", "QUIC") => "QUIC's send buffer is quic.send_window".into(),
        ("receive_buffer" | "send_buffer", _) => {
            format!("{name}'s buffering is its sessions: [{table}.{key}] max_export_sessions")
        }
        ("tcp", "QUIC") => format!("TCP settings do not apply to QUIC; QUIC's are [{table}.quic]"),
        _ => own,
    };
    Err(FieldError::new(format!("{p}.{field}"), why))
}

/// A QUIC profile with its settings, for connections whose MTU gives segments of `mss`.
fn quic_spec(
    protocol: &str,
    overrides: Option<&serde_json::Map<String, serde_json::Value>>,
    mss: u32,
    p: &str,
    outputs: QuicOutputs,
    fit: Option<&FitPath>,
) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
    let max_payload = max_udp_payload(mss + 40);
    let mut settings = spacetp_quic::quic_config(protocol, overrides, max_payload, p)?;
    let fitted = fit.map_or_else(Vec::new, |fp| quic_fit::fit(&mut settings, overrides, fp));
    let spec = QuicSpec {
        resumption: settings.zero_rtt.then(Default::default),
        settings,
        max_payload,
        key_log: outputs.key_log,
        qlog_prefix: outputs.qlog_prefix,
        datagrams: false,
    };
    Ok((TransportSpec::Quic(spec), fitted))
}

fn not_a_quic_protocol(protocol: &str, p: &str) -> FieldError {
    FieldError::new(
        format!("{p}.quic"),
        format!(
            "QUIC settings need a QUIC protocol ({}), not \"{protocol}\"",
            quic_protocols().join(", ")
        ),
    )
}

/// The largest UDP payload a packet of `mtu` bytes carries (IPv4 and UDP headers: 28 B).
fn max_udp_payload(mtu: u32) -> u16 {
    (mtu - 28).min(65527) as u16
}
