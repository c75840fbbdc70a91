//! A TCP connection as a pure state machine: handshake with MSS / window-scale / timestamps
//! negotiation, sliding-window sending limited by cwnd and the peer's window, RFC 6298
//! retransmission timer with Karn's rule and backoff, delayed ACKs, FIN close and RST.
//!
//! Positions are absolute `u64` stream positions: 0 is our SYN, data byte i is at 1 + i, and
//! the FIN follows the last data byte. `seq.rs` converts at the wire boundary.
//!
//! The state is split as quinn-proto splits its own: this file holds the connection's fields
//! (each mechanism's own state a part owned by its file) and its application interface;
//! `handshake.rs`, `input.rs`, `ack.rs` and `output.rs` the segment flow; `timer.rs` every
//! timer's deadline in one table; `pacing.rs` the earliest departure time; `sent.rs` the RTT record of what was
//! sent; `resend.rs` segments to resend at once; `recv.rs` the receive side; `recovery/` the
//! loss-recovery policies; `scps.rs` and `peach.rs` the SCPS-TP and TCP-Peach+ behaviour;
//! `validation.rs` RFC 5961.

mod ack;
mod control;
mod handshake;
mod input;
mod invariants;
mod limit;
pub use limit::SendLimit;
mod output;
mod pacing;
mod peach;
mod rack;
mod rack_tlp;
mod rate;
mod rcv_autotune;
mod recovery;
/// The SACK scoreboard, public only for the criterion benchmarks (`benches/`).
#[doc(hidden)]
pub use recovery::Scoreboard;
mod recv;
mod resend;
mod rto_undo;
mod sack_scan;
mod scps;
/// Token-bucket rate control, also shared by many connections (the gateway's link rate).
pub use scps::TokenBucket;
mod sent;
mod state;
mod stats;
mod timer;
mod validation;

use crate::cc::{CongestionControl, Window};
use crate::config::{CongestionControlKind, TcpConfig};
use crate::rto::RttEstimator;
use crate::seq::to_wire;
use crate::time::Time;
use recovery::{LossRecovery, Policy};
use spacetp_wire::TcpHeader;
use std::collections::VecDeque;
use std::sync::Arc;

pub(crate) use recv::Receiver;
pub use state::{CloseReason, State};
pub use stats::ConnStats;
pub use validation::reset_reply;

/// The smallest MSS offer taken from a peer (Linux `net.ipv4.tcp_min_snd_mss`).
const MIN_PEER_MSS: u32 = 48;

/// One segment to put on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Transmit {
    pub hdr: TcpHeader,
    /// Payload bytes.
    pub len: u32,
    /// Absolute stream position of the first payload byte (0 = SYN, data starts at 1).
    pub pos: u64,
    pub retransmission: bool,
    /// A low-priority packet (TCP-Peach+ NIL segment): routers serve it only with spare
    /// capacity and drop it first.
    pub low_priority: bool,
}

/// What `poll_transmit_into` sent, beside the header it wrote.
#[derive(Clone, Copy, Debug)]
pub struct Sent {
    /// Payload bytes.
    pub len: u32,
    /// Absolute stream position of the first payload byte (0 = SYN, data starts at 1).
    pub pos: u64,
    pub retransmission: bool,
    /// A low-priority packet (TCP-Peach+ NIL segment).
    pub low_priority: bool,
}

/// The part of a received segment's payload that the receiver took in: `len` bytes from
/// offset `skip` of the payload, at absolute stream position `pos`. A driver that carries
/// real bytes (the gateway) stores exactly these, so it never holds a byte the connection
/// did not accept, nor puts one at a position the connection did not assign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accepted {
    pub pos: u64,
    pub skip: u32,
    pub len: u32,
}

/// The settings a connection is opened with: borrowed ones are copied in, shared ones
/// (`Arc`) are held as they are, so that connections of equal settings read one copy.
pub trait IntoSettings {
    fn into_settings(self) -> Arc<TcpConfig>;
}

