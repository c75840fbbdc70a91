//! Where a link's schedules can come from instead of being written out: an ION contact
//! plan (read here, by `spacetp-dtn`), and three sources the Python front turns into
//! explicit schedules before the run (`spacetp.linksrc`): an orbit (SGP4 over TLEs,
//! elements or a Walker shell), a planetary ephemeris, and recorded traces. The core keeps
//! their schema, so that one schema documents every field and `--set` can reach them, but
//! never computes an orbit: a scenario that reaches it with one is refused.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::{Bytes, Duration};

/// An ION contact plan (`a contact`, `a range` lines) that drives the link: each direction
/// is up while a contact between the two nodes is in progress, at that contact's rate, with
/// the one-way light time of the range in force.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContactsCfg {
    /// The plan's `ionrc` text.
    pub plan: Option<String>,
    /// A file holding the plan (read by the Python front, relative to the scenario's file);
    /// give `plan` or `file`.
    pub file: Option<String>,
    /// The ION node numbers of `between[0]` and `between[1]`.
    pub nodes: (u64, u64),
    /// The UTC instant of simulated time 0 (`2026-01-01T00:00:00Z` or ION's
    /// `2026/01/01-00:00:00`), against which the plan's absolute times are read. Default:
    /// the plan's first `@` line; relative times (`+60`) count from time 0.
    pub start: Option<String>,
}

/// A ground station (or a user terminal).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StationCfg {
    /// A label for schedules and figures.
    pub name: Option<String>,
    /// Geodetic latitude, degrees in [-90, 90] (WGS84).
    pub lat: f64,
    /// Longitude, degrees in [-180, 180], east positive.
    pub lon: f64,
    /// Height above the WGS84 ellipsoid, metres (default 0).
    #[serde(default)]
    pub alt_m: f64,
    /// Lowest elevation, degrees in [0, 90), at which the station works with a satellite
    /// (default 0).
    #[serde(default)]
    pub elevation_mask: f64,
}

/// Mean orbital elements of one satellite, propagated by SGP4 as a TLE's would be.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElementsCfg {
    /// A label.
    pub name: Option<String>,
    /// UTC instant of the elements (ISO 8601).
    pub epoch: String,
    /// Revolutions per day (give this or `altitude_km`).
    pub mean_motion: Option<f64>,
    /// Altitude of a circular orbit above a 6378.135 km Earth (WGS72), km; the mean motion
    /// follows from Kepler's third law.
    pub altitude_km: Option<f64>,
    /// Eccentricity in [0, 1) (default 0).
    #[serde(default)]
    pub eccentricity: f64,
    /// Inclination, degrees in [0, 180].
    pub inclination: f64,
    /// Right ascension of the ascending node, degrees (default 0).
    #[serde(default)]
    pub raan: f64,
    /// Argument of perigee, degrees (default 0).
    #[serde(default)]
    pub arg_perigee: f64,
    /// Mean anomaly at the epoch, degrees (default 0).
    #[serde(default)]
    pub mean_anomaly: f64,
    /// SGP4 drag term B*, 1/earth radii (default 0).
    #[serde(default)]
    pub bstar: f64,
}

/// A Walker-delta shell i:t/p/f of circular orbits (Starlink's first shell is
/// 53°:1584/72/17 at 550 km).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WalkerCfg {
    /// UTC instant at which the first satellite of plane 0 crosses its ascending node.
    pub epoch: String,
    /// Altitude above a 6378.135 km Earth, km (give this or `mean_motion`).
    pub altitude_km: Option<f64>,
    /// Mean motion, revolutions per day.
    pub mean_motion: Option<f64>,
    /// Inclination, degrees.
    pub inclination: f64,
    /// Number of orbital planes p.
    pub planes: u32,
    /// Satellites per plane (t / p).
    pub per_plane: u32,
    /// Phasing factor f in [0, p): satellite k of plane j is at mean anomaly
    /// 360 (k / per_plane + f j / t) degrees.
    #[serde(default)]
    pub phasing: u32,
    /// Right ascension of the ascending node of plane 0, degrees (default 0).
    #[serde(default)]
    pub raan: f64,
    /// Odd planes half a slot ahead (Hypatia's satgenpy shells), instead of `phasing`.
    #[serde(default)]
    pub odd_plane_offset: bool,
}

/// Which satellite serves a terminal of a constellation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandoverPolicy {
    /// At every reconfiguration instant, the visible satellite of highest elevation.
    #[default]
    HighestElevation,
    /// Keep the serving satellite while it is visible; at the first reconfiguration
    /// instant after it is lost, the highest.
    Sticky,
}

/// Handovers between the satellites of the orbit's set.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HandoverCfg {
    /// `highest_elevation` (default) or `sticky`.
    #[serde(default)]
    pub policy: HandoverPolicy,
    /// Time between reconfiguration instants (default 15 s, Starlink's global scheduler).
    pub every: Option<Duration>,
    /// Reconfiguration instants are at `offset` past each multiple of `every` in UTC
    /// (default 0; Starlink's are at 12, 27, 42 and 57 s past the minute: `offset = "12 s"`).
    #[serde(default)]
    pub offset: Duration,
    /// The link is down for this long at each change of satellite (default 0).
    #[serde(default)]
    pub interruption: Duration,
}

