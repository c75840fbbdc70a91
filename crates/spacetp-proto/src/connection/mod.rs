//! A TCP connection as a pure state machine: handshake with MSS / window-scale / timestamps
//! negotiation, sliding-window sending limited by cwnd and the peer's window, RFC 6298
//! retransmission timer with Karn's rule and backoff, delayed ACKs, FIN close and RST.
//!
//! Positions are absolute `u64` stream positions: 0 is our SYN, data byte i is at 1 + i, and
//! the FIN follows the last data byte. `seq.rs` converts at the wire boundary.

mod invariants;
mod peach;
mod recovery;
/// The SACK scoreboard, public only for the criterion benchmarks (`benches/`).
#[doc(hidden)]
pub use recovery::Scoreboard;
mod recv;
mod scps;
mod validation;

use crate::cc::{new_controller, AckEvent, CongestionControl, Window};
use crate::config::TcpConfig;
use crate::rto::RttEstimator;
use crate::seq::{from_wire, to_wire};
use crate::time::{Time, MS};
use recovery::{new_recovery, Ctx, LossRecovery};
use spacetp_wire::{flags, TcpHeader, TcpOptions, Timestamps};

pub(crate) use recv::Receiver;
pub use validation::reset_reply;

/// The recovery algorithm's view of the sender, built from disjoint field borrows so that
/// `self.recovery` stays usable beside it.
macro_rules! ctx {
    ($s:ident, $now:expr) => {
        Ctx {
            win: &mut $s.win,
            cc: &mut *$s.cc,
            board: &$s.board,
            snd_una: $s.snd_una,
            snd_nxt: &mut $s.snd_nxt,
            snd_max: $s.snd_max,
            new_data: $s.snd_max < $s.data_end,
            now: $now,
            dupthresh: $s.cfg.dupack_threshold,
            delivered: $s.delivered_now,
            keep_ssthresh: false,
        }
    };
}

/// The smallest MSS offer taken from a peer (Linux `net.ipv4.tcp_min_snd_mss`).
const MIN_PEER_MSS: u32 = 48;

/// RFC 9293 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// FIN exchange completed.
    Normal,
    /// The peer sent RST.
    Reset,
    /// The handshake timed out `syn_retries` times.
    HandshakeTimeout,
    /// The same data timed out `max_retries` times.
    RetransmissionTimeout,
    /// The application aborted the connection ([`Connection::reset`]): an RST was sent.
    Aborted,
}

impl CloseReason {
    pub fn as_str(&self) -> &'static str {
        match self {
            CloseReason::Normal => "closed",
            CloseReason::Reset => "reset by peer",
            CloseReason::HandshakeTimeout => "aborted: handshake timed out (syn_retries)",
            CloseReason::RetransmissionTimeout => "aborted: data timed out (max_retries)",
            CloseReason::Aborted => "aborted by the application (RST sent)",
        }
    }
}

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

/// Counters of one endpoint.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnStats {
    pub segments_sent: u64,
    pub data_segments_sent: u64,
    pub payload_bytes_sent: u64,
    pub retransmitted_segments: u64,
    pub retransmitted_bytes: u64,
    pub pure_acks_sent: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub dupacks_received: u64,
    pub segments_received: u64,
    pub out_of_order_segments: u64,
    pub duplicate_segments: u64,
    /// Zero-window probes sent (persist timer).
    pub persist_probes: u64,
    /// Segments discarded by PAWS (RFC 7323 section 5).
    pub paws_rejected: u64,
    /// TCP-Peach+ NIL segments sent.
    pub nil_segments_sent: u64,
    /// ACKs carrying SNACK options received, and segments resent because a SNACK named them.
    pub snacks_received: u64,
    pub snack_retransmits: u64,
    /// Timeouts handled as corruption (no window reduction, no backoff).
    pub corruption_timeouts: u64,
    /// SCPS-TP link outages entered (persist mode).
    pub outages: u64,
    /// SCPS-TP BETS (receiver): holes given up, and their bytes (lost to the application).
    pub bets_holes: u64,
    pub bets_bytes_skipped: u64,
    /// RFC 5961: RSTs not at the exact next sequence number, SYNs on a synchronized
    /// connection, segments with an unacceptable ACK field, data beyond the receive window;
    /// challenge ACKs sent for them, and those the rate limit held back.
    pub rst_rejected: u64,
    pub syn_rejected: u64,
    pub ack_rejected: u64,
    pub out_of_window_segments: u64,
    pub challenge_acks: u64,
    pub challenge_acks_suppressed: u64,
}

pub struct Connection {
    cfg: TcpConfig,
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
    record_ends: std::collections::VecDeque<u64>,
    app_closed: bool,
    /// Peer's window in bytes (already scaled).
    snd_wnd: u64,
    snd_wscale: u8,
    /// Payload bytes per full data segment after option overhead.
    seg_size: u32,
    win: Window,
    cc: Box<dyn CongestionControl>,
    rtt: RttEstimator,
    /// The segment end being timed for an RTT sample and when it was sent (Karn: cleared by
    /// any retransmission). Feeds the RFC 6298 estimator, one sample per round trip.
    timed: Option<(u64, Time)>,
    /// `[start, end)`, send time and validity (Karn) of every new-data segment in flight: a
    /// sample per ACK for the congestion controller (Vegas needs several per round trip), as
    /// ns-3 and Linux keep.
    sent_times: std::collections::VecDeque<(u64, u64, Time, bool)>,
    rto_deadline: Option<Time>,
    retries: u32,
    /// Persist timer (RFC 9293 3.8.6.1): probes a zero window when nothing is in flight.
    persist_deadline: Option<Time>,
    persist_backoff: u32,
    probe_pending: bool,
    /// Largest window the peer ever offered (sender silly-window avoidance).
    max_snd_wnd: u64,
    /// TCP-Peach+ NIL-segment bursts, when enabled.
    peach: Option<peach::Peach>,
    /// SCPS-TP features both ends offered.
    scps: scps::Negotiated,
    /// SCPS-TP rate control.
    bucket: Option<scps::TokenBucket>,
    /// Rate control holds data back until then.
    pace_deadline: Option<Time>,
    /// Segment starts to retransmit now (named by SNACKs, or a corruption-mode timeout).
    rtx_now: std::collections::VecDeque<u64>,
    /// When a segment start was last resent from `rtx_now` (no second copy within one RTT).
    rtx_sent: std::collections::VecDeque<(u64, Time)>,
    /// SNACK congestion response: once per window of data (like NewReno's `recover`).
    snack_recover: u64,
    /// Explicit corruption signal (Corruption Experienced option, or a router's notice)
    /// holds corruption handling until then.
    corruption_until: Time,
    /// SCPS-TP link-outage persist mode: data stops, the retransmission timer is suspended,
    /// probes go out every `outage_probe` until the link is reported back.
    in_outage: bool,
    outage_probe_at: Option<Time>,
    syn_pending: bool,
    syn_retransmitted: bool,
    /// An RST to send, at this position (our snd_nxt when we abort; the peer's ACK when we
    /// answer a segment after aborting).
    rst_at: Option<u64>,
    /// When the last challenge (or out-of-window) ACK went out (RFC 5961 rate limit).
    last_challenge_ack: Option<Time>,
    recovery: Box<dyn LossRecovery>,
    /// What the peer has SACKed above snd_una.
    board: Scoreboard,
    /// Duplicate ACKs in a row.
    dupacks: u32,
    /// Bytes the ACK being processed newly acknowledged or SACKed (RFC 6937 DeliveredData).
    delivered_now: u64,

