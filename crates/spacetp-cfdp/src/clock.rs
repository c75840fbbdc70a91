//! cfdp-rs's timers on a clock the caller sets. The handlers ask a countdown only whether
//! it has expired; here every countdown also writes its expiry in a shared book, so the
//! caller knows when to call the handlers next (the earliest expiry still ahead), and the
//! book counts each countdown's expiry once per run of it (the summary's timer expiries).

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
}

#[derive(Debug, Default)]
struct Book {
    /// Nanoseconds the timers have run (the simulation's time, less suspensions).
    now: Time,
    /// Each countdown's expiry (by its index), None once it expired or was dropped.
    expiries: Vec<Option<(Time, TimerKind)>>,
    expired: [u64; 3],
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

    /// The timers' time is now `now` (never back).
    pub fn set_now(&self, now: Time) {
        let mut b = self.book.lock().expect("timer book");
        b.now = b.now.max(now);
    }

    pub fn now(&self) -> Time {
        self.book.lock().expect("timer book").now
    }

    /// The earliest expiry still ahead of the clock, if a countdown runs. One already due
    /// was due when the handler last ran (every call sets the clock first): a countdown the
    /// handler does not look at in its present step wakes nobody again.
    pub fn next_expiry(&self) -> Option<Time> {
        let b = self.book.lock().expect("timer book");
        b.expiries
            .iter()
            .flatten()
            .map(|e| e.0)
            .filter(|&at| at > b.now)
            .min()
    }

    /// Expiries seen, of the check-limit, NAK and positive-ACK timers.
    pub fn expired(&self) -> [u64; 3] {
        self.book.lock().expect("timer book").expired
    }

    fn start(&self, period: Time, kind: TimerKind) -> SimCountdown {
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
        assert_eq!(t.expired(), [0, 0, 1], "counted once");
        assert_eq!(t.next_expiry(), None);
        t.set_now(160);
        c.reset();
        assert_eq!(t.next_expiry(), Some(210));
        drop(c);
        assert_eq!(t.next_expiry(), None, "a dropped countdown wakes nobody");
    }
}
