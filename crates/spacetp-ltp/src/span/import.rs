//! Import (receiving) sessions: RFC 5326 sections 6.3, 6.8-6.11, 6.14, 6.17-6.21 as ION's
//! libltpP.c carries them out (handleDataSegment, sendReport, handleRA, ltpResendReport,
//! handleCS, cancelSessionByReceiver); its cancellation is in `import_cancel.rs`.
//!
//! Where ION and the RFC differ, ION is followed:
//! - A primary report's lower bound is always 0 (ION's sendReport), not the upper bound of
//!   the previous primary report (RFC 6.11's SHOULD): every report restates all that has
//!   arrived, so a lost report costs nothing.
//! - Once the whole red part has arrived the report is one claim over it (sendFinalRpt),
//!   and later checkpoints draw no new report: the final report's own timer resends it.
//! - Each report segment has its own serial number and timer: a report too long for one
//!   segment (over 20 claims, ION's MAX_CLAIMS_PER_RS, or over the segment size) becomes
//!   several reports of one segment each, since an RA names one serial number.
//! - A report with no claim in its scope is not sent (the checkpoint's timer recovers).
//! - A report is also sent, asynchronously (checkpoint serial 0), when a segment that is
//!   not a checkpoint completes the red part.
//! - Closed session numbers are kept 10 s + 2 x maxTimeouts x round trip (noteClosedImport)
//!   so that late segments do not reopen a session.

use std::collections::BTreeMap;

use bytes::Bytes;
use spacetp_proto::Time;

use crate::config::{derived_max_cycles, ImportLimitPolicy};
use crate::event::{Event, Limit};
use crate::ranges::RangeSet;
use crate::shared::Shared;
use crate::span::{Out, Span};
use crate::timer::Timer;
use crate::wire::{data_overhead, sdnv, CancelReason, Claim, DataSegment, SegmentType, SessionId};

/// ION's MAX_CLAIMS_PER_RS.
pub const MAX_CLAIMS_PER_REPORT: usize = 20;

/// A report segment as first sent: sent again as is on its timer.
#[derive(Clone, Debug)]
pub(crate) struct Report {
    pub serial: u64,
    pub checkpoint: u64,
    pub lower: u64,
    pub upper: u64,
    pub claims: Vec<Claim>,
    pub timer: Timer,
    pub acked: bool,
}

#[derive(Clone, Debug)]
pub(crate) enum ImportState {
    Active,
    /// Canceled here; the CR waits for its CAR.
    Canceling {
        reason: CancelReason,
        timer: Timer,
    },
}

pub(crate) struct ImportSession {
    pub client_service_id: u64,
    /// The red bytes from offset 0 with no gap.
    pub buf: Vec<u8>,
    /// Red bytes beyond a gap, by offset (disjoint, not touching `buf`).
    pub chunks: BTreeMap<u64, Bytes>,
    pub got: RangeSet,
    /// Known from the EORP segment.
    pub red_len: Option<u64>,
    pub eob: bool,
    pub reports: Vec<Report>,
    pub last_report_serial: u64,
    pub reports_issued: u32,
    pub final_report: Option<u64>,
    pub delivered: bool,
    pub state: ImportState,
}

impl ImportSession {
    fn new(client_service_id: u64) -> Self {
        ImportSession {
            client_service_id,
            buf: Vec::new(),
            chunks: BTreeMap::new(),
            got: RangeSet::new(),
            red_len: None,
            eob: false,
            reports: Vec::new(),
            last_report_serial: 0,
            reports_issued: 0,
            final_report: None,
            delivered: false,
            state: ImportState::Active,
        }
    }
    pub(crate) fn cancel_timer_mut(&mut self) -> Option<&mut Timer> {
        match &mut self.state {
            ImportState::Canceling { timer, .. } => Some(timer),
            ImportState::Active => None,
        }
    }
    pub(crate) fn is_active(&self) -> bool {
        matches!(self.state, ImportState::Active)
    }
    fn complete(&self) -> bool {
        self.red_len.is_some_and(|n| self.got.contains(0, n))
    }

