//! cfdp-rs's timers on a clock the caller sets. The handlers ask a countdown only whether
//! it has expired; here every countdown also writes its expiry in a shared book, so the
//! caller knows when to call the handlers next (the earliest expiry still ahead), and the
//! book counts each countdown's expiry once per run of it (the summary's timer expiries).
//! The clock can be held: a suspended transaction's timers do not run (727.0-B-5 4.6.7:
//! suspension halts transmission and suspends the timers), and resume where they stopped.

use cfdp::time::Countdown;
use cfdp::{TimerContext, TimerCreator};
use spacetp_proto::Time;
use std::sync::{Arc, Mutex};

/// What a countdown is for, as the summary counts expiries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKind {
    CheckLimit,
    Nak,
    PositiveAck,
    /// The transaction inactivity limit (727.0-B-5 4.6.5.3), kept by this crate.
    Inactivity,
}

#[derive(Debug, Default)]
struct Book {
    /// Nanoseconds the timers have run (the simulation's time, less suspensions).
    now: Time,
    /// Time spent suspended so far, and since when it is suspended now.
    held: Time,
    suspended_since: Option<Time>,
    suspensions: u64,
    /// Each countdown's expiry (by its index), None once it expired or was dropped.
    expiries: Vec<Option<(Time, TimerKind)>>,
    expired: [u64; 4],
}

/// The clock and the expiry book every countdown of one entity shares.
#[derive(Clone, Debug, Default)]
pub struct Timers {
    book: Arc<Mutex<Book>>,
    /// The check-limit timer's period (CFDP 4.6.3.2: the wait for a file's missing data
    /// after EOF in class 1), in ns.
    pub check_limit_period: Time,
}

impl Timers {
    pub fn new(check_limit_period: Time) -> Timers {
        Timers {
            book: Arc::default(),
            check_limit_period,
        }
    }

    /// The caller's time is `now`: the timers' is that less the time spent suspended
    /// (never back).
    pub fn set_now(&self, now: Time) {
        let mut b = self.book.lock().expect("timer book");
        let t = b.suspended_since.unwrap_or(now).saturating_sub(b.held);
        b.now = b.now.max(t);
    }

    /// Hold the timers from `now` (a second call while held does nothing).
    pub fn suspend(&self, now: Time) {
        self.set_now(now);
        let mut b = self.book.lock().expect("timer book");
        if b.suspended_since.is_none() {
            b.suspended_since = Some(now);
            b.suspensions += 1;
        }
    }

    /// Let the timers run again from `now`, where they stopped.
    pub fn resume(&self, now: Time) {
        let mut b = self.book.lock().expect("timer book");
        if let Some(since) = b.suspended_since.take() {
            b.held += now.saturating_sub(since);
        }
    }

    /// Whether the timers are held, and how many times they were.
    pub fn suspended(&self) -> (bool, u64) {
        let b = self.book.lock().expect("timer book");
        (b.suspended_since.is_some(), b.suspensions)
    }

    pub fn now(&self) -> Time {
        self.book.lock().expect("timer book").now
    }

    /// The earliest expiry still ahead of the clock, if a countdown runs, on the caller's
    /// time; None while held. One already due was due when the handler last ran (every call
    /// sets the clock first): a countdown the handler does not look at in its present step
    /// wakes nobody again.
    pub fn next_expiry(&self) -> Option<Time> {
        let b = self.book.lock().expect("timer book");
        if b.suspended_since.is_some() {
            return None;
        }
        b.expiries
            .iter()
            .flatten()
            .map(|e| e.0)
            .filter(|&at| at > b.now)
            .min()
            .map(|at| at + b.held)
    }

    /// Expiries seen, of the check-limit, NAK, positive-ACK and inactivity timers.
    pub fn expired(&self) -> [u64; 4] {
        self.book.lock().expect("timer book").expired
    }

