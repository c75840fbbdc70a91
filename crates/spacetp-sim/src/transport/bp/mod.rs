//! The Bundle Protocol as a flow's transport (`protocol = "bp"`): a file cut into bundles
//! that the source's agent sends hop by hop over LTP, by the contact plan (the agents and
//! the hops are in world/dtn.rs, the plan in dtn_plan.rs). What the flow's `[flows.bp]`
//! settings are, and its registry entry.

use super::registry::{Context, Profile, TransportEntry, TransportSpec};
use crate::config::FlowCfg;
use crate::dtn_schema::BpCfg;
use crate::fit::{FitPath, Fitted};
use spacetp_proto::{FieldError, Time, SEC};

/// The `protocol` of a bp flow: bundles over LTP, hop by hop.
pub const BP: &str = "bp";

/// What the simulator runs a bp flow with.
#[derive(Clone, Debug)]
pub struct BpSpec {
    pub bundle_size: u64,
    pub lifetime: Time,
}

impl BpSpec {
    pub fn from_cfg(
        cfg: Option<&BpCfg>,
        bytes: Option<u64>,
        p: &str,
    ) -> Result<BpSpec, FieldError> {
        let c = cfg.cloned().unwrap_or_default();
        let total = bytes.ok_or_else(|| {
            FieldError::new(
                format!("{p}.bytes"),
                "a bp flow sends a file: give its size (bundles are not an open-ended stream)",
            )
        })?;
        let bundle_size = c.bundle_size.map_or(total, |b| b.0);
        if bundle_size == 0 {
            return Err(FieldError::new(
                format!("{p}.bp.bundle_size"),
                "must be at least 1 B",
            ));
        }
        let lifetime = c.lifetime.map_or(86_400 * SEC, |d| d.0);
        if lifetime < spacetp_proto::MS {
            return Err(FieldError::new(
                format!("{p}.bp.lifetime"),
                "must be at least 1 ms (bundle lifetimes count milliseconds)",
            ));
        }
        Ok(BpSpec {
            bundle_size,
            lifetime,
        })
    }

    /// The segment the path's facts are counted in (the hops' LTP spans have their own).
    pub fn mss(&self) -> u32 {
        1400
    }

    /// Fitted to the path (`fit = true`), when the scenario leaves `bundle_size` unset and
    /// the path has relays: a file cut into bundles of one second of the path's bottleneck (at least 64 kB), so
    /// that each relay forwards a bundle as soon as it is whole rather than the whole file
    /// at once (store and forward costs a bundle's transmission per hop; RFC 9171 section
    /// 5.8 fragments large bundles for the same reason, and ION's LTP aggregation then
    /// fills blocks with several).
    pub fn fit(&mut self, cfg: Option<&BpCfg>, path: &FitPath) -> Vec<Fitted> {
        const RULE: &str = "one second of the bottleneck, at least 64 kB (bundles pipeline \
            through the relays; RFC 9171 section 5.8)";
        // One hop has no relay to pipeline through: a file cut into more bundles only has
        // more blocks whose last lost report or segment may cost a round trip more.
        if cfg.is_some_and(|c| c.bundle_size.is_some()) || path.rate_bps <= 0.0 || path.hops < 2 {
            return Vec::new();
        }
        let want = ((path.rate_bps / 8.0) as u64).max(64_000);
        if want >= self.bundle_size {
            return Vec::new();
        }
        let text = |b: u64| crate::limits::text::bytes(b as f64);
        let f = Fitted::new("bp.bundle_size", text(want), text(self.bundle_size), RULE);
        self.bundle_size = want;
        vec![f]
    }
}

/// The registry's entry for bp flows.
pub struct BpEntry;
pub static BP_ENTRY: BpEntry = BpEntry;

impl TransportEntry for BpEntry {
    fn title(&self) -> &'static str {
        "BP"
    }

    fn settings_key(&self) -> &'static str {
        "bp"
    }

    fn protocols(&self) -> Vec<&'static str> {
        vec![BP]
    }

    fn profiles(&self) -> Vec<Profile> {
        vec![Profile {
            name: BP,
            description: "the Bundle Protocol (RFC 9171) over LTP: store and forward by \
                contact graph routing over the plan the links (or [dtn]) give ([flows.bp])",
            settings: serde_json::to_value(BpCfg::default()).unwrap_or_default(),
            family: "dtn",
        }]
    }

    fn settings_schema(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(BpCfg)).unwrap_or_default()
    }

    fn takes(&self) -> &'static [&'static str] {
        &[]
    }

    fn routed(&self) -> bool {
        false
    }

    fn flow(&self, f: &FlowCfg, cx: Context) -> Result<(TransportSpec, Vec<Fitted>), FieldError> {
        let mut spec = BpSpec::from_cfg(f.bp.as_ref(), f.bytes.map(|b| b.0), cx.path)?;
        let fitted = cx
            .fit
            .map_or_else(Vec::new, |fp| spec.fit(f.bp.as_ref(), fp));
        Ok((TransportSpec::Bundles(spec), fitted))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(hops: usize) -> FitPath {
        FitPath {
            rate_bps: 1e6,
            back_rate_bps: 1e6,
            rtt: 1_200 * SEC,
            bdp: 150_000_000,
            mtu: 1440,
            loss: 1e-3,
            hops,
        }
    }

    #[test]
    fn a_file_is_cut_into_bundles_only_where_relays_pipeline_them() {
        let file = BpSpec {
            bundle_size: 20_000_000,
            lifetime: SEC,
        };
        // One hop: no relay, the file stays one bundle.
        let mut one = file.clone();
        assert!(one.fit(None, &path(1)).is_empty());
        assert_eq!(one.bundle_size, 20_000_000);
        // Through a relay: one second of the 1 Mb/s bottleneck, at least 64 kB.
        let mut two = file.clone();
        assert_eq!(two.fit(None, &path(2)).len(), 1);
        assert_eq!(two.bundle_size, 125_000);
    }
}
