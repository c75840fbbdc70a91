//! The engine of one node, sans-IO: it is handed received segments, client data and the
//! time, and asked for segments to send, its next deadline and its notices. It never sees a
//! socket or a clock, so the simulator, a live UDP tool and tests drive the same code.
//!
//! Driving it: after any call, send what `poll_transmit` gives until it gives `None`, read
//! `poll_event` until `None`, and call `on_timeout` at `poll_timeout` (which also says when
//! a paced segment may leave).

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use spacetp_proto::{FieldError, Time};

use crate::config::{EngineConfig, SpanConfig};
use crate::event::Event;
use crate::shared::{Rng, Shared};
use crate::span::Span;
use crate::stats::{EngineStats, SpanStats};
use crate::timer::{TimerRef, Timers};
use crate::wire::{self, Content, DecodeError, SegmentType};

/// Why `send` refused client data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SendError {
    /// No span goes to this engine.
    UnknownPeer(u64),
    /// An SDU of no bytes.
    Empty,
    /// The red length is above the data's length.
    RedLengthTooLong { red_len: u64, len: u64 },
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SendError::UnknownPeer(p) => write!(f, "no span to engine {p}"),
            SendError::Empty => f.write_str("client service data of 0 bytes"),
            SendError::RedLengthTooLong { red_len, len } => write!(
                f,
                "red length {red_len} is above the data's {len} bytes (use the data's length for an all-red SDU)"
            ),
        }
    }
}

impl std::error::Error for SendError {}

/// One LTP engine: its ID, its spans, its timers.
pub struct Engine {
    sh: Shared,
    spans: BTreeMap<u64, Span>,
    /// The peer served last by `poll_transmit` (spans take turns).
    last_served: Option<u64>,
}

impl Engine {
    pub fn new(local_engine_id: u64, config: EngineConfig) -> Result<Engine, FieldError> {
        config.validate()?;
        let mut rng = Rng(config.seed);
        // A first session number from 1 to 2^31 (ION starts from its own counter, which a
        // restart does not reuse; a random start serves the same purpose here).
        let next_session = 1 + rng.next() % (1 << 31);
        Ok(Engine {
            sh: Shared {
                local: local_engine_id,
                cfg: config,
                rng,
                timers: Timers::default(),
                events: VecDeque::new(),
                export_index: BTreeMap::new(),
                closed_exports: BTreeMap::new(),
                closed_export_order: VecDeque::new(),
                next_session,
                stats: EngineStats::default(),
            },
            spans: BTreeMap::new(),
            last_served: None,
        })
    }

    pub fn local_engine_id(&self) -> u64 {
        self.sh.local
    }

    /// Adds a span to a peer engine (ION `a span`). Its link starts up.
    pub fn add_span(&mut self, config: SpanConfig) -> Result<(), FieldError> {
        config.validate()?;
        let peer = config.peer_engine_id;
        if self.spans.contains_key(&peer) || peer == self.sh.local {
            return Err(FieldError::new(
                "peer_engine_id",
                format!("{peer}: a span to this engine exists already, or it is the local engine"),
            ));
        }
        let span = Span::new(
            config,
            self.sh.cfg.own_queuing_latency.0,
            self.sh.cfg.max_ber,
        );
        self.spans.insert(peer, span);
        Ok(())
    }

    /// Client service data for `peer` (RFC 5326 section 4.1, transmission request): the
    /// first `red_len` bytes red (reliable), the rest green. The SDU joins the span's open
    /// block; blocks become sessions as `aggregation.rs` says.
    pub fn send(
        &mut self,
        now: Time,
        peer: u64,
        client_service_id: u64,
        data: Bytes,
        red_len: u64,
    ) -> Result<(), SendError> {
        let len = data.len() as u64;
        if len == 0 {
            return Err(SendError::Empty);
        }
        if red_len > len {
            return Err(SendError::RedLengthTooLong { red_len, len });
        }
        let span = self
            .spans
            .get_mut(&peer)
            .ok_or(SendError::UnknownPeer(peer))?;
        span.append_sdu(&mut self.sh, now, client_service_id, data, red_len);
        Ok(())
    }

    /// The client cancels one of its export sessions (RFC 5326 section 4.2; USR_CNCLD).
    /// Returns whether the session was open.
    pub fn cancel_export(&mut self, now: Time, session: u64) -> bool {
        let Some(&peer) = self.sh.export_index.get(&session) else {
            return false;
        };
        match self.spans.get_mut(&peer) {
            Some(span) => span.user_cancel_export(&mut self.sh, now, session),
            None => false,
        }
    }

    /// The client cancels a reception from `peer` (RFC 5326 section 4.2; USR_CNCLD).
    pub fn cancel_import(&mut self, now: Time, peer: u64, session: u64) -> bool {
        match self.spans.get_mut(&peer) {
            Some(span) => span.user_cancel_import(&mut self.sh, now, session),
            None => false,
        }
    }

