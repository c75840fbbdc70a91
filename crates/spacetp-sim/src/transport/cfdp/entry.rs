//! CFDP in the transport registry: `protocol = "cfdp"` with `[flows.cfdp]`, for flows of
//! one file.

use super::CfdpSpec;
use crate::config::FlowCfg;
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
        let p = cx.path;
        let mut settings = CfdpSettings::from_map(f.cfdp.as_ref(), &format!("{p}.cfdp"))?;
        let fitted = cx.fit.map_or_else(Vec::new, |fp| {
            super::fit::fit(&mut settings, f.cfdp.as_ref(), fp)
        });
        let Some(size) = f.bytes.map(|b| b.0) else {
            return Err(FieldError::new(
                format!("{p}.bytes"),
                "a cfdp flow sends a file: give its size",
            ));
        };
        let defaults = cx.defaults.ok_or_else(|| {
            FieldError::new(p, "a CFDP flow needs its path (one sender, one receiver)")
        })?;
        // File data per PDU: the flow's MTU less IPv4, UDP and the PDU's own header.
        let fits = (cx.mss as usize + 40 - 28)
            .saturating_sub(FILE_DATA_OVERHEAD)
            .min(MAX_PDU - FILE_DATA_OVERHEAD);
        let segment = settings.segment_size.map_or(fits, |b| b.0 as usize);
        if segment > fits {
            return Err(FieldError::new(
                format!("{p}.cfdp.segment_size"),
                format!(
                    "{segment} B does not fit the flow's {} B packets: at most {fits} B",
                    cx.mss + 40
                ),
            ));
        }
        let rate_bps = settings.rate.map_or(defaults.rate_bps, |r| r.0);
        let spec = CfdpSpec {
            settings,
            segment,
            rate_bps,
            file_size: size,
        };
        Ok((TransportSpec::Ends(Arc::new(spec)), fitted))
    }
}

impl EndsSpec for CfdpSpec {
    fn open(
        &self,
        ends: Ends,
        _isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>) {
        let (client, server) = CfdpSpec::open(self, ends);
        (Box::new(client), Box::new(server))
    }

    fn mss(&self) -> u32 {
        self.segment as u32
    }
}
