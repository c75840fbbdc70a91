//! The connection's timers: one enum and one table, so that `poll_timeout` is the earliest
//! deadline of all and `on_timeout` fires each due timer, in the order of [`Timer::ALL`].

use super::recovery::LossRecovery;
use super::{Connection, State};
use crate::time::Time;

/// Every timer a connection runs, declared in the order in which timers due at the same
/// instant fire (the table is indexed by it, so that the due ones are found in one pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timer {
    /// The receiver's delayed ACK (RFC 1122 4.2.3.2) or SCPS-TP's fixed ACK period.
    DelayedAck,
    /// RFC 8985 tail loss probe. A probe due with the RTO goes first (RFC 8985 7.2 caps
    /// PTO at the RTO's expiry) and restarts it.
    Tlp,
    /// RFC 6298 retransmission timeout (the SYN's during the handshake).
    Rto,
    /// RFC 8985 RACK reordering timer: a segment's reordering window ends.
    RackReorder,
    /// SCPS-TP BETS: the hole at rcv_nxt is given up.
    Bets,
    /// The next NIL segment of a TCP-Peach+ burst.
    Peach,
    /// SCPS-TP rate control lets held-back data go.
    Pace,
    /// A probe in SCPS-TP link-outage persist mode.
    OutageProbe,
    /// A zero-window probe (RFC 9293 3.8.6.1).
    Persist,
}

impl Timer {
    /// Every timer, in firing order (their declaration order).
    pub const ALL: [Timer; 9] = [
        Timer::DelayedAck,
        Timer::Tlp,
        Timer::Rto,
        Timer::RackReorder,
        Timer::Bets,
        Timer::Peach,
        Timer::Pace,
        Timer::OutageProbe,
        Timer::Persist,
    ];
}

/// Every timer's deadline. The parts that own a timer's state (the receiver's delayed ACK
/// and BETS, TCP-Peach+'s burst) are handed the table to arm and stop theirs.
///
/// A stopped timer holds `UNARMED` rather than None: the earliest deadline, asked after
/// every event, is then a plain minimum over the array (no branch per timer). A deadline
/// is kept below `UNARMED`, so every armed timer stays armed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TimerTable([Time; Timer::ALL.len()]);

const UNARMED: Time = Time::MAX;

impl Default for TimerTable {
    fn default() -> Self {
        TimerTable([UNARMED; Timer::ALL.len()])
    }
}

impl TimerTable {
    pub fn get(&self, t: Timer) -> Option<Time> {
        let d = self.0[t as usize];
        (d != UNARMED).then_some(d)
    }

    pub fn set(&mut self, t: Timer, at: Time) {
        self.0[t as usize] = at.min(UNARMED - 1);
    }

    /// Arm `t` at `at`, or stop it (None).
    pub fn put(&mut self, t: Timer, at: Option<Time>) {
        match at {
            Some(at) => self.set(t, at),
            None => self.stop(t),
        }
    }

    /// Arm `t` at `at` unless it is armed already.
    pub fn set_if_idle(&mut self, t: Timer, at: Time) {
        if !self.is_armed(t) {
            self.set(t, at);
        }
    }

    /// Arm `t` at `at`, or keep its deadline if that is earlier.
    pub fn set_earliest(&mut self, t: Timer, at: Time) {
        let slot = &mut self.0[t as usize];
        *slot = (*slot).min(at.min(UNARMED - 1));
    }

    pub fn stop(&mut self, t: Timer) {
        self.0[t as usize] = UNARMED;
    }

    pub fn is_armed(&self, t: Timer) -> bool {
        self.0[t as usize] != UNARMED
    }

    /// The timers due at `now`, from the `from`-th of [`Timer::ALL`] on: bit i for the
    /// i-th (the table's order is `ALL`'s). Branch-free, so that a wake-up finds its one due
    /// timer without testing each in turn.
    fn due_from(&self, now: Time, from: u32) -> u32 {
        let due = self
            .0
            .iter()
            .enumerate()
            .fold(0u32, |m, (i, &d)| m | ((d <= now) as u32) << i);
        due >> from << from
    }

    /// The earliest deadline in the table.
    pub fn earliest(&self) -> Option<Time> {
        let d = self.0.iter().fold(UNARMED, |m, &d| m.min(d));
        (d != UNARMED).then_some(d)
    }
}

