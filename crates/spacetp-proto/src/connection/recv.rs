//! Receive side: reassembly of out-of-order data, the cumulative ACK point, the advertised
//! window and the delayed-ACK policy of RFC 1122 / RFC 5681 section 4.2 (ACK every
//! `ack_every` segments or after `ack_delay`; ACK at once when data arrives out of order, fills
//! a hole, or is a duplicate).

mod bets;
mod linux_ato;
mod sack;
mod timestamps;
mod window;

use super::rcv_autotune::RcvAutotune;
use super::timer::{Timer, TimerTable};
use super::ConnStats;
use crate::config::TcpConfig;
use crate::seq::{from_wire, to_wire};
use crate::time::Time;
use linux_ato::{quick_acks_for, LinuxAto};
use spacetp_wire::{SackBlocks, TcpOptions};

pub(crate) struct Receiver {
    irs: u32,
    /// Next position expected (absolute; 1 = first data byte once the SYN is in).
    rcv_nxt: u64,
    /// Out-of-order ranges `[start, end)`, sorted and disjoint.
    ooo: Vec<(u64, u64)>,
    /// Start positions of the most recent out-of-order arrivals, newest first (RFC 2018: the
    /// first SACK block reports the newest, the others the most recently reported).
    recent: [u64; 8],
    recent_len: usize,
    /// Position of a FIN that arrived before all the data preceding it.
    fin_at: Option<u64>,
    fin_received: bool,
    /// `receive_buffer`: the window's limit without autotuning, its ceiling with it.
    rcv_buf: u64,
    /// Linux receive-buffer autotuning (`receive_autotuning`).
    autotune: Option<RcvAutotune>,
    /// When the latest data arrived (an application read is timed there).
    last_data: Time,
    /// Full-segment size, for the window-update rule.
    mss: u64,
    /// The application reads only when told (`read`); otherwise it reads everything at once.
    manual_read: bool,
    /// Bytes the application has read (manual reading).
    read: u64,
    /// rcv_nxt and window in the last ACK sent (RFC 7323 Last.ACK.sent; window updates).
    last_ack_sent: u64,
    last_adv_window: u64,
    ts_recent_valid: bool,
    ack_every: u32,
    ack_delay: Time,
    /// In-order data segments still to be ACKed at once (`quick_acks` at the start).
    quick_acks_left: u32,
    quick_acks_cap: u32,
    /// Linux's adaptive delayed-ACK timeout (`adaptive_ack_delay`), and the sender side's
    /// RTO and SRTT it is bounded by (`note_rtt`).
    linux_ato: Option<LinuxAto>,
    rto: Time,
    srtt: Option<Time>,
    unacked: u32,
    /// An ACK is due now (a delayed one falls due at the table's `Timer::DelayedAck`).
    ack_now: bool,
    /// The next ACK answers a Peach+ NIL segment (marked ECE).
    nil_ack: bool,
    /// The next ACK carries SCPS-TP's Corruption Experienced option.
    corruption_echo: bool,
    /// SCPS-TP fixed ACK frequency: ACK on this timer, whatever arrives.
    ack_period: Option<Time>,
    /// SCPS-TP BETS: a hole at rcv_nxt is given up after this wait; `hole_since` is when the
    /// current one appeared, `skipped` the bytes given up so far.
    bets_wait: Option<Time>,
    hole_since: Option<Time>,
    skipped: u64,
    /// Record ends announced by the peer (kind 22) beyond rcv_nxt, ascending, and the number
    /// of records whose every byte is in.
    record_ends: Vec<u64>,
    records: u64,
    /// The next record to complete lost bytes to a BETS hole.
    damaged_record: bool,
    /// RFC 7323 TS.Recent: the timestamp our segments echo.
    ts_recent: u32,
    /// RFC 2883 D-SACK: report duplicate segments in the first SACK block of the next ACK.
    dsack: bool,
    pending_dsack: Option<(u64, u64)>,
}

