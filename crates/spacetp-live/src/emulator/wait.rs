//! How the loop waits: ppoll until input, the next transmission end or shortly before the
//! next delivery, then spins; under SCHED_FIFO it pauses briefly after a busy millisecond so
//! the kernel never throttles it.

use super::*;

/// How long before a delivery the loop stops sleeping and spins (normal scheduling, whose
/// wake-ups can be tens of microseconds late on a busy machine).
pub const SPIN_NS: Time = 150_000;
/// The same under SCHED_FIFO, whose timer wake-ups are within a few microseconds.
pub const SPIN_RT_NS: Time = 30_000;
/// Under SCHED_FIFO, after this long without sleeping the loop sleeps [`RT_BREATHE_NS`]
/// whatever is due: the kernel throttles real-time threads that run more than
/// `sched_rt_runtime_us` (95%) of each second, and a 50 ms throttle is worse than these
/// short pauses.
pub const RT_BUSY_NS: Time = 1_000_000;
pub const RT_BREATHE_NS: Time = 70_000;
/// A ppoll that blocked at least this long before input woke it counts as rest.
pub const RT_REST_NS: Time = 10_000;

impl Emulator {
    /// Sleep until input, the next transmission end, or [`SPIN_NS`] before the next delivery;
    /// return at once (spin) when a delivery is closer than that.
    pub(super) fn wait(&mut self, chunk_end: Time) {
        let now = self.now();
        if self.realtime && now.saturating_sub(self.last_sleep) > RT_BUSY_NS {
            sleep_ns(RT_BREATHE_NS);
            self.last_sleep = self.now();
            self.breaths += 1;
            return;
        }
        let spin = if self.realtime { SPIN_RT_NS } else { SPIN_NS };
        let mut until = chunk_end;
        if let Some(e) = self.end {
            until = until.min(e.saturating_sub(self.t0));
        }
        if let (true, Some(&(t, _))) = (
            !self.notify.is_empty() || self.notify_udp.is_some(),
            self.transitions.get(self.next_transition),
        ) {
            until = until.min(t);
        }
        for d in &self.dirs {
            if let Some(t) = d.next_arrival() {
                if t <= now + spin {
                    return;
                }
                until = until.min(t - spin);
            }
            if let Some(t) = d.done_at {
                until = until.min(t);
            }
        }
        if until <= now {
            return;
        }
        let dt = until - now;
        let ts = libc::timespec {
            tv_sec: (dt / 1_000_000_000) as libc::time_t,
            tv_nsec: (dt % 1_000_000_000) as libc::c_long,
        };
        let mut fds = [
            libc::pollfd {
                fd: self.fds[0],
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.fds[1],
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: ppoll over our two pollfds with a timeout we own; no signal mask change.
        let entered = self.now();
        let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        let woke = self.now();
        // The loop rested if it slept the whole timeout, or blocked a while before input
        // woke it: either way the real-time duty cycle needs no forced pause.
        if r == 0 || woke.saturating_sub(entered) > RT_REST_NS {
            self.last_sleep = woke;
        }
    }
}