impl Connection {
    /// The earliest time at which `on_timeout` has work to do.
    pub fn poll_timeout(&self) -> Option<Time> {
        if self.state == State::Closed {
            return None;
        }
        self.timers.earliest()
    }

    /// A driver's deadline from `poll_timeout` came: `on_timeout`, unless the connection
    /// closed since (then `poll_timeout` has none). What `poll_timeout() <= now` before
    /// `on_timeout` would do, without finding the earliest deadline first (`on_timeout`
    /// fires only what is due).
    pub fn on_deadline(&mut self, now: Time) {
        if self.state != State::Closed {
            self.on_timeout(now);
        }
    }

    /// Handle every timer due at `now`, in the order of [`Timer::ALL`]; one that a firing
    /// timer arms for `now` fires in its turn too, if it comes later in that order.
    pub fn on_timeout(&mut self, now: Time) {
        let mut from = 0;
        loop {
            let due = self.timers.due_from(now, from);
            if due == 0 {
                return;
            }
            let i = due.trailing_zeros();
            self.fire(Timer::ALL[i as usize], now);
            from = i + 1;
        }
    }

    fn fire(&mut self, t: Timer, now: Time) {
        match t {
            Timer::DelayedAck => {
                self.timers.stop(Timer::DelayedAck);
                self.rx.note_rtt(self.rtt.rto(), self.rtt.srtt());
                self.rx.on_delayed_ack_timer()
            }
            Timer::Rto => self.on_rto(now),
            Timer::RackReorder => self.on_rack_timer(now),
            Timer::Tlp => self.on_tlp_timer(now),
            Timer::Bets => {
                self.timers.stop(Timer::Bets);
                if self.rx.give_up_hole(now, &mut self.stats, &mut self.timers) {
                    self.on_peer_fin();
                }
            }
            Timer::Peach => {
                self.timers.stop(Timer::Peach);
                if let Some(p) = &mut self.peach {
                    p.on_timer(now, &mut self.timers);
                }
            }
            Timer::Pace => self.timers.stop(Timer::Pace),
            Timer::OutageProbe => {
                self.probe_pending = true;
                let next = now + self.outage_probe_interval();
                self.timers.set(Timer::OutageProbe, next);
            }
            Timer::Persist => {
                self.probe_pending = true;
                self.persist_backoff += 1;
                let next = now + self.persist_interval();
                self.timers.set(Timer::Persist, next);
            }
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
    pub(super) fn update_persist(&mut self, now: Time) {
        let stalled = matches!(self.state, State::Established | State::CloseWait)
            && self.snd_max == self.snd_una
            && self.snd_nxt < self.data_end
            && self.snd_una + self.snd_wnd <= self.snd_nxt;
        if !stalled {
            self.timers.stop(Timer::Persist);
            self.persist_backoff = 0;
        } else if !self.timers.is_armed(Timer::Persist) {
            let at = now + self.persist_interval();
            self.timers.set(Timer::Persist, at);
        }
    }

    fn on_rto(&mut self, now: Time) {
        self.timers.stop(Timer::Rto);
        self.retries += 1;
        let handshake = matches!(self.state, State::SynSent | State::SynReceived);
        if self.retries > self.retry_limit(handshake) {
            self.abort(if handshake {
                super::CloseReason::HandshakeTimeout
            } else {
                super::CloseReason::RetransmissionTimeout
            });
            return;
        }
        self.stats.timeouts += 1;
        self.sent.stop_timing();
        if !handshake && self.corruption(now) {
            // SCPS-TP corruption: resend the first hole, keep the window and the timer.
            self.stats.corruption_timeouts += 1;
            self.resend.push_front(self.snd_una);
            self.timers.set(Timer::Rto, now + self.rtt.rto());
            return;
        }
        self.rtt.back_off();
        if handshake {
            self.syn_pending = true;
            self.syn_retransmitted = true;
            self.timers.set(Timer::Rto, now + self.handshake_rto());
        } else {
            let flight = self.snd_max - self.snd_una;
            self.note_timeout_for_undo(now);
            self.cc.on_timeout(&mut self.win, flight, now);
            self.recovery.on_timeout(self.snd_max);
            if let Some(r) = &mut self.rack {
                r.on_timeout();
                self.timers.stop(Timer::Tlp);
                self.timers.stop(Timer::RackReorder);
            }
            if let Some(ctl) = &mut self.control {
                ctl.on_timeout(self.snd_max);
            }
            self.dupacks = 0;
            // Go back N: everything after snd_una is sent again under slow start.
            self.snd_nxt = self.snd_una;
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        }
    }

    /// Timeouts of the same data (or of the SYN) after which the connection aborts.
    fn retry_limit(&self, handshake: bool) -> u32 {
        if handshake {
            self.cfg.syn_retries
        } else {
            self.cfg.max_retries
        }
    }

    /// The SYN's (or SYN-ACK's) timeout: `syn_rto` doubled per timeout so far when set
    /// (ns-3's ConnTimeout, Linux's 1 s), else the RTO before any sample.
    pub(super) fn handshake_rto(&self) -> Time {
        match self.cfg.syn_rto {
            Some(d) => d.0.saturating_mul(1 << self.retries.min(30)),
            None => self.rtt.rto(),
        }
    }

    pub(super) fn restart_rto(&mut self, now: Time) {
        // In SCPS-TP persist mode the timer stays suspended until the link is back.
        if self.snd_max > self.snd_una && !self.scps.in_outage {
            self.timers.set(Timer::Rto, now + self.rtt.rto());
        } else {
            self.timers.stop(Timer::Rto);
        }
    }

    /// Start the retransmission timer for what was just sent, unless it runs already.
    pub(super) fn arm_rto(&mut self, now: Time) {
        let at = now + self.rtt.rto();
        self.timers.set_if_idle(Timer::Rto, at);
    }
}

#[cfg(test)]
mod table_tests {
    use super::*;

    #[test]
    fn the_earliest_deadline_is_the_smallest_armed_one_and_none_when_all_are_stopped() {
        let mut t = TimerTable::default();
        assert_eq!(t.earliest(), None);
        t.set(Timer::Rto, 500);
        t.set(Timer::Persist, 300);
        t.set_if_idle(Timer::Rto, 100); // armed already: kept
        assert_eq!((t.get(Timer::Rto), t.earliest()), (Some(500), Some(300)));
        t.set_earliest(Timer::Rto, 200);
        t.set_earliest(Timer::Tlp, 900);
        assert_eq!(
            (t.get(Timer::Rto), t.get(Timer::Tlp)),
            (Some(200), Some(900))
        );
        assert_eq!(t.earliest(), Some(200));
        t.stop(Timer::Rto);
        t.put(Timer::Persist, None);
        assert_eq!((t.get(Timer::Rto), t.earliest()), (None, Some(900)));
        t.stop(Timer::Tlp);
        assert_eq!(t.earliest(), None);
    }

    #[test]
    fn a_timer_armed_at_the_end_of_time_stays_armed() {
        let mut t = TimerTable::default();
        t.set(Timer::Bets, Time::MAX);
        assert!(t.is_armed(Timer::Bets));
        assert_eq!(t.earliest(), Some(Time::MAX - 1));
        t.put(Timer::Peach, Some(Time::MAX));
        t.set_if_idle(Timer::Peach, 5); // armed: kept
        assert_eq!(t.get(Timer::Peach), Some(Time::MAX - 1));
    }

    #[test]
    fn the_table_is_indexed_in_firing_order() {
        for (i, t) in Timer::ALL.into_iter().enumerate() {
            assert_eq!(t as usize, i, "{t:?}");
        }
    }

    #[test]
    fn due_timers_are_those_at_or_before_now_from_the_given_one_on() {
        let mut table = TimerTable::default();
        assert_eq!(table.due_from(5, 0), 0, "nothing armed, nothing due");
        table.set(Timer::Rto, 5);
        table.set(Timer::Pace, 3);
        table.set(Timer::Persist, 6);
        let bit = |t: Timer| 1u32 << t as u32;
        assert_eq!(table.due_from(5, 0), bit(Timer::Rto) | bit(Timer::Pace));
        assert_eq!(table.due_from(5, Timer::Rto as u32 + 1), bit(Timer::Pace));
        assert_eq!(table.due_from(2, 0), 0);
        table.stop(Timer::Pace);
        assert_eq!(
            table.due_from(u64::MAX - 1, 0),
            bit(Timer::Rto) | bit(Timer::Persist)
        );
    }
}
