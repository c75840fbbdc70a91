//! CFDP in the transport registry: `protocol = "cfdp"` with `[flows.cfdp]`, a flow one
//! file; `[[workloads]]` of many files, each its own transaction.

use super::CfdpSpec;
use crate::config::{FlowCfg, WorkloadCfg};
use crate::dtn_schema::BpCfg;
use crate::fit::Fitted;
use crate::transport::bp::BpSpec;
use crate::transport::ltp::LtpSpec;
use crate::transport::registry::{Context, EndsSpec, Profile, TransportEntry, TransportSpec};
use crate::transport::{Ends, Transport};
use spacetp_cfdp::{Carrier, CfdpSettings, FILE_DATA_OVERHEAD, MAX_PDU};
use spacetp_proto::units::Duration;
use spacetp_proto::FieldError;
use spacetp_proto::{Time, SEC};
use std::sync::Arc;

/// The `protocol` of a CFDP flow.
pub const CFDP_PROTOCOL: &str = "cfdp";
/// CFDP class 1 over LTP red (its `carrier` "ltp" and `class` 1 by default).
pub const CFDP_LTP_PROTOCOL: &str = "cfdp-ltp";
/// CFDP class 1 over the Bundle Protocol (its `carrier` "bp" and `class` 1 by default).
pub const CFDP_BP_PROTOCOL: &str = "cfdp-bp";

/// Whether flow `f`'s PDUs travel as bundles (`cfdp-bp`, or `cfdp.carrier = "bp"`).
pub fn carried_by_bundles(f: &FlowCfg) -> bool {
    let set = f.cfdp.as_ref().and_then(|m| m.get("carrier"));
    match set.and_then(|v| v.as_str()) {
        Some(c) => c == "bp" && (f.protocol == CFDP_PROTOCOL || f.protocol == CFDP_BP_PROTOCOL),
        None => f.protocol == CFDP_BP_PROTOCOL,
    }
}

/// Over LTP, CFDP's default rate as a share of the span's transmission rate.
const LTP_SHARE: f64 = 0.95;
/// Over bundles, CFDP's default rate as a share of the path's slowest link (each PDU's
/// bundle headers, the hops' LTP segment headers, reports and checkpoints take the rest).
const BP_SHARE: f64 = 0.9;

pub struct CfdpEntry;
pub static CFDP: CfdpEntry = CfdpEntry;