    /// A segment received from the link service. An undecodable segment is counted and its
    /// error returned; nothing else about the segment can make this fail.
    pub fn on_segment(&mut self, now: Time, bytes: &[u8]) -> Result<(), DecodeError> {
        let seg = match wire::decode(bytes) {
            Ok(s) => s,
            Err(e) => {
                self.sh.stats.malformed_segments += 1;
                return Err(e);
            }
        };
        self.forget(now);
        let sid = seg.session;
        if sid.originator == self.sh.local {
            // RS, CAS and CR name this engine as the originator of their session.
            self.on_own_session(now, seg.kind, &seg.content, sid.number, bytes.len());
            return Ok(());
        }
        let Some(span) = self.spans.get_mut(&sid.originator) else {
            self.sh.stats.unknown_engine_segments += 1;
            return Ok(());
        };
        span.stats.segments_received += 1;
        span.stats.bytes_received += bytes.len() as u64;
        let sh = &mut self.sh;
        match (seg.kind, &seg.content) {
            (k, Content::Data(d)) => span.on_data(sh, now, k, sid, d),
            (SegmentType::ReportAck, Content::ReportAck { report_serial }) => {
                span.on_report_ack(now, sid.number, *report_serial)
            }
            (SegmentType::CancelFromSender, Content::Cancel { reason }) => {
                span.on_cancel_from_sender(sh, now, sid.number, *reason)
            }
            (SegmentType::CancelAckToReceiver, Content::CancelAck) => {
                span.on_cancel_ack_to_receiver(now, sid.number)
            }
            // An RS, CR or CAS names the session's originator, which is not this peer.
            _ => sh.stats.stray_segments += 1,
        }
        Ok(())
    }

    /// A segment about a session this engine originated: RS, CAS or CR.
    fn on_own_session(
        &mut self,
        now: Time,
        kind: SegmentType,
        content: &Content,
        number: u64,
        len: usize,
    ) {
        let Some(&peer) = self.sh.export_index.get(&number) else {
            // Closed: acknowledge a late report or cancel, a bounded number of times.
            match (kind, content, self.sh.closed_exports.get_mut(&number)) {
                (SegmentType::Report, Content::Report(rs), Some(c)) if c.answers_left > 0 => {
                    c.answers_left -= 1;
                    let peer = c.peer;
                    if let Some(span) = self.spans.get_mut(&peer) {
                        span.stats.reports_received += 1;
                        span.ctrl.push_back(crate::span::Out::ReportAck {
                            session: number,
                            serial: rs.report_serial,
                        });
                    }
                }
                (SegmentType::CancelFromReceiver, _, Some(c)) => {
                    let peer = c.peer;
                    if let Some(span) = self.spans.get_mut(&peer) {
                        span.stats.cancel_segments_received += 1;
                        span.ctrl
                            .push_back(crate::span::Out::CancelAckToReceiver { session: number });
                    }
                }
                _ => self.sh.stats.stray_segments += 1,
            }
            return;
        };
        let Some(span) = self.spans.get_mut(&peer) else {
            return;
        };
        span.stats.segments_received += 1;
        span.stats.bytes_received += len as u64;
        let sh = &mut self.sh;
        match (kind, content) {
            (SegmentType::Report, Content::Report(rs)) => span.on_report(sh, now, number, rs),
            (SegmentType::CancelAckToSender, Content::CancelAck) => {
                span.on_cancel_ack_to_sender(sh, number)
            }
            (SegmentType::CancelFromReceiver, Content::Cancel { reason }) => {
                span.on_cancel_from_receiver(sh, now, number, *reason)
            }
            _ => sh.stats.stray_segments += 1,
        }
    }

    /// Writes the next segment that may leave at `now` into `out` (cleared first) and
    /// returns the peer engine it is for. Spans take turns; each keeps to its rate and
    /// sends nothing while its link is down.
    pub fn poll_transmit(&mut self, now: Time, out: &mut Vec<u8>) -> Option<u64> {
        use std::ops::Bound::{Excluded, Unbounded};
        let mut cursor = self.last_served;
        for _ in 0..self.spans.len() {
            let next = cursor
                .and_then(|c| self.spans.range((Excluded(c), Unbounded)).next())
                .or_else(|| self.spans.iter().next())
                .map(|(&p, _)| p)?;
            cursor = Some(next);
            let span = self.spans.get_mut(&next).expect("found above");
            if span.poll(&mut self.sh, now, out) {
                self.last_served = Some(next);
                return Some(next);
            }
        }
        out.clear();
        None
    }

