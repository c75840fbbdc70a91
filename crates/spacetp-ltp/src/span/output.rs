//! What leaves a span next: the queued item turned into bytes in the caller's buffer, the
//! span's rate respected, and the timer of a checkpoint, report or cancel started when its
//! segment leaves (RFC 5326 sections 6.2 and 6.3 start them on the link service's
//! "dequeued for transmission" cue; ION's ltpDequeueOutboundSegment does the same).
//!
//! Data extents are cut here, as ION's constructDataSegment cuts them: each segment as
//! long as `max_segment_size` allows with its header; the last segment of an extent that
//! ends a transmission cycle is a checkpoint, and when the rest would not fit with the
//! checkpoint's serial numbers, one byte is kept back so that the checkpoint carries data.

use spacetp_proto::Time;

use crate::shared::Shared;
use crate::span::export::Checkpoint;
use crate::span::{EndMark, Out, Span};
use crate::timer::{Timer, TimerRef};
use crate::wire::{
    data_overhead, write_cancel, write_data_fields, write_header, write_report, write_report_ack,
    Claims, Extensions, ReportSegment, SegmentType, Serials, SessionId,
};

/// What to do once the segment's departure time is known.
enum After {
    Nothing,
    CheckpointTimer { session: u64, serial: u64 },
    ReportTimer { session: u64, serial: u64 },
    ExportCancelTimer { session: u64 },
    ImportCancelTimer { session: u64 },
    EobSent { session: u64 },
}

impl Span {
    /// Writes the next segment into `out` if one may leave at `now`; returns whether one
    /// did.
    pub(crate) fn poll(&mut self, sh: &mut Shared, now: Time, out: &mut Vec<u8>) -> bool {
        if !self.link_up || self.next_tx > now {
            return false;
        }
        loop {
            out.clear();
            let Some(after) = self.write_next(sh, out) else {
                self.note_if_starved(self.next_tx.min(now));
                return false;
            };
            if out.is_empty() {
                continue;
            }
            let len = out.len() as u64;
            let start = self.next_tx.max(now);
            if let Some(t) = self.starved_since.take() {
                self.stats.session_limited_time += start.saturating_sub(t);
            }
            let airtime = self
                .rate
                .map_or(0, |r| (len as f64 * 1e9 / r).ceil() as Time);
            let sent = start + airtime;
            self.next_tx = sent;
            self.stats.segments_sent += 1;
            self.stats.bytes_sent += len;
            self.after_sent(sh, now, sent, after);
            self.note_if_starved(sent);
            return true;
        }
    }

    /// Nothing left to send while blocks wait for an export session: every session awaits
    /// its report and the link is not the limit (session-limited) from `idle_at`, when the
    /// last segment's transmission ends.
    fn note_if_starved(&mut self, idle_at: Time) {
        if !self.has_output() && !self.waiting.is_empty() && self.starved_since.is_none() {
            self.starved_since = Some(idle_at);
        }
    }

    fn after_sent(&mut self, sh: &mut Shared, now: Time, sent: Time, after: After) {
        let d = self.delays;
        let peer = self.peer;
        match after {
            After::Nothing => {}
            After::CheckpointTimer { session, serial } => {
                if let Some(cp) = self
                    .exports
                    .get_mut(&session)
                    .and_then(|s| s.checkpoints.iter_mut().find(|c| c.serial == serial))
                {
                    let at = cp.timer.start(sent, &d);
                    sh.timers
                        .push(at, self.checkpoint_timer_ref(session, serial));
                }
            }
            After::ReportTimer { session, serial } => {
                if let Some(r) = self
                    .imports
                    .get_mut(&session)
                    .and_then(|s| s.reports.iter_mut().find(|r| r.serial == serial))
                {
                    let at = r.timer.start(sent, &d);
                    sh.timers.push(
                        at,
                        TimerRef::Report {
                            peer,
                            session,
                            serial,
                        },
                    );
                }
            }
            After::ExportCancelTimer { session } => {
                if let Some(t) = self
                    .exports
                    .get_mut(&session)
                    .and_then(|s| s.cancel_timer_mut())
                {
                    let at = t.start(sent, &d);
                    sh.timers.push(at, TimerRef::ExportCancel { peer, session });
                }
            }
            After::ImportCancelTimer { session } => {
                if let Some(t) = self
                    .imports
                    .get_mut(&session)
                    .and_then(|s| s.cancel_timer_mut())
                {
                    let at = t.start(sent, &d);
                    sh.timers.push(at, TimerRef::ImportCancel { peer, session });
                }
            }
            After::EobSent { session } => self.on_eob_sent(sh, now, session),
        }
    }

