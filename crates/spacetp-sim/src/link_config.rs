//! The schema of `[[links]]` (and of topology templates): rates, delays and up/down as
//! values or schedules ([`Sched`]), queues, error models, and where a link's schedules may
//! come from instead ([`crate::sources`]).

use crate::schedule::{RateValue, Sched};
pub use crate::sources::{
    ContactsCfg, EphemerisCfg, HandoverCfg, LinkTraceCfg, ModcodCfg, OrbitCfg, StationCfg,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use spacetp_proto::units::{Bytes, Duration};

/// Propagation delay: a duration, or `{ schedule = [[time, delay], ...] }` (linear between
/// points).
pub type DelayCfg = Sched<Duration>;

/// Queue at the sending end of one link direction. Give exactly one of `packets`, `bytes`,
/// `bdp`. Default: 100 packets (the ns-3 default DropTail queue).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueueCfg {
    /// Limit in packets.
    pub packets: Option<u32>,
    /// Limit in bytes.
    pub bytes: Option<Bytes>,
    /// `droptail` (default): one FIFO. `priority`: low-priority packets (TCP-Peach+ NIL
    /// segments) wait in their own FIFO, are sent only when no normal packet waits, and make
    /// room for normal packets when the queue is full.
    #[serde(default)]
    pub discipline: Discipline,
    /// Limit as a multiple of this direction's bandwidth x round-trip propagation delay of
    /// this link (rate x 2 x delay), converted to packets of the largest flow MTU in the
    /// scenario (rounded up, at least 2), as ns-3 scripts size BDP queues. With schedules,
    /// the highest rate and the largest delay.
    pub bdp: Option<f64>,
}

/// How a queue orders and drops packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Discipline {
    #[default]
    Droptail,
    Priority,
}

/// Error model of one link direction. Give exactly one field.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ErrorCfg {
    /// Bit-error rate in [0, 1): a packet of n bits on the wire is hit with 1 - (1 - ber)^n,
    /// n counted when its transmission starts. One value or a step schedule.
    pub ber: Option<Sched<f64>>,
    /// Packet-error rate in [0, 1]. One value or a step schedule.
    pub per: Option<Sched<f64>>,
    /// Two-state Gilbert-Elliott chain stepped once per packet.
    pub gilbert_elliott: Option<GilbertElliottCfg>,
    /// N-state Markov chain stepped once per time slot (the per-RTT model of Altman et al.).
    pub markov_slot: Option<MarkovSlotCfg>,
    /// Scripted: drop the packets with these indices (0 = first packet sent in this
    /// direction). For tests.
    pub drop: Option<Vec<u64>>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottCfg {
    /// Probability of moving from good to bad, per packet (a value or a step schedule, as
    /// each parameter).
    pub p_good_to_bad: Sched<f64>,
    /// Probability of moving from bad to good, per packet.
    pub p_bad_to_good: Sched<f64>,
    /// Loss probability in the good state (default 0).
    #[serde(default = "zero_f64")]
    pub loss_good: Sched<f64>,
    /// Loss probability in the bad state (default 1).
    #[serde(default = "one_f64")]
    pub loss_bad: Sched<f64>,
}

fn zero_f64() -> Sched<f64> {
    Sched::Value(0.0)
}