    /// A countdown of `period` from now.
    pub fn start(&self, period: Time, kind: TimerKind) -> SimCountdown {
        let mut b = self.book.lock().expect("timer book");
        let at = b.now.saturating_add(period);
        // A slot a dropped countdown left is reused.
        let slot = match b.expiries.iter().position(Option::is_none) {
            Some(i) => {
                b.expiries[i] = Some((at, kind));
                i
            }
            None => {
                b.expiries.push(Some((at, kind)));
                b.expiries.len() - 1
            }
        };
        SimCountdown {
            timers: self.clone(),
            slot,
            period,
            kind,
            at: Mutex::new(at),
        }
    }
}

/// One of cfdp-rs's countdowns, on the shared clock.
#[derive(Debug)]
pub struct SimCountdown {
    timers: Timers,
    slot: usize,
    period: Time,
    kind: TimerKind,
    /// When it expires (its book entry is cleared once it is seen expired).
    at: Mutex<Time>,
}

impl Countdown for SimCountdown {
    fn has_expired(&self) -> bool {
        let at = *self.at.lock().expect("countdown");
        let mut b = self.timers.book.lock().expect("timer book");
        let expired = b.now >= at;
        // Counted once per run: the first time the handler finds it expired.
        if expired && b.expiries[self.slot].is_some() {
            b.expiries[self.slot] = None;
            b.expired[self.kind as usize] += 1;
        }
        expired
    }

    fn reset(&mut self) {
        let mut b = self.timers.book.lock().expect("timer book");
        let at = b.now.saturating_add(self.period);
        *self.at.lock().expect("countdown") = at;
        b.expiries[self.slot] = Some((at, self.kind));
    }
}

impl Drop for SimCountdown {
    fn drop(&mut self) {
        if let Ok(mut b) = self.timers.book.lock() {
            b.expiries[self.slot] = None;
        }
    }
}

impl TimerCreator for Timers {
    type Countdown = SimCountdown;

    fn create_countdown(&self, ctx: TimerContext) -> SimCountdown {
        match ctx {
            TimerContext::CheckLimit { .. } => {
                self.start(self.check_limit_period, TimerKind::CheckLimit)
            }
            TimerContext::NakActivity { expiry_time } => {
                self.start(expiry_time.as_nanos() as Time, TimerKind::Nak)
            }
            TimerContext::PositiveAck { expiry_time } => {
                self.start(expiry_time.as_nanos() as Time, TimerKind::PositiveAck)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_countdown_expires_at_its_period_once_and_again_after_a_reset() {
        let t = Timers::new(5);
        t.set_now(100);
        let mut c = t.create_countdown(TimerContext::PositiveAck {
            expiry_time: std::time::Duration::from_nanos(50),
        });
        assert_eq!(t.next_expiry(), Some(150));
        t.set_now(149);
        assert_eq!(t.next_expiry(), Some(150));
        assert!(!c.has_expired());
        t.set_now(150);
        assert!(c.has_expired() && c.has_expired());
        assert_eq!(t.expired(), [0, 0, 1, 0], "counted once");
        assert_eq!(t.next_expiry(), None);
        t.set_now(160);
        c.reset();
        assert_eq!(t.next_expiry(), Some(210));
        drop(c);
        assert_eq!(t.next_expiry(), None, "a dropped countdown wakes nobody");
    }

    #[test]
    fn a_suspended_countdown_stops_and_resumes_where_it_stopped() {
        let t = Timers::new(5);
        let c = t.create_countdown(TimerContext::NakActivity {
            expiry_time: std::time::Duration::from_nanos(100),
        });
        t.set_now(40);
        t.suspend(40);
        assert_eq!(t.next_expiry(), None, "held: no wake-up");
        t.set_now(1_000);
        assert!(!c.has_expired(), "time held does not count");
        t.resume(1_000);
        assert_eq!(t.next_expiry(), Some(1_060), "60 ns were left");
        t.set_now(1_059);
        assert!(!c.has_expired());
        t.set_now(1_060);
        assert!(c.has_expired());
        assert_eq!(t.suspended(), (false, 1));
    }
}