impl IntoSettings for &TcpConfig {
    fn into_settings(self) -> Arc<TcpConfig> {
        Arc::new(self.clone())
    }
}

impl IntoSettings for Arc<TcpConfig> {
    fn into_settings(self) -> Arc<TcpConfig> {
        self
    }
}

impl IntoSettings for &Arc<TcpConfig> {
    fn into_settings(self) -> Arc<TcpConfig> {
        Arc::clone(self)
    }
}

/// One end of a TCP or SCPS-TP connection.
pub struct Connection {
    /// Its settings, shared with every connection opened with the same ones (both ends of a
    /// flow, and a scenario's flows of equal settings): read on every segment, they stay in
    /// the caches when thousands of connections run.
    cfg: Arc<TcpConfig>,
    state: State,
    close_reason: Option<CloseReason>,
    local_port: u16,
    remote_port: u16,
    /// Our MSS (payload of a full segment before options), from the path MTU.
    own_mss: u32,
    /// The MSS the peer offered in its SYN (536 if none).
    peer_mss: u32,
    /// Connection id offered in the SCPS capabilities option: the id of our compressed
    /// headers (default: the low byte of the local port).
    conn_id: u8,

    // Send side.
    iss: u32,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    /// End of the data the application has written (position after its last byte).
    data_end: u64,
    /// Ends of the application's records not yet acknowledged, ascending (SCPS-TP record
    /// boundaries: a segment stops at each and carries the kind 22 option).
    record_ends: VecDeque<u64>,
    app_closed: bool,
    /// Peer's window in bytes (already scaled).
    snd_wnd: u64,
    /// Payload bytes per full data segment after option overhead.
    seg_size: u32,
    win: Window,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    /// What was sent when, for RTT samples.
    sent: sent::SentLog,
    /// Every timer's deadline.
    timers: timer::TimerTable,
    /// Timeouts of the same data (or SYN) in a row.
    retries: u32,
    /// Unanswered zero-window probes (each doubles the persist interval).
    persist_backoff: u32,
    probe_pending: bool,
    /// Largest window the peer ever offered (sender silly-window avoidance).
    max_snd_wnd: u64,
    /// TCP-Peach+ NIL-segment bursts, when enabled.
    peach: Option<peach::Peach>,
    /// SCPS-TP: what both ends offered, rate control, SNACK, corruption and outage state.
    scps: scps::ScpsState,
    /// Segments to resend at once, outside the recovery policy.
    resend: resend::ResendQueue,
    syn_pending: bool,
    syn_retransmitted: bool,
    /// An RST to send, at this position (our snd_nxt when we abort; the peer's ACK when we
    /// answer a segment after aborting).
    rst_at: Option<u64>,
    /// When the last challenge (or out-of-window) ACK went out (RFC 5961 rate limit).
    last_challenge_ack: Option<Time>,
    recovery: Policy,
    /// What the peer has SACKed above snd_una.
    board: Scoreboard,
    /// Duplicate ACKs in a row.
    dupacks: u32,
    /// Bytes the ACK being processed newly acknowledged or SACKed (RFC 6937 DeliveredData).
    delivered_now: u64,
    /// Delivery-rate estimation, when the controller asked for it, and this ACK's sample.
    rate: Option<rate::DeliveryRate>,
    rate_sample: Option<crate::cc::RateSample>,
    /// Pacing, when the controller or `max_pacing_rate` may set a rate.
    pacing: Option<pacing::Pacing>,
    /// For a controller that sets cwnd on every ACK (BBR): what it is told beyond an ACK.
    control: Option<control::WindowControl>,
    /// RACK-TLP loss detection and probes (`recovery = "rack"`).
    rack: Option<rack::Rack>,
    /// What the last timeout changed, until an ACK shows whether it was spurious.
    rto_undo: Option<rto_undo::RtoUndo>,

