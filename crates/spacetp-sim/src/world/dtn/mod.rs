//! The delay-tolerant network of `bp` flows: a bundle agent on every node (spacetp-dtn's
//! `Agent`: store and forward by Contact Graph Routing over the contact plan), and an LTP
//! hop between every two nodes the plan joins (two `LtpTransport` ends in hop mode, the
//! Bundle Protocol's convergence layer). The contact plan drives the hops as ION's does:
//! at a contact's start the sending side's span comes up at the contact's rate, at its end
//! it goes down (LTP's link state cues). Agents hand bundles to hops and take the blocks
//! hops deliver; a flow's bytes are delivered when the destination agent has its bundles.

use super::*;
use crate::dtn_plan::DtnPlan;
use crate::transport::bp::BpSpec;
use crate::transport::capabilities::ConvergenceLayer;
use crate::transport::ltp::LtpSpec;
use crate::transport::Wire;
use bytes::Bytes;
use spacetp_dtn::agent::{Agent, AgentEvent};
use spacetp_dtn::bundle::Eid;
use spacetp_dtn::ContactPlan;
use spacetp_proto::FieldError;
use std::collections::HashMap;
use std::sync::Arc;

/// One LTP hop between nodes `a` and `b`: its two ends (at `a`, at `b`).
pub(super) struct Hop {
    pub a: u16,
    pub b: u16,
    pub eps: (u32, u32),
}

/// Bytes of a bp flow the source's agent holds at most before it makes more bundles: a
/// file larger than that is made into bundles as they leave (the agent's store drains at the
/// contact's rate), not all at once.
const FEED_AHEAD: u64 = 16_000_000;

/// A bp flow's bundles and what became of them.
#[derive(Default)]
pub(super) struct BpFlowState {
    /// File bytes not yet made into bundles, the bundle size, the lifetime, the source node
    /// and the destination endpoint.
    pub left: u64,
    bundle_size: u64,
    lifetime: Time,
    pub source: u16,
    dest: Eid,
    pub bundles: u64,
    pub adus_delivered: u64,
    pub bytes_dropped: u64,
    pub expired: u64,
    pub no_route: u64,
    pub age_sum_ms: u64,
    pub age_max_ms: u64,
}

pub(super) struct Dtn {
    pub plan: Arc<ContactPlan>,
    /// Each node's ipn number, and the node of each number.
    pub numbers: Vec<u64>,
    by_number: HashMap<u64, u16>,
    pub agents: Vec<Agent>,
    timer_at: Vec<Option<Time>>,
    pub hops: Vec<Hop>,
    /// The hop end at `from` that sends to `to`.
    pub hop_end: HashMap<(u16, u16), u32>,
    /// The most a hop end may send at, bits/s of LTP bytes: its path's rate less the IPv4
    /// and UDP headers (a contact's rate counts LTP's bytes, as ION's does).
    hop_max_rate: HashMap<u32, f64>,
    pub flows: HashMap<u32, BpFlowState>,
    /// Flows whose two ends send their packets as bundles (CFDP over BP): their endpoints
    /// (client, server) and the bundles' lifetime.
    ends: HashMap<u32, ((u32, u32), Time)>,
}

mod bundled_ends;
mod flows;
mod report;