    /// Writes the bytes of the next queued item; `None` when nothing is queued, an empty
    /// `out` when the item had gone stale (its session closed or canceled).
    fn write_next(&mut self, sh: &mut Shared, out: &mut Vec<u8>) -> Option<After> {
        let local = sh.local;
        let peer = self.peer;
        let ours = |number| SessionId {
            originator: local,
            number,
        };
        let theirs = |number| SessionId {
            originator: peer,
            number,
        };
        let no_ext = Extensions::default();
        if let Some(item) = self.ctrl.pop_front() {
            let after = match item {
                Out::Report { session, serial } => {
                    let Some(r) = self
                        .imports
                        .get(&session)
                        .filter(|s| s.is_active())
                        .and_then(|s| s.reports.iter().find(|r| r.serial == serial))
                    else {
                        return Some(After::Nothing);
                    };
                    let rs = ReportSegment {
                        report_serial: r.serial,
                        checkpoint_serial: r.checkpoint,
                        upper_bound: r.upper,
                        lower_bound: r.lower,
                        claims: Claims::List(&r.claims),
                    };
                    write_header(SegmentType::Report, theirs(session), &no_ext, 0, out).ok()?;
                    if write_report(&rs, out).is_err() {
                        out.clear();
                        return Some(After::Nothing);
                    }
                    if r.timer.expirations > 0 {
                        self.stats.reports_retransmitted += 1;
                    } else {
                        self.stats.reports_sent += 1;
                    }
                    After::ReportTimer { session, serial }
                }
                Out::ReportAck { session, serial } => {
                    write_header(SegmentType::ReportAck, ours(session), &no_ext, 0, out).ok()?;
                    write_report_ack(serial, out);
                    self.stats.report_acks_sent += 1;
                    After::Nothing
                }
                Out::CancelFromSender { session, reason } => {
                    write_header(
                        SegmentType::CancelFromSender,
                        ours(session),
                        &no_ext,
                        0,
                        out,
                    )
                    .ok()?;
                    write_cancel(reason, out);
                    let again = self
                        .exports
                        .get_mut(&session)
                        .and_then(|s| s.cancel_timer_mut())
                        .is_some_and(|t| t.expirations > 0);
                    self.count_cancel(again);
                    After::ExportCancelTimer { session }
                }
                Out::CancelFromReceiver { session, reason } => {
                    write_header(
                        SegmentType::CancelFromReceiver,
                        theirs(session),
                        &no_ext,
                        0,
                        out,
                    )
                    .ok()?;
                    write_cancel(reason, out);
                    let again = self
                        .imports
                        .get_mut(&session)
                        .and_then(|s| s.cancel_timer_mut())
                        .is_some_and(|t| t.expirations > 0);
                    self.count_cancel(again);
                    After::ImportCancelTimer { session }
                }
                Out::CancelAckToSender { session } => {
                    write_header(
                        SegmentType::CancelAckToSender,
                        theirs(session),
                        &no_ext,
                        0,
                        out,
                    )
                    .ok()?;
                    self.stats.cancel_acks_sent += 1;
                    After::Nothing
                }
                Out::CancelAckToReceiver { session } => {
                    write_header(
                        SegmentType::CancelAckToReceiver,
                        ours(session),
                        &no_ext,
                        0,
                        out,
                    )
                    .ok()?;
                    self.stats.cancel_acks_sent += 1;
                    After::Nothing
                }
                Out::Data { .. } | Out::Checkpoint { .. } => After::Nothing,
            };
            return Some(after);
        }
        let item = *self.data.front()?;
        match item {
            Out::Checkpoint { session, serial } => {
                self.data.pop_front();
                let Some(s) = self
                    .exports
                    .get(&session)
                    .filter(|s| s.is_active() && !s.red_done)
                else {
                    return Some(After::Nothing);
                };
                let Some(cp) = s.checkpoints.iter().find(|c| c.serial == serial) else {
                    return Some(After::Nothing);
                };
                let serials = Some(Serials {
                    checkpoint: cp.serial,
                    report: cp.report,
                });
                write_header(cp.kind, ours(session), &no_ext, 0, out).ok()?;
                write_data_fields(s.block.client_service_id, cp.offset, cp.len, serials, out);
                s.block.copy_range(cp.offset, cp.offset + cp.len, out);
                self.stats.checkpoints_retransmitted += 1;
                self.stats.data_segments_sent += 1;
                self.stats.data_bytes_sent += cp.len;
                self.stats.red_bytes_sent += cp.len;
                self.stats.data_segments_retransmitted += 1;
                self.stats.data_bytes_retransmitted += cp.len;
                Some(After::CheckpointTimer { session, serial })
            }
            Out::Data {
                session,
                start,
                end,
                mark,
                retransmission,
            } => Some(self.cut_data(sh, out, session, start, end, mark, retransmission)),
            _ => {
                self.data.pop_front();
                Some(After::Nothing)
            }
        }
    }