    // Options.
    ws_ok: bool,
    ts_ok: bool,
    sack_ok: bool,
    rcv_wscale: u8,

    // Receive side.
    rx: Receiver,

    stats: ConnStats,
}

impl Connection {
    fn new(cfg: &TcpConfig, mss: u32, local_port: u16, remote_port: u16, iss: u32) -> Self {
        let rcv_wscale = if cfg.window_scaling {
            wscale_for(cfg.receive_buffer.0)
        } else {
            0
        };
        let mss = mss.max(1);
        let open = cfg.congestion_control == crate::config::CongestionControlKind::None;
        let win = Window {
            cwnd: if open {
                crate::cc::nucc::OPEN
            } else {
                cfg.initial_window.bytes(mss as u64)
            },
            ssthresh: cfg
                .initial_ssthresh
                .map_or(u64::MAX, |b| b.0.max(2 * mss as u64)),
            mss: mss as u64,
        };
        Connection {
            rtt: {
                let mut e = RttEstimator::new(
                    cfg.initial_rto.0,
                    cfg.min_rto.0,
                    cfg.max_rto.0,
                    cfg.clock_granularity.0,
                );
                e.set_max_backoff(cfg.max_backoff.map(|d| d.0));
                e
            },
            cc: new_controller(cfg),
            rx: Receiver::new(cfg),
            cfg: cfg.clone(),
            state: State::Closed,
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
            snd_wscale: 0,
            seg_size: mss,
            win,
            timed: None,
            sent_times: std::collections::VecDeque::new(),
            rto_deadline: None,
            retries: 0,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
            max_snd_wnd: 0,
            peach: cfg.peach.then(peach::Peach::default),
            scps: scps::Negotiated::default(),
            bucket: cfg
                .scps
                .rate
                .map(|r| scps::TokenBucket::new(r.0, cfg.scps.bucket.0)),
            pace_deadline: None,
            rtx_now: std::collections::VecDeque::new(),
            rtx_sent: std::collections::VecDeque::new(),
            snack_recover: 0,
            corruption_until: 0,
            in_outage: false,
            outage_probe_at: None,
            syn_pending: false,
            syn_retransmitted: false,
            rst_at: None,
            last_challenge_ack: None,
            recovery: new_recovery(cfg.recovery, false, cfg.prr),
            board: Scoreboard::default(),
            dupacks: 0,
            delivered_now: 0,
            ws_ok: false,
            ts_ok: false,
            sack_ok: false,
            rcv_wscale,
            stats: ConnStats::default(),
        }
    }

    /// Active open: the connection will send a SYN on the first `poll_transmit`.
    pub fn connect(cfg: &TcpConfig, mss: u32, local_port: u16, remote_port: u16, iss: u32) -> Self {
        let mut c = Self::new(cfg, mss, local_port, remote_port, iss);
        c.rx.set_mss(mss as u64);
        c.state = State::SynSent;
        c.syn_pending = true;
        c
    }

