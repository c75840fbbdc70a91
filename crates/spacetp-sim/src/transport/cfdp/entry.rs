//! CFDP in the transport registry: `protocol = "cfdp"` with `[flows.cfdp]`, a flow one
//! file; `[[workloads]]` of many files, each its own transaction.

use super::CfdpSpec;
use crate::config::{FlowCfg, WorkloadCfg};
use crate::fit::Fitted;
use crate::transport::ltp::LtpSpec;
use crate::transport::registry::{Context, EndsSpec, Profile, TransportEntry, TransportSpec};
use crate::transport::{Ends, Transport};
use spacetp_cfdp::{Carrier, CfdpSettings, FILE_DATA_OVERHEAD, MAX_PDU};
use spacetp_proto::FieldError;
use std::sync::Arc;

/// The `protocol` of a CFDP flow.
pub const CFDP_PROTOCOL: &str = "cfdp";
/// CFDP class 1 over LTP red (its `carrier` "ltp" and `class` 1 by default).
pub const CFDP_LTP_PROTOCOL: &str = "cfdp-ltp";

/// Over LTP, CFDP's default rate as a share of the span's transmission rate.
const LTP_SHARE: f64 = 0.95;

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
        vec![CFDP_PROTOCOL, CFDP_LTP_PROTOCOL]
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
        ]
    }

    fn settings_schema(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(CfdpSettings)).unwrap_or_default()
    }

    /// Its carrier's settings: `[flows.ltp]` with `carrier = "ltp"`.
    fn takes(&self) -> &'static [&'static str] {
        &["ltp"]
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
        let (spec, fitted) = spec(&f.protocol, f.cfdp.as_ref(), f.ltp.as_ref(), &cx)?;
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
        let (spec, fitted) = spec(&wl.protocol, wl.cfdp.as_ref(), None, &cx)?;
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

/// `[flows.cfdp]` (or `[workloads.cfdp]`) checked and fitted, with the path's segment and
/// rate, and `[flows.ltp]` for the LTP carrier.
fn spec(
    protocol: &str,
    table: Option<&serde_json::Map<String, serde_json::Value>>,
    ltp_table: Option<&serde_json::Map<String, serde_json::Value>>,
    cx: &Context,
) -> Result<(CfdpSpec, Vec<Fitted>), FieldError> {
    let p = cx.path;
    let mut table = table.cloned().unwrap_or_default();
    if protocol == CFDP_LTP_PROTOCOL {
        let d = ltp_defaults(CfdpSettings::default());
        table
            .entry("carrier")
            .or_insert(serde_json::json!(d.carrier));
        table.entry("class").or_insert(d.class.into());
    }
    let table = Some(&table);
    let mut settings = CfdpSettings::from_map(table, &format!("{p}.cfdp"))?;
    if ltp_table.is_some() && settings.carrier != Carrier::Ltp {
        return Err(FieldError::new(
            format!("{p}.ltp"),
            "LTP settings apply to CFDP only when LTP carries it: protocol = \"cfdp-ltp\" \
             (or cfdp.carrier = \"ltp\")",
        ));
    }
    let mut fitted = cx
        .fit
        .map_or_else(Vec::new, |fp| super::fit::fit(&mut settings, table, fp));
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
        Carrier::Udp => None,
        Carrier::Ltp => {
            let mut l = LtpSpec::from_settings(ltp_table, defaults, p)?;
            if let Some(fp) = cx.fit {
                fitted.extend(crate::transport::ltp::fit::fit(&mut l, ltp_table, fp));
            }
            Some(l)
        }
    };
    // Over LTP, CFDP hands its PDUs to the span a little slower than the span sends (its
    // segment headers, reports and checkpoints take the rest), so none wait long in LTP.
    let carrier_rate = ltp.as_ref().and_then(|l| l.span.transmission_rate);
    let default_rate = carrier_rate.map_or(defaults.rate_bps, |r| r.0 * LTP_SHARE);
    let rate_bps = settings.rate.map_or(default_rate, |r| r.0);
    let spec = CfdpSpec {
        settings,
        segment,
        rate_bps,
        ltp,
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
}
