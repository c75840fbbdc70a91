//! The event queue: integer-nanosecond times, ties broken by insertion order so that runs are
//! deterministic. Events are small `Copy` values; cancelled timers are not removed but
//! recognised as stale when they fire (lazy cancellation). Two lanes, timers and the rest,
//! each a heap and a queue of the entries that came in rising order (`Lane`).

use spacetp_proto::Time;

/// Where a packet lives in the slab (`packet.rs`); links queue these.
pub type PacketId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The transmitter of link direction `0` finished serialising its packet.
    TxDone(u32),
    /// The head of link direction `0`'s propagation pipeline arrives.
    Arrive(u32),
    /// Endpoint `0`'s connection timer.
    Timer(u32),
    /// Endpoint `0`'s rate-limited application (a reader or a writer) has earned credit.
    AppWake(u32),
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
    /// The `[[forwarding]]` state changes: flows whose path changed read it again.
    Reroute,
    /// Attack `0` hands its next spoofed segment to its victim.
    Attack(u32),
    /// The bundle agent of node `0` has work (an expiry, a contact, a paced release).
    DtnAgent(u16),
    /// Contact `0` of the contact plan starts (`true`) or ends.
    Contact(u32, bool),
    /// Sample the time series.
    Sample,
    /// End of the run.
    Stop,
}

/// A scheduled event. `key` packs (time, insertion number) into one integer so that a single
/// comparison orders events by time and breaks ties first-in first-out.
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

impl Entry {
    fn time(&self) -> Time {
        (self.key >> 64) as Time
    }
}

/// A 4-ary min-heap of entries: half a binary heap's depth, and a node's children side by
/// side in memory (a run of 10 000 flows keeps tens of thousands of timers). Keys are
/// unique, so it pops the same order as any heap would. Written out rather than
/// `std::collections::BinaryHeap` so that sifting moves a hole instead of swapping and
/// compares plain integers (the queue is popped once per simulated event).
#[derive(Default)]
struct Heap(Vec<Entry>);

/// Children per node.
const ARITY: usize = 4;

// The queue's operations are `#[inline(always)]`: each is called for two lanes, and the
// compiler then kept them out of line, which cost D NewReno 5% of its wall (measured); the
// queue is used once per simulated event.

impl Heap {
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        // Sift up from the new leaf.
        let h = &mut self.0;
        let mut i = h.len();
        h.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if h[parent].key <= e.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    fn first_key(&self) -> Option<u128> {
        self.0.first().map(|e| e.key)
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let h = &mut self.0;
        let last = h.pop()?;
        if h.is_empty() {
            return Some(last);
        }
        // Move the last leaf into the root's hole and sift it down.
        let top = h[0];
        let n = h.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let mut c = first;
            for k in first + 1..(first + ARITY).min(n) {
                if h[k].key < h[c].key {
                    c = k;
                }
            }
            if last.key <= h[c].key {
                break;
            }
            h[i] = h[c];
            i = c;
        }
        h[i] = last;
        Some(top)
    }
}

/// Entries that arrived in rising key order: a queue kept in a Vec, its front an index (a
/// `VecDeque`'s wrap-around arithmetic costs more than the sifts it saves); the consumed
/// part is dropped once it is the larger half.
#[derive(Default)]
struct Rising {
    entries: Vec<Entry>,
    head: usize,
}

impl Rising {
    /// The last key pushed, consumed or not: a key pushed now is later than every key popped
    /// (its time is not before the clock, its insertion number is new), so this bounds the
    /// queue as its last waiting entry would.
    #[inline(always)]
    fn last_key(&self) -> Option<u128> {
        self.entries.last().map(|e| e.key)
    }

    #[inline(always)]
    fn first_key(&self) -> Option<u128> {
        self.entries.get(self.head).map(|e| e.key)
    }

    /// Append `e`, whose key is above `last_key`.
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        debug_assert!(self.last_key().is_none_or(|k| k < e.key));
        self.entries.push(e);
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let e = *self.entries.get(self.head)?;
        self.head += 1;
        if self.head >= 1024 && 2 * self.head >= self.entries.len() {
            self.entries.drain(..self.head);
            self.head = 0;
        }
        Some(e)
    }

    fn len(&self) -> usize {
        self.entries.len() - self.head
    }
}

/// A min-queue in two parts: entries that came in rising key order wait in `rising` and
/// leave from its front without sifting; the others go to the heap. Far-off entries come in
/// rising order: a retransmission deadline (now + RTO) is later than the one armed before
/// it, and a run's flows stop at the end in the order they started. Kept in a heap, they
/// deepened every sift: a paced sender (scenario D with BBR) leaves 500-1000 deadlines
/// behind, superseded by its next departure; 10 000 flows keep 10 000 stop events queued
/// behind every packet. The nearer entries, the departures and the packets, arrive below
/// the last far one and go to the heap, which stays small.
#[derive(Default)]
struct Lane {
    heap: Heap,
    rising: Rising,
    /// The earliest key of the two (None: empty): the queue compares it on every pop.
    first: Option<u128>,
}

