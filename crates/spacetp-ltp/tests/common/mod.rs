//! A two-engine harness: engines A (ID 1) and B (ID 2) joined by a link with a delay each
//! way, the span's rate as airtime, and losses the test decides (by rule or from a printed
//! seed). Deterministic: a run is a function of its settings and seed. Every segment sent
//! is logged, decoded with our codec, with its time and whether it was dropped.
#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use bytes::Bytes;
use spacetp_ltp::wire::{self, Claim, Content, SegmentType, Serials};
use spacetp_ltp::{Engine, EngineConfig, Event, SpanConfig};
use spacetp_proto::units::{Duration, Rate};
use spacetp_proto::{Time, MS, SEC};

pub const A: u64 = 1;
pub const B: u64 = 2;

/// One segment as it left an engine.
#[derive(Clone, Debug)]
pub struct Sent {
    pub t: Time,
    pub from: u64,
    pub to: u64,
    pub bytes: Vec<u8>,
    pub kind: SegmentType,
    pub dropped: bool,
}

impl Sent {
    pub fn seg(&self) -> wire::Segment<'_> {
        wire::decode(&self.bytes).expect("engines send decodable segments")
    }
    /// Offset, length and serials of a data segment.
    pub fn data(&self) -> Option<(u64, u64, Option<Serials>)> {
        match self.seg().content {
            Content::Data(d) => Some((d.offset, d.data.len() as u64, d.serials)),
            _ => None,
        }
    }
    /// Serial, checkpoint serial, lower, upper and claims of a report.
    pub fn report(&self) -> Option<(u64, u64, u64, u64, Vec<Claim>)> {
        match self.seg().content {
            Content::Report(r) => Some((
                r.report_serial,
                r.checkpoint_serial,
                r.lower_bound,
                r.upper_bound,
                r.claims.iter().collect(),
            )),
            _ => None,
        }
    }
    pub fn ra_serial(&self) -> Option<u64> {
        match self.seg().content {
            Content::ReportAck { report_serial } => Some(report_serial),
            _ => None,
        }
    }
}

/// A segment on its way: arrival time, order sent, destination, bytes.
type InFlight = (Time, u64, u64, Vec<u8>);

pub type DropRule = Box<dyn FnMut(&Sent, &[Sent]) -> bool>;

pub struct Sim {
    pub a: Engine,
    pub b: Engine,
    pub now: Time,
    pub owlt_ab: Time,
    pub owlt_ba: Time,
    /// Bytes per second, for airtime.
    pub rate: Option<f64>,
    pub log: Vec<Sent>,
    pub events: Vec<(Time, u64, Event)>,
    pub drop: DropRule,
    rng: u64,
    pub loss: f64,
    flight: BinaryHeap<Reverse<InFlight>>,
    seq: u64,
    buf: Vec<u8>,
}

/// A span to `peer` with the harness's usual settings: 1400-byte segments, light time
/// `owlt`, 1 s of queuing latency at each end, the given rate.
pub fn span(peer: u64, owlt: Time, rate_bps: Option<f64>) -> SpanConfig {
    let mut s = SpanConfig::new(peer, owlt);
    s.transmission_rate = rate_bps.map(Rate);
    s.aggregation_size_limit = spacetp_proto::units::Bytes(1);
    s.aggregation_time_limit = Duration(SEC);
    s
}

impl Sim {
    /// Two engines with the same span settings both ways (the peer ID swapped).
    pub fn new(cfg: SpanConfig, seed: u64) -> Sim {
        Sim::with(cfg.clone(), cfg, seed)
    }

    pub fn with(a_to_b: SpanConfig, b_to_a: SpanConfig, seed: u64) -> Sim {
        let ecfg = |s| EngineConfig {
            seed: s,
            ..EngineConfig::default()
        };
        Sim::engines(ecfg(seed), ecfg(seed ^ 0xB), a_to_b, b_to_a, seed)
    }

    pub fn engines(
        ea: EngineConfig,
        eb: EngineConfig,
        mut a_to_b: SpanConfig,
        mut b_to_a: SpanConfig,
        seed: u64,
    ) -> Sim {
        a_to_b.peer_engine_id = B;
        b_to_a.peer_engine_id = A;
        let owlt_ab = a_to_b.one_way_light_time.0;
        let owlt_ba = b_to_a.one_way_light_time.0;
        let rate = a_to_b.transmission_rate.map(|r| r.0 / 8.0);
        let mut a = Engine::new(A, ea).unwrap();
        let mut b = Engine::new(B, eb).unwrap();
        a.add_span(a_to_b).unwrap();
        b.add_span(b_to_a).unwrap();
        Sim {
            a,
            b,
            now: 0,
            owlt_ab,
            owlt_ba,
            rate,
            log: Vec::new(),
            events: Vec::new(),
            drop: Box::new(|_, _| false),
            rng: seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1,
            loss: 0.0,
            flight: BinaryHeap::new(),
            seq: 0,
            buf: Vec::with_capacity(2048),
        }
    }

