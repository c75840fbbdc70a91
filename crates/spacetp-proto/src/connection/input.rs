//! A received segment, by state: the RFC 9293 3.10.7 checks in order (RST, SYN, ACK bit,
//! PAWS, window, ACK field; RFC 5961 in `validation.rs`), then the ACK, then the data and FIN.

use super::timer::Timer;
use super::{Accepted, CloseReason, Connection, State};
use crate::seq::from_wire;
use crate::time::Time;
use spacetp_wire::{flags, TcpHeader};

impl Connection {
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
                self.on_segment_listen(hdr);
                None
            }
            State::SynSent => {
                self.on_segment_syn_sent(now, hdr);
                None
            }
            _ => self.on_segment_synchronized(now, hdr, len),
        }
    }

    fn on_segment_synchronized(
        &mut self,
        now: Time,
        hdr: &TcpHeader,
        len: u32,
    ) -> Option<Accepted> {
        let seg_start = self.rx.abs_seq(hdr.seq);
        if !self.segment_acceptable(now, hdr, seg_start, len) {
            return None;
        }
        if self.options.timestamps {
            self.rx
                .ts_recent_from(&hdr.options, seg_start, seg_start + len as u64);
            if let Some(ts) = hdr.options.timestamps {
                self.rx.on_echoed_timestamp(now, ts.ecr, len);
            }
        }
        if len == 0 && !hdr.has(flags::FIN) && seg_start < self.rx.next_expected() {
            // An unacceptable segment (e.g. a zero-window probe): answer with an ACK.
            self.rx.request_ack();
        }
        if hdr.has(flags::CWR) && len > 0 {
            self.rx.answer_nil(); // a Peach+ NIL segment
        }
        self.on_ack(now, hdr, len);
        if self.state == State::Closed {
            return None;
        }
        let fin = hdr.has(flags::FIN);
        if self.scps.agreed.scps && hdr.options.record_boundary && len > 0 {
            self.rx.note_record_end(seg_start + len as u64);
        }
        if len == 0 && !fin {
            return None;
        }
        self.rx.note_rtt(self.rtt.rto(), self.rtt.srtt());
        let (fin_now, taken) =
            self.rx
                .on_data(now, seg_start, len, fin, &mut self.stats, &mut self.timers);
        if fin_now {
            self.on_peer_fin();
        }
        taken.map(|(pos, end)| Accepted {
            pos,
            skip: (pos - seg_start) as u32,
            len: (end - pos) as u32,
        })
    }

    /// RFC 9293 3.10.7.4's first checks, with RFC 5961's answers: false drops the segment
    /// (an RST or SYN is handled here).
    fn segment_acceptable(&mut self, now: Time, hdr: &TcpHeader, start: u64, len: u32) -> bool {
        if hdr.has(flags::RST) {
            self.on_rst(now, start);
            return false;
        }
        if hdr.has(flags::SYN) {
            self.on_syn_when_synchronized(now, start);
            return false;
        }
        if !hdr.has(flags::ACK) {
            return false; // fifth check: no ACK bit, drop
        }
        if self.options.timestamps && self.rx.paws_rejects(&hdr.options) {
            self.stats.paws_rejected += 1;
            self.rx.request_ack(); // RFC 7323 5.3 R1: drop it, send an ACK
            return false;
        }
        !self.beyond_window(now, start, len)
            && self.ack_acceptable(now, from_wire(self.iss, hdr.ack, self.snd_una))
    }

    pub(super) fn on_peer_fin(&mut self) {
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

    pub(super) fn enter_time_wait(&mut self) {
        // The simulator does not wait 2 MSL: the connection is finished, but keeps answering a
        // retransmitted FIN with an ACK.
        self.close_reason.get_or_insert(CloseReason::Normal);
        self.timers.stop(Timer::Rto);
    }
}
