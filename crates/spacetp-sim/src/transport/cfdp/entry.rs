//! CFDP in the transport registry: `protocol = "cfdp"` with `[flows.cfdp]`, a flow one
//! file; `[[workloads]]` of many files, each its own transaction.

use super::CfdpSpec;
use crate::config::{FlowCfg, WorkloadCfg};
use crate::fit::Fitted;
use crate::transport::registry::{Context, EndsSpec, Profile, TransportEntry, TransportSpec};
use crate::transport::{Ends, Transport};
use spacetp_cfdp::{CfdpSettings, FILE_DATA_OVERHEAD, MAX_PDU};
use spacetp_proto::FieldError;
use std::sync::Arc;

/// The `protocol` of a CFDP flow.
pub const CFDP_PROTOCOL: &str = "cfdp";

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
        vec![CFDP_PROTOCOL]
    }

    fn profiles(&self) -> Vec<Profile> {
        vec![Profile {
            name: CFDP_PROTOCOL,
            description: "CFDP (CCSDS 727.0-B-5) over UDP, as cfdp-rs (flight software's \
                engine) runs it: class 2 by default (EOF and Finished acknowledged, NAKs), \
                no congestion control ([flows.cfdp])",
            settings: serde_json::to_value(CfdpSettings::default()).unwrap_or_default(),
            family: "cfdp",
        }]
    }

    fn settings_schema(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(CfdpSettings)).unwrap_or_default()
    }

    fn takes(&self) -> &'static [&'static str] {
        &[]
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
        let (spec, fitted) = spec(f.cfdp.as_ref(), &cx)?;
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
        let (spec, fitted) = spec(wl.cfdp.as_ref(), &cx)?;
        Ok((Arc::new(spec), fitted))
    }
}

/// `[flows.cfdp]` (or `[workloads.cfdp]`) checked and fitted, with the path's segment and
/// rate.
fn spec(
    table: Option<&serde_json::Map<String, serde_json::Value>>,
    cx: &Context,
) -> Result<(CfdpSpec, Vec<Fitted>), FieldError> {
    let p = cx.path;
    let mut settings = CfdpSettings::from_map(table, &format!("{p}.cfdp"))?;
    let fitted = cx
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
    let rate_bps = settings.rate.map_or(defaults.rate_bps, |r| r.0);
    let spec = CfdpSpec {
        settings,
        segment,
        rate_bps,
    };
    Ok((spec, fitted))
}

impl EndsSpec for CfdpSpec {
    fn open(
        &self,
        ends: Ends,
        isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>) {
        let (client, server) = CfdpSpec::open(self, ends, isn() as u16);
        (Box::new(client), Box::new(server))
    }

    fn mss(&self) -> u32 {
        self.segment as u32
    }
}
