//! LTP in the transport registry: `protocol = "ltp"` with `[flows.ltp]` (ION's span
//! settings over the path's defaults), for flows.

use super::fit as ltp_fit;
use super::{ltp_schema, LtpSpec};
use crate::config::FlowCfg;
use crate::fit::Fitted;
use crate::transport::registry::{Context, EndsSpec, Profile, TransportEntry, TransportSpec};
use crate::transport::{Ends, Transport};
use spacetp_proto::FieldError;
use std::sync::Arc;

/// The `protocol` of an LTP flow.
pub const LTP_PROTOCOL: &str = "ltp";

pub struct LtpEntry;
pub static LTP: LtpEntry = LtpEntry;

impl TransportEntry for LtpEntry {
    fn title(&self) -> &'static str {
        "LTP"
    }

    fn settings_key(&self) -> &'static str {
        "ltp"
    }

    fn protocols(&self) -> Vec<&'static str> {
        vec![LTP_PROTOCOL]
    }

    fn profiles(&self) -> Vec<Profile> {
        vec![Profile {
            name: LTP_PROTOCOL,
            description: "LTP (RFC 5326) as NASA ION runs it: blocks, checkpoints and \
                reports, no congestion control ([flows.ltp])",
            // Its light time, rate and segment size are the path's: no settings of its own.
            settings: serde_json::Value::Null,
            family: "ltp",
        }]
    }

    fn settings_schema(&self) -> serde_json::Value {
        ltp_schema()
    }

    fn takes(&self) -> &'static [&'static str] {
        &["write_rate"]
    }

    fn flow(&self, f: &FlowCfg, cx: Context) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
        let defaults = cx.defaults.ok_or_else(|| {
            FieldError::new(
                cx.path,
                "an LTP flow needs its path (one sender, one receiver)",
            )
        })?;
        let mut spec = LtpSpec::from_settings(f.ltp.as_ref(), defaults, cx.path)?;
        let fitted = cx
            .fit
            .map_or_else(Vec::new, |fp| ltp_fit::fit(&mut spec, f.ltp.as_ref(), fp));
        Ok((TransportSpec::Ends(Arc::new(spec)), fitted))
    }
}

impl EndsSpec for LtpSpec {
    fn open(
        &self,
        ends: Ends,
        isn: &mut dyn FnMut() -> u32,
    ) -> (Box<dyn Transport>, Box<dyn Transport>) {
        let seed = (isn() as u64) << 32 | isn() as u64;
        let (client, server) = LtpSpec::open(self, ends, seed);
        (Box::new(client), Box::new(server))
    }

    fn mss(&self) -> u32 {
        self.span.max_segment_size.0 as u32
    }
}