fn one_f64() -> Sched<f64> {
    Sched::Value(1.0)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SlotLossMode {
    /// A slot whose loss draw succeeds loses exactly its first packet (Altman et al.: one loss
    /// per RTT spent in a lossy state).
    #[default]
    OnePerSlot,
    /// Every packet in the slot is lost with the state's probability.
    PerPacket,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkovSlotCfg {
    /// Slot length (e.g. one RTT).
    pub slot: Duration,
    /// Row-stochastic N x N transition matrix A, stepped at each slot boundary.
    pub transition: Vec<Vec<f64>>,
    /// Per-state loss probability p_i (length N).
    pub loss: Vec<f64>,
    /// How a lossy slot loses packets.
    #[serde(default)]
    pub mode: SlotLossMode,
    /// State at time 0 (default 0).
    #[serde(default)]
    pub initial_state: usize,
}

/// What happens to a packet the error model hits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CorruptedPolicy {
    /// Lost silently on the link.
    #[default]
    Drop,
    /// Delivered to the next hop marked corrupted; that node discards it. (SCPS-TP ground
    /// stations use this to signal corruption to the sender.)
    Deliver,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkCfg {
    /// The two ends. `between[0] -> between[1]` is the forward direction.
    pub between: [String; 2],
    /// Forward rate: a rate, or a step schedule of rates (a packet is serialised at the
    /// rates in force while it is on the wire; 0 inside a schedule pauses the
    /// transmitter). Required unless `contacts` or a Python-side source sets it.
    pub rate: Option<Sched<RateValue>>,
    /// Back rate (default: same as forward).
    pub rate_back: Option<Sched<RateValue>>,
    /// One-way propagation delay, forward (and back unless `delay_back`): a duration, or a
    /// piecewise-linear schedule. Required unless a source sets it.
    pub delay: Option<Sched<Duration>>,
    /// One-way propagation delay back (default: `delay`).
    pub delay_back: Option<Sched<Duration>>,
    /// Whether the forward direction carries packets: `true`/`false` or a step schedule
    /// (packets emitted while it is down are lost, as in `outages`). Default: up.
    pub up: Option<Sched<bool>>,
    /// The same for the back direction (default: `up`).
    pub up_back: Option<Sched<bool>>,
    /// Queue at the forward sender, `between[0]` (default 100 packets).
    pub queue: Option<QueueCfg>,
    /// Queue at the back sender, `between[1]` (default 100 packets; not copied from `queue`).
    pub queue_back: Option<QueueCfg>,
    /// Error model forward (and back unless `errors_back`).
    pub errors: Option<ErrorCfg>,
    /// Error model back (default: `errors`; `{}` for none).
    pub errors_back: Option<ErrorCfg>,
    /// Hit packets are dropped or delivered marked corrupted.
    #[serde(default)]
    pub corrupted: CorruptedPolicy,
    /// `[[start, end], ...]`: the link is down in both directions; packets emitted while down
    /// are lost.
    #[serde(default)]
    pub outages: Vec<(Duration, Duration)>,
    /// Link-layer bytes added to every packet (e.g. 2 for PPP, as ns-3 point-to-point).
    #[serde(default)]
    pub framing: Bytes,
    /// Largest IP packet the link carries (default 65535: no limit).
    pub mtu: Option<Bytes>,
    /// An ION contact plan drives the link: up while a contact is in progress, each
    /// direction at its contact's rate, with the plan's one-way light time.
    pub contacts: Option<ContactsCfg>,
    /// A ground station and satellites (TLEs, elements or a Walker shell): visibility,
    /// slant-range delay and, with `modcod`, rate and errors over the run. Computed by the
    /// Python front (`pip install spacetp[orbits]`) before the run.
    pub orbit: Option<OrbitCfg>,
    /// One-way light time between two bodies of the solar system from a JPL ephemeris.
    /// Computed by the Python front before the run.
    pub ephemeris: Option<EphemerisCfg>,
    /// Recorded traces replayed by the link (Mahimahi rate traces, delay CSVs). Read by the
    /// Python front before the run.
    pub trace: Option<LinkTraceCfg>,
    /// The table that made this link when the Python front wrote it (a constellation's
    /// links: `constellation.isl`, `constellation.gsl`); the limit analysis names that
    /// table's settings, one for both directions, instead of this entry's.
    pub origin: Option<String>,
}

/// A link without its ends: the fields mean what they mean in `[[links]]` (forward is away
/// from the core for access links, left to right for the core).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkTemplate {
    /// Forward rate: a rate, or a step schedule of rates (a packet is serialised at the
    /// rates in force while it is on the wire; 0 inside a schedule pauses the
    /// transmitter). Required unless `contacts` or a Python-side source sets it.
    pub rate: Option<Sched<RateValue>>,
    /// Back rate (default: same as forward).
    pub rate_back: Option<Sched<RateValue>>,
    /// One-way propagation delay, forward (and back unless `delay_back`): a duration, or a
    /// piecewise-linear schedule. Required unless a source sets it.
    pub delay: Option<Sched<Duration>>,
    /// One-way propagation delay back (default: `delay`).
    pub delay_back: Option<Sched<Duration>>,
    /// Whether the forward direction carries packets: `true`/`false` or a step schedule
    /// (packets emitted while it is down are lost, as in `outages`). Default: up.
    pub up: Option<Sched<bool>>,
    /// The same for the back direction (default: `up`).
    pub up_back: Option<Sched<bool>>,
    /// Queue at the forward sender, `between[0]` (default 100 packets).
    pub queue: Option<QueueCfg>,
    /// Queue at the back sender, `between[1]` (default 100 packets; not copied from `queue`).
    pub queue_back: Option<QueueCfg>,
    /// Error model forward (and back unless `errors_back`).
    pub errors: Option<ErrorCfg>,
    /// Error model back (default: `errors`; `{}` for none).
    pub errors_back: Option<ErrorCfg>,
    /// Hit packets are dropped or delivered marked corrupted.
    #[serde(default)]
    pub corrupted: CorruptedPolicy,
    /// `[[start, end], ...]`: the link is down in both directions; packets emitted while down
    /// are lost.
    #[serde(default)]
    pub outages: Vec<(Duration, Duration)>,
    /// Link-layer bytes added to every packet (e.g. 2 for PPP, as ns-3 point-to-point).
    #[serde(default)]
    pub framing: Bytes,
    /// Largest IP packet the link carries (default 65535: no limit).
    pub mtu: Option<Bytes>,
    /// An ION contact plan drives the link: up while a contact is in progress, each
    /// direction at its contact's rate, with the plan's one-way light time.
    pub contacts: Option<ContactsCfg>,
    /// A ground station and satellites (TLEs, elements or a Walker shell): visibility,
    /// slant-range delay and, with `modcod`, rate and errors over the run. Computed by the
    /// Python front (`pip install spacetp[orbits]`) before the run.
    pub orbit: Option<OrbitCfg>,
    /// One-way light time between two bodies of the solar system from a JPL ephemeris.
    /// Computed by the Python front before the run.
    pub ephemeris: Option<EphemerisCfg>,
    /// Recorded traces replayed by the link (Mahimahi rate traces, delay CSVs). Read by the
    /// Python front before the run.
    pub trace: Option<LinkTraceCfg>,
}

impl LinkTemplate {
    pub fn between(&self, a: &str, b: &str) -> LinkCfg {
        LinkCfg {
            between: [a.to_string(), b.to_string()],
            origin: None,
            rate: self.rate.clone(),
            rate_back: self.rate_back.clone(),
            delay: self.delay.clone(),
            delay_back: self.delay_back.clone(),
            up: self.up.clone(),
            up_back: self.up_back.clone(),
            queue: self.queue.clone(),
            queue_back: self.queue_back.clone(),
            errors: self.errors.clone(),
            errors_back: self.errors_back.clone(),
            corrupted: self.corrupted,
            outages: self.outages.clone(),
            framing: self.framing,
            mtu: self.mtu,
            contacts: self.contacts.clone(),
            orbit: self.orbit.clone(),
            ephemeris: self.ephemeris.clone(),
            trace: self.trace.clone(),
        }
    }
}
