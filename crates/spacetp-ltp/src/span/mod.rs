//! A span: everything the local engine exchanges with one peer (ION's LtpSpan). Its
//! export and import sessions, the blocks waiting for a session, the numbers of recently
//! closed sessions, the link state and two queues of segments to send: control segments
//! (reports, acknowledgments, cancels) go before data, as ION's enqueueAckSegment puts them
//! ahead of the data segments.
//!
//! Queued items are small descriptions; the bytes are written when the segment leaves
//! (`output.rs`), and a data extent is cut into segments only then.

pub(crate) mod aggregation;
pub(crate) mod export;
pub(crate) mod import;
mod import_cancel;
mod output;

use std::collections::{BTreeMap, VecDeque};

use spacetp_proto::Time;

use crate::config::{derived_max_retransmissions, SpanConfig};
use crate::shared::Shared;
use crate::span::aggregation::{Block, OpenBlock};
use crate::span::export::ExportSession;
use crate::span::import::ImportSession;
use crate::stats::SpanStats;
use crate::timer::{Delays, Timer, TimerRef};
use crate::wire::CancelReason;

/// How the last segment of a data extent is marked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EndMark {
    None,
    /// The extent ends a transmission cycle: its last segment is a checkpoint.
    Checkpoint {
        serial: u64,
        report: u64,
    },
    /// The extent ends the green part: its last segment is a green EOB.
    Eob,
}

/// A segment (or a run of data segments) waiting to be sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Out {
    /// Block bytes `[start, end)` of an export session, cut into segments as they leave.
    Data {
        session: u64,
        start: u64,
        end: u64,
        mark: EndMark,
        retransmission: bool,
    },
    /// A checkpoint sent again on its timer.
    Checkpoint {
        session: u64,
        serial: u64,
    },
    /// A report segment of an import session (sent again on its timer, too).
    Report {
        session: u64,
        serial: u64,
    },
    /// A report acknowledgment for one of our export sessions.
    ReportAck {
        session: u64,
        serial: u64,
    },
    CancelFromSender {
        session: u64,
        reason: CancelReason,
    },
    CancelAckToSender {
        session: u64,
    },
    CancelFromReceiver {
        session: u64,
        reason: CancelReason,
    },
    CancelAckToReceiver {
        session: u64,
    },
}

pub(crate) struct Span {
    pub peer: u64,
    pub cfg: SpanConfig,
    pub delays: Delays,
    /// Timeouts after which a checkpoint, report or cancel is given up (ION maxTimeouts).
    pub max_timeouts: u32,
    /// Bytes per second, when paced.
    pub rate: Option<f64>,
    pub link_up: bool,
    /// When the next segment may start to leave.
    pub next_tx: Time,
    /// Since when the span has had nothing to send while blocks waited for an export
    /// session (session-limited), if it is so now.
    pub starved_since: Option<Time>,
    pub ctrl: VecDeque<Out>,
    pub data: VecDeque<Out>,
    pub agg: Option<OpenBlock>,
    pub next_block_id: u64,
    /// Closed blocks waiting for an export session, with the time they closed.
    pub waiting: VecDeque<(Block, Time)>,
    pub exports: BTreeMap<u64, ExportSession>,
    /// Export sessions counted against `max_export_sessions` (not canceled).
    pub open_exports: u32,
    pub imports: BTreeMap<u64, ImportSession>,
    /// Closed import sessions, in the order they expire, and each number's last expiry.
    pub closed_imports: VecDeque<(u64, Time)>,
    pub closed_import_set: BTreeMap<u64, Time>,
    /// The session of the latest green segment and the lowest green offset seen in it
    /// (ION's greenSessionNbr and startOfGreen, for miscolored red data).
    pub last_green: Option<(u64, u64)>,
    /// The largest data segment received (ION's maxRecvSegSize).
    pub max_recv_segment: u64,
    pub stats: SpanStats,
}