impl World {
    /// Agents on every node, a hop wherever the plan has contacts, and the contacts' events.
    pub(super) fn dtn_setup(&mut self, d: DtnPlan, b: &Built) -> Result<(), FieldError> {
        let n = d.numbers.len();
        let by_number: HashMap<u64, u16> = d
            .numbers
            .iter()
            .enumerate()
            .map(|(i, &x)| (x, i as u16))
            .collect();
        let agents = d
            .numbers
            .iter()
            .map(|&x| {
                let a = Agent::new(x, d.plan.clone(), None);
                if d.keep_payloads {
                    a.keep_payloads()
                } else {
                    a
                }
            })
            .collect();
        let mut dtn = Dtn {
            plan: d.plan.clone(),
            numbers: d.numbers.clone(),
            by_number,
            agents,
            timer_at: vec![None; n],
            hops: Vec::new(),
            hop_end: HashMap::new(),
            hop_max_rate: HashMap::new(),
            flows: HashMap::new(),
            ends: HashMap::new(),
        };
        // One hop per pair of nodes with a contact either way.
        let mut pairs: Vec<(u16, u16)> = Vec::new();
        for (ci, c) in d.plan.contacts().iter().enumerate() {
            let (Some(&x), Some(&y)) = (dtn.by_number.get(&c.from), dtn.by_number.get(&c.to))
            else {
                continue; // the plan was checked against the nodes when read
            };
            if x == y {
                continue; // a loopback contact (ION's habit) carries nothing between nodes
            }
            if b.routes.static_hop(x, y).is_none() {
                return Err(FieldError::new(
                    "dtn.contact_plan",
                    format!(
                        "contact {} of the plan joins {} and {}, but no links do",
                        ci + 1,
                        b.node_names[x as usize],
                        b.node_names[y as usize]
                    ),
                ));
            }
            let p = (x.min(y), x.max(y));
            if !pairs.contains(&p) {
                pairs.push(p);
            }
        }
        for (h, &(x, y)) in pairs.iter().enumerate() {
            let defaults = super::setup::path_defaults(b, x, y, 1500);
            let (a, bn) = (d.numbers[x as usize], d.numbers[y as usize]);
            let ltp =
                crate::transport::ltp::hop_settings(&d.plan, a, bn, d.ltp.as_ref(), &defaults);
            let spec = LtpSpec::from_settings(Some(&ltp), &defaults, "dtn")?;
            let seed = Rng::for_component(self.seed, stream::ISN, 1_000_000 + h as u64).next_u64();
            let (ta, tb) = spec.open_hop(d.numbers[x as usize], d.numbers[y as usize], seed);
            let first = self.eps.len() as u32;
            for (t, me, peer, peer_ep) in [(ta, x, y, first + 1), (tb, y, x, first)] {
                let mut t = t;
                // Down until a contact opens it.
                t.set_contact(0, false, None);
                dtn.hop_end.insert((me, peer), self.eps.len() as u32);
                if let Some(r) = spec.span.transmission_rate {
                    dtn.hop_max_rate.insert(self.eps.len() as u32, r.0);
                }
                self.eps.push(Endpoint {
                    transport: Box::new(t),
                    node: me,
                    peer_node: peer,
                    peer_ep,
                    app: App::Hop(h as u32),
                    sender: false,
                    timer_at: None,
                    dead: false,
                    app_rate: None,
                    bundled: false,
                });
            }
            dtn.hops.push(Hop {
                a: x,
                b: y,
                eps: (first, first + 1),
            });
        }
        for (ci, c) in d.plan.contacts().iter().enumerate() {
            if c.from != c.to {
                self.q.schedule(c.start, Event::Contact(ci as u32, true));
                self.q.schedule(c.end, Event::Contact(ci as u32, false));
            }
        }
        self.dtn = Some(Box::new(dtn));
        Ok(())
    }

    /// A contact starts (`up`) or ends: the sending side's span follows, at its rate.
    pub(super) fn dtn_contact(&mut self, ci: u32, up: bool) {
        let Some(d) = self.dtn.as_ref() else { return };
        let c = d.plan.contacts()[ci as usize].clone();
        let (Some(&x), Some(&y)) = (d.by_number.get(&c.from), d.by_number.get(&c.to)) else {
            return;
        };
        let Some(&ep) = d.hop_end.get(&(x, y)) else {
            return;
        };
        let rate =
            (c.rate_bytes_per_s * 8.0).min(d.hop_max_rate.get(&ep).copied().unwrap_or(f64::MAX));
        let now = self.now;
        if let Some(t) = self.eps[ep as usize].transport.convergence_layer() {
            t.set_contact(now, up, up.then_some(rate));
        }
        self.transmit(ep);
        self.arm_timer(ep);
        self.dtn_pump(x);
    }

    /// After a hop end's event: its delivered blocks and given-back bundles go to its
    /// node's agent, which may forward more.
    pub(super) fn dtn_hop_io(&mut self, ep: u32) {
        let now = self.now;
        let (node, peer) = (self.eps[ep as usize].node, self.eps[ep as usize].peer_node);
        let Some(t) = self.eps[ep as usize].transport.convergence_layer() else {
            return;
        };
        let (blocks, back): (Vec<Bytes>, Vec<Bytes>) = t.take_hop_io();
        if blocks.is_empty() && back.is_empty() {
            return;
        }
        let Some(d) = self.dtn.as_mut() else { return };
        let peer_num = d.numbers[peer as usize];
        let agent = &mut d.agents[node as usize];
        for b in blocks {
            agent.on_block(now, peer_num, &b);
        }
        for b in back {
            agent.on_forward_failed(now, peer_num, &b);
        }
        self.dtn_pump(node);
    }

