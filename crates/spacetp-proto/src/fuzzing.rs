//! The connection fuzzer's interpreter: bytes in, a sequence of operations on two
//! connections (a client and a server of one profile) joined by a network the bytes
//! control, with every invariant checked after every operation. It panics on the first
//! broken one. The cargo-fuzz target (`crates/spacetp-proto/fuzz`) feeds it libFuzzer's
//! inputs; `tests/fuzz_corpus.rs` replays the kept corpus in `cargo test`.
//!
//! Operations: deliver, drop, duplicate or reorder the next segment of either direction;
//! deliver it with a field changed (sequence or acknowledgment number, flags, window,
//! SACK blocks, SNACK, timestamps); inject a forged segment; let time pass and fire due
//! timers; the applications write, close, abort and read. The fuzzer knows the position
//! every genuine segment was sent from, so where the receiver puts its bytes is checked.
//!
//! Invariants, besides [`Connection::check_invariants`] on both ends:
//! - a genuine segment's accepted bytes go to the position they were sent from;
//! - in-order data handed to the application (delivered or readable) was all taken in:
//!   never a gap (BETS, which gives gaps up on purpose, excepted);
//! - what was delivered never decreases;
//! - after due timers fire and output is drained, no timer is still due (no livelock), and
//!   one call never yields an unbounded number of segments.

use crate::config::TcpConfig;
use crate::connection::{Connection, Transmit};
use crate::profiles;
use crate::seq::to_wire;
use crate::time::{Time, MS};
use spacetp_wire::{SackBlocks, TcpHeader, Timestamps};
use std::collections::VecDeque;

/// The bytes of the input, read front to back; zeros once exhausted.
struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
}

/// A segment in flight: what was sent, from which stream position, and whether it was
/// changed on the way (a changed segment's bytes and position prove nothing).
#[derive(Clone, Copy)]
struct InFlight {
    t: Transmit,
    genuine: bool,
}

/// One end and what the fuzzer knows about it.
struct End {
    conn: Connection,
    iss: u32,
    /// Taken-in ranges `[start, end)` of the stream this end receives, merged.
    filled: Vec<(u64, u64)>,
    delivered: u64,
    /// Bytes its application still wants to write.
    to_write: u64,
    /// It was handed a changed or forged SYN: its view of the peer's sequence numbers may
    /// be the attacker's, so genuine segments prove nothing about positions any more.
    tainted: bool,
}

impl End {
    fn new(conn: Connection, iss: u32, to_write: u64) -> Self {
        End {
            conn,
            iss,
            filled: vec![],
            delivered: 0,
            to_write,
            tainted: false,
        }
    }

    fn fill(&mut self, a: u64, b: u64) {
        crate::ranges::insert(&mut self.filled, a, b);
    }

    /// End of the contiguous run of taken-in bytes from position 1.
    fn contiguous_end(&self) -> u64 {
        match self.filled.first() {
            Some(&(s, e)) if s <= 1 => e,
            _ => 1,
        }
    }
}

/// Segments one `poll_transmit` loop may yield before it is called a livelock.
const MAX_BURST: usize = 100_000;