    /// Passive open: waits for a SYN.
    pub fn listen(cfg: &TcpConfig, mss: u32, local_port: u16, remote_port: u16, iss: u32) -> Self {
        let mut c = Self::new(cfg, mss, local_port, remote_port, iss);
        c.rx.set_mss(mss as u64);
        c.state = State::Listen;
        c
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

    /// The end of the record that `pos` lies in, when records are marked with an SCPS-TP peer.
    fn record_end_after(&self, pos: u64) -> Option<u64> {
        if !self.scps.scps {
            return None;
        }
        // Ends at or below snd_una were dropped as the ACKs came (`on_new_ack`).
        let i = self.record_ends.partition_point(|&e| e <= pos);
        self.record_ends.get(i).copied()
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
        self.scps.compression
    }
    /// Whether SACK was negotiated.
    pub fn sack_enabled(&self) -> bool {
        self.sack_ok
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

    // ----- time -----

    /// The earliest time at which `on_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.state == State::Closed {
            return None;
        }
        let peach = self
            .peach
            .as_ref()
            .and_then(|p| p.deadline())
            .or(self.outage_probe_at);
        [
            self.rto_deadline,
            self.rx.delack_deadline,
            self.rx.bets_deadline(),
            self.persist_deadline,
            peach,
            self.pace_deadline,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Handle every timer due at `now`.
    pub fn on_timeout(&mut self, now: Time) {
        if self.rx.delack_deadline.is_some_and(|d| d <= now) {
            self.rx.delack_deadline = None;
            self.rx.ack_now = true;
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.on_rto(now);
        }
        if self.rx.bets_deadline().is_some_and(|d| d <= now)
            && self.rx.give_up_hole(now, &mut self.stats)
        {
            self.on_peer_fin();
        }
        if let Some(p) = &mut self.peach {
            p.on_timer(now);
        }
        if self.pace_deadline.is_some_and(|d| d <= now) {
            self.pace_deadline = None;
        }
        if self.outage_probe_at.is_some_and(|d| d <= now) {
            self.probe_pending = true;
            self.outage_probe_at = Some(now + self.outage_probe_interval());
        }
        if self.persist_deadline.is_some_and(|d| d <= now) {
            self.probe_pending = true;
            self.persist_backoff += 1;
            self.persist_deadline = Some(now + self.persist_interval());
        }
    }

    /// Persist interval: the RTO, doubled per unanswered probe, at most `max_rto`.
    fn persist_interval(&self) -> Time {
        let backed = self
            .rtt
            .rto()
            .saturating_mul(1 << self.persist_backoff.min(20));
        backed.min(self.cfg.max_rto.0)
    }

    /// Arm the persist timer when data waits on a closed window with nothing in flight;
    /// disarm it when the window opens.
    fn update_persist(&mut self, now: Time) {
        let stalled = matches!(self.state, State::Established | State::CloseWait)
            && self.snd_max == self.snd_una
            && self.snd_nxt < self.data_end
            && self.snd_una + self.snd_wnd <= self.snd_nxt;
        if !stalled {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        } else if self.persist_deadline.is_none() {
            self.persist_deadline = Some(now + self.persist_interval());
        }
    }

    fn on_rto(&mut self, now: Time) {
        self.rto_deadline = None;
        self.retries += 1;
        let handshake = matches!(self.state, State::SynSent | State::SynReceived);
        let limit = if handshake {
            self.cfg.syn_retries
        } else {
            self.cfg.max_retries
        };
        if self.retries > limit {
            let reason = if handshake {
                CloseReason::HandshakeTimeout
            } else {
                CloseReason::RetransmissionTimeout
            };
            self.abort(reason);
            return;
        }
        self.stats.timeouts += 1;
        self.timed = None;
        if !handshake && self.corruption(now) {
            // SCPS-TP corruption: resend the first hole, keep the window and the timer.
            self.stats.corruption_timeouts += 1;
            self.rtx_now.push_front(self.snd_una);
            self.rto_deadline = Some(now + self.rtt.rto());
            return;
        }
        self.rtt.back_off();
        if handshake {
            self.syn_pending = true;
            self.syn_retransmitted = true;
        } else {
            let flight = self.snd_max - self.snd_una;
            self.cc.on_timeout(&mut self.win, flight, now);
            self.recovery.on_timeout(self.snd_max);
            self.dupacks = 0;
            // Go back N: everything after snd_una is sent again under slow start.
            self.snd_nxt = self.snd_una;
        }
        let rto = if handshake {
            self.handshake_rto()
        } else {
            self.rtt.rto()
        };
        self.rto_deadline = Some(now + rto);
    }

    /// The SYN's (or SYN-ACK's) timeout: `syn_rto` doubled per timeout so far when set
    /// (ns-3's ConnTimeout, Linux's 1 s), else the RTO before any sample.
    fn handshake_rto(&self) -> Time {
        match self.cfg.syn_rto {
            Some(d) => d.0.saturating_mul(1 << self.retries.min(30)),
            None => self.rtt.rto(),
        }
    }

    fn abort(&mut self, reason: CloseReason) {
        self.state = State::Closed;
        self.close_reason = Some(reason);
        self.rst_at = Some(self.snd_nxt);
        self.rto_deadline = None;
        self.rx.delack_deadline = None;
    }

    fn restart_rto(&mut self, now: Time) {
        // In SCPS-TP persist mode the timer stays suspended until the link is back.
        self.rto_deadline =
            (self.snd_max > self.snd_una && !self.in_outage).then(|| now + self.rtt.rto());
    }

    // ----- input -----

    /// Process one received segment with `len` payload bytes. Returns the part of the
    /// payload the receiver took in, if any (see [`Accepted`]).
    pub fn on_segment(&mut self, now: Time, hdr: &TcpHeader, len: u32) -> Option<Accepted> {
        self.stats.segments_received += 1;
        match self.state {
            State::Closed => {
                self.on_segment_after_abort(hdr);
                None
            }
            State::Listen => {
                self.on_segment_listen(now, hdr);
                None
            }
            State::SynSent => {
                self.on_segment_syn_sent(now, hdr);
                None
            }
            _ => self.on_segment_synchronized(now, hdr, len),
        }
    }

    fn on_segment_listen(&mut self, _now: Time, hdr: &TcpHeader) {
        if !hdr.has(flags::SYN) || hdr.has(flags::ACK) || hdr.has(flags::RST) {
            return;
        }
        self.negotiate(&hdr.options, true);
        self.rx.on_syn(hdr.seq);
        self.state = State::SynReceived;
        self.syn_pending = true;
        self.snd_wnd = hdr.window as u64;
        self.rx.ts_recent_from(&hdr.options, 0);
    }

    fn on_segment_syn_sent(&mut self, now: Time, hdr: &TcpHeader) {
        if !hdr.has(flags::ACK) {
            return; // simultaneous open is not supported; ignore a bare SYN
        }
        let ack = from_wire(self.iss, hdr.ack, self.snd_una);
        if ack != 1 {
            return;
        }
        if hdr.has(flags::RST) {
            self.state = State::Closed;
            self.close_reason = Some(CloseReason::Reset);
            return;
        }
        if !hdr.has(flags::SYN) {
            return;
        }
        self.negotiate(&hdr.options, false);
        self.rx.on_syn(hdr.seq);
        self.rx.ts_recent_from(&hdr.options, 0);
        self.snd_una = 1;
        self.snd_nxt = self.snd_nxt.max(1);
        self.snd_wnd = hdr.window as u64; // windows in SYNs are never scaled
        self.take_handshake_rtt(now, &hdr.options);
        self.retries = 0;
        self.state = State::Established;
        self.restart_rto(now);
        self.rx.ack_now = true;
        self.jump_start(now);
    }

    /// TCP-Peach+ Jump Start: cwnd = 1 segment, and rwnd - 1 NIL segments paced over the
    /// handshake RTT whose ACKs open the window.
    fn jump_start(&mut self, now: Time) {
        let Some(p) = &mut self.peach else { return };
        let mss = self.win.mss;
        let rtt = self.rtt.srtt().unwrap_or(self.cfg.initial_rto.0);
        let rwnd_segs = (self.snd_wnd / mss).max(1);
        self.win.cwnd = mss;
        p.start_burst(now, (rwnd_segs - 1) as u32, rtt, rwnd_segs * mss, 1);
        p.jump_start = true;
    }

    fn take_handshake_rtt(&mut self, now: Time, opts: &TcpOptions) {
        if let (true, Some(ts)) = (self.ts_ok, opts.timestamps) {
            self.rtt_sample(now, ts_elapsed(now, ts.ecr));
        } else if let Some((_, sent)) = self.timed.take() {
            if !self.syn_retransmitted {
                self.rtt_sample(now, now - sent);
            }
        }
    }

    /// Record what the peer offered in its SYN / SYN-ACK.
    fn negotiate(&mut self, o: &TcpOptions, we_are_passive: bool) {
        // An MSS offer below 48 bytes is raised to 48, as Linux's tcp_min_snd_mss does: a
        // tiny MSS would make every count in segments (SNACK, windows) overflow.
        let peer_mss = o.mss.map_or(536, |m| m as u32).max(MIN_PEER_MSS);
        self.peer_mss = peer_mss;
        self.ws_ok = self.cfg.window_scaling && o.window_scale.is_some();
        if self.ws_ok {
            self.snd_wscale = o.window_scale.unwrap_or(0).min(14);
        } else {
            self.rcv_wscale = 0;
        }
        self.ts_ok = self.cfg.timestamps && o.timestamps.is_some();
        self.sack_ok = self.cfg.sack && o.sack_permitted;
        // SCPS-TP features need both ends; a plain TCP peer makes this a plain TCP connection.
        self.scps = scps::Negotiated::from(&self.cfg.scps, o.scps_capabilities);
        if self.scps.scps {
            self.rx
                .set_ack_period(self.cfg.scps.ack_period.map(|d| d.0));
            if self.scps.bets {
                self.rx.set_bets(self.cfg.scps.bets.map(|d| d.0));
            }
        }
        self.recovery = new_recovery(self.cfg.recovery, self.sack_ok, self.cfg.prr);
        let _ = we_are_passive;
        let mss = self.own_mss.min(peer_mss);
        // RFC 6691: the MSS excludes options, so data segments carry less when timestamps ride
        // on every segment.
        self.seg_size = self.payload_of(mss) as u32;
        self.win.mss = self.seg_size as u64;
        self.win.cwnd = self.cfg.initial_window.bytes(self.win.mss);
        if self.cfg.congestion_control == crate::config::CongestionControlKind::None {
            self.win.cwnd = crate::cc::nucc::OPEN;
            self.win.ssthresh = crate::cc::nucc::OPEN;
        }
        if self.win.ssthresh != u64::MAX {
            self.win.ssthresh = self.win.ssthresh.max(2 * self.win.mss);
        }
    }

    fn on_segment_synchronized(
        &mut self,
        now: Time,
        hdr: &TcpHeader,
        len: u32,
    ) -> Option<Accepted> {
        let seg_start = self.rx.abs_seq(hdr.seq);
        if hdr.has(flags::RST) {
            self.on_rst(now, seg_start);
            return None;
        }
        if hdr.has(flags::SYN) {
            self.on_syn_when_synchronized(now, seg_start);
            return None;
        }
        if !hdr.has(flags::ACK) {
            return None; // RFC 9293 3.10.7.4, fifth check: no ACK bit, drop
        }
        if self.ts_ok && self.rx.paws_rejects(&hdr.options) {
            self.stats.paws_rejected += 1;
            self.rx.ack_now = true; // RFC 7323 5.3 R1: drop it, send an ACK
            return None;
        }
        if self.beyond_window(now, seg_start, len) {
            return None;
        }
        if !self.ack_acceptable(now, from_wire(self.iss, hdr.ack, self.snd_una)) {
            return None;
        }
        if self.ts_ok {
            self.rx.ts_recent_from(&hdr.options, seg_start);
        }
        if len == 0 && !hdr.has(flags::FIN) && seg_start < self.rx.next_expected() {
            // An unacceptable segment (e.g. a zero-window probe): answer with an ACK.
            self.rx.ack_now = true;
        }
        if hdr.has(flags::CWR) && len > 0 {
            self.rx.nil_ack = true; // a Peach+ NIL segment: answer at once, marked ECE
            self.rx.ack_now = true;
        }
        self.on_ack(now, hdr, len);
        if self.state == State::Closed {
            return None;
        }
        let fin = hdr.has(flags::FIN);
        if self.scps.scps && hdr.options.record_boundary && len > 0 {
            self.rx.note_record_end(seg_start + len as u64);
        }
        if len == 0 && !fin {
            return None;
        }
        let (fin_now, taken) = self.rx.on_data(now, seg_start, len, fin, &mut self.stats);
        if fin_now {
            self.on_peer_fin();
        }
        taken.map(|(pos, end)| Accepted {
            pos,
            skip: (pos - seg_start) as u32,
            len: (end - pos) as u32,
        })
    }

    fn on_peer_fin(&mut self) {
        self.state = match self.state {
            State::SynReceived | State::Established => State::CloseWait,
            State::FinWait1 if self.our_fin_acked() => State::TimeWait,
            State::FinWait1 => State::Closing,
            State::FinWait2 => State::TimeWait,
            s => s,
        };
        if self.state == State::TimeWait {
            self.enter_time_wait();
        }
    }

    fn enter_time_wait(&mut self) {
        // The simulator does not wait 2 MSL: the connection is finished, but keeps answering a
        // retransmitted FIN with an ACK.
        self.close_reason.get_or_insert(CloseReason::Normal);
        self.rto_deadline = None;
    }

    fn on_ack(&mut self, now: Time, hdr: &TcpHeader, len: u32) {
        let ack = from_wire(self.iss, hdr.ack, self.snd_una);
        if self.state == State::SynReceived {
            if ack < 1 {
                return;
            }
            self.state = State::Established;
            self.snd_wnd = (hdr.window as u64) << self.snd_wscale;
            self.take_handshake_rtt(now, &hdr.options);
            self.retries = 0;
        }
        let wnd = (hdr.window as u64) << self.snd_wscale;
        if ack < self.snd_una {
            return; // old ACK
        }
        if self.scps.scps && hdr.options.corruption_experienced {
            self.on_corruption_notice(now);
        }
        if self.scps.snack && !hdr.options.snacks.is_empty() && ack >= self.snd_una {
            self.on_snack(now, ack, &hdr.options.snacks);
        }
        let newly_sacked = if self.sack_ok {
            self.absorb_sack(&hdr.options)
        } else {
            0
        };
        let new_sack = newly_sacked > 0;
        self.delivered_now = newly_sacked + ack.saturating_sub(self.snd_una);
        let nil_ack = self.peach.is_some() && hdr.has(flags::ECE);
        if let (true, Some(p)) = (nil_ack, &self.peach) {
            self.win.cwnd = p.on_nil_ack(self.win.cwnd, self.win.mss);
        }
        if ack == self.snd_una {
            let is_dup = !nil_ack
                && len == 0
                && !hdr.has(flags::FIN)
                && self.snd_max > self.snd_una
                && wnd == self.snd_wnd;
            self.snd_wnd = wnd;
            if is_dup {
                self.stats.dupacks_received += 1;
                self.dupacks += 1;
                let ev = self.ack_event(now, 0, None);
                self.cc.on_any_ack(&ev, true);
                let dupacks = self.dupacks;
                let cwnd_before = self.win.cwnd;
                let saved = self.win;
                // A SNACK that named this loss has already reduced the window once.
                let snack_episode = self.scps.snack && self.snd_una < self.snack_recover;
                let mut c = ctx!(self, now);
                c.keep_ssthresh = snack_episode;
                if self.recovery.on_dupack(&mut c, dupacks, new_sack) {
                    if snack_episode {
                        self.win = saved;
                    } else {
                        self.stats.fast_retransmits += 1;
                        self.snack_recover = self.snd_max;
                    }
                    self.quick_recovery(now, cwnd_before);
                }
                if self.corruption(now) {
                    self.win = saved; // retransmit, but corruption is not congestion
                }
            }
            return;
        }
        self.snd_wnd = wnd;
        self.max_snd_wnd = self.max_snd_wnd.max(wnd);
        if let Some(p) = &mut self.peach {
            // Jump Start was sized from the SYN-ACK's unscaled window; the first ACK after it
            // gives the real one.
            let rwnd = wnd / self.win.mss * self.win.mss;
            if p.jump_start {
                let rtt = self.rtt.srtt().unwrap_or(self.cfg.initial_rto.0);
                p.widen(now, rwnd, self.win.mss, rtt);
            }
        }
        self.on_new_ack(now, ack, &hdr.options);
    }

    /// TCP-Peach+ Quick Recovery: after the halving, pace as many NIL segments as the window
    /// lost over one RTT; their ACKs rebuild it if the loss was not congestion.
    fn quick_recovery(&mut self, now: Time, cwnd_before: u64) {
        let Some(p) = &mut self.peach else { return };
        let lost = cwnd_before.saturating_sub(self.win.cwnd) / self.win.mss;
        let rtt = self.rtt.srtt().unwrap_or(self.cfg.initial_rto.0);
        p.start_burst(now, lost as u32, rtt, cwnd_before, self.snd_una);
        p.jump_start = false;
    }

    /// The controller's view of an ACK; `flight_before` is taken before snd_una moves.
    fn ack_event(&self, now: Time, acked: u64, rtt: Option<Time>) -> AckEvent {
        AckEvent {
            now,
            acked,
            flight_before: self.snd_max - self.snd_una + acked,
            ack: self.snd_una,
            snd_nxt: self.snd_nxt,
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
        }
    }

    fn on_new_ack(&mut self, now: Time, ack: u64, opts: &TcpOptions) {
        let acked = ack - self.snd_una;
        // RTT: timestamps give a sample per ACK (RFC 7323 RTTM) to both the RTO estimator and
        // the controller. Without them the estimator times one segment per round trip
        // (RFC 6298) and the controller gets a sample per ACK from the send-time record.
        let mut estimator = None;
        let mut controller = self.sample_from_sent_times(ack, now);
        if let (true, Some(ts)) = (self.ts_ok, opts.timestamps) {
            estimator = Some(ts_elapsed(now, ts.ecr));
            controller = estimator;
        } else if let Some((end, sent)) = self.timed {
            if ack >= end {
                self.timed = None;
                estimator = Some(now - sent);
            }
        }
        if let Some(r) = estimator {
            self.rtt.on_sample(r);
        }
        if let Some(r) = controller {
            self.cc.on_rtt_sample(r, now);
        }
        let sample = controller;
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(ack);
        self.board.advance(ack);
        while self.record_ends.front().is_some_and(|&e| e <= ack) {
            self.record_ends.pop_front();
        }
        self.retries = 0;
        self.dupacks = 0;
        let ev = self.ack_event(now, acked, sample);
        self.cc.on_any_ack(&ev, false);
        let (saved, was_recovering) = (self.win, self.recovery.in_recovery());
        let rto_restart = self.recovery.on_new_ack(&mut ctx!(self, now), &ev);
        if was_recovering && self.corruption(now) {
            self.win = Window {
                cwnd: saved.cwnd.max(self.win.cwnd),
                ..saved
            };
        }
        if rto_restart {
            self.restart_rto(now);
        }
        if self.our_fin_acked() {
            self.state = match self.state {
                State::FinWait1 => State::FinWait2,
                State::Closing => State::TimeWait,
                State::LastAck => State::Closed,
                s => s,
            };
            if self.state == State::TimeWait {
                self.enter_time_wait();
            } else if self.state == State::Closed {
                self.close_reason.get_or_insert(CloseReason::Normal);
                self.rto_deadline = None;
            }
        }
    }

    /// Is a loss to be treated as corruption now (SCPS-TP loss-source policy, or an explicit
    /// corruption signal within the last two round trips)?
    fn corruption(&self, now: Time) -> bool {
        (self.cfg.scps.enabled
            && self.cfg.scps.loss_source == crate::config::LossSource::Corruption)
            || now < self.corruption_until
    }

    /// The peer (or its ground station, through the simulator) reports corrupted packets on
    /// this connection's path: treat losses as corruption for two round trips.
    pub fn on_corruption_notice(&mut self, now: Time) {
        let two_rtt = 2 * self.rtt.srtt().unwrap_or(self.rtt.rto());
        self.corruption_until = self.corruption_until.max(now + two_rtt);
    }

    /// A ground station on the path reports its link down (SCPS-TP link outage): enter persist
    /// mode. TCP ignores the notice (as a host ignores an unknown ICMP type).
    pub fn on_link_outage(&mut self, now: Time) {
        if !self.scps.scps
            || self.in_outage
            || !matches!(
                self.state,
                State::Established
                    | State::CloseWait
                    | State::FinWait1
                    | State::LastAck
                    | State::Closing
            )
        {
            return;
        }
        self.in_outage = true;
        self.stats.outages += 1;
        self.rto_deadline = None;
        self.outage_probe_at = Some(now + self.outage_probe_interval());
    }

    /// The link is back: leave persist mode at the old window, resend the first unacknowledged
    /// segment (what was in flight when the link failed is presumed lost) and restart the timer.
    pub fn on_link_restored(&mut self, now: Time) {
        if !self.in_outage {
            return;
        }
        self.in_outage = false;
        self.outage_probe_at = None;
        if self.snd_max > self.snd_una {
            self.rtx_now.push_front(self.snd_una);
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    /// Probes in persist mode: one per RTO (not backed off), at most `max_rto` apart.
    fn outage_probe_interval(&self) -> Time {
        self.rtt.rto().min(self.cfg.max_rto.0)
    }

    /// This endpoint's link layer discarded a corrupted packet addressed to it: echo it to the
    /// peer with the Corruption Experienced option (SCPS-TP).
    pub fn on_corruption_detected(&mut self) {
        if self.scps.scps {
            self.rx.corruption_echo = true;
            self.rx.ack_now = true;
        }
    }

    /// The payload of a segment of `mss` bytes once the timestamp option (if negotiated)
    /// takes its share. Applied to the data sender's offered MSS, this is also the unit of
    /// SNACK offsets and sizes: the SCPS Reference Implementation's reading (the standard
    /// says "MSS units"); it differs from the segment size only when the two ends offered
    /// different MSS values, and then it is what lets the two interoperate.
    fn payload_of(&self, mss: u32) -> u64 {
        mss.saturating_sub(if self.ts_ok { 12 } else { 0 }).max(1) as u64
    }

    /// A SNACK names holes: queue their segments for retransmission now; under the congestion
    /// policy the first SNACK of a window also reduces the window once.
    fn on_snack(&mut self, now: Time, ack_wire_abs: u64, list: &spacetp_wire::SnackList) {
        self.stats.snacks_received += 1;
        let (unit, seg) = (self.payload_of(self.own_mss), self.seg_size as u64);
        let (una, max) = (
            ack_wire_abs.max(self.snd_una),
            self.snd_max.min(self.data_end),
        );
        let recent = self.rtt.srtt().unwrap_or(self.rtt.rto());
        let mut named = false;
        let (queue, sent) = (&mut self.rtx_now, &self.rtx_sent);
        scps::snacked_positions(list, ack_wire_abs, unit, seg, |pos| {
            if pos < una || pos >= max || queue.contains(&pos) {
                return;
            }
            named = true;
            let fresh = sent.iter().any(|&(p, t)| p == pos && now < t + recent);
            if !fresh {
                queue.push_back(pos);
            }
        });
        // One reduction per window of data, whether a SNACK or duplicate ACKs saw the loss first.
        if named
            && !self.corruption(now)
            && self.snd_una >= self.snack_recover
            && !self.recovery.in_recovery()
        {
            let flight = self.snd_max - self.snd_una;
            self.win.ssthresh = self.cc.ssthresh_after_loss(&self.win, flight, now);
            self.win.cwnd = self.win.ssthresh;
            self.snack_recover = self.snd_max;
            self.stats.fast_retransmits += 1;
        }
    }

    /// Rate control: could `bytes` leave now (`take`: and take the tokens)? If not, wake up
    /// when they could.
    fn rate_check(&mut self, now: Time, bytes: u64, take: bool) -> bool {
        let Some(b) = &mut self.bucket else {
            return true;
        };
        let r = if take {
            b.take(now, bytes)
        } else {
            b.ready(now, bytes)
        };
        match r {
            Ok(()) => true,
            Err(at) => {
                self.pace_deadline = Some(self.pace_deadline.map_or(at, |d| d.min(at)));
                false
            }
        }
    }

    /// Forget segments the ACK covers; the RTT of the newest never-retransmitted one.
    fn sample_from_sent_times(&mut self, ack: u64, now: Time) -> Option<Time> {
        let mut sample = None;
        while let Some(&(_, end, sent, valid)) = self.sent_times.front() {
            if end > ack {
                break;
            }
            self.sent_times.pop_front();
            if valid {
                sample = Some(now - sent);
            }
        }
        sample
    }

    /// Merge the SACK blocks of an ACK into the scoreboard; returns the bytes newly SACKed.
    fn absorb_sack(&mut self, o: &TcpOptions) -> u64 {
        let mut blocks = [(0u64, 0u64); spacetp_wire::MAX_SACK_BLOCKS];
        let n = o.sack.as_slice().len();
        for (b, &(l, r)) in blocks.iter_mut().zip(o.sack.as_slice()) {
            *b = (
                from_wire(self.iss, l, self.snd_una),
                from_wire(self.iss, r, self.snd_una),
            );
        }
        self.board.add(&blocks[..n], self.snd_una, self.snd_max)
    }

    fn rtt_sample(&mut self, now: Time, rtt: Time) {
        self.rtt.on_sample(rtt);
        self.cc.on_rtt_sample(rtt, now);
    }

    // ----- output -----

    /// The next segment to send at `now`, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        if let Some(pos) = self.rst_at.take() {
            let mut h = self.header(flags::RST | flags::ACK, pos, now);
            h.window = 0;
            return Some(self.emit(h, 0, pos, false, now));
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent | State::SynReceived if self.syn_pending => {
                return Some(self.transmit_syn(now));
            }
            State::SynSent => return None,
            _ => {}
        }
        let seg_bytes = self.seg_size as u64 + 52; // rate control charges about a packet
        while let Some(&pos) = self.rtx_now.front().filter(|_| !self.in_outage) {
            if pos < self.snd_una || pos >= self.snd_max {
                self.rtx_now.pop_front();
                continue;
            }
            if !self.rate_check(now, seg_bytes, true) {
                break;
            }
            self.rtx_now.pop_front();
            self.rtx_sent.push_back((pos, now));
            if self.rtx_sent.len() > 4096 {
                self.rtx_sent.pop_front();
            }
            self.stats.snack_retransmits += 1;
            let t = self.transmit_from(pos, now);
            self.recovery.on_retransmit(pos, pos + t.len as u64);
            return Some(t);
        }
        let data_ok =
            !self.in_outage && self.rtx_now.is_empty() && self.rate_check(now, seg_bytes, false);
        let rtx = self.recovery.next_retransmission(&ctx!(self, now));
        let recent = self.rtt.srtt().unwrap_or(0);
        let dup = |p: u64, sent: &std::collections::VecDeque<(u64, Time)>| {
            sent.iter().any(|&(q, t)| q == p && now < t + recent)
        };
        if let Some(pos) = rtx.filter(|&p| p < self.snd_max && !dup(p, &self.rtx_sent)) {
            if data_ok && self.rate_check(now, seg_bytes, true) {
                let t = self.transmit_from(pos, now);
                self.recovery.on_retransmit(pos, pos + t.len as u64);
                return Some(t);
            }
            self.rtx_now.push_front(pos); // keep it for when the rate allows
        }
        if data_ok && self.peach.as_ref().is_some_and(|p| p.pending) {
            return Some(self.transmit_nil(now));
        }
        if data_ok {
            if let Some(t) = self.transmit_new(now) {
                if let Some(b) = &mut self.bucket {
                    let _ = b.take(now, t.len as u64 + 52);
                }
                return Some(t);
            }
        }
        if self.probe_pending {
            // Linux-style zero-window probe: an empty segment one byte below snd_una, which
            // the peer must answer with an ACK carrying its current window.
            self.probe_pending = false;
            self.stats.persist_probes += 1;
            let h = self.header(flags::ACK, self.snd_una - 1, now);
            return Some(self.emit(h, 0, self.snd_una - 1, false, now));
        }
        if self.rx.ack_now {
            let h = self.header(flags::ACK, self.snd_nxt, now);
            self.stats.pure_acks_sent += 1;
            return Some(self.emit(h, 0, self.snd_nxt, false, now));
        }
        self.update_persist(now);
        None
    }

    fn transmit_syn(&mut self, now: Time) -> Transmit {
        self.syn_pending = false;
        let passive = self.state == State::SynReceived;
        let mut h = self.header(
            if passive {
                flags::SYN | flags::ACK
            } else {
                flags::SYN
            },
            0,
            now,
        );
        h.window = self.cfg.receive_buffer.0.min(65535) as u16;
        let o = &mut h.options;
        o.mss = Some(self.own_mss.min(65535) as u16);
        let offer_ws = self.cfg.window_scaling && (!passive || self.ws_ok);
        if offer_ws {
            o.window_scale = Some(self.rcv_wscale);
        }
        o.sack_permitted = self.cfg.sack && (!passive || self.sack_ok);
        if self.cfg.scps.enabled && (!passive || self.scps.scps) {
            o.scps_capabilities = Some(spacetp_wire::ScpsCapabilities {
                vector: scps::offer(&self.cfg.scps),
                connection_id: self.conn_id,
            });
        }
        let offer_ts = self.cfg.timestamps && (!passive || self.ts_ok);
        if offer_ts {
            o.timestamps = Some(Timestamps {
                val: ts_clock(now),
                ecr: self.rx.ts_recent,
            });
        } else if !passive {
            o.timestamps = None;
        }
        let retx = self.snd_max > 0;
        if retx {
            self.syn_retransmitted = true;
            self.timed = None;
        } else {
            self.timed = Some((1, now));
        }
        self.snd_nxt = self.snd_nxt.max(1);
        self.snd_max = self.snd_max.max(1);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.handshake_rto());
        }
        self.emit(h, 0, 0, retx, now)
    }