impl TransportEntry for CfdpEntry {
    fn title(&self) -> &'static str {
        "CFDP"
    }

    fn settings_key(&self) -> &'static str {
        "cfdp"
    }

    fn protocols(&self) -> Vec<&'static str> {
        vec![CFDP_PROTOCOL, CFDP_LTP_PROTOCOL, CFDP_BP_PROTOCOL]
    }

    fn profiles(&self) -> Vec<Profile> {
        vec![
            Profile {
                name: CFDP_PROTOCOL,
                description: "CFDP (CCSDS 727.0-B-5) over UDP, as cfdp-rs (flight software's \
                engine) runs it: class 2 by default (EOF and Finished acknowledged, NAKs), \
                no congestion control ([flows.cfdp])",
                settings: serde_json::to_value(CfdpSettings::default()).unwrap_or_default(),
                family: "cfdp",
            },
            Profile {
                name: CFDP_LTP_PROTOCOL,
                description: "CFDP class 1 over LTP red (CCSDS 734.1-B-1), as missions fly it on \
                deep-space links: LTP resends what is lost, CFDP checks the file \
                ([flows.cfdp], [flows.ltp])",
                settings: serde_json::to_value(ltp_defaults(CfdpSettings::default()))
                    .unwrap_or_default(),
                family: "cfdp",
            },
            Profile {
                name: CFDP_BP_PROTOCOL,
                description: "CFDP class 1 over the Bundle Protocol (as ION's bputa): each PDU \
                a bundle, stored and forwarded hop by hop over LTP by the contact plan; \
                CFDP's timers wait a bundle lifetime ([flows.cfdp], [flows.bp])",
                settings: serde_json::to_value(bp_defaults(CfdpSettings::default(), DAY))
                    .unwrap_or_default(),
                family: "cfdp",
            },
        ]
    }

    fn settings_schema(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(CfdpSettings)).unwrap_or_default()
    }

    /// Its carrier's settings: `[flows.ltp]` with `carrier = "ltp"`, `[flows.bp]` with
    /// `carrier = "bp"`.
    fn takes(&self) -> &'static [&'static str] {
        &["ltp", "bp"]
    }

    /// Bundles go by the contact plan, not a route of links.
    fn routed_flow(&self, f: &FlowCfg) -> bool {
        !carried_by_bundles(f)
    }

    fn why_not(&self, field: &str, _table: &str) -> Option<String> {
        match field {
            "write_rate" | "read_rate" | "record_size" => Some(
                "CFDP moves a whole file: the sender's Put.request needs all of it, the \
                 receiver has it once the transaction completes"
                    .into(),
            ),
            "receive_buffer" | "send_buffer" => {
                Some("CFDP keeps files in its filestore, not socket buffers".into())
            }
            _ => None,
        }
    }

    fn flow(&self, f: &FlowCfg, cx: Context) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
        if f.bytes.is_none() {
            return Err(FieldError::new(
                format!("{}.bytes", cx.path),
                "a cfdp flow sends a file: give its size",
            ));
        }
        let carriers = Carriers {
            ltp: f.ltp.as_ref(),
            bp: f.bp.as_ref(),
        };
        let (spec, fitted) = spec(&f.protocol, f.cfdp.as_ref(), carriers, &cx)?;
        Ok((TransportSpec::Ends(Arc::new(spec)), fitted))
    }

    fn carries_workloads(&self) -> bool {
        true
    }

    /// Each file of the workload is one transaction between the client and the server.
    fn workload(
        &self,
        wl: &WorkloadCfg,
        cx: Context,
    ) -> Result<(Arc<dyn EndsSpec>, Vec<Fitted>), FieldError> {
        let (spec, fitted) = spec(&wl.protocol, wl.cfdp.as_ref(), Carriers::default(), &cx)?;
        if spec.bundle_lifetime.is_some() {
            return Err(FieldError::new(
                format!("{}.protocol", cx.path),
                "CFDP over the Bundle Protocol is for [[flows]]; a workload's files go over \
                 UDP or LTP (not yet over bundles)",
            ));
        }
        Ok((Arc::new(spec), fitted))
    }
}

/// The settings `cfdp-ltp` starts from: CFDP's, carried by LTP, class 1 (LTP red already
/// resends what is lost; class 2 over it may be asked for).
fn ltp_defaults(mut s: CfdpSettings) -> CfdpSettings {
    s.carrier = Carrier::Ltp;
    s.class = 1;
    s
}

/// The settings `cfdp-bp` starts from: carried by bundles, class 1 (each hop's LTP is
/// red), and the timers that wait for the peer set to the bundles' `lifetime` (at most
/// 30 days, the timers' limit; a PDU may
/// wait that long in an agent's store for a contact: seconds-scale timers would run out
/// long before an answer can come).
fn bp_defaults(mut s: CfdpSettings, lifetime: Time) -> CfdpSettings {
    s.carrier = Carrier::Bp;
    s.class = 1;
    let d = Duration(lifetime.min(spacetp_cfdp::settings::MAX_TIMER));
    (
        s.positive_ack_timer,
        s.nak_timer,
        s.check_timer,
        s.inactivity_timeout,
    ) = (d, d, d, d);
    s
}

/// A bundle's lifetime by default (as a bp flow's).
const DAY: Time = 86_400 * SEC;

/// A flow's carrier tables.
#[derive(Default)]
struct Carriers<'a> {
    ltp: Option<&'a serde_json::Map<String, serde_json::Value>>,
    bp: Option<&'a BpCfg>,
}