    /// The TCP options the handshake agreed on.
    options: handshake::Agreed,

    // Receive side.
    rx: Receiver,

    stats: ConnStats,
}

impl Connection {
    /// A connection in `state` (the two opens differ in nothing else at the start), its
    /// receiver sized to `mss`.
    fn new(cfg: Arc<TcpConfig>, mss: u32, ports: (u16, u16), iss: u32, state: State) -> Self {
        let (local_port, remote_port) = ports;
        let rcv_wscale = if cfg.window_scaling {
            handshake::wscale_for(cfg.receive_buffer.0)
        } else {
            0
        };
        let mss = mss.max(1);
        let cc = cfg.new_controller();
        let mut c = Connection {
            rate: cc.wants_delivery_rate().then(rate::DeliveryRate::default),
            pacing: pacing::Pacing::for_controller(&cfg, cc.as_ref()),
            control: cc.controls_window().then(Default::default),
            rto_undo: None,
            rack: (cfg.recovery == crate::config::RecoveryKind::Rack).then(rack::Rack::new),
            cc,
            rtt: rtt_estimator(&cfg),
            win: initial_window(&cfg, mss),
            rx: Receiver::new(&cfg),
            state,
            close_reason: None,
            local_port,
            remote_port,
            own_mss: mss,
            peer_mss: mss,
            conn_id: local_port as u8,
            iss,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            data_end: 1,
            record_ends: Default::default(),
            app_closed: false,
            snd_wnd: 0,
            seg_size: mss,
            sent: sent::SentLog::default(),
            timers: timer::TimerTable::default(),
            retries: 0,
            persist_backoff: 0,
            probe_pending: false,
            max_snd_wnd: 0,
            peach: cfg.peach.then(peach::Peach::default),
            scps: scps::ScpsState::new(&cfg.scps),
            resend: resend::ResendQueue::default(),
            syn_pending: false,
            syn_retransmitted: false,
            rst_at: None,
            last_challenge_ack: None,
            recovery: Policy::new(cfg.recovery, false, cfg.prr),
            board: Scoreboard::default(),
            dupacks: 0,
            delivered_now: 0,
            rate_sample: None,
            options: handshake::Agreed::offering(rcv_wscale),
            stats: ConnStats::default(),
            cfg,
        };
        c.rx.set_mss(mss as u64);
        c
    }

    /// Active open: the connection will send a SYN on the first `poll_transmit`. The ports
    /// are its own and the peer's.
    pub fn connect<S: IntoSettings>(cfg: S, mss: u32, local: u16, remote: u16, iss: u32) -> Self {
        let c = Self::new(
            cfg.into_settings(),
            mss,
            (local, remote),
            iss,
            State::SynSent,
        );
        Connection {
            syn_pending: true,
            ..c
        }
    }

    /// Passive open: waits for a SYN.
    pub fn listen<S: IntoSettings>(cfg: S, mss: u32, local: u16, remote: u16, iss: u32) -> Self {
        Self::new(
            cfg.into_settings(),
            mss,
            (local, remote),
            iss,
            State::Listen,
        )
    }

    // ----- application interface -----

    /// Offer `n` more bytes of application data; returns how many the send buffer accepted.
    pub fn send(&mut self, n: u64) -> u64 {
        if self.app_closed || matches!(self.state, State::Closed | State::Listen) {
            return 0;
        }
        let buffered = self.data_end - self.snd_una.max(1);
        let room = self.cfg.send_buffer.0.saturating_sub(buffered);
        let take = n.min(room);
        self.data_end += take;
        take
    }

    /// The bytes written so far end a record. With an SCPS-TP peer the segment that carries
    /// the record's last byte stops there and carries the record boundary option (kind 22).
    pub fn end_record(&mut self) {
        if self.record_ends.back().is_none_or(|&e| e < self.data_end) {
            self.record_ends.push_back(self.data_end);
        }
    }