    pub fn engine(&mut self, id: u64) -> &mut Engine {
        if id == A {
            &mut self.a
        } else {
            &mut self.b
        }
    }

    pub fn send(&mut self, from: u64, csid: u64, data: Vec<u8>, red: u64) {
        let to = if from == A { B } else { A };
        let now = self.now;
        self.engine(from)
            .send(now, to, csid, Bytes::from(data), red)
            .unwrap();
    }

    /// Link state on both ends at once.
    pub fn set_link(&mut self, up: bool) {
        let now = self.now;
        self.a.set_link_up(now, B, up);
        self.b.set_link_up(now, A, up);
    }

    fn random(&mut self) -> f64 {
        // xorshift64*
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn transmit(&mut self) {
        for from in [A, B] {
            loop {
                let now = self.now;
                let mut buf = std::mem::take(&mut self.buf);
                let to = if from == A {
                    self.a.poll_transmit(now, &mut buf)
                } else {
                    self.b.poll_transmit(now, &mut buf)
                };
                let Some(to) = to else {
                    self.buf = buf;
                    break;
                };
                let kind = wire::decode(&buf).expect("decodable").kind;
                let mut sent = Sent {
                    t: now,
                    from,
                    to,
                    bytes: buf.clone(),
                    kind,
                    dropped: false,
                };
                let random_loss = self.loss > 0.0 && self.random() < self.loss;
                sent.dropped = random_loss || (self.drop)(&sent, &self.log);
                let airtime = self
                    .rate
                    .map_or(0, |r| (buf.len() as f64 * 1e9 / r).ceil() as Time);
                let owlt = if from == A {
                    self.owlt_ab
                } else {
                    self.owlt_ba
                };
                if !sent.dropped {
                    self.seq += 1;
                    self.flight
                        .push(Reverse((now + airtime + owlt, self.seq, to, buf.clone())));
                }
                self.log.push(sent);
                self.buf = buf;
            }
        }
        for (id, e) in [(A, &mut self.a), (B, &mut self.b)] {
            while let Some(ev) = e.poll_event() {
                self.events.push((self.now, id, ev));
            }
        }
    }

    /// Runs until nothing is left to do or `until` is reached.
    pub fn run_until(&mut self, until: Time) {
        for _ in 0..50_000_000u64 {
            self.transmit();
            let next = [
                self.flight.peek().map(|r| r.0 .0),
                self.a.poll_timeout(),
                self.b.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else {
                // Nothing left to happen: an explicit end time is reached all the same.
                if until < Time::MAX / 2 {
                    self.now = until;
                }
                return;
            };
            if next > until {
                self.now = until;
                return;
            }
            self.now = self.now.max(next);
            while let Some(Reverse((t, _, _, _))) = self.flight.peek() {
                if *t > self.now {
                    break;
                }
                let Reverse((_, _, to, bytes)) = self.flight.pop().unwrap();
                let now = self.now;
                self.engine(to).on_segment(now, &bytes).unwrap();
            }
            let now = self.now;
            self.a.on_timeout(now);
            self.b.on_timeout(now);
        }
        panic!("the simulation did not settle");
    }

    pub fn run(&mut self) {
        self.run_until(Time::MAX / 2);
    }

    pub fn sent(&self, from: u64) -> impl Iterator<Item = &Sent> {
        self.log.iter().filter(move |s| s.from == from)
    }

    pub fn kinds(&self, from: u64) -> Vec<SegmentType> {
        self.sent(from).map(|s| s.kind).collect()
    }

    pub fn reports(&self) -> Vec<&Sent> {
        self.sent(B)
            .filter(|s| s.kind == SegmentType::Report)
            .collect()
    }

    pub fn events_of(&self, id: u64) -> Vec<&Event> {
        self.events
            .iter()
            .filter(|e| e.1 == id)
            .map(|e| &e.2)
            .collect()
    }

    /// The red parts B received, in order.
    pub fn delivered(&self) -> Vec<Vec<u8>> {
        self.events
            .iter()
            .filter_map(|(_, id, e)| match e {
                Event::RedPartReceived { data, .. } if *id == B => Some(data.to_vec()),
                _ => None,
            })
            .collect()
    }
}

/// Block contents that tell every byte apart.
pub fn pattern(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0] ^ salt)
        .collect()
}

pub fn ms(n: u64) -> Time {
    n * MS
}