    /// The earliest time something is due: a timer, or a paced segment that may leave.
    pub fn poll_timeout(&mut self) -> Option<Time> {
        while let Some((at, what)) = self.sh.timers.peek() {
            if self.is_live(at, what) {
                break;
            }
            self.sh.timers.pop();
        }
        let timer = self.sh.timers.peek().map(|(at, _)| at);
        let send = self.spans.values().filter_map(|s| s.next_send()).min();
        match (timer, send) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether a heap entry still stands for a running deadline.
    fn is_live(&self, at: Time, what: TimerRef) -> bool {
        let span = |p: u64| self.spans.get(&p);
        match what {
            TimerRef::Checkpoint { peer, session, serial } => span(peer)
                .and_then(|s| s.exports.get(&session))
                .and_then(|s| s.checkpoints.iter().find(|c| c.serial == serial))
                .is_some_and(|c| c.timer.is_due(at)),
            TimerRef::Report { peer, session, serial } => span(peer)
                .and_then(|s| s.imports.get(&session))
                .and_then(|s| s.reports.iter().find(|r| r.serial == serial))
                .is_some_and(|r| r.timer.is_due(at)),
            TimerRef::ExportCancel { peer, session } => span(peer)
                .and_then(|s| s.exports.get(&session))
                .is_some_and(|s| matches!(&s.state, crate::span::export::ExportState::Canceling { timer, .. } if timer.is_due(at))),
            TimerRef::ImportCancel { peer, session } => span(peer)
                .and_then(|s| s.imports.get(&session))
                .is_some_and(|s| matches!(&s.state, crate::span::import::ImportState::Canceling { timer, .. } if timer.is_due(at))),
            TimerRef::Aggregation { peer, block } => {
                span(peer).and_then(|s| s.agg.as_ref()).is_some_and(|o| o.id == block)
            }
        }
    }

    /// Acts on every deadline at or before `now`.
    pub fn on_timeout(&mut self, now: Time) {
        self.forget(now);
        while let Some((at, what)) = self.sh.timers.peek() {
            if at > now {
                break;
            }
            self.sh.timers.pop();
            let sh = &mut self.sh;
            let peer = match what {
                TimerRef::Checkpoint { peer, .. }
                | TimerRef::Report { peer, .. }
                | TimerRef::ExportCancel { peer, .. }
                | TimerRef::ImportCancel { peer, .. }
                | TimerRef::Aggregation { peer, .. } => peer,
            };
            let Some(span) = self.spans.get_mut(&peer) else {
                continue;
            };
            match what {
                TimerRef::Checkpoint {
                    session, serial, ..
                } => span.on_checkpoint_timer(sh, now, at, session, serial),
                TimerRef::Report {
                    session, serial, ..
                } => span.on_report_timer(sh, now, at, session, serial),
                TimerRef::ExportCancel { session, .. } => {
                    span.on_export_cancel_timer(sh, at, session)
                }
                TimerRef::ImportCancel { session, .. } => {
                    span.on_import_cancel_timer(now, at, session)
                }
                TimerRef::Aggregation { block, .. } => span.on_aggregation_timer(sh, now, block),
            }
        }
    }

    /// RFC 5326 section 6 link-state cues for the span to `peer` (ION takes them from its
    /// contact plan). Returns false when there is no such span.
    pub fn set_link_up(&mut self, now: Time, peer: u64, up: bool) -> bool {
        match self.spans.get_mut(&peer) {
            Some(span) => {
                span.set_link(&mut self.sh, now, up);
                true
            }
            None => false,
        }
    }

    /// The rate the span to `peer` paces its segments to from now on, bits per second
    /// (None: unpaced): ION meters each contact at the contact plan's rate. Returns false
    /// when there is no such span.
    pub fn set_transmission_rate(&mut self, peer: u64, bits_per_s: Option<f64>) -> bool {
        match self.spans.get_mut(&peer) {
            Some(span) => {
                span.rate = bits_per_s.map(|r| r / 8.0);
                true
            }
            None => false,
        }
    }

    /// The next notice for the client services.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.sh.events.pop_front()
    }

    /// Counters of the span to `peer`.
    pub fn span_stats(&self, peer: u64) -> Option<&SpanStats> {
        self.spans.get(&peer).map(|s| &s.stats)
    }

    /// Counters of the whole engine.
    pub fn stats(&self) -> EngineStats {
        let mut e = self.sh.stats;
        for s in self.spans.values() {
            e.add_span(&s.stats);
        }
        e
    }

    /// Export sessions open to `peer` (canceled ones waiting for their CAS excluded), and
    /// import sessions open from it.
    pub fn open_sessions(&self, peer: u64) -> Option<(u32, usize)> {
        self.spans.get(&peer).map(|s| {
            (
                s.open_exports,
                s.imports.values().filter(|i| i.is_active()).count(),
            )
        })
    }

    /// Blocks closed and waiting for an export session to `peer`.
    pub fn blocks_waiting(&self, peer: u64) -> Option<usize> {
        self.spans.get(&peer).map(|s| s.waiting.len())
    }

    /// The retransmission limit in force on the span to `peer` (set, or derived).
    pub fn max_retransmissions(&self, peer: u64) -> Option<u32> {
        self.spans.get(&peer).map(|s| s.max_timeouts)
    }

    /// Drops closed-session records whose time is up.
    fn forget(&mut self, now: Time) {
        while let Some(&(n, until)) = self.sh.closed_export_order.front() {
            if until > now {
                break;
            }
            self.sh.closed_export_order.pop_front();
            if self
                .sh
                .closed_exports
                .get(&n)
                .is_some_and(|c| c.until == until)
            {
                self.sh.closed_exports.remove(&n);
            }
        }
        for s in self.spans.values_mut() {
            s.forget_closed(now);
        }
    }
}