    /// Records the application has received whole (their boundary option arrived and every
    /// byte before it is in).
    pub fn records_delivered(&self) -> u64 {
        self.rx.records_delivered()
    }

    /// Abort: the connection closes at once and the next `poll_transmit` yields an RST (a
    /// gateway propagating a reset from the other side). Nothing happens once closed.
    pub fn reset(&mut self) {
        if !matches!(self.state, State::Closed | State::Listen) {
            self.abort(CloseReason::Aborted);
        } else {
            self.state = State::Closed;
            self.close_reason.get_or_insert(CloseReason::Aborted);
        }
    }

    /// Send the RST of a connection we aborted again: a driver whose link may lose it
    /// repeats it (the peer, if it sends nothing, would otherwise never learn). The peer
    /// takes an RST only at exactly its next expected number (RFC 5961): `at_acknowledged`
    /// puts it at what the peer acknowledged last, otherwise at what we sent last; between
    /// the two the peer answers with a challenge ACK, which draws the exact RST. Nothing
    /// happens unless this end aborted (a peer that reset us is owed nothing).
    pub fn repeat_reset(&mut self, at_acknowledged: bool) {
        if self.state == State::Closed && self.we_aborted() {
            self.rst_at = Some(if at_acknowledged {
                self.snd_una
            } else {
                self.snd_nxt
            });
        }
    }

    /// This end aborted the connection (not the peer's reset, not a close): the peer is owed
    /// an RST.
    pub fn we_aborted(&self) -> bool {
        matches!(
            self.close_reason,
            Some(
                CloseReason::Aborted
                    | CloseReason::RetransmissionTimeout
                    | CloseReason::HandshakeTimeout
            )
        )
    }

    /// Ask the peer for an ACK now: a keepalive probe (RFC 9293 3.8.4), an empty segment one
    /// byte below snd_una, which the peer must answer. A driver that has heard nothing from
    /// the peer for long sends these to learn whether it is still there.
    pub fn probe(&mut self) {
        if !matches!(
            self.state,
            State::Closed | State::Listen | State::SynSent | State::SynReceived
        ) {
            self.probe_pending = true;
        }
    }

    /// No more data will be written: a FIN follows the last byte.
    pub fn close(&mut self) {
        self.app_closed = true;
    }

    /// Bytes delivered in order to the application so far (read, when reading is manual).
    pub fn delivered(&self) -> u64 {
        self.rx.delivered()
    }

    /// From now on the application reads only through `read`; unread data fills the receive
    /// buffer and closes the advertised window.
    pub fn set_manual_read(&mut self) {
        self.rx.set_manual_read();
    }

    /// Read up to `n` bytes of in-order data; returns how many were read.
    pub fn read(&mut self, n: u64) -> u64 {
        self.rx.read(n)
    }

    /// In-order bytes waiting to be read.
    pub fn readable(&self) -> u64 {
        self.rx.unread()
    }

    /// Bytes the application wrote that the peer has acknowledged.
    pub fn bytes_acked(&self) -> u64 {
        self.snd_una.saturating_sub(1).min(self.data_end - 1)
    }

    /// Bytes written by the application so far.
    pub fn bytes_written(&self) -> u64 {
        self.data_end - 1
    }