    /// Stores the bytes of `[offset, offset + data.len())` not held yet; returns how many.
    fn store(&mut self, offset: u64, data: &[u8]) -> u64 {
        let end = offset + data.len() as u64;
        if offset == self.buf.len() as u64 && self.got.end() == offset {
            // In order, nothing beyond: the common case, no allocation but the buffer's.
            self.buf.extend_from_slice(data);
            return self.got.insert(offset, end);
        }
        let gaps = self.got.gaps(offset, end);
        for &(s, e) in &gaps {
            let piece = &data[(s - offset) as usize..(e - offset) as usize];
            if s == self.buf.len() as u64 {
                self.buf.extend_from_slice(piece);
            } else {
                self.chunks.insert(s, Bytes::copy_from_slice(piece));
            }
        }
        while let Some(entry) = self.chunks.first_entry() {
            if *entry.key() != self.buf.len() as u64 {
                break;
            }
            let chunk = entry.remove();
            self.buf.extend_from_slice(&chunk);
        }
        self.got.insert(offset, end)
    }
}

impl Span {
    /// A data segment of a session the peer originated.
    pub(crate) fn on_data(
        &mut self,
        sh: &mut Shared,
        now: Time,
        kind: SegmentType,
        session: SessionId,
        d: &DataSegment,
    ) {
        let (eorp, eob) = (kind.is_eorp(), kind.is_eob());
        self.max_recv_segment = self.max_recv_segment.max(d.data.len() as u64);
        let number = session.number;
        if !sh.cfg.client_services.is_empty()
            && !sh.cfg.client_services.contains(&d.client_service_id)
        {
            // ION's handleDataSegment: an unknown client service cancels the session.
            if self.imports.contains_key(&number) {
                self.cancel_import(sh, now, number, CancelReason::Unreachable, None);
            } else if !self.closed_import_set.contains_key(&number) {
                self.ctrl.push_back(Out::CancelFromReceiver {
                    session: number,
                    reason: CancelReason::Unreachable,
                });
                self.stats
                    .import_canceled_locally
                    .add(CancelReason::Unreachable);
            }
            return;
        }
        if kind.is_red() {
            self.on_red(sh, now, number, d, eorp, eob);
        } else {
            self.on_green(sh, now, number, d, eob);
        }
    }

    fn on_green(&mut self, sh: &mut Shared, now: Time, number: u64, d: &DataSegment, eob: bool) {
        self.stats.green_segments_received += 1;
        if let Some(s) = self.imports.get(&number) {
            if !s.is_active() {
                return;
            }
            // RFC 5326 section 6.21 (b): green data below red data already received.
            if s.got.end() > d.offset {
                self.cancel_import(sh, now, number, CancelReason::Miscolored, None);
                return;
            }
        }
        let start = match self.last_green {
            Some((s, g)) if s == number => g.min(d.offset),
            _ => d.offset,
        };
        self.last_green = Some((number, start));
        self.stats.green_bytes_delivered += d.data.len() as u64;
        sh.events.push_back(Event::GreenSegment {
            peer: self.peer,
            session: number,
            client_service_id: d.client_service_id,
            offset: d.offset,
            data: Bytes::copy_from_slice(d.data),
            end_of_block: eob,
        });
    }