impl Span {
    pub(crate) fn new(cfg: SpanConfig, own_q: Time, max_ber: f64) -> Self {
        let max_timeouts = cfg
            .max_retransmissions
            .unwrap_or_else(|| derived_max_retransmissions(max_ber, cfg.max_segment_size.0));
        Span {
            peer: cfg.peer_engine_id,
            delays: Delays {
                owlt_out: cfg.one_way_light_time.0,
                owlt_back: cfg.owlt_back(),
                own_q,
                remote_q: cfg.queuing_latency.0,
            },
            max_timeouts,
            rate: cfg.transmission_rate.map(|r| r.0 / 8.0),
            link_up: true,
            next_tx: 0,
            starved_since: None,
            ctrl: VecDeque::new(),
            data: VecDeque::new(),
            agg: None,
            next_block_id: 0,
            waiting: VecDeque::new(),
            exports: BTreeMap::new(),
            open_exports: 0,
            imports: BTreeMap::new(),
            closed_imports: VecDeque::new(),
            closed_import_set: BTreeMap::new(),
            last_green: None,
            max_recv_segment: cfg.max_segment_size.0,
            stats: SpanStats::default(),
            cfg,
        }
    }

    /// How long closed session numbers are kept: ION's 10 s + 2 x maxTimeouts x round trip
    /// (noteClosedImport), unless set.
    pub(crate) fn retention(&self) -> Time {
        self.cfg.closed_session_retention.map_or_else(
            || {
                10 * spacetp_proto::SEC
                    + 2 * self.max_timeouts as Time * (self.delays.owlt_out + self.delays.owlt_back)
            },
            |d| d.0,
        )
    }

    /// Whether something waits to be sent.
    pub(crate) fn has_output(&self) -> bool {
        !self.ctrl.is_empty() || !self.data.is_empty()
    }

    /// When this span wants to send next, if it has something to send and its link is up.
    pub(crate) fn next_send(&self) -> Option<Time> {
        (self.link_up && self.has_output()).then_some(self.next_tx)
    }

    pub(crate) fn note_closed_import(&mut self, now: Time, session: u64) {
        let until = now + self.retention();
        self.closed_imports.push_back((session, until));
        self.closed_import_set.insert(session, until);
    }

    pub(crate) fn forget_closed(&mut self, now: Time) {
        while let Some(&(s, until)) = self.closed_imports.front() {
            if until > now {
                break;
            }
            self.closed_imports.pop_front();
            // A number closed twice stays until its last expiry.
            if self.closed_import_set.get(&s) == Some(&until) {
                self.closed_import_set.remove(&s);
            }
        }
    }

    /// RFC 5326 section 6 link-state cues. Down: every timer whose answer may not have left
    /// the peer is suspended, and nothing is sent. Up: suspended timers resume with their
    /// deadlines moved by the outage (ION's ltpSuspendTimers / ltpResumeTimers).
    pub(crate) fn set_link(&mut self, sh: &mut Shared, now: Time, up: bool) {
        if up == self.link_up {
            return;
        }
        self.link_up = up;
        let d = self.delays;
        let peer = self.peer;
        let mut resumed: Vec<(Time, TimerRef)> = Vec::new();
        let mut each = |t: &mut Timer, what: TimerRef| {
            if up {
                if let Some(at) = t.resume(now, &d) {
                    resumed.push((at, what));
                }
            } else {
                t.suspend(now, &d);
            }
        };
        for (&session, s) in &mut self.exports {
            for cp in &mut s.checkpoints {
                each(
                    &mut cp.timer,
                    TimerRef::Checkpoint {
                        peer,
                        session,
                        serial: cp.serial,
                    },
                );
            }
            if let Some(t) = s.cancel_timer_mut() {
                each(t, TimerRef::ExportCancel { peer, session });
            }
        }
        for (&session, s) in &mut self.imports {
            for r in &mut s.reports {
                each(
                    &mut r.timer,
                    TimerRef::Report {
                        peer,
                        session,
                        serial: r.serial,
                    },
                );
            }
            if let Some(t) = s.cancel_timer_mut() {
                each(t, TimerRef::ImportCancel { peer, session });
            }
        }
        for (at, what) in resumed {
            sh.timers.push(at, what);
        }
        if up {
            self.next_tx = self.next_tx.max(now);
        }
    }
}