    fn count_cancel(&mut self, again: bool) {
        if again {
            self.stats.cancel_segments_retransmitted += 1;
        } else {
            self.stats.cancel_segments_sent += 1;
        }
    }

    /// Cuts the next segment off the data extent at the head of the queue.
    #[allow(clippy::too_many_arguments)]
    fn cut_data(
        &mut self,
        sh: &mut Shared,
        out: &mut Vec<u8>,
        number: u64,
        start: u64,
        end: u64,
        mark: EndMark,
        retransmission: bool,
    ) -> After {
        let mss = self.cfg.max_segment_size.0 as usize;
        let session = SessionId {
            originator: sh.local,
            number,
        };
        let Some(s) = self.exports.get_mut(&number).filter(|s| s.is_active()) else {
            self.data.pop_front();
            return After::Nothing;
        };
        let block = &s.block;
        let csid = block.client_service_id;
        let red = start < block.red_len;
        let rest = end - start;
        let serials = match mark {
            EndMark::Checkpoint { serial, report } => Some(Serials {
                checkpoint: serial,
                report,
            }),
            _ => None,
        };
        let last_fits =
            data_overhead(session, csid, start, rest, serials) as u64 + rest <= mss as u64;
        let (len, last) = if last_fits {
            (rest, true)
        } else {
            // The length field is sized for a whole segment: never too small.
            let room = mss - data_overhead(session, csid, start, mss as u64, None);
            let mut len = (room as u64).min(rest);
            if serials.is_some() && len >= rest {
                len = rest - 1;
            }
            (len, false)
        };
        let kind = match (red, last, mark) {
            (true, true, EndMark::Checkpoint { .. }) => {
                let eorp = end == block.red_len;
                SegmentType::red(true, eorp, eorp && block.red_len == block.len)
            }
            (true, _, _) => SegmentType::RedData,
            (false, true, EndMark::Eob) => SegmentType::GreenEob,
            (false, _, _) => SegmentType::GreenData,
        };
        let seg_serials = if last { serials } else { None };
        if write_header(kind, session, &Extensions::default(), 0, out).is_err() {
            self.data.pop_front();
            return After::Nothing;
        }
        write_data_fields(csid, start, len, seg_serials, out);
        block.copy_range(start, start + len, out);
        self.stats.data_segments_sent += 1;
        self.stats.data_bytes_sent += len;
        if red {
            self.stats.red_bytes_sent += len;
        } else {
            self.stats.green_bytes_sent += len;
        }
        if retransmission {
            self.stats.data_segments_retransmitted += 1;
            self.stats.data_bytes_retransmitted += len;
        }
        if last {
            self.data.pop_front();
        } else if let Some(Out::Data { start: s0, .. }) = self.data.front_mut() {
            *s0 += len;
        }
        match (last, seg_serials) {
            (true, Some(sr)) => {
                s.checkpoints.push(Checkpoint {
                    serial: sr.checkpoint,
                    report: sr.report,
                    offset: start,
                    len,
                    kind,
                    timer: Timer::new(),
                });
                self.stats.checkpoints_sent += 1;
                After::CheckpointTimer {
                    session: number,
                    serial: sr.checkpoint,
                }
            }
            (true, None) if kind == SegmentType::GreenEob => After::EobSent { session: number },
            _ => After::Nothing,
        }
    }
}