/// Run the operations `data` encodes. Panics with the broken invariant.
pub fn run(data: &[u8]) {
    let mut inp = Input { data, pos: 0 };
    let names = profiles::names();
    let name = names[inp.u8() as usize % names.len()];
    let mut cfg: TcpConfig = profiles::profile(name).expect("a listed profile");
    // Small buffers keep the model's byte checks cheap and windows small.
    cfg.send_buffer.0 = cfg.send_buffer.0.min(64_000);
    cfg.receive_buffer.0 = cfg.receive_buffer.0.min(64_000);
    let mss = 100 + (inp.u16() % 1400) as u32;
    let manual = inp.u8() & 1 == 1;
    let bets = cfg.scps.bets.is_some();
    let (iss_a, iss_b) = (inp.u32(), inp.u32());
    let mut ends = [
        End::new(
            Connection::connect(&cfg, mss, 1000, 80, iss_a),
            iss_a,
            200_000,
        ),
        End::new(
            Connection::listen(&cfg, mss, 80, 1000, iss_b),
            iss_b,
            50_000,
        ),
    ];
    if manual {
        ends[1].conn.set_manual_read();
    }
    // queues[i]: segments from end i to end 1 - i.
    let mut queues: [VecDeque<InFlight>; 2] = [VecDeque::new(), VecDeque::new()];
    let mut now: Time = 1;
    let mut ops = 0;
    // SPACETP_FUZZ_TRACE=1 prints each operation and both ends' states (to read a crash).
    let trace = std::env::var_os("SPACETP_FUZZ_TRACE").is_some();
    if trace {
        eprintln!("profile {name} mss {mss} manual {manual} iss {iss_a} {iss_b}");
    }
    while !inp.done() && ops < 5_000 {
        ops += 1;
        let op = inp.u8();
        let side = (op & 1) as usize;
        if trace {
            eprintln!(
                "op {} side {side} t {now} | a {:?} rx {} | b {:?} rx {}",
                op >> 1,
                ends[0].conn.state(),
                ends[0].conn.delivered(),
                ends[1].conn.state(),
                ends[1].conn.delivered()
            );
        }
        operate(op >> 1, side, &mut ends, &mut queues, &mut now, &mut inp);
        step(&mut ends, &mut queues, now, bets);
    }
}

/// One operation of the fuzzer's script on `side`: deliver, drop, duplicate, reorder,
/// mutate or forge a segment, let time pass, or act as the application.
fn operate(
    op: u8,
    side: usize,
    ends: &mut [End; 2],
    queues: &mut [VecDeque<InFlight>; 2],
    now: &mut Time,
    inp: &mut Input,
) {
    match op >> 1 {
        0..=39 => deliver(ends, queues, side, *now, None),
        40..=49 => {
            queues[side].pop_front();
        }
        50..=54 => {
            if let Some(&s) = queues[side].front() {
                queues[side].push_back(s);
            }
        }
        55..=59 => {
            if queues[side].len() > 1 {
                let s = queues[side].pop_front().expect("two segments");
                queues[side].insert(1, s);
            }
        }
        60..=74 => {
            let m = Mutation::read(inp);
            deliver(ends, queues, side, *now, Some(m));
        }
        75..=84 => forge(ends, queues, side, inp),
        85..=109 => *now += 1 + inp.u16() as Time * MS,
        110..=114 => *now += 1 + inp.u32() as Time * MS,
        115..=119 => {
            let n = inp.u16() as u64 * 16;
            let e = &mut ends[side];
            let k = e.conn.send(n.min(e.to_write));
            e.to_write -= k;
        }
        120 => ends[side].conn.close(),
        121 => {
            if inp.u8() < 16 {
                ends[side].conn.reset();
            }
        }
        122..=125 => {
            ends[side].conn.read(inp.u16() as u64 * 8);
        }
        _ => {
            // Both applications write what they still have; the writer closes when done.
            for e in ends.iter_mut() {
                let k = e.conn.send(e.to_write);
                e.to_write -= k;
                if e.to_write == 0 {
                    e.conn.close();
                }
            }
        }
    }
}

/// Fire due timers, collect output into the queues, and check every invariant.
fn step(ends: &mut [End; 2], queues: &mut [VecDeque<InFlight>; 2], now: Time, bets: bool) {
    for (i, e) in ends.iter_mut().enumerate() {
        if e.conn.poll_timeout().is_some_and(|t| t <= now) {
            e.conn.on_timeout(now);
        }
        let mut n = 0;
        while let Some(t) = e.conn.poll_transmit(now) {
            n += 1;
            assert!(n < MAX_BURST, "end {i}: poll_transmit never returns None");
            if queues[i].len() < 10_000 {
                queues[i].push_back(InFlight { t, genuine: true });
            }
        }
        if let Some(t) = e.conn.poll_timeout() {
            assert!(
                t > now,
                "end {i}: a timer at {t} is still due at {now} after on_timeout"
            );
        }
        if let Err(why) = e.conn.check_invariants() {
            panic!("end {i}: {why}");
        }
        let d = e.conn.delivered();
        assert!(
            d >= e.delivered,
            "end {i}: delivered went back from {} to {d}",
            e.delivered
        );
        e.delivered = d;
        if !bets {
            let handed = 1 + d + e.conn.readable();
            assert!(
                handed <= e.contiguous_end(),
                "end {i}: bytes up to {handed} handed on, only up to {} taken in",
                e.contiguous_end()
            );
        }
    }
}

