//! The scenario's `[constellation]` table as written (serde and JSON Schema, so that paths
//! are checked and documented like any other). The Python front (`spacetp.constellation`)
//! reads it and turns it into nodes, links and `[[forwarding]]`; the core refuses a scenario
//! that still has it.

use crate::link_config::{ErrorCfg, QueueCfg};
use crate::schedule::{RateValue, Sched};
use crate::sources::{StationCfg, WalkerCfg};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::Duration;

/// `[constellation]`: shells, ground stations, the GSL rule and the routing step.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConstellationCfg {
    /// The UTC instant of t = 0 (default: the first shell's epoch; required with TLEs).
    pub start: Option<String>,
    /// Routing step (default 100 ms, as Hypatia).
    pub step: Option<Duration>,
    /// How long to route (default: the scenario's stop).
    pub duration: Option<Duration>,
    /// The shells; satellites are named SHELL-PLANE-SLOT.
    pub shells: Vec<ShellCfg>,
    /// Ground stations by position (each needs a name: flows name their ends by it).
    pub ground_stations: Option<Vec<StationCfg>>,
    /// Ground stations by city (Hypatia's table of the 100 most populous), named as given.
    pub cities: Option<Vec<String>>,
    /// The ground-satellite links: which a station may use, and their link settings.
    pub gsl: Option<GslCfg>,
    /// The inter-satellite links' settings.
    pub isl: Option<IslCfg>,
}

/// One shell: a Walker shell or TLEs, and its ISL pattern.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellCfg {
    /// Prefix of its satellites' names (default `shell<i>`).
    pub name: Option<String>,
    /// A Walker shell (give this or `tle`).
    pub walker: Option<WalkerCfg>,
    /// TLEs, listed plane by plane.
    pub tle: Option<String>,
    /// With `tle`: the planes, and the satellites in each.
    pub planes: Option<u32>,
    pub per_plane: Option<u32>,
    /// "+grid" (default) or "none".
    pub isls: Option<String>,
}

/// Which satellites a ground station may use, and the GSLs' link settings.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GslCfg {
    /// Degrees: a satellite above it (default 25).
    pub elevation_mask: Option<f64>,
    /// Or a satellite within this slant range, km (satgenpy's rule).
    pub max_length_km: Option<f64>,
    /// Both directions of every GSL (default 10 Mb/s, 100 packets, no errors).
    pub rate: Option<Sched<RateValue>>,
    pub queue: Option<QueueCfg>,
    pub errors: Option<ErrorCfg>,
    /// "per_link" (default: each station-satellite pair a link of its own, a beam each) or
    /// "per_node" (Hypatia's one GSL device per satellite and per station: a node's GSLs
    /// share its queue and rate).
    pub device: Option<String>,
}

/// The ISLs' link settings (default 10 Mb/s, 100 packets, no errors).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IslCfg {
    pub rate: Option<Sched<RateValue>>,
    pub queue: Option<QueueCfg>,
    pub errors: Option<ErrorCfg>,
}
