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
use spacetp_proto::connection::CloseReason;
use spacetp_proto::time::secs;
use spacetp_proto::{Connection, State, TcpConfig, Time};
use spacetp_wire::{
    compress, decompress, flags, CompressedHeader, CompressionContext, TcpHeader, IPV4_HEADER_LEN,
    TCP_HEADER_LEN,
};

/// Options of one run that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record these links to pcap files: (link selector, path). A selector is a link index
    /// ("1"), "links[1]" or "a-b" with the node names of its ends.
    pub pcap: Vec<(String, String)>,
}

struct Endpoint {
    conn: Connection,
    node: u16,
    peer_node: u16,
    peer_ep: u32,
    flow: u32,
    sender: bool,
    /// Time of the timer event in the queue that is still valid.
    timer_at: Option<Time>,
    /// Abandoned at the flow's stop time: receives, sends and times nothing more.
    dead: bool,
    /// A receiving application that reads at a limited rate.
    reader: Option<Reader>,
    /// SCPS header compression state of the direction this endpoint sends (set up from its
    /// own SYN) and of the direction it receives (set up from the peer's SYN).
    comp_tx: Option<CompressionContext>,
    comp_rx: Option<CompressionContext>,
}

/// An application reading at `rate` bits/s: it earns read credit with time.
struct Reader {
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
    cfg: TcpConfig,
    /// The receiving end's settings when its profile differs.
    peer_cfg: Option<TcpConfig>,
    mss: u32,
    read_rate: Option<f64>,
    eps: Option<(u32, u32)>,
    delivered: u64,
    last_byte: Option<Time>,
    /// `goodput_window` and the bytes delivered by its start and by its end.
    window: Option<(Time, Time)>,
    delivered_by: [u64; 2],
    done: bool,
    snapshot: Option<FlowSummary>,
    workload: Option<u32>,
}

struct Workload {
    name: String,
    size: Dist,
    interval: Dist,
    clients: Vec<u16>,
    server: u16,
    direction: Direction,
    protocol: String,
    cfg: TcpConfig,
    mss: u32,
    stop: Option<Time>,
    count: Option<u32>,
    issued: Vec<u32>,
    rng: Rng,
}

struct Source {
    from: u16,
    to: u16,
    gap: Time,
    size: u32,
    onoff: Option<(f64, f64)>,
    on_until: Time,
    stop: Option<Time>,
    rng: Rng,
    sent: u64,
    received: u64,
    bytes_received: u64,
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
    segments: Option<Table>,
    taps: Vec<PcapTap>,
    /// Simulated attackers (`[[attacks]]`).
    attackers: Vec<Attacker>,
    /// Flows and workload clients that keep the run going.
    alive: usize,
    /// Corruption notices routers sent.
    corruption_notices: u64,
}

