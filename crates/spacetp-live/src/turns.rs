//! The loop of a live node (`spacetp dtn`, `spacetp cfdp`): turns on the real clock, each
//! one acting on what is due, then sleeping until the next deadline or a datagram.

use spacetp_proto::Time;
use std::os::fd::RawFd;

/// The least a turn sleeps (a deadline already past does not spin the loop).
const MIN_SLEEP: Time = 50_000;

pub trait Turns {
    /// Nanoseconds since the node started.
    fn now(&self) -> Time;
    /// Act on everything due at `now`: timers, sends, stop conditions.
    fn step(&mut self, now: Time);
    /// It has stopped (its report is complete).
    fn stopped(&self) -> bool;
    /// When the next turn is due, if no datagram comes first.
    fn next_deadline(&mut self, now: Time) -> Time;
    /// The sockets whose datagrams wake it.
    fn sockets(&self) -> Vec<RawFd>;
    /// Take every datagram waiting.
    fn receive(&mut self);

    /// Runs for `budget` ns of the clock at most; false once the node has stopped.
    fn run_for(&mut self, budget: Time) -> bool {
        let until = self.now() + budget;
        loop {
            let now = self.now();
            self.step(now);
            if self.stopped() {
                return false;
            }
            if now >= until {
                return true;
            }
            let next = self.next_deadline(now).min(until).max(now + MIN_SLEEP);
            crate::sys::wait_readable(&self.sockets(), next - now);
            self.receive();
        }
    }
}