/// `[flows.cfdp]` (or `[workloads.cfdp]`) checked and fitted, with the path's segment and
/// rate, and `[flows.ltp]` / `[flows.bp]` for the LTP or bundle carrier.
fn spec(
    protocol: &str,
    table: Option<&serde_json::Map<String, serde_json::Value>>,
    carriers: Carriers,
    cx: &Context,
) -> Result<(CfdpSpec, Vec<Fitted>), FieldError> {
    let p = cx.path;
    // The protocol's starting settings, under what the flow sets.
    let mut merged = table.cloned().unwrap_or_default();
    let carrier = merged.get("carrier").and_then(|v| v.as_str());
    let over_bp = carrier.map_or(protocol == CFDP_BP_PROTOCOL, |c| c == "bp");
    let lifetime = match over_bp {
        true => Some(BpSpec::from_cfg(carriers.bp, Some(1), p)?.lifetime),
        false => None,
    };
    let start = match lifetime {
        Some(life) => Some(bp_defaults(CfdpSettings::default(), life)),
        None if protocol == CFDP_LTP_PROTOCOL => Some(ltp_defaults(CfdpSettings::default())),
        None => None,
    };
    if let Some(s) = start {
        let mut put = |k: &str, v: serde_json::Value| {
            merged.entry(k.to_string()).or_insert(v);
        };
        put("carrier", serde_json::json!(s.carrier));
        put("class", s.class.into());
        if over_bp {
            for (k, d) in [
                ("positive_ack_timer", s.positive_ack_timer),
                ("nak_timer", s.nak_timer),
                ("check_timer", s.check_timer),
                ("inactivity_timeout", s.inactivity_timeout),
            ] {
                put(k, format!("{} ns", d.0).into());
            }
        }
    }
    let mut settings = CfdpSettings::from_map(Some(&merged), &format!("{p}.cfdp"))?;
    if carriers.ltp.is_some() && settings.carrier != Carrier::Ltp {
        return Err(FieldError::new(
            format!("{p}.ltp"),
            "LTP settings apply to CFDP only when LTP carries it: protocol = \"cfdp-ltp\" \
             (or cfdp.carrier = \"ltp\")",
        ));
    }
    if carriers.bp.is_some() && settings.carrier != Carrier::Bp {
        return Err(FieldError::new(
            format!("{p}.bp"),
            "bundle settings apply to CFDP only when bundles carry it: protocol = \"cfdp-bp\" \
             (or cfdp.carrier = \"bp\")",
        ));
    }
    // Over bundles there is no round trip to fit the timers to: they wait a lifetime.
    let mut fitted = match (cx.fit, lifetime) {
        (Some(fp), None) => super::fit::fit(&mut settings, table, fp),
        _ => Vec::new(),
    };
    let defaults = cx
        .defaults
        .ok_or_else(|| FieldError::new(p, "a CFDP transfer needs its path"))?;
    // File data per PDU: the MTU less IPv4, UDP and the PDU's own header.
    let fits = (cx.mss as usize + 40 - 28)
        .saturating_sub(FILE_DATA_OVERHEAD)
        .min(MAX_PDU - FILE_DATA_OVERHEAD);
    let segment = settings.segment_size.map_or(fits, |b| b.0 as usize);
    if segment > fits {
        return Err(FieldError::new(
            format!("{p}.cfdp.segment_size"),
            format!(
                "{segment} B does not fit the {} B packets: at most {fits} B",
                cx.mss + 40
            ),
        ));
    }
    let ltp = match settings.carrier {
        Carrier::Udp | Carrier::Bp => None,
        Carrier::Ltp => {
            let mut l = LtpSpec::from_settings(carriers.ltp, defaults, p)?;
            if let Some(fp) = cx.fit {
                fitted.extend(crate::transport::ltp::fit::fit(&mut l, carriers.ltp, fp));
            }
            Some(l)
        }
    };
    // Over LTP, CFDP hands its PDUs to the span a little slower than the span sends (its
    // segment headers, reports and checkpoints take the rest), so none wait long in LTP.
    let carrier_rate = ltp.as_ref().and_then(|l| l.span.transmission_rate);
    let default_rate = match (carrier_rate, lifetime) {
        (Some(r), _) => r.0 * LTP_SHARE,
        (None, Some(_)) => defaults.rate_bps * BP_SHARE,
        (None, None) => defaults.rate_bps,
    };
    let rate_bps = settings.rate.map_or(default_rate, |r| r.0);
    let spec = CfdpSpec {
        settings,
        segment,
        rate_bps,
        ltp,
        bundle_lifetime: lifetime,
    };
    Ok((spec, fitted))
}

impl EndsSpec for CfdpSpec {
    fn open(
        &self,
        ends: Ends,
        isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>) {
        let seq = isn() as u16;
        let seed = match self.ltp {
            Some(_) => (isn() as u64) << 32 | isn() as u64,
            None => 0,
        };
        let (client, server) = CfdpSpec::open(self, ends, seq, seed);
        (Box::new(client), Box::new(server))
    }

    fn mss(&self) -> u32 {
        self.segment as u32
    }

    fn bundle_lifetime(&self) -> Option<Time> {
        self.bundle_lifetime
    }
}