/// Which directions a MODCOD table sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModcodDirections {
    #[default]
    Both,
    Forward,
    Back,
}

/// Adaptive coding and modulation: elevation -> Es/N0 -> the best MODCOD -> rate and
/// packet error rate, at every sample.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModcodCfg {
    /// Symbols per second; a MODCOD's rate is this times its bits per symbol.
    pub symbol_rate: f64,
    /// `[[elevation_deg, esn0_db], ...]`, elevation strictly increasing: Es/N0 linear in
    /// between, constant beyond the ends.
    pub esn0: Option<Vec<(f64, f64)>>,
    /// Without `esn0`: Es/N0 in dB with the satellite at the zenith; other geometries lose
    /// the extra free-space loss of their slant range (default 12).
    pub esn0_zenith: Option<f64>,
    /// `[[threshold_esn0_db, bits_per_symbol, per], ...]`, thresholds and efficiencies
    /// strictly increasing. Default: the 28 DVB-S2 MODCODs of ETSI EN 302 307-1 (normal
    /// frames, no pilots) at their quasi-error-free thresholds, PER 1e-7.
    pub table: Option<Vec<(f64, f64, f64)>>,
    /// Implementation margin subtracted from Es/N0 before the choice, dB (default 0).
    #[serde(default)]
    pub margin: f64,
    /// `both` (default), `forward` or `back`.
    #[serde(default)]
    pub directions: ModcodDirections,
}

/// A ground station and satellites: the link is up while the serving satellite is above the
/// station's mask (and the gateway's), its delay is the slant range over c, and with
/// `modcod` its rate and packet error rate follow elevation.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrbitCfg {
    /// The UTC instant of simulated time 0 (ISO 8601, e.g. `2019-12-09T17:00:00Z`).
    pub start: String,
    /// How far the schedules reach (default: the scenario's `stop`).
    pub duration: Option<Duration>,
    /// Sampling interval of delay, elevation, rate and errors (default 1 s).
    pub resolution: Option<Duration>,
    /// Satellites as TLE text: two-line element sets, each optionally after a name line.
    pub tle: Option<String>,
    /// Satellites as mean orbital elements.
    pub elements: Option<Vec<ElementsCfg>>,
    /// Satellites of a Walker-delta shell.
    pub walker: Option<WalkerCfg>,
    /// The ground end of the link (the terminal of a bent pipe).
    pub station: StationCfg,
    /// Bent pipe: the satellite relays to this gateway station; the delay is the sum of both
    /// slant ranges over c and the satellite must be above both masks.
    pub gateway: Option<StationCfg>,
    /// With several satellites: which one serves, and when that may change.
    pub handover: Option<HandoverCfg>,
    /// Rate and packet error rate follow elevation.
    pub modcod: Option<ModcodCfg>,
}

/// A body of the solar system (JPL DE421).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Body {
    Earth,
    Moon,
    Sun,
    Mercury,
    Venus,
    Mars,
    Jupiter,
    Saturn,
}

/// The one-way light time between two bodies over the run, each direction for signals
/// that leave at the time of the schedule.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EphemerisCfg {
    /// The body at `between[0]`.
    pub from: Body,
    /// The body at `between[1]`.
    pub to: Body,
    /// The UTC instant of simulated time 0 (ISO 8601).
    pub start: String,
    /// How far the schedules reach (default: the scenario's `stop`).
    pub duration: Option<Duration>,
    /// Sampling interval (default 1 s).
    pub resolution: Option<Duration>,
    /// An Earth station at the Earth end (with `from` or `to` = `earth`): the light time
    /// from its position, and the link up while the other body is above its mask.
    pub station: Option<StationCfg>,
}

/// Recorded traces a link replays.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkTraceCfg {
    /// A Mahimahi packet-delivery trace for the forward rate: one line per delivery
    /// opportunity of `packet_size` bytes, in milliseconds from the start.
    pub mahimahi: Option<String>,
    /// The same for the back rate (default: forward's trace when `mahimahi` is given).
    pub mahimahi_back: Option<String>,
    /// Bytes per Mahimahi opportunity (default 1500, Mahimahi's MTU).
    pub packet_size: Option<Bytes>,
    /// Rate averaging interval of a Mahimahi trace (default 100 ms).
    pub bin: Option<Duration>,
    /// Repeat a Mahimahi trace until `duration`, as Mahimahi loops it (default true).
    pub repeat: Option<bool>,
    /// How far a repeated trace reaches (default: the scenario's `stop`).
    pub duration: Option<Duration>,
    /// A CSV of `time,delay` (seconds; a header `time_s|time_ms,delay_s|delay_ms` sets the
    /// units) for the forward delay, linear between samples.
    pub delay_csv: Option<String>,
    /// The same for the back delay (default: `delay_csv`).
    pub delay_csv_back: Option<String>,
}