impl World {
    pub fn new(mut sc: Scenario, opts: &RunOptions) -> Result<World, String> {
        let origins = build::expand_topology(&mut sc)?;
        let idx = build::node_index(&sc)?;
        let max_pkt = sc
            .flows
            .iter()
            .map(|f| f.mtu.0)
            .chain(sc.workloads.iter().map(|w| w.mtu.0))
            .max()
            .unwrap_or(1500)
            .clamp(68, 65535) as u32;
        let mut b = build::build_links(&sc, &idx, max_pkt, &origins)?;
        let mut w = World {
            now: 0,
            q: EventQueue::default(),
            seed: sc.seed,
            name: sc.name.clone(),
            slab: Slab::default(),
            eps: Vec::new(),
            flows: Vec::new(),
            workloads: Vec::new(),
            sources: Vec::new(),
            sample_every: None,
            samples: None,
            segments: None,
            taps: Vec::new(),
            attackers: Vec::new(),
            alive: 0,
            corruption_notices: 0,
            b: Built {
                node_names: Vec::new(),
                node_kinds: Vec::new(),
                links: Vec::new(),
                routes: Vec::new(),
                link_names: Vec::new(),
            },
        };
        let stop = sc.stop.map(|d| d.0);
        for (i, f) in sc.flows.iter().enumerate() {
            w.add_flow_cfg(f, i, &idx, &b, stop)?;
        }
        for (i, wl) in sc.workloads.iter().enumerate() {
            w.add_workload(wl, i, &idx, &b, stop)?;
        }
        for (i, t) in sc.traffic.iter().enumerate() {
            w.add_source(t, i, &idx, &b, stop)?;
        }
        for (i, a) in sc.attacks.iter().enumerate() {
            a.validate(i, sc.flows.len())?;
            let at = Attacker {
                cfg: a.clone(),
                rng: Rng::for_component(sc.seed, stream::ATTACK, i as u64),
                sent: 0,
                injected: 0,
                forged_bytes_accepted: 0,
            };
            if let Some(t) = at.next_at() {
                w.q.schedule(t, Event::Attack(i as u32));
            }
            w.attackers.push(at);
        }
        if w.alive == 0 && stop.is_none() {
            return Err("nothing to run: add [[flows]] or [[workloads]], or a stop time".into());
        }
        if let Some(t) = &sc.trace {
            if let Some(iv) = t.interval {
                if iv.0 == 0 {
                    return Err("trace.interval: must be > 0".into());
                }
                w.sample_every = Some(iv.0);
                w.samples = Some(Table::new(&[
                    "time_s",
                    "flow",
                    "cwnd",
                    "ssthresh",
                    "srtt_s",
                    "flight",
                    "snd_max",
                    "snd_una",
                    "delivered",
                ]));
                w.q.schedule(0, Event::Sample);
            }
            if t.segments {
                w.segments = Some(Table::new(&[
                    "time_s",
                    "flow",
                    "offset",
                    "len",
                    "retransmission",
                ]));
            }
        }
        for (sel, path) in &opts.pcap {
            let li = select_link(sel, &sc, &b)?;
            let tap = PcapTap::create(path, &b.node_names)
                .map_err(|e| format!("--pcap {sel}={path}: {e}"))?;
            b.links[2 * li].tap = Some(w.taps.len());
            b.links[2 * li + 1].tap = Some(w.taps.len());
            w.taps.push(tap);
        }
        if let Some(s) = stop {
            w.q.schedule(s, Event::Stop);
        }
        for li in 0..b.links.len() / 2 {
            for &(start, end) in &b.links[2 * li].outages {
                w.q.schedule(start, Event::LinkState(li as u32, false));
                w.q.schedule(end, Event::LinkState(li as u32, true));
            }
        }
        w.b = b;
        Ok(w)
    }

    fn add_flow_cfg(
        &mut self,
        f: &FlowCfg,
        i: usize,
        idx: &std::collections::HashMap<String, u16>,
        b: &Built,
        stop: Option<Time>,
    ) -> Result<(), String> {
        let p = format!("flows[{i}]");
        let from = build::lookup(idx, &f.from, &format!("{p}.from"))?;
        let to = build::lookup(idx, &f.to, &format!("{p}.to"))?;
        if from == to {
            return Err(format!("{p}: from and to are the same node \"{}\"", f.from));
        }
        check_route(b, from, to, &p)?;
        let mss = build::mss_for(f.mtu.0, &p)?;
        check_path_mtu(b, from, to, f.mtu.0 as u32, &p)?;
        let cfg = build::tcp_config(
            &f.protocol,
            f.tcp.as_ref(),
            f.receive_buffer,
            f.send_buffer,
            &p,
        )?;
        let peer_cfg = match &f.peer_protocol {
            Some(name) => Some(
                build::tcp_config(name, f.tcp.as_ref(), f.receive_buffer, f.send_buffer, &p)
                    .map_err(|e| e.replace(".protocol:", ".peer_protocol:"))?,
            ),
            None => None,
        };
        let fstop = f.stop.map(|d| d.0).or(stop);
        if f.bytes.is_none() && fstop.is_none() {
            return Err(format!(
                "{p}: give bytes, or a stop time (here or at the top level)"
            ));
        }
        if let Some(s) = f.stop {
            if s.0 <= f.start.0 {
                return Err(format!("{p}.stop: {s} must be after start {}", f.start));
            }
        }
        if f.record_size.is_some_and(|r| r.0 == 0) {
            return Err(format!("{p}.record_size: must be at least 1 byte"));
        }
        if let Some((a, b)) = f.goodput_window {
            if b.0 <= a.0 {
                return Err(format!(
                    "{p}.goodput_window: [{a}, {b}] is empty; the end must be after the start"
                ));
            }
        }
        let fi = self.flows.len() as u32;
        self.flows.push(Flow {
            name: f.name.clone().unwrap_or_else(|| format!("flow{i}")),
            protocol: f.protocol.clone(),
            from,
            to,
            total: f.bytes.map(|b| b.0),
            to_write: f.bytes.map_or(u64::MAX, |b| b.0),
            record_size: f.record_size.map(|b| b.0),
            record_fill: 0,
            start: f.start.0,
            cfg,
            peer_cfg,
            mss,
            read_rate: f.read_rate.map(|r| r.0),
            eps: None,
            delivered: 0,
            last_byte: None,
            window: f.goodput_window.map(|(a, b)| (a.0, b.0)),
            delivered_by: [0; 2],
            done: false,
            snapshot: None,
            workload: None,
        });
        self.alive += 1;
        self.q.schedule(f.start.0, Event::FlowStart(fi));
        // A finite flow is stopped only by its own `stop`; the run's stop ends everything.
        let own_stop = if f.bytes.is_none() {
            fstop
        } else {
            f.stop.map(|d| d.0)
        };
        if let Some(t) = own_stop {
            self.q.schedule(t, Event::FlowStop(fi));
        }
        Ok(())
    }

