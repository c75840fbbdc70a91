//! Every setting of a connection. Profiles (`newreno`, `scps-tp`, ...) are values of this
//! struct; a scenario's `[flows.tcp]` table overrides any field by its serde name. SCPS-TP's
//! table is in `scps.rs`, the initial window's forms in `initial_window.rs`, the checks of
//! values a connection cannot work with in `validate.rs`.

use crate::units::{Bytes, Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::cc::CongestionControlKind;

mod initial_window;
mod scps;
mod validate;

pub use initial_window::InitialWindow;
pub use scps::{LossSource, ScpsConfig};

/// Loss recovery algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RecoveryKind {
    /// Fast retransmit, then slow start from one segment (no fast recovery).
    Tahoe,
    /// RFC 5681 fast recovery, left on the first new ACK.
    Reno,
    /// RFC 6582 fast recovery with partial ACKs.
    Newreno,
    /// RFC 6675 SACK scoreboard and pipe (NewReno when SACK is not negotiated).
    Sack,
    /// Forward acknowledgment, Mathis & Mahdavi 1996 (NewReno when SACK is not negotiated).
    Fack,
    /// RFC 8985 RACK-TLP on the SACK scoreboard (Linux's default loss detection): losses
    /// found by time (a later segment delivered, RACK.rtt + reo_wnd elapsed), tail loss
    /// probes after 2 SRTT (NewReno when SACK is not negotiated).
    Rack,
    /// TCP-Peach+ Quick Recovery: halve, repair like NewReno, and let the ACKs of low-priority
    /// NIL segments rebuild the window within one RTT (needs `peach = true`).
    Peach,
}

/// How the retransmission timeout follows the RTT.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RtoFormula {
    /// RFC 6298: RTO = max(SRTT + max(G, 4 RTTVAR), min_rto).
    #[default]
    Rfc6298,
    /// Linux (`tcp_rtt_estimator`, `__tcp_set_rto`): RTO = SRTT + rttvar, where rttvar is 4
    /// times the mean deviation but at least `min_rto` in every round trip, and shrinks by a
    /// quarter of its excess per round trip.
    Linux,
}

/// A TCP or SCPS-TP connection's settings: `[flows.tcp]` over a profile's.
// Unknown fields are refused by `settings::overlay`: serde cannot beside a flattened part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TcpConfig {
    /// Congestion control algorithm.
    pub congestion_control: CongestionControlKind,
    /// Loss recovery algorithm.
    pub recovery: RecoveryKind,
    /// Initial congestion window: a number of segments (RFC 6928: 10), a size ("4380 B"), or
    /// "rfc3390" for min(4 MSS, max(2 MSS, 4380 B)).
    pub initial_window: InitialWindow,
    /// Initial slow-start threshold; absent means unbounded.
    pub initial_ssthresh: Option<Bytes>,
    /// Receive buffer: the largest window this end advertises (with `receive_autotuning`,
    /// the ceiling the buffer may grow to: Linux `tcp_rmem[2]`).
    pub receive_buffer: Bytes,
    /// Linux receive-buffer autotuning (`tcp_rcv_space_adjust`, `tcp_grow_window`): the
    /// buffer starts at `receive_buffer_initial` and grows once per round trip to about twice
    /// what the application read, up to `receive_buffer`; the window follows it two segments
    /// per segment received, and while it grows every data segment is ACKed at once. false:
    /// the window is `receive_buffer` from the start.
    #[serde(default)]
    pub receive_autotuning: bool,
    /// The buffer autotuning starts from (Linux `tcp_rmem[1]`, 128 KiB; the SYN offers the
    /// window half of it holds). Used only with `receive_autotuning`; at most
    /// `receive_buffer`.
    #[serde(default = "default_receive_buffer_initial")]
    pub receive_buffer_initial: Bytes,
    /// Send buffer: the most unacknowledged plus unsent data the sender holds.
    pub send_buffer: Bytes,
    /// Offer the window scale option (RFC 7323).
    pub window_scaling: bool,
    /// Offer the timestamps option (RFC 7323) for RTT measurement and PAWS.
    pub timestamps: bool,
    /// Offer SACK-permitted and send SACK blocks (RFC 2018); SACK-based recovery needs it on
    /// both ends.
    pub sack: bool,
    /// RFC 2883 D-SACK: a receiver reports a segment it got twice in the first SACK block of
    /// its next ACK (RACK-TLP uses them to widen its reordering window and to tell a
    /// redundant loss probe). Linux: on (`tcp_dsack`). Needs `sack`.
    pub dsack: bool,
    /// Send an ACK after this many received segments (RFC 1122 delayed ACK; 1 = every segment).
    pub ack_every: u32,
    /// Delayed ACK timer.
    pub ack_delay: Duration,
    /// Data segments the receiver ACKs at once at the start of the connection before the
    /// delayed-ACK rule applies. 0 (RFC 1122/5681 from the first segment); ns-3 ACKs the
    /// first data segment at once (1); Linux's quick-ACK mode ACKs up to 16.
    #[serde(default)]
    pub quick_acks: u32,
    /// Linux's delayed-ACK timing: the timeout starts at `ack_delay` (TCP_ATO_MIN) and
    /// follows the gap between arriving segments, doubles when the timer fires, is capped by
    /// the SRTT and 200 ms; after a pause longer than the RTO, quick ACKs start again
    /// (`tcp_event_data_recv`, `tcp_send_delayed_ack`). false: always `ack_delay`.
    #[serde(default)]
    pub adaptive_ack_delay: bool,
    /// Undo a retransmission timeout when the first ACK of new data after it echoes a
    /// timestamp older than the first retransmission (the originals arrived): Linux's
    /// `tcp_try_undo_loss` / RFC 3522 Eifel detection. Needs `timestamps`.
    #[serde(default)]
    pub rto_undo: bool,
    /// Retransmission timeout before any RTT sample (RFC 6298: 1 s).
    pub initial_rto: Duration,
    /// Lower bound of the retransmission timeout (RFC 6298: 1 s); with `rto_formula =
    /// "linux"`, the least variance term added to SRTT (Linux `TCP_RTO_MIN`, 200 ms).
    pub min_rto: Duration,
    /// How the RTO follows the RTT: "rfc6298" or "linux".
    pub rto_formula: RtoFormula,
    /// RFC 3465 appropriate byte counting: slow start adds up to this many SMSS per ACK and
    /// congestion avoidance counts bytes acknowledged, so delayed ACKs do not slow growth;
    /// absent: RFC 5681's per-ACK counting (ns-3). Linux counts every segment an ACK covers
    /// (`tcp_slow_start`, `tcp_cong_avoid_ai`): its profiles set 64. At least 1.
    pub abc_limit: Option<u32>,
    /// Upper bound of the retransmission timeout, backoff included.
    pub max_rto: Duration,
    /// Cap of a backed-off timeout instead of `max_rto` (absent: `max_rto`). ns-3 caps the
    /// doubled RTO at 60 s even when its MinRto is larger: `max_backoff = "60 s"`.
    #[serde(default)]
    pub max_backoff: Option<Duration>,
    /// Timeout of the SYN (and SYN-ACK), doubled per retransmission and not bound by
    /// min_rto/max_rto (absent: `initial_rto` and the RTO's rules). ns-3: ConnTimeout 3 s;
    /// Linux: 1 s.
    #[serde(default)]
    pub syn_rto: Option<Duration>,
    /// Pace data segments out at no more than this rate (Linux `SO_MAX_PACING_RATE`): each
    /// leaves once the previous one, headers included, has at this rate. A controller's own
    /// pacing rate (BBR) is capped by it. None: no cap.
    #[serde(default)]
    pub max_pacing_rate: Option<Rate>,
    /// Clock granularity G of RFC 6298.
    pub clock_granularity: Duration,
    /// Consecutive timeouts of the same data before the connection aborts.
    pub max_retries: u32,
    /// Consecutive SYN (or SYN-ACK) timeouts before the connection aborts.
    pub syn_retries: u32,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Limited transmit (RFC 3042): one new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Proportional rate reduction (RFC 6937) during SACK-based recovery (`sack`, `fack`):
    /// cwnd follows what is delivered instead of dropping to ssthresh at once. ns-3 and Linux
    /// recover this way by default.
    pub prr: bool,
    /// SCPS-TP capabilities and mechanisms.
    pub scps: ScpsConfig,
    /// TCP-Peach+ (Akyildiz et al. 2002): Jump Start at connection start and Quick Recovery
    /// after a fast retransmit, with low-priority NIL segments probing spare capacity.
    pub peach: bool,
    /// One settings table per congestion controller (`[flows.tcp.cubic] beta = 0.8`), each
    /// under its keyword: the registry of controllers, `cc/registry.rs`.
    #[serde(flatten)]
    pub cc: crate::cc::ControllerParams,
}

