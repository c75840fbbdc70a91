//! The simulated world: nodes forward packets along static routes, link directions queue,
//! serialise, propagate and corrupt them, endpoints feed them to sans-IO connections, and
//! applications write and read. One event loop drives it all.

use crate::attack::{AttackTarget, Attacker};
use crate::build::{self, Built};
use crate::config::*;
use crate::dist::Dist;
use crate::engine::{Event, EventQueue};
use crate::link::{LinkDir, Offer, TxEnd};
use crate::packet::{Body, Packet, PacketId, Slab};
use crate::pcap::PcapTap;
use crate::result::*;
use crate::rng::{stream, Rng};
use crate::transport::{Ends, EndsSpec, Transport, TransportSpec};
use spacetp_proto::time::secs;
use spacetp_proto::Time;

/// Options of one run that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record these links to pcap files: (link selector, path). A selector is a link index
    /// ("1"), "links[1]" or "a-b" with the node names of its ends.
    pub pcap: Vec<(String, String)>,
    /// Write the TLS secrets of every QUIC connection to this file (NSS key log format), so
    /// that Wireshark decrypts the pcaps.
    pub keylog: Option<String>,
    /// Write a qlog (JSON-SEQ) of every QUIC connection's two ends into this folder:
    /// `FLOW-client.sqlog`, `FLOW-server.sqlog`.
    pub qlog: Option<String>,
}

struct Endpoint {
    transport: Box<dyn Transport>,
    node: u16,
    peer_node: u16,
    peer_ep: u32,
    /// The application at this end.
    app: App,
    sender: bool,
    /// Time of the timer event in the queue that is still valid.
    timer_at: Option<Time>,
    /// Abandoned at the flow's stop time: receives, sends and times nothing more.
    dead: bool,
    /// An application that reads (receiving end) or writes (sending end) at a limited
    /// rate.
    app_rate: Option<AppRate>,
    /// Its packets are bundles through its node's agent, not packets on the links (CFDP
    /// over BP; world/dtn.rs).
    bundled: bool,
}

/// The application an endpoint serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum App {
    /// One end of flow `0` (a bulk transfer, or a workload's file).
    Flow(u32),
    /// One end of datagram source `0` (it writes on its own schedule).
    Source(u32),
    /// One end of LTP hop `0` of the delay-tolerant network (its client is the node's
    /// bundle agent).
    Hop(u32),
}

/// An application reading or writing at `rate` bits/s: it earns credit with time.
struct AppRate {
    rate: f64,
    credit: f64,
    last: Time,
    wake_at: Option<Time>,
}

struct Flow {
    name: String,
    protocol: String,
    from: u16,
    to: u16,
    total: Option<u64>,
    to_write: u64,
    /// Record size the application writes (end of each marked), and bytes of the current one.
    record_size: Option<u64>,
    record_fill: u64,
    start: Time,
    /// What the two ends run.
    spec: TransportSpec,
    read_rate: Option<f64>,
    write_rate: Option<f64>,
    eps: Option<(u32, u32)>,
    delivered: u64,
    last_byte: Option<Time>,
    /// `goodput_window` and the bytes delivered by its start and by its end.
    window: Option<(Time, Time)>,
    delivered_by: [u64; 2],
    done: bool,
    /// Its summary as it stopped, for a flow whose state goes on changing after (bundles).
    snapshot: Option<Box<FlowSummary>>,
    workload: Option<u32>,
    /// Its path's facts and where its time went (`limits.rs`), from its start.
    facts: Option<crate::limits::PathFacts>,
    account: Option<crate::limits::Account>,
    /// The paths it had before a re-route, each state's time on them.
    earlier_paths: crate::limits::PathsTaken,
    /// The settings fitted to its path (`fit = true`).
    fitted: Vec<crate::fit::Fitted>,
}

struct Workload {
    name: String,
    size: Dist,
    interval: Dist,
    clients: Vec<u16>,
    server: u16,
    direction: Direction,
    protocol: String,
    spec: std::sync::Arc<dyn EndsSpec>,
    /// The settings fitted to its path (`fit = true`), for each file's summary.
    fitted: Vec<crate::fit::Fitted>,
    stop: Option<Time>,
    count: Option<u32>,
    issued: Vec<u32>,
    rng: Rng,
}

struct Source {
    from: u16,
    to: u16,
    /// The sending and the receiving endpoint.
    eps: (u32, u32),
    gap: Time,
    size: u32,
    onoff: Option<(f64, f64)>,
    on_until: Time,
    stop: Option<Time>,
    rng: Rng,
    sent: u64,
}