    fn add_workload(
        &mut self,
        wl: &WorkloadCfg,
        i: usize,
        idx: &std::collections::HashMap<String, u16>,
        b: &Built,
        stop: Option<Time>,
    ) -> Result<(), String> {
        let p = format!("workloads[{i}]");
        let server = build::lookup(idx, &wl.server, &format!("{p}.server"))?;
        if wl.clients.is_empty() {
            return Err(format!("{p}.clients: needs at least one client"));
        }
        let mut clients = Vec::new();
        for (j, c) in wl.clients.iter().enumerate() {
            let n = build::lookup(idx, c, &format!("{p}.clients[{j}]"))?;
            if n == server {
                return Err(format!("{p}.clients[{j}]: \"{c}\" is also the server"));
            }
            check_route(b, n, server, &p)?;
            check_route(b, server, n, &p)?;
            check_path_mtu(b, n, server, wl.mtu.0 as u32, &p)?;
            check_path_mtu(b, server, n, wl.mtu.0 as u32, &p)?;
            clients.push(n);
        }
        let size = Dist::from_cfg(&wl.size, &format!("{p}.size"))?;
        let interval = Dist::from_cfg(&wl.interval, &format!("{p}.interval"))?;
        let wstop = wl.stop.map(|d| d.0).or(stop);
        if wstop.is_none() && wl.count.is_none() {
            return Err(format!(
                "{p}: give count, or a stop time (here or at the top level)"
            ));
        }
        let mss = build::mss_for(wl.mtu.0, &p)?;
        let cfg = build::tcp_config(
            &wl.protocol,
            wl.tcp.as_ref(),
            wl.receive_buffer,
            wl.send_buffer,
            &p,
        )?;
        let mut rng = Rng::for_component(self.seed, stream::WORKLOAD, i as u64);
        let wi = self.workloads.len() as u32;
        for c in 0..clients.len() {
            let first = wl.start.0 + interval.draw(&mut rng).max(0.0) as Time;
            if wstop.is_none_or(|s| first < s) && wl.count != Some(0) {
                self.q.schedule(first, Event::Request(wi, c as u32));
                self.alive += 1;
            }
        }
        self.workloads.push(Workload {
            name: format!("workload{i}"),
            size,
            interval,
            issued: vec![0; clients.len()],
            clients,
            server,
            direction: wl.direction,
            protocol: wl.protocol.clone(),
            cfg,
            mss,
            stop: wstop,
            count: wl.count,
            rng,
        });
        Ok(())
    }

    fn add_source(
        &mut self,
        t: &DatagramCfg,
        i: usize,
        idx: &std::collections::HashMap<String, u16>,
        b: &Built,
        stop: Option<Time>,
    ) -> Result<(), String> {
        let p = format!("traffic[{i}]");
        let from = build::lookup(idx, &t.from, &format!("{p}.from"))?;
        let to = build::lookup(idx, &t.to, &format!("{p}.to"))?;
        check_route(b, from, to, &p)?;
        if t.size.0 < 28 || t.size.0 > 65535 {
            return Err(format!(
                "{p}.size: {} B must be in [28, 65535] (IP + UDP headers)",
                t.size.0
            ));
        }
        check_path_mtu(b, from, to, t.size.0 as u32, &p)?;
        let onoff = match t.pattern {
            DatagramPattern::Cbr => None,
            DatagramPattern::Onoff => {
                let on =
                    t.on.ok_or_else(|| format!("{p}.on: required for pattern onoff"))?;
                let off = t
                    .off
                    .ok_or_else(|| format!("{p}.off: required for pattern onoff"))?;
                Some((on.0 as f64, off.0 as f64))
            }
        };
        let gap = ((t.size.0 as f64 * 8.0 / t.rate.0) * 1e9).round().max(1.0) as Time;
        let si = self.sources.len() as u32;
        self.sources.push(Source {
            from,
            to,
            gap,
            size: t.size.0 as u32,
            onoff,
            on_until: 0,
            stop: t.stop.map(|d| d.0).or(stop),
            rng: Rng::for_component(self.seed, stream::TRAFFIC, i as u64),
            sent: 0,
            received: 0,
            bytes_received: 0,
        });
        self.q.schedule(t.start.0, Event::Datagram(si));
        Ok(())
    }