/// Linux `tcp_rmem[1]`.
fn default_receive_buffer_initial() -> Bytes {
    Bytes(131_072)
}

impl Default for TcpConfig {
    /// The `newreno` profile: RFC 5681/6582/6298 with ns-3's defaults where RFCs leave a choice
    /// (initial window 10, delayed ACK 2 segments / 200 ms, 300 kB buffers, no SACK/timestamps).
    fn default() -> Self {
        use crate::time::{MS, SEC};
        TcpConfig {
            congestion_control: CongestionControlKind::Newreno,
            recovery: RecoveryKind::Newreno,
            initial_window: InitialWindow::Segments(10),
            initial_ssthresh: None,
            receive_buffer: Bytes(300_000),
            receive_autotuning: false,
            receive_buffer_initial: default_receive_buffer_initial(),
            send_buffer: Bytes(300_000),
            window_scaling: true,
            timestamps: false,
            sack: false,
            dsack: false,
            ack_every: 2,
            ack_delay: Duration(200 * MS),
            quick_acks: 0,
            adaptive_ack_delay: false,
            rto_undo: false,
            initial_rto: Duration(SEC),
            min_rto: Duration(SEC),
            rto_formula: RtoFormula::Rfc6298,
            abc_limit: None,
            max_rto: Duration(60 * SEC),
            max_backoff: None,
            syn_rto: None,
            max_pacing_rate: None,
            clock_granularity: Duration(MS),
            max_retries: 12,
            syn_retries: 6,
            dupack_threshold: 3,
            limited_transmit: true,
            prr: false,
            scps: ScpsConfig::default(),
            peach: false,
            cc: Default::default(),
        }
    }
}

impl TcpConfig {
    /// The JSON schema of these settings, no field beyond them allowed (as `overlay`
    /// enforces; schemars says so only of structs without a flattened part).
    pub fn schema() -> schemars::schema::RootSchema {
        let mut root = schemars::schema_for!(TcpConfig);
        root.schema.object().additional_properties = Some(Box::new(false.into()));
        root
    }

    /// The congestion controller these settings ask for.
    pub fn new_controller(&self) -> Box<dyn crate::cc::CongestionControl> {
        self.cc.factory(self.congestion_control).build()
    }
}