    /// Bytes that may still be sent: congestion window (plus the RFC 3042 allowance for the
    /// first two duplicate ACKs) less what recovery counts in flight, and the peer's window.
    fn send_room(&mut self, now: Time) -> u64 {
        let lt = if self.cfg.limited_transmit
            && !self.recovery.in_recovery()
            && self.dupacks < self.cfg.dupack_threshold
        {
            self.dupacks.min(2) as u64 * self.win.mss
        } else {
            0
        };
        let flight = self.recovery.flight(&ctx!(self, now));
        let cwnd_room = (self.win.cwnd + lt).saturating_sub(flight);
        let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        cwnd_room.min(rwnd_room)
    }

    fn transmit_new(&mut self, now: Time) -> Option<Transmit> {
        if !matches!(
            self.state,
            State::Established
                | State::CloseWait
                | State::FinWait1
                | State::Closing
                | State::LastAck
        ) {
            return None;
        }
        // After a timeout the sender goes back over data the peer may already hold: skip it.
        while self.snd_nxt < self.snd_max {
            match self.board.sacked_end(self.snd_nxt) {
                Some(end) => self.snd_nxt = end.min(self.snd_max),
                None => break,
            }
        }
        let room = self.send_room(now);
        if self.snd_nxt < self.data_end {
            let sacked_at = self.board.next_sacked(self.snd_nxt);
            let record_end = self.record_end_after(self.snd_nxt).unwrap_or(u64::MAX);
            let avail = self.data_end.min(sacked_at).min(record_end) - self.snd_nxt;
            let len = avail.min(self.seg_size as u64).min(room);
            // Sender-side silly window avoidance (RFC 1122 4.2.3.4): a short segment only when
            // it ends the data or fills half the largest window the peer ever offered.
            let big = len == self.seg_size as u64 || len == avail || 2 * len >= self.max_snd_wnd;
            if len > 0 && big {
                return Some(self.transmit_from(self.snd_nxt, now));
            }
            return None;
        }
        if let Some(fin) = self.fin_pos() {
            if self.snd_nxt == fin {
                return Some(self.transmit_from(fin, now));
            }
        }
        None
    }

