//! Building the world from a scenario: flows, workloads, datagram sources, attackers,
//! traces and capture taps, with the checks whose errors name the scenario's paths.

use super::*;
use crate::fit::FitPath;
use crate::transport::datagram::DatagramEndpoint;
use crate::transport::quic::entry::source_spec as source_quic_spec;
use crate::transport::registry::{self, flow_transport, workload_transport, Context};
use spacetp_proto::FieldError;

impl World {
    pub fn new(mut sc: Scenario, opts: &RunOptions) -> Result<World, FieldError> {
        let origins = build::expand_topology(&mut sc)?;
        let idx = build::node_index(&sc)?;
        let dtn = crate::dtn_plan::prepare(&mut sc)?;
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
            key_log: match &opts.keylog {
                Some(path) => Some(
                    spacetp_quic::KeyLogFile::create(path)
                        .map_err(|e| FieldError::new(format!("--keylog {path}"), e))?,
                ),
                None => None,
            },
            qlog_dir: match &opts.qlog {
                Some(dir) => {
                    std::fs::create_dir_all(dir).map_err(|e| {
                        FieldError::new(
                            format!("--qlog {dir}"),
                            format!("cannot create the folder: {e}"),
                        )
                    })?;
                    Some(std::path::PathBuf::from(dir))
                }
                None => None,
            },
            segments: None,
            taps: Vec::new(),
            attackers: Vec::new(),
            alive: 0,
            corruption_notices: 0,
            dtn: None,
            trace_limits: false,
            shared: Default::default(),
            b: Built {
                node_names: Vec::new(),
                node_kinds: Vec::new(),
                links: Vec::new(),
                routes: Default::default(),
                link_names: Vec::new(),
                link_paths: Vec::new(),
                link_one_setting: Vec::new(),
            },
        };
        let stop = sc.stop.map(|d| d.0);
        // Taps first: a QUIC flow encrypts for real when the run writes a pcap.
        for (sel, path) in &opts.pcap {
            let li = select_link(sel, &sc, &b)?;
            let tap = PcapTap::create(path, &b.node_names)
                .map_err(|e| FieldError::new(format!("--pcap {sel}={path}"), e))?;
            b.links[2 * li].tap = Some(w.taps.len());
            b.links[2 * li + 1].tap = Some(w.taps.len());
            w.taps.push(tap);
        }
        if let Some(d) = dtn {
            w.dtn_setup(d, &b)?;
        }
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
            return Err(FieldError::document(
                "nothing to run: add [[flows]] or [[workloads]], or a stop time",
            ));
        }
        if let Some(t) = &sc.trace {
            if let Some(iv) = t.interval {
                if iv.0 == 0 {
                    return Err(FieldError::new("trace.interval", "must be > 0"));
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
            w.trace_limits = t.interval.is_some() || t.segments;
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
        if let Some(s) = stop {
            w.q.schedule(s, Event::Stop);
        }
        for t in b.routes.change_instants() {
            w.q.schedule(t, Event::Reroute);
        }
        for li in 0..b.links.len() / 2 {
            let (f, r) = (&b.links[2 * li].outages, &b.links[2 * li + 1].outages);
            for (start, end) in crate::link_sched::either_down(f, r) {
                w.q.schedule(start, Event::LinkState(li as u32, false));
                if end != Time::MAX {
                    w.q.schedule(end, Event::LinkState(li as u32, true));
                }
            }
        }
        w.b = b;
        Ok(w)
    }

    /// Why QUIC must encrypt for real, if it must: the run writes a pcap (opened before any
    /// flow) or a key log.
    fn needs_ciphertext(&self) -> Option<&'static str> {
        if !self.taps.is_empty() {
            Some("the run writes a pcap (--pcap)")
        } else if self.key_log.is_some() {
            Some("the run writes a key log (--keylog)")
        } else {
            None
        }
    }

    pub(super) fn add_flow_cfg(
        &mut self,
        f: &FlowCfg,
        i: usize,
        idx: &std::collections::HashMap<String, u16>,
        b: &Built,
        stop: Option<Time>,
    ) -> Result<(), FieldError> {
        let p = format!("flows[{i}]");
        let from = build::lookup(idx, &f.from, &format!("{p}.from"))?;
        let to = build::lookup(idx, &f.to, &format!("{p}.to"))?;
        if from == to {
            return Err(FieldError::new(
                p.to_string(),
                format!("from and to are the same node \"{}\"", f.from),
            ));
        }
        if registry::entry(&f.protocol).is_none_or(|t| t.routed_flow(f)) {
            // Bundles go hop by hop through the agents, by the contact plan.
            check_route(b, from, to, &p)?;
        }
        let mss = build::mss_for(f.mtu.0, &p)?;
        check_path_mtu(b, from, to, f.mtu.0 as u32, &p)?;
        let name = f.name.clone().unwrap_or_else(|| format!("flow{i}"));
        let fit = f.fit.then(|| FitPath::new(b, from, to, f.mtu.0 as u32));
        let cx = Context {
            path: &p,
            mss,
            defaults: Some(&path_defaults(b, from, to, f.mtu.0)),
            fit: fit.as_ref(),
            key_log: self.key_log.clone(),
            qlog_prefix: self.qlog_dir.as_ref().map(|d| d.join(&name)),
            needs_ciphertext: self.needs_ciphertext(),
            shared: &self.shared,
        };
        let (_, spec, fitted) = flow_transport(f, cx)?;
        let fstop = f.stop.map(|d| d.0).or(stop);
        if f.bytes.is_none() && fstop.is_none() {
            return Err(FieldError::new(
                p.to_string(),
                "give bytes, or a stop time (here or at the top level)",
            ));
        }
        if let Some(s) = f.stop {
            if s.0 <= f.start.0 {
                return Err(FieldError::new(
                    format!("{p}.stop"),
                    format!("{s} must be after start {}", f.start),
                ));
            }
        }
        if f.record_size.is_some_and(|r| r.0 == 0) {
            return Err(FieldError::new(
                format!("{p}.record_size"),
                "must be at least 1 byte",
            ));
        }
        if let Some((a, b)) = f.goodput_window {
            if b.0 <= a.0 {
                return Err(FieldError::new(
                    format!("{p}.goodput_window"),
                    format!("[{a}, {b}] is empty; the end must be after the start"),
                ));
            }
        }
        let fi = self.flows.len() as u32;
        self.flows.push(Flow {
            name,
            protocol: f.protocol.clone(),
            from,
            to,
            total: f.bytes.map(|b| b.0),
            to_write: f.bytes.map_or(u64::MAX, |b| b.0),
            record_size: f.record_size.map(|b| b.0),
            record_fill: 0,
            start: f.start.0,
            spec,
            read_rate: f.read_rate.map(|r| r.0),
            write_rate: f.write_rate.map(|r| r.0),
            eps: None,
            delivered: 0,
            last_byte: None,
            window: f.goodput_window.map(|(a, b)| (a.0, b.0)),
            delivered_by: [0; 2],
            done: false,
            snapshot: None,
            workload: None,
            facts: None,
            account: None,
            earlier_paths: Default::default(),
            fitted,
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

    pub(super) fn add_workload(
        &mut self,
        wl: &WorkloadCfg,
        i: usize,
        idx: &std::collections::HashMap<String, u16>,
        b: &Built,
        stop: Option<Time>,
    ) -> Result<(), FieldError> {
        let p = format!("workloads[{i}]");
        let server = build::lookup(idx, &wl.server, &format!("{p}.server"))?;
        if wl.clients.is_empty() {
            return Err(FieldError::new(
                format!("{p}.clients"),
                "needs at least one client",
            ));
        }
        let mut clients = Vec::new();
        for (j, c) in wl.clients.iter().enumerate() {
            let n = build::lookup(idx, c, &format!("{p}.clients[{j}]"))?;
            if n == server {
                return Err(FieldError::new(
                    format!("{p}.clients[{j}]"),
                    format!("\"{c}\" is also the server"),
                ));
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
            return Err(FieldError::new(
                p.to_string(),
                "give count, or a stop time (here or at the top level)",
            ));
        }
        let mss = build::mss_for(wl.mtu.0, &p)?;
        // A workload's connections are fitted to the path from its server to its first
        // client (downloads) or back (uploads).
        let (a, z) = match wl.direction {
            Direction::Get => (server, clients[0]),
            Direction::Put => (clients[0], server),
        };
        let fit = wl.fit.then(|| FitPath::new(b, a, z, wl.mtu.0 as u32));
        let defaults = path_defaults(b, a, z, wl.mtu.0);
        let cx = Context {
            path: &p,
            mss,
            defaults: Some(&defaults),
            fit: fit.as_ref(),
            key_log: self.key_log.clone(),
            qlog_prefix: None,
            needs_ciphertext: self.needs_ciphertext(),
            shared: &self.shared,
        };
        let (spec, fitted) = workload_transport(wl, cx)?;
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
            spec,
            fitted,
            stop: wstop,
            count: wl.count,
            rng,
        });
        Ok(())
    }

    pub(super) fn add_source(
        &mut self,
        t: &DatagramCfg,
        i: usize,
        idx: &std::collections::HashMap<String, u16>,
        b: &Built,
        stop: Option<Time>,
    ) -> Result<(), FieldError> {
        let p = format!("traffic[{i}]");
        let from = build::lookup(idx, &t.from, &format!("{p}.from"))?;
        let to = build::lookup(idx, &t.to, &format!("{p}.to"))?;
        check_route(b, from, to, &p)?;
        let quic = source_quic_spec(
            t,
            path_mtu(b, from, to),
            &p,
            self.key_log.clone(),
            self.needs_ciphertext(),
        )?;
        if quic.is_none() {
            if t.size.0 < 28 || t.size.0 > 65535 {
                return Err(FieldError::new(
                    format!("{p}.size"),
                    format!("{} B must be in [28, 65535] (IP + UDP headers)", t.size.0),
                ));
            }
            check_path_mtu(b, from, to, t.size.0 as u32, &p)?;
        }
        let onoff = match t.pattern {
            DatagramPattern::Cbr => None,
            DatagramPattern::Onoff => {
                let on = t.on.ok_or_else(|| {
                    FieldError::new(format!("{p}.on"), "required for pattern onoff")
                })?;
                let off = t.off.ok_or_else(|| {
                    FieldError::new(format!("{p}.off"), "required for pattern onoff")
                })?;
                Some((on.0 as f64, off.0 as f64))
            }
        };
        let gap = ((t.size.0 as f64 * 8.0 / t.rate.0) * 1e9).round().max(1.0) as Time;
        let si = self.sources.len() as u32;
        let ep = self.eps.len() as u32;
        let port = 9000 + si as u16;
        let (sender, receiver): (Box<dyn Transport>, Box<dyn Transport>) = match &quic {
            Some(spec) => {
                let ends = Ends {
                    client_node: from,
                    server_node: to,
                    client_port: port,
                    server_port: port,
                };
                let seed =
                    Rng::for_component(self.seed, stream::TRAFFIC, 1 << 32 | i as u64).next_u64();
                let (c, s) = spec.open(ends, seed);
                (Box::new(c), Box::new(s))
            }
            None => (
                Box::new(DatagramEndpoint::new(port, port)),
                Box::new(DatagramEndpoint::new(port, port)),
            ),
        };
        for (transport, node, peer_node, peer_ep) in
            [(sender, from, to, ep + 1), (receiver, to, from, ep)]
        {
            self.eps.push(Endpoint {
                transport,
                node,
                peer_node,
                peer_ep,
                app: App::Source(si),
                sender: false,
                timer_at: None,
                dead: false,
                app_rate: None,
                bundled: false,
            });
        }
        self.sources.push(Source {
            from,
            to,
            eps: (ep, ep + 1),
            gap,
            size: t.size.0 as u32,
            onoff,
            on_until: 0,
            stop: t.stop.map(|d| d.0).or(stop),
            rng: Rng::for_component(self.seed, stream::TRAFFIC, i as u64),
            sent: 0,
        });
        self.q.schedule(t.start.0, Event::Datagram(si));
        Ok(())
    }
}

/// The link directions of the route the set-up checks walk (`Routes::setup_path`).
fn route(b: &Built, from: u16, to: u16) -> Vec<u32> {
    b.routes
        .setup_path(from, to, |ld| b.links[ld as usize].to)
        .unwrap_or_default()
}

pub(super) fn check_route(b: &Built, from: u16, to: u16, path: &str) -> Result<(), FieldError> {
    if from != to && route(b, from, to).is_empty() {
        return Err(FieldError::new(
            path.to_string(),
            format!(
                "no route from \"{}\" to \"{}\"; connect them with [[links]]",
                b.node_names[from as usize], b.node_names[to as usize]
            ),
        ));
    }
    Ok(())
}

/// What the path from `from` to `to` tells a transport that has no congestion control (LTP):
/// its one-way propagation delay at the start, its bottleneck rate, and the largest UDP
/// payload of a packet of the flow's `mtu`.
pub(super) fn path_defaults(
    b: &Built,
    from: u16,
    to: u16,
    mtu: u64,
) -> crate::transport::ltp::PathDefaults {
    let (mut one_way, mut rate) = (0, f64::INFINITY);
    for ld in route(b, from, to) {
        let l = &b.links[ld as usize];
        one_way += l.delay.at(0);
        rate = rate.min(l.nominal_rate());
    }
    crate::transport::ltp::PathDefaults {
        one_way,
        rate_bps: rate,
        max_segment: mtu.saturating_sub(28),
    }
}

/// The smallest MTU on the route from `from` to `to`.
fn path_mtu(b: &Built, from: u16, to: u16) -> u32 {
    route(b, from, to)
        .into_iter()
        .map(|ld| b.links[ld as usize].mtu)
        .min()
        .unwrap_or(u32::MAX)
}

pub(super) fn check_path_mtu(
    b: &Built,
    from: u16,
    to: u16,
    size: u32,
    path: &str,
) -> Result<(), FieldError> {
    for ld in route(b, from, to) {
        let l: &LinkDir = &b.links[ld as usize];
        if size > l.mtu {
            return Err(FieldError::new(
                path.to_string(),
                format!(
                    "packets of {size} B exceed the mtu {} B of link {}; lower the flow's mtu",
                    l.mtu, b.link_names[ld as usize]
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn select_link(sel: &str, sc: &Scenario, b: &Built) -> Result<usize, FieldError> {
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
            Err(FieldError::new(
                format!("--pcap {sel}"),
                format!("there are {n} links (0..{})", n.saturating_sub(1)),
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
    Err(FieldError::new(
        format!("--pcap {sel}"),
        format!("no such link; use an index or one of: {}", names.join(", ")),
    ))
}