    fn on_red(
        &mut self,
        sh: &mut Shared,
        now: Time,
        number: u64,
        d: &DataSegment,
        eorp: bool,
        eob: bool,
    ) {
        self.stats.red_segments_received += 1;
        if self.closed_import_set.contains_key(&number) {
            self.stats.redundant_segments_received += 1;
            return;
        }
        // RFC 5326 section 6.21 (a): red data at or after green data of the same session.
        if self
            .last_green
            .is_some_and(|(s, g)| s == number && d.end() > g)
        {
            if self.imports.contains_key(&number) {
                self.cancel_import(sh, now, number, CancelReason::Miscolored, None);
            } else {
                self.ctrl.push_back(Out::CancelFromReceiver {
                    session: number,
                    reason: CancelReason::Miscolored,
                });
                self.stats
                    .import_canceled_locally
                    .add(CancelReason::Miscolored);
            }
            return;
        }
        if !self.imports.contains_key(&number) {
            let open = self.imports.values().filter(|s| s.is_active()).count();
            if open >= self.cfg.max_import_sessions as usize {
                self.stats.segments_refused_session_limit += 1;
                if self.cfg.on_import_limit == ImportLimitPolicy::Cancel {
                    self.ctrl.push_back(Out::CancelFromReceiver {
                        session: number,
                        reason: CancelReason::SystemCanceled,
                    });
                    self.stats
                        .import_canceled_locally
                        .add(CancelReason::SystemCanceled);
                }
                return;
            }
            self.imports
                .insert(number, ImportSession::new(d.client_service_id));
            self.stats.import_sessions_started += 1;
        }
        let s = self.imports.get_mut(&number).expect("inserted above");
        if !s.is_active() || s.delivered {
            // Canceled, or whole and waiting for the final RA (ION's acceptRedContent).
            self.stats.redundant_segments_received += 1;
            return;
        }
        // A segment that contradicts what the session already knows ends it (RFC 5326
        // section 6.22: the session cannot go on).
        let end = d.end();
        let inconsistent = d.client_service_id != s.client_service_id
            || end > self.cfg.max_block_size.0
            || s.red_len.is_some_and(|n| end > n || (eorp && end != n))
            || (eorp && s.got.end() > end);
        if inconsistent {
            self.cancel_import(sh, now, number, CancelReason::SystemCanceled, None);
            return;
        }
        if eorp {
            s.red_len = Some(end);
            s.eob |= eob;
        }
        if s.store(d.offset, d.data) == 0 {
            self.stats.redundant_segments_received += 1;
        }
        let checkpoint = d.serials;
        if checkpoint.is_some() {
            self.stats.checkpoints_received += 1;
        }
        let complete = s.complete();
        if checkpoint.is_some() || complete {
            let (cp, rpt) = checkpoint.map_or((0, 0), |c| (c.checkpoint, c.report));
            self.send_report(sh, now, number, cp, rpt, end);
        }
        let Some(s) = self.imports.get_mut(&number).filter(|s| s.is_active()) else {
            return;
        };
        if complete && !s.delivered {
            s.delivered = true;
            let data = Bytes::from(std::mem::take(&mut s.buf));
            s.chunks.clear();
            self.stats.blocks_delivered += 1;
            self.stats.red_bytes_delivered += data.len() as u64;
            sh.events.push_back(Event::RedPartReceived {
                peer: self.peer,
                session: number,
                client_service_id: s.client_service_id,
                data,
                end_of_block: s.eob,
            });
        }
    }

    /// Issues a reception report for a checkpoint (RFC 5326 section 6.11; ION's sendReport).
    fn send_report(
        &mut self,
        sh: &mut Shared,
        now: Time,
        number: u64,
        cp: u64,
        rpt: u64,
        upper: u64,
    ) {
        let max_cycles = {
            let s = &self.imports[&number];
            self.cfg.max_retransmission_cycles.unwrap_or_else(|| {
                derived_max_cycles(
                    s.red_len.unwrap_or(s.got.end()),
                    sh.cfg.max_ber,
                    self.max_recv_segment,
                )
            })
        };
        let mss = self.cfg.max_segment_size.0;
        let session = SessionId {
            originator: self.peer,
            number,
        };
        let s = self.imports.get_mut(&number).expect("caller holds it");
        if s.final_report.is_some() {
            return;
        }
        let next_serial = |s: &mut ImportSession, sh: &mut Shared| {
            s.last_report_serial = if s.last_report_serial == 0 {
                sh.rng.serial()
            } else {
                s.last_report_serial + 1
            };
            s.last_report_serial
        };
        if let Some(red_len) = s.red_len.filter(|_| s.complete()) {
            let serial = next_serial(s, sh);
            s.reports_issued += 1;
            s.final_report = Some(serial);
            s.reports.push(Report {
                serial,
                checkpoint: cp,
                lower: 0,
                upper: red_len,
                claims: vec![Claim {
                    offset: 0,
                    length: red_len,
                }],
                timer: Timer::new(),
                acked: false,
            });
            self.ctrl.push_back(Out::Report {
                session: number,
                serial,
            });
            return;
        }
        if s.reports_issued >= max_cycles {
            self.cancel_import(
                sh,
                now,
                number,
                CancelReason::RetransmissionLimit,
                Some(Limit::Cycles { max: max_cycles }),
            );
            return;
        }
        // A secondary report starts where the report its checkpoint answers started.
        let lower = if rpt != 0 {
            s.reports
                .iter()
                .find(|r| r.serial == rpt)
                .map_or(0, |r| r.lower)
        } else {
            0
        };
        let upper = s.red_len.map_or(upper, |n| upper.min(n));
        if lower >= upper {
            return;
        }
        let claims: Vec<Claim> = s
            .got
            .within(lower, upper)
            .map(|(a, b)| Claim {
                offset: a,
                length: b - a,
            })
            .collect();
        if claims.is_empty() {
            return;
        }
        s.reports_issued += 1;
        // Claims a report segment can hold: at most 20, and what fits the segment size
        // (each SDNV bounded by the report's upper bound).
        let fixed = data_overhead(session, 0, 0, 0, None) - 3
            + 3 * sdnv::len(upper)
            + sdnv::len(cp)
            + sdnv::len(u32::MAX as u64).max(sdnv::len(s.last_report_serial + 64))
            + sdnv::len(MAX_CLAIMS_PER_REPORT as u64);
        let per_claim = 2 * sdnv::len(upper);
        let fit = (mss as usize).saturating_sub(fixed) / per_claim;
        let per_report = fit.clamp(1, MAX_CLAIMS_PER_REPORT);
        let chunks: Vec<&[Claim]> = claims.chunks(per_report).collect();
        let mut rs_lower = lower;
        for (i, chunk) in chunks.iter().enumerate() {
            let rs_upper = chunks.get(i + 1).map_or(upper, |n| n[0].offset);
            let serial = next_serial(s, sh);
            s.reports.push(Report {
                serial,
                checkpoint: cp,
                lower: rs_lower,
                upper: rs_upper,
                claims: chunk.to_vec(),
                timer: Timer::new(),
                acked: false,
            });
            self.ctrl.push_back(Out::Report {
                session: number,
                serial,
            });
            rs_lower = rs_upper;
        }
    }

