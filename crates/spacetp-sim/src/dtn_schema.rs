//! The scenario's `[dtn]` table and a `bp` flow's `[flows.bp]` table, as written (serde and
//! JSON Schema); `dtn_plan.rs` reads them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::{Bytes, Duration};

/// `[dtn]`: the network's contact plan and its hops' LTP.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DtnCfg {
    /// A contact plan in ION's `ionrc` syntax (`a contact +t0 +t1 A B rate` in bytes per
    /// second, `a range +t0 +t1 A B owlt` in seconds), node numbers being the nodes'
    /// `dtn_node`. Without it (and without `contact_plan_file`), the plan is derived from
    /// the links: each link up whenever it is not in an outage, at its rates, with its
    /// delay as the light time.
    pub contact_plan: Option<String>,
    /// The same, read from this file (relative to the working directory; the Python
    /// loader makes it relative to the scenario file).
    pub contact_plan_file: Option<String>,
    /// A link between two nodes of the plan follows it: down outside their contacts (in
    /// either direction), its delay the plan's light time. Default true.
    #[serde(default = "yes")]
    pub drive_links: bool,
    /// LTP settings of every hop's span, as `[flows.ltp]` takes them (but `block_size` and
    /// `red_share`: bundles are all red). Defaults are the link's, as for an LTP flow; the
    /// rate follows each contact's.
    pub ltp: Option<serde_json::Map<String, serde_json::Value>>,
    /// How far a plan derived from the links reaches. Default: the run's stop, or 30 days.
    pub horizon: Option<Duration>,
}

fn yes() -> bool {
    true
}

/// `[flows.bp]`: how a `bp` flow's bytes become bundles.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BpCfg {
    /// The file is sent as bundles of this size (the last one shorter). Default: the whole
    /// file in one bundle (as `bpsendfile`), split by the agents where a contact cannot
    /// carry it whole.
    pub bundle_size: Option<Bytes>,
    /// How long a bundle may live before it is deleted wherever it is (RFC 9171 4.2.2).
    /// Default 1 day.
    pub lifetime: Option<Duration>,
}