    /// The agent of `node` hands what may leave now to its hops, reports what happened to
    /// bundles, and re-arms its timer.
    pub(super) fn dtn_pump(&mut self, node: u16) {
        let now = self.now;
        self.dtn_feed(node);
        loop {
            let Some(d) = self.dtn.as_mut() else { return };
            let Some((neighbor, bytes)) = d.agents[node as usize].poll_forward(now) else {
                break;
            };
            let Some(&peer) = d.by_number.get(&neighbor) else {
                continue;
            };
            let Some(&ep) = d.hop_end.get(&(node, peer)) else {
                // Routed over a contact with no hop (a loopback): give it back.
                d.agents[node as usize].on_forward_failed(now, neighbor, &bytes);
                continue;
            };
            if let Some(t) = self.eps[ep as usize].transport.convergence_layer() {
                t.send_sdu(now, bytes);
            }
            self.transmit(ep);
            self.arm_timer(ep);
            self.dtn_feed(node);
        }
        self.dtn_events(node);
        self.account_bp_flows();
        let Some(d) = self.dtn.as_mut() else { return };
        if let Some(t) = d.agents[node as usize].poll_timeout(now) {
            let t = t.max(now + 1);
            if d.timer_at[node as usize].is_none_or(|old| t < old || old <= now) {
                d.timer_at[node as usize] = Some(t);
                self.q.schedule(t, Event::DtnAgent(node));
            }
        }
    }

    /// An agent's timer: expiries, contacts opening and closing, paced releases.
    pub(super) fn dtn_agent_timer(&mut self, node: u16) {
        let now = self.now;
        let Some(d) = self.dtn.as_mut() else { return };
        if d.timer_at[node as usize] != Some(now) {
            return; // superseded
        }
        d.timer_at[node as usize] = None;
        d.agents[node as usize].on_timeout(now);
        self.dtn_pump(node);
    }

    /// What the agent of `node` reports, to the flows.
    fn dtn_events(&mut self, node: u16) {
        let now = self.now;
        let mut touched = Vec::new();
        let mut packets: Vec<(u32, Vec<u8>)> = Vec::new();
        {
            let Some(d) = self.dtn.as_mut() else { return };
            while let Some(ev) = d.agents[node as usize].poll_event() {
                let service = match &ev {
                    AgentEvent::Delivered { service, .. } => *service,
                    AgentEvent::Expired { destination, .. }
                    | AgentEvent::NoRoute { destination, .. } => destination.service,
                };
                let fi = service.wrapping_sub(1) as u32;
                if let Some(&((c, s), _)) = d.ends.get(&fi) {
                    // A bundled end's packet reached the other end's node (a bundle lost
                    // on the way is for the ends' own timers to find).
                    if let AgentEvent::Delivered {
                        payload: Some(p), ..
                    } = ev
                    {
                        let to = if self.eps[s as usize].node == node {
                            s
                        } else {
                            c
                        };
                        packets.push((to, p));
                    }
                    continue;
                }
                let Some(st) = d.flows.get_mut(&fi) else {
                    continue;
                };
                match ev {
                    AgentEvent::Delivered { bytes, age_ms, .. } => {
                        st.adus_delivered += 1;
                        st.age_sum_ms += age_ms;
                        st.age_max_ms = st.age_max_ms.max(age_ms);
                        let f = &mut self.flows[fi as usize];
                        f.delivered += bytes;
                        f.last_byte = Some(now);
                        if let Some((a, b)) = f.window {
                            if now <= a {
                                f.delivered_by[0] = f.delivered;
                            }
                            if now <= b {
                                f.delivered_by[1] = f.delivered;
                            }
                        }
                    }
                    AgentEvent::Expired { bytes, .. } => {
                        st.expired += 1;
                        st.bytes_dropped += bytes;
                    }
                    AgentEvent::NoRoute { bytes, .. } => {
                        st.no_route += 1;
                        st.bytes_dropped += bytes;
                    }
                }
                touched.push(fi);
            }
        }
        for fi in touched {
            self.dtn_check_flow(fi);
        }
        for (ep, p) in packets {
            if self.eps[ep as usize].dead {
                continue;
            }
            let wire = Wire::Udp {
                src_port: crate::transport::cfdp::CFDP_PORT,
                dst_port: crate::transport::cfdp::CFDP_PORT,
                len: p.len() as u32,
            };
            self.eps[ep as usize].transport.on_packet(now, &wire, &p);
            self.service(ep);
        }
    }

    /// A bp flow is done once every byte is delivered or dropped.
    fn dtn_check_flow(&mut self, fi: u32) {
        let Some(d) = self.dtn.as_ref() else { return };
        let Some(st) = d.flows.get(&fi) else { return };
        let f = &self.flows[fi as usize];
        if f.done {
            return;
        }
        if f.delivered + st.bytes_dropped >= f.total.unwrap_or(0) {
            self.flows[fi as usize].done = true;
            self.alive -= 1;
            self.close_account(fi);
        }
    }

    /// Account every open bp flow (an agent acted: bundles moved, a contact opened).
    fn account_bp_flows(&mut self) {
        let Some(d) = self.dtn.as_ref() else { return };
        let mut fis: Vec<u32> = d.flows.keys().copied().collect();
        fis.sort_unstable();
        for fi in fis {
            self.account_flow(fi);
        }
    }
}