    /// A report segment's timer ran out (RFC 5326 section 6.8; ION's ltpResendReport).
    pub(crate) fn on_report_timer(
        &mut self,
        sh: &mut Shared,
        now: Time,
        at: Time,
        number: u64,
        serial: u64,
    ) {
        let max = self.max_timeouts;
        let Some(s) = self.imports.get_mut(&number).filter(|s| s.is_active()) else {
            return;
        };
        let Some(r) = s.reports.iter_mut().find(|r| r.serial == serial) else {
            return;
        };
        if r.acked || !r.timer.is_due(at) {
            return;
        }
        r.timer.stop();
        if r.timer.expirations >= max {
            self.cancel_import(
                sh,
                now,
                number,
                CancelReason::RetransmissionLimit,
                Some(Limit::Timeouts { max }),
            );
            return;
        }
        r.timer.expirations += 1;
        self.ctrl.push_back(Out::Report {
            session: number,
            serial,
        });
    }

    /// An RA (RFC 5326 section 6.14; ION's handleRA): the report's timer stops, and the
    /// acknowledgment of the final report of a delivered block closes the session.
    pub(crate) fn on_report_ack(&mut self, now: Time, number: u64, serial: u64) {
        self.stats.report_acks_received += 1;
        let Some(s) = self.imports.get_mut(&number).filter(|s| s.is_active()) else {
            return;
        };
        let Some(r) = s.reports.iter_mut().find(|r| r.serial == serial) else {
            return;
        };
        r.timer.stop();
        r.acked = true;
        if s.final_report == Some(serial) && s.delivered {
            self.imports.remove(&number);
            self.stats.import_sessions_completed += 1;
            self.note_closed_import(now, number);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_order_pieces_join_the_contiguous_buffer_when_the_gap_fills() {
        let mut s = ImportSession::new(1);
        assert_eq!(s.store(4, b"efgh"), 4);
        assert_eq!(s.store(10, b"kl"), 2);
        assert!(s.buf.is_empty());
        assert_eq!(s.store(0, b"abcd"), 4);
        assert_eq!(s.buf, b"abcdefgh");
        // Overlapping and duplicate data: only the new bytes count, the first copy stays.
        assert_eq!(s.store(6, b"XXij"), 2);
        assert_eq!(s.buf, b"abcdefghijkl");
        assert_eq!(s.store(0, b"ZZZZ"), 0);
        assert_eq!(s.buf, b"abcdefghijkl");
        assert!(s.chunks.is_empty());
        s.red_len = Some(12);
        assert!(s.complete());
    }
}