    /// A TCP-Peach+ NIL segment: a low-priority copy of unacknowledged data (or of the last
    /// segment sent, when all is acknowledged), marked with CWR.
    fn transmit_nil(&mut self, now: Time) -> Transmit {
        let seg = self.seg_size as u64;
        let data_top = self.snd_max.min(self.data_end);
        let p = self.peach.as_mut().expect("peach enabled");
        p.pending = false;
        p.sent += 1;
        if p.cursor < self.snd_una || p.cursor >= data_top {
            p.cursor = self.snd_una;
        }
        let mut pos = p.cursor;
        if pos >= data_top {
            pos = data_top.saturating_sub(seg).max(1);
        }
        let len = data_top.saturating_sub(pos).min(seg) as u32;
        p.cursor = pos + len as u64;
        self.timed = None; // a copy in flight spoils the RTT sample
        self.stats.nil_segments_sent += 1;
        let h = self.header(flags::ACK | flags::CWR, pos, now);
        let mut t = self.emit(h, len, pos, false, now);
        t.low_priority = true;
        t
    }

    /// Send the segment that starts at `pos` (data, possibly with the FIN), stopping short of
    /// anything the peer has SACKed.
    fn transmit_from(&mut self, pos: u64, now: Time) -> Transmit {
        let record_end = self.record_end_after(pos);
        let end = self.data_end.min(self.board.next_sacked(pos));
        let end = end.min(record_end.unwrap_or(u64::MAX));
        let len = end.saturating_sub(pos).min(self.seg_size as u64) as u32;
        let end = pos + len as u64;
        let fin = self.fin_pos().is_some_and(|f| f == end);
        let mut fl = flags::ACK;
        if fin {
            fl |= flags::FIN;
        }
        if len > 0 && end == self.data_end {
            fl |= flags::PSH;
        }
        let retx = pos < self.snd_max;
        let seg_end = end + fin as u64;
        if retx {
            self.timed = None;
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += len as u64;
            // Karn: an ACK covering a resent range no longer times its first transmission.
            for e in self
                .sent_times
                .iter_mut()
                .filter(|e| e.0 < seg_end && e.1 > pos)
            {
                e.3 = false;
            }
        } else if len > 0 {
            if self.timed.is_none() {
                self.timed = Some((seg_end, now));
            }
            self.sent_times.push_back((pos, seg_end, now, true));
        }
        if pos == self.snd_nxt {
            self.snd_nxt = seg_end;
        }
        self.snd_max = self.snd_max.max(seg_end);
        if fin {
            self.state = match self.state {
                State::Established => State::FinWait1,
                State::CloseWait => State::LastAck,
                s => s,
            };
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        let record_boundary = len > 0 && record_end == Some(end);
        let h = self.header_with(fl, pos, now, record_boundary);
        self.emit(h, len, pos, retx, now)
    }

    fn header(&self, fl: u8, pos: u64, now: Time) -> TcpHeader {
        self.header_with(fl, pos, now, false)
    }

    /// A header; `record_boundary` marks a segment that ends an application record.
    fn header_with(&self, fl: u8, pos: u64, now: Time, record_boundary: bool) -> TcpHeader {
        let mut h = TcpHeader {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: to_wire(self.iss, pos),
            ack: 0,
            flags: fl,
            window: 0,
            urgent: 0,
            options: TcpOptions::default(),
        };
        if fl & flags::ACK != 0 {
            if self.rx.nil_ack && fl & flags::CWR == 0 {
                h.flags |= flags::ECE;
            }
            h.ack = self.rx.wire_ack();
            h.window = (self.rx.window() >> self.rcv_wscale).min(65535) as u16;
        }
        if self.ts_ok {
            h.options.timestamps = Some(Timestamps {
                val: ts_clock(now),
                ecr: self.rx.ts_recent,
            });
        }
        if self.sack_ok && fl & flags::ACK != 0 {
            // RFC 2018: 4 blocks fit beside no other option, 3 beside timestamps.
            let max = if self.ts_ok { 3 } else { 4 };
            self.rx.sack_blocks(max, &mut h.options.sack);
        }
        if self.scps.scps && fl & flags::ACK != 0 && self.rx.corruption_echo {
            h.options.corruption_experienced = true;
        }
        h.options.record_boundary = record_boundary;
        if self.scps.snack && fl & flags::ACK != 0 {
            let mut holes = [(0u64, 0u64); 16];
            let n = self.rx.holes(&mut holes);
            if n > 0 {
                let room = 40 - h.options.raw_len();
                let seg = self.payload_of(self.peer_mss);
                h.options.snacks = scps::snacks_for(
                    &holes[..n],
                    self.rx.next_expected(),
                    seg,
                    self.scps.snack_bitvector,
                    room,
                );
            }
        }
        h
    }

    fn emit(&mut self, hdr: TcpHeader, len: u32, pos: u64, retx: bool, _now: Time) -> Transmit {
        self.stats.segments_sent += 1;
        if len > 0 {
            self.recovery.on_data_sent(len as u64);
            self.stats.data_segments_sent += 1;
            self.stats.payload_bytes_sent += len as u64;
        }
        if hdr.has(flags::ACK) {
            self.rx.on_ack_sent();
        }
        Transmit {
            hdr,
            len,
            pos,
            retransmission: retx,
            low_priority: false,
        }
    }
}

/// Smallest window-scale shift that lets `buf` be advertised (RFC 7323, at most 14).
fn wscale_for(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buf >> s) > 65535 {
        s += 1;
    }
    s
}

/// The timestamp clock ticks in milliseconds (RFC 7323 allows 1 ms to 1 s per tick).
fn ts_clock(now: Time) -> u32 {
    (now / MS) as u32
}

fn ts_elapsed(now: Time, ecr: u32) -> Time {
    ts_clock(now).wrapping_sub(ecr) as Time * MS
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_ns3_parity;
#[cfg(test)]
mod tests_rfc5961;