impl Lane {
    #[inline(always)]
    fn push(&mut self, e: Entry) {
        if self.rising.last_key().is_none_or(|k| k < e.key) {
            self.rising.push(e);
        } else {
            self.heap.push(e);
        }
        self.first = Some(self.first.map_or(e.key, |f| f.min(e.key)));
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let top = match (self.rising.first_key(), self.heap.first_key()) {
            (Some(r), Some(h)) if h < r => self.heap.pop(),
            (Some(_), _) => self.rising.pop(),
            (None, _) => self.heap.pop(),
        };
        self.first = match (self.rising.first_key(), self.heap.first_key()) {
            (Some(r), Some(h)) => Some(r.min(h)),
            (r, h) => r.or(h),
        };
        top
    }

    fn len(&self) -> usize {
        self.heap.0.len() + self.rising.len()
    }
}

/// The run's events, popped in key order: endpoint timers in a lane of their own (a timer
/// re-armed earlier leaves its old entry behind, lazily cancelled: they would mix with the
/// packets' events), the rest in another; the same keys merged, so one heap's order.
#[derive(Default)]
pub struct EventQueue {
    events: Lane,
    timers: Lane,
    seq: u64,
    pub processed: u64,
}

impl EventQueue {
    #[inline(always)]
    pub fn schedule(&mut self, time: Time, event: Event) {
        self.seq += 1;
        let e = Entry {
            key: (time as u128) << 64 | self.seq as u128,
            event,
        };
        match event {
            Event::Timer(_) => self.timers.push(e),
            _ => self.events.push(e),
        }
    }

    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let top = match (self.events.first, self.timers.first) {
            (Some(e), Some(t)) if t < e => self.timers.pop(),
            (Some(_), _) => self.events.pop(),
            (None, _) => self.timers.pop(),
        }?;
        self.processed += 1;
        Some((top.time(), top.event))
    }

    pub fn len(&self) -> usize {
        self.events.len() + self.timers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    fn event_of(i: u32) -> Event {
        if i.is_multiple_of(2) {
            Event::Timer(i)
        } else {
            Event::Arrive(i)
        }
    }

    #[test]
    fn matches_a_stable_sort() {
        // Pseudo-random times with many ties, interleaving pops and pushes.
        let mut q = EventQueue::default();
        let mut model: Vec<(Time, u32)> = Vec::new();
        let mut x: u64 = 12345;
        let mut out = Vec::new();
        let mut expect = Vec::new();
        for i in 0..5000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let t = (x >> 33) % 64;
            // Timers and other events share one order (they are kept apart).
            let ev = if i % 2 == 0 {
                Event::Timer(i)
            } else {
                Event::Arrive(i)
            };
            q.schedule(t, ev);
            model.push((t, i));
            if i % 3 == 0 {
                out.push(q.pop().unwrap());
                // the model: earliest time, then earliest insertion
                let k = (0..model.len()).min_by_key(|&k| model[k]).unwrap();
                let (t, id) = model.remove(k);
                expect.push((t, event_of(id)));
            }
        }
        while let Some(e) = q.pop() {
            out.push(e);
        }
        model.sort();
        expect.extend(model.into_iter().map(|(t, id)| (t, event_of(id))));
        assert_eq!(out, expect);
    }

    /// As a paced sender arms: retransmission deadlines rising with the clock (sometimes
    /// tied or a little earlier than the last), departures just ahead of now, other events
    /// in between; popped as they come due. Every pop is the earliest (time, insertion).
    #[test]
    fn rising_deadlines_and_near_ones_pop_in_key_order() {
        let mut q = EventQueue::default();
        let mut model: Vec<(Time, u32, Event)> = Vec::new();
        let (mut x, mut now): (u64, Time) = (99, 0);
        // Far-off events come first (a run's flows stopping at its end) and wait behind: far
        // beyond the clock, which moves at most 20 per pop.
        const END: Time = 1 << 40;
        for f in 0..50 {
            q.schedule(END + f as Time / 10, Event::FlowStop(f));
            model.push((END + f as Time / 10, f, Event::FlowStop(f)));
        }
        for i in 50..20_000u32 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let r = x >> 33;
            let (t, ev) = match r % 4 {
                0 => (now + 200 + r % 3, Event::Timer(i)), // rising, ties, small steps back
                1 => (now + r % 5, Event::Timer(i)),       // a departure
                2 => (now + 1 + r % 20, Event::Arrive(i)),
                _ => {
                    let got = q.pop().unwrap();
                    let k = (0..model.len())
                        .min_by_key(|&k| (model[k].0, model[k].1))
                        .unwrap();
                    let (t, _, ev) = model.remove(k);
                    assert_eq!(got, (t, ev), "pop {i}");
                    now = t;
                    continue;
                }
            };
            q.schedule(t, ev);
            model.push((t, i, ev));
        }
        assert_eq!(q.events.rising.len(), 50, "the far events were kept apart");
        assert!(
            q.timers.rising.len() > 100,
            "the rising deadlines were kept apart"
        );
        model.sort_by_key(|&(t, i, _)| (t, i));
        for (t, _, ev) in model {
            assert_eq!(q.pop(), Some((t, ev)));
        }
        assert_eq!(q.pop(), None);
    }
}