impl Receiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        let autotune = cfg
            .receive_autotuning
            .then(|| RcvAutotune::new(cfg.receive_buffer_initial.0, cfg.receive_buffer.0, 536));
        let rcv_buf = cfg.receive_buffer.0;
        let first_window = autotune.as_ref().map_or(rcv_buf, |a| a.limit());
        Receiver {
            irs: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            recent: [0; 8],
            recent_len: 0,
            fin_at: None,
            fin_received: false,
            rcv_buf,
            autotune,
            last_data: 0,
            mss: 536,
            manual_read: false,
            read: 0,
            last_ack_sent: 0,
            last_adv_window: first_window,
            ts_recent_valid: false,
            ack_every: cfg.ack_every,
            ack_delay: cfg.ack_delay.0,
            quick_acks_left: cfg.quick_acks,
            quick_acks_cap: cfg.quick_acks,
            linux_ato: cfg
                .adaptive_ack_delay
                .then(|| LinuxAto::new(cfg.ack_delay.0)),
            rto: cfg.initial_rto.0,
            srtt: None,
            unacked: 0,
            ack_now: false,
            nil_ack: false,
            corruption_echo: false,
            ack_period: None,
            bets_wait: None,
            hole_since: None,
            skipped: 0,
            record_ends: Vec::new(),
            records: 0,
            damaged_record: false,
            ts_recent: 0,
            dsack: cfg.dsack,
            pending_dsack: None,
        }
    }

    pub fn on_syn(&mut self, seq: u32) {
        self.irs = seq;
        self.rcv_nxt = 1;
    }

    pub fn abs_seq(&self, wire: u32) -> u64 {
        from_wire(self.irs, wire, self.rcv_nxt)
    }

    pub fn wire_ack(&self) -> u32 {
        to_wire(self.irs, self.rcv_nxt)
    }

    pub fn set_ack_period(&mut self, period: Option<Time>) {
        self.ack_period = period;
    }

    pub fn set_bets(&mut self, wait: Option<Time>) {
        self.bets_wait = wait;
    }

    pub fn set_mss(&mut self, mss: u64) {
        self.mss = mss.max(1);
        if let Some(a) = &mut self.autotune {
            a.set_mss(self.mss);
            self.last_adv_window = a.limit();
        }
    }

    pub fn next_expected(&self) -> u64 {
        self.rcv_nxt
    }

    /// Out-of-order ranges sorted, disjoint and above rcv_nxt; reading never ahead of what
    /// arrived (a fuzzing invariant).
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut last = self.rcv_nxt;
        for &(a, b) in &self.ooo {
            if a >= b || a <= last {
                return Err(format!("out-of-order range [{a}, {b}) after {last}"));
            }
            last = b;
        }
        if self.manual_read && self.read > self.received() {
            return Err(format!("read {} > received {}", self.read, self.received()));
        }
        Ok(())
    }

    /// Send an ACK with the next segment, whatever the delayed-ACK policy says.
    pub fn request_ack(&mut self) {
        self.ack_now = true;
    }

    /// Whether an ACK is due now.
    pub fn ack_due(&self) -> bool {
        self.ack_now
    }

    /// The connection's RTO and SRTT, which bound Linux's delayed-ACK timeout.
    pub fn note_rtt(&mut self, rto: Time, srtt: Option<Time>) {
        (self.rto, self.srtt) = (rto, srtt);
    }

    /// How long a delayed ACK waits: `ack_delay`, or Linux's adaptive timeout.
    fn delayed_ack_wait(&self) -> Time {
        self.linux_ato
            .as_ref()
            .map_or(self.ack_delay, |a| a.delay(self.srtt))
    }

    /// The delayed-ACK timer fired (the table stopped it): the ACK is due now.
    pub fn on_delayed_ack_timer(&mut self) {
        if let Some(a) = &mut self.linux_ato {
            a.on_timer(self.rto);
        }
        self.ack_now = true;
    }

    /// A TCP-Peach+ NIL segment arrived: answer it at once, marked ECE.
    pub fn answer_nil(&mut self) {
        self.nil_ack = true;
        self.ack_now = true;
    }

    /// Whether the next ACK answers a NIL segment.
    pub fn nil_ack(&self) -> bool {
        self.nil_ack
    }

    /// Our link layer dropped a corrupted packet: the next ACK (sent now) echoes it with
    /// SCPS-TP's Corruption Experienced option.
    pub fn echo_corruption(&mut self) {
        self.corruption_echo = true;
        self.ack_now = true;
    }

    /// Whether the next ACK carries Corruption Experienced.
    pub fn corruption_echo(&self) -> bool {
        self.corruption_echo
    }

    pub fn on_ack_sent(&mut self, timers: &mut TimerTable) {
        self.pending_dsack = None;
        self.ack_now = false;
        self.nil_ack = false;
        self.corruption_echo = false;
        self.unacked = 0;
        timers.stop(Timer::DelayedAck);
        self.last_ack_sent = self.rcv_nxt;
        self.last_adv_window = self.window();
    }

    /// Data `[start, start+len)` and maybe a FIN arrived. Returns whether the FIN is consumed
    /// now (all data before it is in), and the range `[from, to)` of the data taken in (the
    /// part inside the window and not yet received in order), if any. Arms the delayed ACK
    /// and BETS timers in `timers`.
    #[inline]
    pub fn on_data(
        &mut self,
        now: Time,
        start: u64,
        len: u32,
        fin: bool,
        stats: &mut ConnStats,
        timers: &mut TimerTable,
    ) -> (bool, Option<(u64, u64)>) {
        let acked_already = self.ack_now;
        let before = self.rcv_nxt;
        let (fin_now, taken) = self.on_data_inner(now, start, len, fin, stats, timers);
        self.last_data = now;
        if !self.manual_read && self.autotune.is_some() && self.rcv_nxt != before {
            self.autotune_after_read(now);
        }
        self.complete_records();
        if self.bets_wait.is_some() {
            // A hole's age counts from when data first waited beyond it at this rcv_nxt.
            if self.beyond_hole().is_none() {
                self.hole_since = None;
            } else if self.hole_since.is_none() || self.rcv_nxt != before {
                self.hole_since = Some(now);
            }
            timers.put(Timer::Bets, self.bets_deadline());
        }
        if let Some(p) = self.ack_period {
            // SCPS-TP fixed ACK frequency: out-of-order and duplicate data wait for the timer
            // too; only the FIN is answered at once.
            self.ack_now = acked_already || fin_now;
            timers.set_earliest(Timer::DelayedAck, now + p);
        }
        (fin_now, taken)
    }

    fn on_data_inner(
        &mut self,
        now: Time,
        start: u64,
        len: u32,
        fin: bool,
        stats: &mut ConnStats,
        timers: &mut TimerTable,
    ) -> (bool, Option<(u64, u64)>) {
        let mut end = start + len as u64;
        // Accept nothing beyond the right edge of the window, nor beyond the peer's FIN
        // once one arrived (RFC 9293 3.10.7.4: after a FIN, segment text is ignored): the
        // stream ends there, and the first FIN's position stands.
        let right_edge = self.rcv_nxt + self.window();
        // RFC 9293 3.10.7.4: a FIN occupies the sequence number after its data; one below
        // rcv_nxt is old (a stale or forged segment): dropped, acknowledged, never taken
        // as the stream's end. Once the FIN is in, only the same FIN again is answered.
        let old_fin = fin && self.fin_at.is_none() && end < self.rcv_nxt;
        if old_fin {
            stats.old_fins += 1;
            self.ack_now = true;
        }
        let fin = fin && !old_fin && end <= right_edge && self.fin_at.is_none_or(|f| f == end);
        end = end.min(right_edge).min(self.fin_at.unwrap_or(u64::MAX));
        if fin && !self.fin_received {
            self.fin_at = Some(end);
            // Out-of-order data that claimed to lie beyond the end of the stream never will.
            self.ooo.retain_mut(|r| {
                r.1 = r.1.min(end);
                r.0 < r.1
            });
        }
        let mut taken = None;
        if len > 0 {
            if end <= self.rcv_nxt || end <= start {
                // Old data, or data wholly beyond the FIN: nothing new.
                stats.duplicate_segments += 1;
                self.ack_now = true;
                if end > start {
                    self.note_duplicate(start, end);
                }
            } else if start > self.rcv_nxt {
                if self.ooo.iter().any(|&(s, e)| s <= start && end <= e) {
                    self.note_duplicate(start, end);
                }
                stats.out_of_order_segments += 1;
                self.insert_ooo(start, end);
                self.note_recent(start);
                self.ack_now = true;
                taken = Some((start, end));
            } else {
                taken = Some((self.rcv_nxt, end));
                let filled_hole = !self.ooo.is_empty();
                self.rcv_nxt = end;
                self.absorb_ooo();
                let window_grew = self.autotune_on_data(now, len);
                self.ato_on_in_order_data(now);
                if filled_hole {
                    self.ack_now = true;
                } else if self.quick_acks_left > 0 {
                    self.quick_acks_left -= 1;
                    if self.quick_acks_left == 0 {
                        self.linux_ato.as_mut().map(LinuxAto::on_quick_acks_done);
                    }
                    self.ack_now = true;
                } else if window_grew {
                    // Linux ACKs at once while its window opens (tcp_grow_window).
                    self.ack_now = true;
                } else {
                    self.unacked += 1;
                    if self.unacked >= self.ack_every {
                        self.ack_now = true;
                    } else if !timers.is_armed(Timer::DelayedAck) {
                        timers.set(Timer::DelayedAck, now + self.delayed_ack_wait());
                    }
                }
            }
        } else if fin && self.fin_received {
            self.ack_now = true; // retransmitted FIN: our ACK of it was lost
        }
        (self.consume_fin(), taken)
    }

    /// Linux's ATO on in-order data: after the sender idled longer than an RTO, quick ACKs
    /// again.
    fn ato_on_in_order_data(&mut self, now: Time) {
        let Some(a) = &mut self.linux_ato else { return };
        if a.on_in_order_data(now, self.rto) {
            let n = quick_acks_for(self.window(), self.mss, self.quick_acks_cap);
            self.quick_acks_left = self.quick_acks_left.max(n);
        }
    }

    /// Takes in a FIN that all data before it has reached. Returns true if it did.
    fn consume_fin(&mut self) -> bool {
        if !self.fin_received && self.fin_at == Some(self.rcv_nxt) {
            self.fin_received = true;
            self.rcv_nxt += 1;
            self.ack_now = true;
            return true;
        }
        false
    }
}

#[cfg(test)]
#[path = "recv_tests.rs"]
mod tests;