pub struct World {
    now: Time,
    q: EventQueue,
    seed: u64,
    name: String,
    b: Built,
    slab: Slab,
    eps: Vec<Endpoint>,
    flows: Vec<Flow>,
    workloads: Vec<Workload>,
    sources: Vec<Source>,
    sample_every: Option<Time>,
    samples: Option<Table>,
    /// The QUIC connections' TLS key log (`RunOptions::keylog`).
    key_log: Option<std::sync::Arc<spacetp_quic::KeyLogFile>>,
    /// The folder of the QUIC connections' qlogs (`RunOptions::qlog`).
    qlog_dir: Option<std::path::PathBuf>,
    segments: Option<Table>,
    taps: Vec<PcapTap>,
    /// Simulated attackers (`[[attacks]]`).
    attackers: Vec<Attacker>,
    /// Flows and workload clients that keep the run going.
    alive: usize,
    /// Corruption notices routers sent.
    corruption_notices: u64,
    /// The delay-tolerant network of bp flows, if any (`dtn.rs`).
    dtn: Option<Box<dtn::Dtn>>,
    /// Keep each flow's limit states over time (with the traces) for the figures.
    trace_limits: bool,
    /// The flows' settings, one copy of each distinct set (`registry::Shared`).
    shared: crate::transport::registry::Shared,
}

mod apps;
mod dtn;
mod limits;
mod report;
mod setup;

impl World {
    /// Run to the end and return the results.
    pub fn run(mut self) -> RunOutput {
        while let Some((t, ev)) = self.q.pop() {
            self.now = t;
            match ev {
                Event::TxDone(l) => self.tx_done(l),
                Event::Arrive(l) => self.arrive(l),
                Event::Timer(ep) => self.timer(ep),
                Event::AppWake(ep) => self.wake_app(ep),
                Event::FlowStart(f) => self.start_flow(f),
                Event::FlowStop(f) => self.stop_flow(f),
                Event::Request(w, c) => self.request(w, c),
                Event::Datagram(s) => self.datagram(s),
                Event::Sample => self.sample(),
                Event::LinkState(l, up) => self.link_state(l, up),
                Event::Reroute => self.account_rerouted_flows(),
                Event::Attack(a) => self.attack(a),
                Event::DtnAgent(n) => self.dtn_agent_timer(n),
                Event::Contact(c, up) => self.dtn_contact(c, up),
                Event::Stop => break,
            }
            // Without flows or workloads only the stop time ends the run.
            if self.alive == 0 && !(self.flows.is_empty() && self.workloads.is_empty()) {
                break;
            }
        }
        for t in &mut self.taps {
            t.finish();
        }
        if let Some(k) = &self.key_log {
            // Written out with the pcaps: a run's files are complete when it returns.
            let _ = k.flush();
        }
        self.finish()
    }

    // ----- links -----

    fn send_from(&mut self, node: u16, id: PacketId) {
        let dst = self.slab.get(id).dst;
        match self.b.routes.hop_at(node, dst, self.now) {
            Some(ld) => self.enqueue(ld, id),
            None => {
                self.slab.remove(id);
            }
        }
    }

    fn enqueue(&mut self, ld: u32, id: PacketId) {
        let p = self.slab.get(id);
        let (size, low) = (p.size, p.low_priority);
        let slab = &mut self.slab;
        let l = &mut self.b.links[ld as usize];
        match l.offer(id, size, low, |victim| slab.remove(victim).size) {
            Offer::Transmit => self.start_tx(ld, id),
            Offer::Queued => {}
            Offer::Dropped => {
                self.slab.remove(id);
            }
        }
    }

    fn start_tx(&mut self, ld: u32, id: PacketId) {
        let now = self.now;
        let l = &mut self.b.links[ld as usize];
        let p = self.slab.get(id);
        let done = l.begin_tx(id, p.size, now);
        if let Some(t) = l.tap {
            self.taps[t].record(now, p, &packet_ports(p), self.slab.payload(id));
        }
        self.q.schedule(done, Event::TxDone(ld));
    }

    fn tx_done(&mut self, ld: u32) {
        let now = self.now;
        let l = &mut self.b.links[ld as usize];
        let Some(end) = l.end_tx(now) else {
            return;
        };
        match end {
            TxEnd::Lost(id) => {
                self.slab.remove(id);
            }
            TxEnd::Propagating {
                id,
                at,
                corrupted,
                head,
            } => {
                if corrupted {
                    self.slab.get_mut(id).corrupted = true;
                }
                if head {
                    self.q.schedule(at, Event::Arrive(ld));
                }
            }
        }
        let slab = &self.slab;
        let l = &mut self.b.links[ld as usize];
        if let Some(next) = l.dequeue(|i| slab.get(i).size) {
            self.start_tx(ld, next);
        }
    }

    fn arrive(&mut self, ld: u32) {
        let l = &mut self.b.links[ld as usize];
        let Some((id, next)) = l.arrive() else {
            return;
        };
        if let Some(t) = next {
            self.q.schedule(t, Event::Arrive(ld));
        }
        let node = l.to;
        self.receive(node, id);
    }

