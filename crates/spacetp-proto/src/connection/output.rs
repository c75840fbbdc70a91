//! What to send next, in order of priority: an RST, the SYN, segments due for resending
//! (SNACK, corruption, restored link), the recovery policy's retransmission, a TCP-Peach+
//! NIL segment, new data (or the FIN), a probe, an ACK. Then the headers and their options.

use super::recovery::LossRecovery;
use super::{scps, Connection, Sent, State, Transmit};
use crate::seq::to_wire;
use crate::time::{Time, MS};
use spacetp_wire::{flags, TcpHeader, TcpOptions, Timestamps};

/// What rate control charges a segment for its headers (about an IPv4 + TCP header with
/// options), beside its payload.
pub(super) const RATE_HEADER_BYTES: u64 = 52;

impl Connection {
    /// The next segment to send at `now`, if any. Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        let mut hdr = TcpHeader::default();
        let s = self.poll_transmit_into(now, &mut hdr)?;
        Some(Transmit {
            hdr,
            len: s.len,
            pos: s.pos,
            retransmission: s.retransmission,
            low_priority: s.low_priority,
        })
    }

    /// As `poll_transmit`, writing the header into `out` (a driver's packet buffer, which
    /// spares copying it): what else was sent is returned. `out` is rewritten whole; on
    /// `None` it holds nothing of use.
    pub fn poll_transmit_into(&mut self, now: Time, out: &mut TcpHeader) -> Option<Sent> {
        if let Some(pos) = self.rst_at.take() {
            self.header(out, flags::RST | flags::ACK, pos, now);
            out.window = 0;
            return Some(self.emit(out, 0, pos, false));
        }
        match self.state {
            State::Closed | State::Listen => return None,
            State::SynSent | State::SynReceived if self.syn_pending => {
                return Some(self.transmit_syn(now, out));
            }
            State::SynSent => return None,
            _ => {}
        }
        if let Some(t) = self.transmit_due_resend(now, out) {
            return Some(t);
        }
        if let Some(probe) = self.rack.as_mut().and_then(|r| r.due_probe.take()) {
            if let Some(t) = self.transmit_probe(now, probe, out) {
                return Some(t);
            }
        }
        let seg_bytes = self.seg_size as u64 + RATE_HEADER_BYTES;
        let data_ok = !self.scps.in_outage
            && self.resend.is_empty()
            && self.rate_check(now, seg_bytes, false)
            && self.pacing_allows(now);
        if let Some(t) = self.transmit_recovery(now, data_ok, out) {
            return Some(t);
        }
        if data_ok && self.peach.as_ref().is_some_and(|p| p.pending) {
            return Some(self.transmit_nil(now, out));
        }
        if data_ok {
            if let Some(t) = self.transmit_new(now, out) {
                if let Some(b) = &mut self.scps.bucket {
                    let _ = b.take(now, t.len as u64 + RATE_HEADER_BYTES);
                }
                return Some(t);
            }
        }
        self.transmit_control(now, out)
    }

    /// The first segment queued for resending at once, when rate control lets it go.
    fn transmit_due_resend(&mut self, now: Time, out: &mut TcpHeader) -> Option<Sent> {
        let seg_bytes = self.seg_size as u64 + RATE_HEADER_BYTES;
        while let Some((pos, snacked)) = self
            .resend
            .front()
            .filter(|_| !self.scps.in_outage && self.pacing_allows(now))
        {
            if pos < self.snd_una || pos >= self.snd_max {
                self.resend.pop_front();
                continue;
            }
            if !self.departure_takes(now, pos) || !self.rate_check(now, seg_bytes, true) {
                break;
            }
            self.resend.pop_front();
            self.resend.record(pos, now);
            // Held-back retransmissions of loss recovery wait here too: only a SNACK's count.
            self.stats.snack_retransmits += snacked as u64;
            let t = self.transmit_from(pos, now, out);
            self.recovery.on_retransmit(pos, pos + t.len as u64);
            if self.rack.is_some() && pos == self.snd_una {
                self.restart_rto(now); // as transmit_recovery: RACK watches retransmissions
            }
            return Some(t);
        }
        None
    }

    /// RFC 8985 7.3: a loss probe, one new segment beyond cwnd (`None`) or the last one
    /// again.
    fn transmit_probe(
        &mut self,
        now: Time,
        probe: Option<u64>,
        out: &mut TcpHeader,
    ) -> Option<Sent> {
        let pos = probe.unwrap_or(self.snd_nxt);
        if pos >= self.data_end.max(self.fin_pos().map_or(0, |f| f + 1)) || pos < self.snd_una {
            return None;
        }
        let retransmission = pos < self.snd_max;
        let t = self.transmit_from(pos, now, out);
        if retransmission {
            self.recovery.on_retransmit(pos, pos + t.len as u64);
        }
        self.on_probe_sent(now, retransmission);
        Some(t)
    }

    /// The loss-recovery policy's next retransmission, unless that segment went out again
    /// less than a round trip ago; held for later when rate control says wait.
    fn transmit_recovery(&mut self, now: Time, data_ok: bool, out: &mut TcpHeader) -> Option<Sent> {
        if !self.recovery.may_retransmit() {
            return None;
        }
        let (recovery, ctx) = self.recovery_ctx(now);
        let pos = recovery.next_retransmission(&ctx)?;
        // A position the policy chose on an earlier ACK may be acknowledged by now (a later
        // ACK of the same burst): resending it would send bytes the sender has released.
        if pos < self.snd_una || pos >= self.snd_max || self.resent_recently(pos, now) {
            return None;
        }
        let seg_bytes = self.seg_size as u64 + RATE_HEADER_BYTES;
        if data_ok && self.departure_takes(now, pos) && self.rate_check(now, seg_bytes, true) {
            let t = self.transmit_from(pos, now, out);
            self.recovery.on_retransmit(pos, pos + t.len as u64);
            if self.rack.is_some() && pos == self.snd_una {
                // Linux re-arms the RTO when it resends the head of the queue
                // (`tcp_xmit_retransmit_queue`): RACK, not the RTO, watches retransmissions.
                self.restart_rto(now);
            }
            return Some(t);
        }
        // Keep it for when the rate allows. Until then every poll (each ACK that arrives
        // before the departure time) asks recovery again and gets the same segment, still
        // lost and not resent: the queue keeps one copy, so it goes out once.
        self.resend.push_front(pos);
        None
    }

    /// Whether the segment at `pos` was resent from the queue less than one round trip ago.
    fn resent_recently(&self, pos: u64, now: Time) -> bool {
        self.resend.resent_within(pos, now, self.resend_window())
    }

    /// A segment resent less than this ago is not resent again: one round trip (the RTO
    /// stands in before the first RTT sample).
    pub(super) fn resend_window(&self) -> Time {
        self.rtt.srtt().unwrap_or(self.rtt.rto())
    }

    /// A probe (zero-window persist, keepalive, link outage) or a pure ACK, when one is due.
    fn transmit_control(&mut self, now: Time, out: &mut TcpHeader) -> Option<Sent> {
        if self.probe_pending {
            // Linux-style probe: an empty segment one byte below snd_una, which the peer must
            // answer with an ACK carrying its current window.
            self.probe_pending = false;
            self.stats.persist_probes += 1;
            self.header(out, flags::ACK, self.snd_una - 1, now);
            return Some(self.emit(out, 0, self.snd_una - 1, false));
        }
        if self.rx.ack_due() {
            self.header(out, flags::ACK, self.snd_nxt, now);
            self.stats.pure_acks_sent += 1;
            return Some(self.emit(out, 0, self.snd_nxt, false));
        }
        self.update_persist(now);
        None
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
        let flight = self.recovery_flight(now);
        let cwnd_room = (self.win.cwnd + lt).saturating_sub(flight);
        let rwnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        cwnd_room.min(rwnd_room)
    }

    fn transmit_new(&mut self, now: Time, out: &mut TcpHeader) -> Option<Sent> {
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
            if room == 0 || self.tso_defers(now, room) {
                return None; // the windows are full, or Linux waits to send a fuller packet
            }
            if !self.departure_takes(now, self.snd_nxt) {
                return None; // the departure under way carries another range
            }
            let sacked_at = self.board.next_sacked(self.snd_nxt);
            let record_end = self.record_end_after(self.snd_nxt).unwrap_or(u64::MAX);
            let avail = self.data_end.min(sacked_at).min(record_end) - self.snd_nxt;
            let len = avail.min(self.seg_size as u64).min(room);
            // Sender-side silly window avoidance (RFC 1122 4.2.3.4): a short segment only when
            // it ends the data or fills half the largest window the peer ever offered.
            let big = len == self.seg_size as u64 || len == avail || 2 * len >= self.max_snd_wnd;
            return (len > 0 && big).then(|| self.transmit_from(self.snd_nxt, now, out));
        }
        if self.rate.is_some() && self.fin_pos().is_none() && room > 0 {
            // Nothing to send while the windows would allow it (draft-cheng 3.4).
            let flight = self.snd_max - self.snd_una;
            if let Some(rate) = &mut self.rate {
                rate.on_app_limited(flight);
            }
        }
        let fin = self.fin_pos().filter(|&f| f == self.snd_nxt)?;
        self.departure_takes(now, fin)
            .then(|| self.transmit_from(fin, now, out))
    }

    /// Send the segment that starts at `pos` (data, possibly with the FIN), stopping short of
    /// anything the peer has SACKed.
    pub(super) fn transmit_from(&mut self, pos: u64, now: Time, out: &mut TcpHeader) -> Sent {
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
        if self.rate.is_some() {
            // What recovery counts in flight, with this segment (`P.tx_in_flight`), and the
            // bytes deemed lost so far (`P.lost`), a retransmission counting itself (it is
            // counted below): BBRv3 judges loss rates from them.
            let pipe = self.recovery_flight(now) + (seg_end - pos);
            let lost = self.stats.retransmitted_bytes + if retx { len as u64 } else { 0 };
            let at_send = (pipe, lost);
            let outstanding = self.snd_max - self.snd_una;
            if let Some(rate) = &mut self.rate {
                rate.on_sent(pos, seg_end, now, outstanding, at_send);
            }
        }
        if self.pacing.is_some() {
            self.pace(now, pos, len, retx);
        }
        if let (Some(r), true) = (&mut self.rack, self.options.sack) {
            // The data only: SACK blocks never cover a FIN. Without SACK (the peer did not
            // permit it) RACK is idle and nothing would ever remove what it recorded.
            r.on_sent(pos, end, now, retx);
        }
        if retx {
            self.stats.retransmitted_segments += 1;
            self.stats.retransmitted_bytes += len as u64;
            self.sent.on_resent(pos, seg_end);
        } else if len > 0 {
            self.sent.on_sent(pos, seg_end, now);
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
        self.arm_rto(now);
        if self.rack.is_some() && !retx && len > 0 {
            self.arm_tlp(now);
        }
        let record_boundary = len > 0 && record_end == Some(end);
        self.header_with(out, fl, pos, now, record_boundary);
        self.emit(out, len, pos, retx)
    }

    pub(super) fn header(&self, out: &mut TcpHeader, fl: u8, pos: u64, now: Time) {
        self.header_with(out, fl, pos, now, false)
    }

    /// A header; `record_boundary` marks a segment that ends an application record.
    fn header_with(&self, h: &mut TcpHeader, fl: u8, pos: u64, now: Time, record_boundary: bool) {
        *h = TcpHeader {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: to_wire(self.iss, pos),
            ack: 0,
            flags: fl,
            window: 0,
            urgent: 0,
            options: TcpOptions::default(),
        };
        let ack = fl & flags::ACK != 0;
        if ack {
            if self.rx.nil_ack() && fl & flags::CWR == 0 {
                h.flags |= flags::ECE;
            }
            h.ack = self.rx.wire_ack();
            h.window = (self.rx.window() >> self.options.rcv_wscale).min(65535) as u16;
        }
        if self.options.timestamps {
            h.options.timestamps = Some(Timestamps {
                val: ts_clock(now),
                ecr: self.rx.ts_recent(),
            });
        }
        if self.options.sack && ack {
            // RFC 2018: 4 blocks fit beside no other option, 3 beside timestamps.
            let max = if self.options.timestamps { 3 } else { 4 };
            self.rx.sack_blocks(max, &mut h.options.sack);
        }
        if self.scps.agreed.scps && ack && self.rx.corruption_echo() {
            h.options.corruption_experienced = true;
        }
        h.options.record_boundary = record_boundary;
        if self.scps.agreed.snack && ack {
            self.add_snacks(&mut h.options);
        }
    }

    /// SCPS-TP SNACK options naming the receiver's holes, in the option space left.
    fn add_snacks(&self, o: &mut TcpOptions) {
        let mut holes = [(0u64, 0u64); 16];
        let n = self.rx.holes(&mut holes);
        if n > 0 {
            let room = 40 - o.raw_len();
            let seg = self.payload_of(self.peer_mss);
            o.snacks = scps::snacks_for(
                &holes[..n],
                self.rx.next_expected(),
                seg,
                self.scps.agreed.snack_bitvector,
                room,
            );
        }
    }

    pub(super) fn emit(&mut self, hdr: &TcpHeader, len: u32, pos: u64, retx: bool) -> Sent {
        self.stats.segments_sent += 1;
        if len > 0 {
            self.recovery.on_data_sent(len as u64);
            self.stats.data_segments_sent += 1;
            self.stats.payload_bytes_sent += len as u64;
        }
        if hdr.has(flags::ACK) {
            self.rx.on_ack_sent(&mut self.timers);
        }
        Sent {
            len,
            pos,
            retransmission: retx,
            low_priority: false,
        }
    }
}

/// The timestamp clock ticks in milliseconds (RFC 7323 allows 1 ms to 1 s per tick).
pub(super) fn ts_clock(now: Time) -> u32 {
    (now / MS) as u32
}
