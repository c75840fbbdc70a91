//! The event queue: integer-nanosecond times, ties broken by insertion order so that runs are
//! deterministic. Events are small `Copy` values; cancelled timers are not removed but
//! recognised as stale when they fire (lazy cancellation).

use spacetp_proto::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The transmitter of link direction `0` finished serialising its packet.
    TxDone(u32),
    /// The head of link direction `0`'s propagation pipeline arrives.
    Arrive(u32),
    /// Endpoint `0`'s connection timer.
    Timer(u32),
    /// Endpoint `0`'s rate-limited application reads again.
    Read(u32),
    /// Flow `0` opens its connection.
    FlowStart(u32),
    /// Flow `0` stops being measured (unlimited flows).
    FlowStop(u32),
    /// Workload `0`, client `1`: a new request.
    Request(u32, u32),
    /// Datagram source `0` emits its next packet.
    Datagram(u32),
    /// Link `0` (both directions) goes down (`false`) or comes back (`true`).
    LinkState(u32, bool),
    /// Sample the time series.
    Sample,
    /// End of the run.
    Stop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    time: Time,
    seq: u64,
    event: Event,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse to pop the earliest (time, seq) first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    pub processed: u64,
}

impl EventQueue {
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.seq += 1;
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let e = self.heap.pop()?;
        self.processed += 1;
        Some((e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earliest_first_and_fifo_among_equals() {
        let mut q = EventQueue::default();
        q.schedule(5, Event::Timer(1));
        q.schedule(3, Event::Timer(2));
        q.schedule(5, Event::Timer(3));
        q.schedule(3, Event::Timer(4));
        let order: Vec<Event> = std::iter::from_fn(|| q.pop().map(|e| e.1)).collect();
        assert_eq!(
            order,
            vec![
                Event::Timer(2),
                Event::Timer(4),
                Event::Timer(1),
                Event::Timer(3)
            ]
        );
    }
}