    fn receive(&mut self, node: u16, id: PacketId) {
        let (dst, corrupted) = (self.slab.get(id).dst, self.slab.get(id).corrupted);
        if !corrupted {
            if dst == node {
                self.deliver(id);
            } else {
                self.send_from(node, id);
            }
            return;
        }
        let p = *self.slab.get(id);
        {
            // The receiving interface detects the damage and discards the packet. The
            // destination host's transport hears of it (and echoes Corruption Experienced);
            // a router sends the sender an ICMP-like notice (SCPS-TP corruption signalling).
            self.slab.remove(id);
            if let Body::Transport { ep, .. } = p.body {
                if !self.eps[ep as usize].transport.takes_signals() {
                    // nobody to tell
                } else if p.dst == node {
                    self.eps[ep as usize].transport.on_corruption_detected();
                    self.service(ep);
                } else {
                    let sender = self.eps[ep as usize].peer_ep;
                    let notice = self.slab.insert(Packet {
                        src: node,
                        dst: p.src,
                        size: crate::packet::NOTICE_SIZE,
                        corrupted: false,
                        low_priority: false,
                        body: Body::CorruptionNotice { ep: sender },
                    });
                    self.corruption_notices += 1;
                    self.send_from(node, notice);
                }
            }
        }
    }

    /// A packet reached its destination node.
    fn deliver(&mut self, id: PacketId) {
        if let Body::Transport { ep, ref wire } = self.slab.get(id).body {
            // The transport reads the packet in place (a packet is about 190 bytes, and
            // copying it out was a measurable share of a run); the slot is freed before the
            // transport answers, so that the answer reuses it.
            let e = &mut self.eps[ep as usize];
            let live = !e.dead;
            if live {
                e.transport.on_packet(self.now, wire, self.slab.payload(id));
            }
            self.slab.free(id);
            if live {
                self.service(ep);
            }
            return;
        }
        let p = self.slab.remove(id);
        match p.body {
            Body::Transport { .. } => unreachable!("handled above"),
            Body::CorruptionNotice { ep } => {
                if !self.eps[ep as usize].dead {
                    self.eps[ep as usize]
                        .transport
                        .on_corruption_notice(self.now);
                    self.service(ep);
                }
            }
            Body::LinkNotice { ep, up } => self.link_notice(ep, up),
        }
    }

    // ----- endpoints -----

    fn timer(&mut self, ep: u32) {
        let e = &mut self.eps[ep as usize];
        if e.timer_at != Some(self.now) || e.dead {
            return; // superseded by an earlier deadline (lazily cancelled), or abandoned
        }
        e.timer_at = None;
        e.transport.on_timer(self.now);
        self.service(ep);
    }

    /// A link went down or came back: the node that sends onto it on each endpoint's side (a
    /// ground station, or the endpoint's own host) notifies every endpoint whose path crosses
    /// it.
    fn link_state(&mut self, link: u32, up: bool) {
        self.account_flows_on_link(link);
        for ep in 0..self.eps.len() as u32 {
            let e = &self.eps[ep as usize];
            if e.dead || !e.transport.listens_for_link_state() || e.bundled {
                // (bundles wait in the agents' stores: their ends hear of no link)
                continue;
            }
            let (mut n, dst) = (e.node, e.peer_node);
            let mut station = None;
            for _ in 0..self.b.links.len() {
                // (bounded: a transient forwarding state may lead around)
                if n == dst {
                    break;
                }
                let Some(ld) = self.b.routes.hop_at(n, dst, self.now) else {
                    break;
                };
                if ld / 2 == link {
                    station = Some(n);
                    break;
                }
                n = self.b.links[ld as usize].to;
            }
            let Some(station) = station else { continue };
            if station == self.eps[ep as usize].node {
                self.link_notice(ep, up);
            } else {
                let notice = self.slab.insert(Packet {
                    src: station,
                    dst: self.eps[ep as usize].node,
                    size: crate::packet::NOTICE_SIZE,
                    corrupted: false,
                    low_priority: false,
                    body: Body::LinkNotice { ep, up },
                });
                self.send_from(station, notice);
            }
        }
    }

    fn link_notice(&mut self, ep: u32, up: bool) {
        if self.eps[ep as usize].dead {
            return;
        }
        let c = &mut self.eps[ep as usize].transport;
        if up {
            c.on_link_restored(self.now);
        } else {
            c.on_link_outage(self.now);
        }
        self.service(ep);
    }

    // ----- results -----
}

/// Source and destination ports of a packet, for pcap output.
fn packet_ports(p: &Packet) -> (u16, u16) {
    match p.body {
        Body::Transport { ref wire, .. } => wire.ports(),
        Body::CorruptionNotice { .. } | Body::LinkNotice { .. } => (0, 0),
    }
}