    pub fn state(&self) -> State {
        self.state
    }
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.close_reason
    }
    pub fn stats(&self) -> &ConnStats {
        &self.stats
    }
    pub fn window(&self) -> &Window {
        &self.win
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn bytes_in_flight(&self) -> u64 {
        self.snd_max - self.snd_una
    }
    /// Highest position sent and highest acknowledged (absolute).
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.in_recovery()
    }
    /// Bytes the receiving side gave up under SCPS-TP BETS (never delivered).
    pub fn bets_bytes_lost(&self) -> u64 {
        self.rx.skipped()
    }
    /// The next sequence number this end expects, as its ACKs carry it on the wire.
    #[doc(hidden)]
    pub fn rcv_nxt_wire(&self) -> u32 {
        self.rx.wire_ack()
    }

    /// Stream position `pos` of this end's own data as a wire sequence number.
    #[doc(hidden)]
    pub fn snd_wire(&self, pos: u64) -> u32 {
        to_wire(self.iss, pos)
    }

    /// Choose the connection id our SYN offers (and our compressed headers carry). Call
    /// before the first segment; a gateway with many connections between the same two
    /// addresses gives each its own, so the peer can tell their compressed headers apart.
    pub fn set_connection_id(&mut self, id: u8) {
        self.conn_id = id;
    }

    /// The connection id our SYN offers (see `set_connection_id`).
    pub fn connection_id(&self) -> u8 {
        self.conn_id
    }

    /// Whether SCPS header compression was negotiated (both ends offered COMP).
    pub fn header_compression(&self) -> bool {
        self.scps.agreed.compression
    }
    /// Whether SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.options.sack
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// Payload bytes per full segment after negotiation.
    pub fn segment_size(&self) -> u32 {
        self.seg_size
    }

    /// True once the FIN exchange is complete in both directions (or the connection aborted).
    pub fn is_finished(&self) -> bool {
        matches!(self.state, State::Closed | State::TimeWait)
    }

    fn fin_pos(&self) -> Option<u64> {
        self.app_closed.then_some(self.data_end)
    }

    fn our_fin_acked(&self) -> bool {
        self.fin_pos().is_some_and(|f| self.snd_una > f)
    }

    /// Replace the congestion controller (tests of what a controller is handed).
    #[cfg(test)]
    pub(crate) fn set_controller(&mut self, cc: Box<dyn CongestionControl>) {
        self.rate = cc.wants_delivery_rate().then(rate::DeliveryRate::default);
        self.pacing = pacing::Pacing::for_controller(&self.cfg, cc.as_ref());
        self.control = cc.controls_window().then(Default::default);
        self.cc = cc;
    }

    /// Abort: closed at once, an RST goes out at snd_nxt.
    pub(super) fn abort(&mut self, reason: CloseReason) {
        self.state = State::Closed;
        self.close_reason = Some(reason);
        self.rst_at = Some(self.snd_nxt);
        self.stop_timers();
    }

    /// Closed by a reset: no timer runs any more.
    pub(super) fn stop_timers(&mut self) {
        self.timers.stop(timer::Timer::Rto);
        self.timers.stop(timer::Timer::DelayedAck);
    }
}

/// The window before the handshake: the initial window (or open, without congestion
/// control) and the initial ssthresh, in segments of `mss`.
fn initial_window(cfg: &TcpConfig, mss: u32) -> Window {
    let open = cfg.congestion_control == CongestionControlKind::None;
    Window {
        cwnd: if open {
            crate::cc::nucc::OPEN
        } else {
            cfg.initial_window.bytes(mss as u64)
        },
        ssthresh: cfg
            .initial_ssthresh
            .map_or(u64::MAX, |b| b.0.max(2 * mss as u64)),
        mss: mss as u64,
    }
}

/// The RFC 6298 estimator with the configured bounds, granularity and backoff cap.
fn rtt_estimator(cfg: &TcpConfig) -> RttEstimator {
    let mut e = RttEstimator::new(
        cfg.initial_rto.0,
        cfg.min_rto.0,
        cfg.max_rto.0,
        cfg.clock_granularity.0,
    );
    e.set_max_backoff(cfg.max_backoff.map(|d| d.0));
    if cfg.rto_formula == crate::config::RtoFormula::Linux {
        e.use_linux_variance();
    }
    e
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ns3_parity;
#[cfg(test)]
mod tests_pacing;
#[cfg(test)]
mod tests_rack;
#[cfg(test)]
mod tests_rfc5961;
#[cfg(test)]
mod tests_scps;
