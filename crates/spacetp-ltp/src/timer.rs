//! Acknowledgment timers (RFC 5326 sections 6.2, 6.3, 6.15) with ION's deadline and its
//! suspension rule (sections 6.5, 6.6), and the one heap every deadline of the engine sits
//! in, cancelled lazily: an entry is acted on only if its owner still holds that deadline.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use spacetp_proto::Time;

/// The light times and turnarounds of a span, which every deadline is made of.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Delays {
    pub owlt_out: Time,
    pub owlt_back: Time,
    /// The local engine's processing (ION ownQtime).
    pub own_q: Time,
    /// The peer's turnaround (ION remoteQtime, the span's queuing latency).
    pub remote_q: Time,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimerState {
    /// Not started (the segment waits to be sent) or stopped (acknowledged).
    Idle,
    Running,
    /// The link is down and the peer could not have answered yet.
    Suspended,
}

/// The timer of one checkpoint, report or cancel segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timer {
    pub state: TimerState,
    pub deadline: Time,
    /// When the segment is expected at the peer.
    pub arrival: Time,
    /// Timeouts so far (the segment has been sent `expirations + 1` times).
    pub expirations: u32,
}

impl Timer {
    pub fn new() -> Self {
        Timer {
            state: TimerState::Idle,
            deadline: 0,
            arrival: 0,
            expirations: 0,
        }
    }

    /// Starts the timer of a segment whose last bit left at `sent`. ION's setTimer: the
    /// segment arrives after the outbound light time and half the local processing; the
    /// answer after the peer's turnaround, the light time back and the other half.
    /// RFC 5326 section 6.2 says the same in fewer words: twice the light time plus
    /// processing.
    pub fn start(&mut self, sent: Time, d: &Delays) -> Time {
        self.arrival = sent + d.owlt_out + d.own_q / 2;
        self.deadline = self.arrival + d.remote_q + d.owlt_back + (d.own_q - d.own_q / 2);
        self.state = TimerState::Running;
        self.deadline
    }

    pub fn stop(&mut self) {
        self.state = TimerState::Idle;
    }

    pub fn is_due(&self, at: Time) -> bool {
        self.state == TimerState::Running && self.deadline == at
    }

    /// The link went down at `now`: a timer whose answer may not have left the peer yet is
    /// suspended (ION's suspendTimer); one whose answer should already be on its way runs on.
    pub fn suspend(&mut self, now: Time, d: &Delays) {
        if self.state == TimerState::Running && self.arrival + d.remote_q >= now {
            self.state = TimerState::Suspended;
        }
    }

    /// The link came back at `now`: the deadline moves by the time the answer could not
    /// leave (ION's resumeTimer). Returns the deadline if the timer runs again.
    pub fn resume(&mut self, now: Time, d: &Delays) -> Option<Time> {
        if self.state != TimerState::Suspended {
            return None;
        }
        let earliest_answer = self.arrival + d.remote_q;
        self.deadline += now.saturating_sub(earliest_answer);
        self.state = TimerState::Running;
        Some(self.deadline)
    }
}

/// What a deadline belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum TimerRef {
    Checkpoint {
        peer: u64,
        session: u64,
        serial: u64,
    },
    Report {
        peer: u64,
        session: u64,
        serial: u64,
    },
    ExportCancel {
        peer: u64,
        session: u64,
    },
    ImportCancel {
        peer: u64,
        session: u64,
    },
    Aggregation {
        peer: u64,
        block: u64,
    },
}

/// Every deadline of the engine; stale entries are skipped when they come up.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(Time, TimerRef)>>,
}

impl Timers {
    pub fn push(&mut self, at: Time, what: TimerRef) {
        self.heap.push(Reverse((at, what)));
    }

    pub fn peek(&self) -> Option<(Time, TimerRef)> {
        self.heap.peek().map(|r| r.0)
    }

    pub fn pop(&mut self) -> Option<(Time, TimerRef)> {
        self.heap.pop().map(|r| r.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::SEC;

    const D: Delays = Delays {
        owlt_out: 10 * SEC,
        owlt_back: 12 * SEC,
        own_q: SEC,
        remote_q: 2 * SEC,
    };

    #[test]
    fn the_deadline_is_both_light_times_plus_both_turnarounds() {
        let mut t = Timer::new();
        assert_eq!(
            t.start(100 * SEC, &D),
            100 * SEC + 10 * SEC + 12 * SEC + SEC + 2 * SEC
        );
        assert_eq!(t.arrival, 100 * SEC + 10 * SEC + SEC / 2);
        assert!(t.is_due(t.deadline));
    }

    #[test]
    fn a_suspended_timer_resumes_late_by_the_time_the_answer_could_not_leave() {
        let mut t = Timer::new();
        t.start(0, &D); // arrival 10.5 s, answer leaves from 12.5 s, deadline 25 s
        t.suspend(5 * SEC, &D);
        assert_eq!(t.state, TimerState::Suspended);
        // Back at 20 s: the answer could leave only from 20 s, 7.5 s late.
        assert_eq!(t.resume(20 * SEC, &D), Some(25 * SEC + 7_500_000_000));
        // A link that came back before the answer was due changes nothing.
        let mut t = Timer::new();
        t.start(0, &D);
        t.suspend(SEC, &D);
        assert_eq!(t.resume(3 * SEC, &D), Some(25 * SEC));
    }

    #[test]
    fn a_timer_whose_answer_is_already_on_its_way_is_not_suspended() {
        let mut t = Timer::new();
        t.start(0, &D);
        t.suspend(13 * SEC, &D);
        assert_eq!(t.state, TimerState::Running);
        assert_eq!(t.resume(14 * SEC, &D), None);
    }
}