/// A change made to a segment on its way.
#[derive(Clone, Copy)]
struct Mutation {
    field: u8,
    value: u32,
}

impl Mutation {
    fn read(inp: &mut Input) -> Self {
        Mutation {
            field: inp.u8(),
            value: inp.u32(),
        }
    }

    fn apply(&self, h: &mut TcpHeader, len: &mut u32) {
        let v = self.value;
        match self.field % 10 {
            0 => h.seq = h.seq.wrapping_add(v),
            1 => h.ack = h.ack.wrapping_add(v),
            2 => h.flags = v as u8,
            3 => h.window = v as u16,
            4 => *len = v % 2000,
            5 => {
                let mut s = SackBlocks::default();
                s.push(
                    h.ack.wrapping_add(v % 100_000),
                    h.ack.wrapping_add(v % 100_000 + v % 5000),
                );
                h.options.sack = s;
            }
            6 => h.options.sack = SackBlocks::default(),
            7 => h.options.snacks = Default::default(),
            8 => {
                h.options.timestamps = Some(Timestamps {
                    val: v,
                    ecr: v.rotate_left(7),
                })
            }
            _ => h.seq = h.seq.wrapping_sub(v % 100_000),
        }
    }
}

/// Hand the next segment of queue `side` to the other end, changed by `m` if given.
fn deliver(
    ends: &mut [End; 2],
    queues: &mut [VecDeque<InFlight>; 2],
    side: usize,
    now: Time,
    m: Option<Mutation>,
) {
    let Some(mut s) = queues[side].pop_front() else {
        return;
    };
    let mut len = s.t.len;
    if let Some(m) = m {
        m.apply(&mut s.t.hdr, &mut len);
        s.genuine = false;
    }
    receive(&mut ends[1 - side], &s, len, now);
}

/// A segment nobody sent: an arbitrary header with an arbitrary length, to end `1 - side`,
/// its numbers near the connection's own half the time.
fn forge(ends: &mut [End; 2], queues: &mut [VecDeque<InFlight>; 2], side: usize, inp: &mut Input) {
    let near = inp.u8() & 1 == 1;
    let (seq, ack) = (inp.u32(), inp.u32());
    let to = &ends[1 - side];
    let from = &ends[side];
    let hdr = TcpHeader {
        src_port: if side == 0 { 1000 } else { 80 },
        dst_port: if side == 0 { 80 } else { 1000 },
        seq: if near {
            to_wire(from.iss, (seq % 200_000) as u64)
        } else {
            seq
        },
        ack: if near {
            to_wire(to.iss, (ack % 200_000) as u64)
        } else {
            ack
        },
        flags: inp.u8(),
        window: inp.u16(),
        ..Default::default()
    };
    let len = inp.u16() as u32 % 3000;
    let t = Transmit {
        hdr,
        len,
        pos: 0,
        retransmission: false,
        low_priority: false,
    };
    queues[side].push_front(InFlight { t, genuine: false });
}

/// End `e` receives segment `s` with `len` payload bytes.
fn receive(e: &mut End, s: &InFlight, len: u32, now: Time) {
    if !s.genuine && s.t.hdr.flags & spacetp_wire::flags::SYN != 0 {
        e.tainted = true;
    }
    let Some(a) = e.conn.on_segment(now, &s.t.hdr, len) else {
        return;
    };
    assert!(
        a.skip as u64 + a.len as u64 <= len as u64,
        "accepted {a:?} beyond a {len}-byte payload"
    );
    if s.genuine && !e.tainted {
        // Payload never enters the connection: a genuine byte is delivered right exactly
        // when it goes to the position it was sent from.
        assert_eq!(
            a.pos - a.skip as u64,
            s.t.pos,
            "a genuine segment's bytes were put at another position"
        );
    }
    if a.len > 0 {
        e.fill(a.pos, a.pos + a.len as u64);
    }
}