    /// Run to the end and return the results.
    pub fn run(mut self) -> RunOutput {
        while let Some((t, ev)) = self.q.pop() {
            self.now = t;
            match ev {
                Event::TxDone(l) => self.tx_done(l),
                Event::Arrive(l) => self.arrive(l),
                Event::Timer(ep) => self.timer(ep),
                Event::Read(ep) => self.wake_reader(ep),
                Event::FlowStart(f) => self.start_flow(f),
                Event::FlowStop(f) => self.stop_flow(f),
                Event::Request(w, c) => self.request(w, c),
                Event::Datagram(s) => self.datagram(s),
                Event::Sample => self.sample(),
                Event::LinkState(l, up) => self.link_state(l, up),
                Event::Attack(a) => self.attack(a),
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
        self.finish()
    }

    // ----- links -----

    fn send_from(&mut self, node: u16, id: PacketId) {
        let dst = self.slab.get(id).dst;
        match self.b.routes[node as usize][dst as usize] {
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
            self.taps[t].record(now, p, &packet_ports(p));
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
            if let Body::Tcp { ep, .. } = p.body {
                if p.dst == node {
                    self.eps[ep as usize].conn.on_corruption_detected();
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
        let p = self.slab.get(id);
        if let Body::Tcp {
            ep,
            ref hdr,
            len,
            ref comp,
        } = p.body
        {
            // The connection reads the header in place (a packet is about 190 bytes, and
            // copying it out was a measurable share of a run); the slot is freed before the
            // connection answers, so that the answer reuses it.
            let e = &mut self.eps[ep as usize];
            let live = !e.dead;
            if live {
                // From the peer's first SYN only: a later SYN (a copy, or spoofed) must not
                // replace the context the connection's headers decode against.
                if hdr.has(flags::SYN) && e.comp_rx.is_none() {
                    e.comp_rx = compression_context(hdr, p.src, p.dst);
                }
                // A compressed header decodes against the receiver's context, as on a real
                // link: fields omitted after a lost header come out with older values.
                match (comp, e.comp_rx.as_mut()) {
                    (None, _) => {
                        e.conn.on_segment(self.now, hdr, len);
                    }
                    (Some(c), Some(ctx)) => {
                        if let Ok(d) = decompress(c.as_bytes(), ctx) {
                            e.conn.on_segment(self.now, &d.header, len);
                        }
                    }
                    (Some(_), None) => {} // no context: undecodable, dropped
                }
            }
            self.slab.free(id);
            if live {
                self.service(ep);
            }
            return;
        }
        let p = self.slab.remove(id);
        match p.body {
            Body::Tcp { .. } => unreachable!("handled above"),
            Body::Datagram { source } => {
                let s = &mut self.sources[source as usize];
                s.received += 1;
                s.bytes_received += p.size as u64;
            }
            Body::CorruptionNotice { ep } => {
                if !self.eps[ep as usize].dead {
                    self.eps[ep as usize].conn.on_corruption_notice(self.now);
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
        if e.conn.poll_timeout().is_some_and(|d| d <= self.now) {
            e.conn.on_timeout(self.now);
        }
        self.service(ep);
    }

    fn wake_reader(&mut self, ep: u32) {
        let e = &mut self.eps[ep as usize];
        if e.dead {
            return;
        }
        if let Some(r) = &mut e.reader {
            r.wake_at = None;
        }
        self.service(ep);
    }

    /// A link went down or came back: the node that sends onto it on each endpoint's side (a
    /// ground station, or the endpoint's own host) notifies every endpoint whose path crosses
    /// it.
    fn link_state(&mut self, link: u32, up: bool) {
        for ep in 0..self.eps.len() as u32 {
            let e = &self.eps[ep as usize];
            if e.dead || e.conn.is_finished() {
                continue;
            }
            let (mut n, dst) = (e.node, e.peer_node);
            let mut station = None;
            while n != dst {
                let Some(ld) = self.b.routes[n as usize][dst as usize] else {
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
        let c = &mut self.eps[ep as usize].conn;
        if up {
            c.on_link_restored(self.now);
        } else {
            c.on_link_outage(self.now);
        }
        self.service(ep);
    }

    /// Let the application act, send what the connection wants to send, re-arm its timer.
    fn service(&mut self, ep: u32) {
        let now = self.now;
        let e = &mut self.eps[ep as usize];
        let f = &mut self.flows[e.flow as usize];
        if e.sender {
            while f.to_write > 0 {
                let want = match f.record_size {
                    Some(r) => f.to_write.min(r - f.record_fill),
                    None => f.to_write,
                };
                let n = e.conn.send(want);
                if f.total.is_some() {
                    f.to_write -= n;
                }
                if let Some(r) = f.record_size {
                    f.record_fill += n;
                    if f.record_fill == r || f.to_write == 0 {
                        e.conn.end_record();
                        f.record_fill = 0;
                    }
                }
                if f.to_write == 0 {
                    e.conn.close();
                }
                if n < want || f.record_size.is_none() {
                    break;
                }
            }
        } else {
            if let Some(r) = &mut e.reader {
                // Earn credit since the last read (at most one buffer's worth when idle), read.
                let cap = e.conn.config().receive_buffer.0 as f64 * 8.0;
                r.credit = (r.credit + (now - r.last) as f64 * 1e-9 * r.rate).min(cap);
                r.last = now;
                let got = e.conn.read((r.credit / 8.0) as u64);
                r.credit -= got as f64 * 8.0;
                if e.conn.readable() > 0 && r.wake_at.is_none() {
                    // wake when one full segment of credit has accrued
                    let dt = ((f.mss as f64 * 8.0 - r.credit).max(8.0) / r.rate * 1e9) as Time;
                    r.wake_at = Some(now + dt.max(1));
                    self.q.schedule(now + dt.max(1), Event::Read(ep));
                }
            }
            let d = e.conn.delivered();
            if d > f.delivered {
                f.delivered = d;
                f.last_byte = Some(now);
                if let Some((a, b)) = f.window {
                    if now <= a {
                        f.delivered_by[0] = d;
                    }
                    if now <= b {
                        f.delivered_by[1] = d;
                    }
                }
            }
            // The application reads to end of file before it closes its side.
            if e.conn.state() == State::CloseWait && e.conn.readable() == 0 {
                e.conn.close();
            }
        }
        let (node, peer_node, peer_ep, flow, sender) = {
            let e = &self.eps[ep as usize];
            (e.node, e.peer_node, e.peer_ep, e.flow, e.sender)
        };
        // Each segment goes onto the link as soon as the connection yields it (sending touches
        // no connection state, so the order of events is the same as collecting them first);
        // this saves copying every header through an intermediate buffer.
        while let Some(t) = self.eps[ep as usize].conn.poll_transmit(now) {
            if sender && t.len > 0 {
                if let Some(seg) = &mut self.segments {
                    seg.push(&[
                        secs(now),
                        flow as f64,
                        (t.pos - 1) as f64,
                        t.len as f64,
                        t.retransmission as u8 as f64,
                    ]);
                }
            }
            let comp = self.compress(ep, &t.hdr, t.len);
            let header_len = match &comp {
                Some(c) => c.len() as u32,
                None => TCP_HEADER_LEN + t.hdr.options.padded_len(),
            };
            let size = IPV4_HEADER_LEN + header_len + t.len;
            let id = self.slab.insert(Packet {
                src: node,
                dst: peer_node,
                size,
                corrupted: false,
                low_priority: t.low_priority,
                body: Body::Tcp {
                    ep: peer_ep,
                    hdr: t.hdr,
                    len: t.len,
                    comp,
                },
            });
            self.send_from(node, id);
        }
        let e = &mut self.eps[ep as usize];
        if let Some(d) = e.conn.poll_timeout() {
            let d = d.max(now);
            if e.timer_at.is_none_or(|t| d < t) {
                e.timer_at = Some(d);
                self.q.schedule(d, Event::Timer(ep));
            }
        }
        self.check_flow_done(flow);
    }

    /// The compressed header endpoint `ep` sends `hdr` with, if its connection negotiated
    /// SCPS header compression (SYNs set the context up and travel uncompressed).
    fn compress(&mut self, ep: u32, hdr: &TcpHeader, len: u32) -> Option<CompressedHeader> {
        let e = &mut self.eps[ep as usize];
        if hdr.has(flags::SYN) {
            e.comp_tx = compression_context(hdr, e.node, e.peer_node);
            return None;
        }
        if !e.conn.header_compression() {
            return None;
        }
        let ctx = e.comp_tx.as_mut()?;
        let c = compress(hdr, len as usize, ctx).ok()?;
        ctx.record(hdr);
        Some(c)
    }

    fn check_flow_done(&mut self, fi: u32) {
        let f = &self.flows[fi as usize];
        if f.done || f.total.is_none() {
            return;
        }
        let Some((s, r)) = f.eps else { return };
        let (s, r) = (&self.eps[s as usize].conn, &self.eps[r as usize].conn);
        let aborted = |c: &Connection| c.close_reason().is_some_and(|x| x != CloseReason::Normal);
        if (s.is_finished() && r.is_finished()) || aborted(s) || aborted(r) {
            self.flows[fi as usize].done = true;
            self.alive -= 1;
        }
    }

    fn start_flow(&mut self, fi: u32) {
        let f = &self.flows[fi as usize];
        let mut rng = Rng::for_component(self.seed, stream::ISN, fi as u64);
        let cport = 49152 + (fi % 16384) as u16;
        let sport = if f.workload.is_some() { 20 } else { 5001 };
        let s_ep = self.eps.len() as u32;
        let client = Connection::connect(&f.cfg, f.mss, cport, sport, rng.next_u64() as u32);
        let server = Connection::listen(
            f.peer_cfg.as_ref().unwrap_or(&f.cfg),
            f.mss,
            sport,
            cport,
            rng.next_u64() as u32,
        );
        self.eps.push(Endpoint {
            conn: client,
            node: f.from,
            peer_node: f.to,
            peer_ep: s_ep + 1,
            flow: fi,
            sender: true,
            timer_at: None,
            dead: false,
            reader: None,
            comp_tx: None,
            comp_rx: None,
        });
        self.eps.push(Endpoint {
            conn: server,
            node: f.to,
            peer_node: f.from,
            peer_ep: s_ep,
            flow: fi,
            sender: false,
            timer_at: None,
            dead: false,
            reader: f.read_rate.map(|rate| Reader {
                rate,
                credit: 0.0,
                last: 0,
                wake_at: None,
            }),
            comp_tx: None,
            comp_rx: None,
        });
        if f.read_rate.is_some() {
            self.eps[s_ep as usize + 1].conn.set_manual_read();
        }
        self.flows[fi as usize].eps = Some((s_ep, s_ep + 1));
        self.service(s_ep);
    }

    /// The flow's stop time: freeze its counters and abandon its connection.
    fn stop_flow(&mut self, fi: u32) {
        if self.flows[fi as usize].done {
            return;
        }
        let snap = self.flow_summary(fi as usize);
        let f = &mut self.flows[fi as usize];
        f.snapshot = Some(snap);
        f.done = true;
        if let Some((s, r)) = f.eps {
            self.eps[s as usize].dead = true;
            self.eps[r as usize].dead = true;
        }
        self.alive -= 1;
    }

    fn request(&mut self, wi: u32, ci: u32) {
        let now = self.now;
        let w = &mut self.workloads[wi as usize];
        let size = (w.size.draw(&mut w.rng).round() as u64).max(1);
        let client = w.clients[ci as usize];
        let (from, to) = match w.direction {
            Direction::Get => (w.server, client),
            Direction::Put => (client, w.server),
        };
        w.issued[ci as usize] += 1;
        let n = w.issued[ci as usize];
        let next = now + w.interval.draw(&mut w.rng).max(0.0) as Time;
        let more = w.stop.is_none_or(|s| next < s) && w.count.is_none_or(|c| n < c);
        let flow = Flow {
            name: format!("{}.c{}.{}", w.name, ci, n),
            protocol: w.protocol.clone(),
            from,
            to,
            total: Some(size),
            to_write: size,
            record_size: None,
            record_fill: 0,
            start: now,
            cfg: w.cfg.clone(),
            peer_cfg: None,
            mss: w.mss,
            read_rate: None,
            eps: None,
            delivered: 0,
            last_byte: None,
            window: None,
            delivered_by: [0; 2],
            done: false,
            snapshot: None,
            workload: Some(wi),
        };
        let fi = self.flows.len() as u32;
        self.flows.push(flow);
        self.alive += 1;
        if more {
            self.q.schedule(next, Event::Request(wi, ci));
        } else {
            self.alive -= 1;
        }
        self.start_flow(fi);
    }

    fn datagram(&mut self, si: u32) {
        let now = self.now;
        let s = &mut self.sources[si as usize];
        if s.stop.is_some_and(|t| now >= t) {
            return;
        }
        if let Some((on, off)) = s.onoff {
            if now >= s.on_until {
                let start = now + s.rng.exponential(off) as Time;
                s.on_until = start + s.rng.exponential(on).max(1.0) as Time;
                self.q.schedule(start, Event::Datagram(si));
                return;
            }
        }
        s.sent += 1;
        let (from, to, size, gap) = (s.from, s.to, s.size, s.gap);
        self.q.schedule(now + gap, Event::Datagram(si));
        let id = self.slab.insert(Packet {
            src: from,
            dst: to,
            size,
            corrupted: false,
            low_priority: false,
            body: Body::Datagram { source: si },
        });
        self.send_from(from, id);
    }

    fn sample(&mut self) {
        let now = self.now;
        if let Some(tab) = &mut self.samples {
            for (fi, f) in self.flows.iter().enumerate() {
                let Some((s, _)) = f.eps else { continue };
                if f.done {
                    continue;
                }
                let c = &self.eps[s as usize].conn;
                let w = c.window();
                tab.push(&[
                    secs(now),
                    fi as f64,
                    w.cwnd as f64,
                    if w.ssthresh == u64::MAX {
                        f64::INFINITY
                    } else {
                        w.ssthresh as f64
                    },
                    c.rtt().srtt().map_or(f64::NAN, secs),
                    c.bytes_in_flight() as f64,
                    c.snd_max().saturating_sub(1) as f64,
                    c.snd_una().saturating_sub(1) as f64,
                    f.delivered as f64,
                ]);
            }
        }
        if let Some(iv) = self.sample_every {
            self.q.schedule(now + iv, Event::Sample);
        }
    }

    // ----- results -----

    fn flow_summary(&self, fi: usize) -> FlowSummary {
        let f = &self.flows[fi];
        let mut s = FlowSummary {
            name: f.name.clone(),
            protocol: f.protocol.clone(),
            from: self.b.node_names[f.from as usize].clone(),
            to: self.b.node_names[f.to as usize].clone(),
            bytes_requested: f.total,
            bytes_delivered: f.delivered,
            bytes_undelivered: f.total.map(|t| t - f.delivered.min(t)),
            complete: f.total.is_some_and(|t| f.delivered >= t),
            start_s: secs(f.start),
            last_byte_s: f.last_byte.map(secs),
            workload: f.workload.map(|w| self.workloads[w as usize].name.clone()),
            state: "not started".into(),
            ..Default::default()
        };
        if s.complete {
            s.completion_s = f.last_byte.map(|t| secs(t - f.start));
        }
        if let Some(t) = f.last_byte {
            if t > f.start {
                s.goodput_bps = f.delivered as f64 * 8.0 / secs(t - f.start);
            }
        }
        if let Some((a, b)) = f.window {
            let bytes = f.delivered_by[1] - f.delivered_by[0];
            s.goodput_window_bps = Some(bytes as f64 * 8.0 / secs(b - a));
        }
        if let Some((se, re)) = f.eps {
            let c = &self.eps[se as usize].conn;
            let st = c.stats();
            s.segments_sent = st.segments_sent;
            s.data_segments_sent = st.data_segments_sent;
            s.retransmitted_segments = st.retransmitted_segments;
            s.retransmitted_bytes = st.retransmitted_bytes;
            s.timeouts = st.timeouts;
            s.fast_retransmits = st.fast_retransmits;
            s.nil_segments_sent = st.nil_segments_sent;
            s.snacks_received = st.snacks_received;
            s.snack_retransmits = st.snack_retransmits;
            let rc = &self.eps[re as usize].conn;
            s.acks_sent = rc.stats().segments_sent;
            s.records_delivered = rc.records_delivered();
            s.bets_bytes_lost = rc.bets_bytes_lost();
            // RFC 5961 at both ends: what they refused of what arrived.
            for st in [c.stats(), rc.stats()] {
                s.rst_rejected += st.rst_rejected;
                s.syn_rejected += st.syn_rejected;
                s.ack_rejected += st.ack_rejected;
                s.out_of_window_segments += st.out_of_window_segments;
                s.challenge_acks += st.challenge_acks;
            }
            s.receiver_state = match rc.close_reason() {
                Some(r) => r.as_str().to_string(),
                None => format!("{:?}", rc.state()).to_lowercase(),
            };
            let r = c.rtt();
            if r.samples > 0 {
                s.mean_rtt_s = Some(r.sum_rtt as f64 / r.samples as f64 / 1e9);
            }
            s.min_rtt_s = r.min_rtt().map(secs);
            s.final_cwnd_bytes = c.window().cwnd;
            s.state = match c.close_reason() {
                Some(r) => r.as_str().to_string(),
                None => format!("{:?}", c.state()).to_lowercase(),
            };
        }
        s
    }

    /// Attack `ai` hands its next spoofed segment to its victim, as if it had just arrived
    /// from the victim's peer.
    fn attack(&mut self, ai: u32) {
        let a = &mut self.attackers[ai as usize];
        a.sent += 1;
        let f = &self.flows[a.cfg.flow];
        let victim = f.eps.map(|(se, re)| match a.cfg.target {
            AttackTarget::Receiver => re,
            AttackTarget::Sender => se,
        });
        if let Some(v) = victim.filter(|&v| !self.eps[v as usize].dead) {
            let (hdr, len) = a.forge(&self.eps[v as usize].conn);
            a.injected += 1;
            if let Some(taken) = self.eps[v as usize].conn.on_segment(self.now, &hdr, len) {
                a.forged_bytes_accepted += taken.len as u64;
            }
            self.service(v);
        }
        if let Some(t) = self.attackers[ai as usize].next_at() {
            self.q.schedule(t.max(self.now), Event::Attack(ai));
        }
    }

    fn finish(self) -> RunOutput {
        let flows = (0..self.flows.len())
            .map(|i| {
                self.flows[i]
                    .snapshot
                    .clone()
                    .unwrap_or_else(|| self.flow_summary(i))
            })
            .collect();
        let datagrams = self
            .sources
            .iter()
            .map(|s| DatagramSummary {
                from: self.b.node_names[s.from as usize].clone(),
                to: self.b.node_names[s.to as usize].clone(),
                packets_sent: s.sent,
                packets_received: s.received,
                bytes_received: s.bytes_received,
            })
            .collect();
        let summary = Summary {
            run: RunSummary {
                name: self.name.clone(),
                seed: self.seed,
                end_s: secs(self.now),
                events: self.q.processed,
                peak_packets: self.slab.capacity_used() as u64,
                corruption_notices: self.corruption_notices,
            },
            flows,
            links: self.b.links.iter().map(|l| l.stats.clone()).collect(),
            datagrams,
            attacks: self.attackers.iter().map(Attacker::summary).collect(),
        };
        RunOutput {
            summary,
            samples: self.samples,
            segments: self.segments,
        }
    }
}

/// Source and destination ports of a packet, for pcap output.
fn packet_ports(p: &Packet) -> (u16, u16) {
    match p.body {
        Body::Tcp { hdr, .. } => (hdr.src_port, hdr.dst_port),
        Body::Datagram { source } => (9000 + source as u16, 9000 + source as u16),
        Body::CorruptionNotice { .. } | Body::LinkNotice { .. } => (0, 0),
    }
}

fn check_route(b: &Built, from: u16, to: u16, path: &str) -> Result<(), String> {
    if b.routes[from as usize][to as usize].is_none() {
        return Err(format!(
            "{path}: no route from \"{}\" to \"{}\"; connect them with [[links]]",
            b.node_names[from as usize], b.node_names[to as usize]
        ));
    }
    Ok(())
}

fn check_path_mtu(b: &Built, from: u16, to: u16, size: u32, path: &str) -> Result<(), String> {
    let mut n = from;
    while n != to {
        let ld = b.routes[n as usize][to as usize].expect("route checked") as usize;
        let l: &LinkDir = &b.links[ld];
        if size > l.mtu {
            return Err(format!(
                "{path}: packets of {size} B exceed the mtu {} B of link {}; lower the flow's mtu",
                l.mtu, b.link_names[ld]
            ));
        }
        n = l.to;
    }
    Ok(())
}

fn select_link(sel: &str, sc: &Scenario, b: &Built) -> Result<usize, String> {
    let n = sc.links.len();
    let idx = sel
        .strip_prefix("links[")
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or(sel)
        .parse::<usize>()
        .ok();
    if let Some(i) = idx {
        return if i < n {
            Ok(i)
        } else {
            Err(format!(
                "--pcap {sel}: there are {n} links (0..{})",
                n.saturating_sub(1)
            ))
        };
    }
    for (i, l) in sc.links.iter().enumerate() {
        let a = format!("{}-{}", l.between[0], l.between[1]);
        let r = format!("{}-{}", l.between[1], l.between[0]);
        if sel == a || sel == r {
            return Ok(i);
        }
    }
    let names: Vec<String> = (0..n)
        .map(|i| b.link_names[2 * i].replace("->", "-"))
        .collect();
    Err(format!(
        "--pcap {sel}: no such link; use an index or one of: {}",
        names.join(", ")
    ))
}

/// The compression context of the direction that sent `syn` from node `src` to node `dst`,
/// if the SYN offers SCPS header compression.
fn compression_context(syn: &TcpHeader, src: u16, dst: u16) -> Option<CompressionContext> {
    let addr = crate::pcap::node_addr;
    CompressionContext::from_syn(syn, addr(src), addr(dst)).ok()
}
