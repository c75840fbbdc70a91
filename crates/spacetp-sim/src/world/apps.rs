//! The applications: bulk senders and readers, file-request workloads, datagram sources,
//! attackers, and the service of an endpoint after any event.

use super::*;

impl World {
    pub(super) fn wake_app(&mut self, ep: u32) {
        let e = &mut self.eps[ep as usize];
        if e.dead {
            return;
        }
        if let Some(r) = &mut e.app_rate {
            r.wake_at = None;
        }
        self.service(ep);
    }

    /// Let the application act, send what the transport wants to send, re-arm its timer.
    pub(super) fn service(&mut self, ep: u32) {
        let app = self.eps[ep as usize].app;
        if let App::Flow(fi) = app {
            self.flow_app(ep, fi);
        }
        self.transmit(ep);
        self.arm_timer(ep);
        match app {
            App::Flow(fi) => {
                if self.eps[ep as usize].sender {
                    self.account_flow(fi);
                }
                self.check_flow_done(fi);
            }
            App::Hop(_) => self.dtn_hop_io(ep),
            App::Source(_) => {}
        }
    }

    /// A flow's application: the sender writes (in records, if asked) and closes at the
    /// end; the receiver reads (at its rate, if limited) and closes after the peer did.
    fn flow_app(&mut self, ep: u32, fi: u32) {
        let now = self.now;
        let mut completed = false;
        let e = &mut self.eps[ep as usize];
        let f = &mut self.flows[fi as usize];
        if e.sender {
            // A rate-limited writer offers what it has produced by now (credit it has not
            // written yet stays: produced data waits for the transport to take it).
            let mut allowance = u64::MAX;
            if let Some(r) = &mut e.app_rate {
                r.credit += (now - r.last) as f64 * 1e-9 * r.rate;
                r.last = now;
                allowance = (r.credit / 8.0) as u64;
            }
            let mut offered_all = true;
            while f.to_write > 0 && allowance > 0 {
                let want = match f.record_size {
                    Some(r) => f.to_write.min(r - f.record_fill),
                    None => f.to_write,
                }
                .min(allowance);
                let n = e.transport.write(want);
                if allowance != u64::MAX {
                    allowance -= n;
                }
                offered_all &= n == want;
                if f.total.is_some() {
                    f.to_write -= n;
                }
                if let Some(r) = f.record_size {
                    f.record_fill += n;
                    if f.record_fill == r || f.to_write == 0 {
                        e.transport.end_record();
                        f.record_fill = 0;
                    }
                }
                if f.to_write == 0 {
                    e.transport.close();
                }
                if n < want || f.record_size.is_none() {
                    break;
                }
            }
            if let Some(r) = &mut e.app_rate {
                r.credit -= ((r.credit / 8.0) as u64 - allowance) as f64 * 8.0;
                // Out of credit with more to write: wake when a segment's worth is earned.
                if f.to_write > 0 && offered_all && r.wake_at.is_none() {
                    let dt =
                        ((f.spec.mss() as f64 * 8.0 - r.credit).max(8.0) / r.rate * 1e9) as Time;
                    r.wake_at = Some(now + dt.max(1));
                    self.q.schedule(now + dt.max(1), Event::AppWake(ep));
                }
            }
        } else {
            if let Some(r) = &mut e.app_rate {
                // Earn credit since the last read (at most one buffer's worth when idle), read.
                let cap = e.transport.receive_buffer() as f64 * 8.0;
                r.credit = (r.credit + (now - r.last) as f64 * 1e-9 * r.rate).min(cap);
                r.last = now;
                let got = e.transport.read((r.credit / 8.0) as u64);
                r.credit -= got as f64 * 8.0;
                if e.transport.readable() > 0 && r.wake_at.is_none() {
                    // wake when one full segment of credit has accrued
                    let dt =
                        ((f.spec.mss() as f64 * 8.0 - r.credit).max(8.0) / r.rate * 1e9) as Time;
                    r.wake_at = Some(now + dt.max(1));
                    self.q.schedule(now + dt.max(1), Event::AppWake(ep));
                }
            }
            let d = e.transport.delivered();
            if d > f.delivered {
                f.delivered = d;
                f.last_byte = Some(now);
                // The last byte is in: the flow's time ends here.
                completed = f.total.is_some_and(|t| d >= t);
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
            if e.transport.peer_closed() && e.transport.readable() == 0 {
                e.transport.close();
            }
        }
        if completed {
            self.close_account(fi);
        }
    }

    /// Put every packet the transport has to send on its way.
    pub(super) fn transmit(&mut self, ep: u32) {
        if self.eps[ep as usize].bundled {
            self.transmit_bundles(ep);
            return;
        }
        let now = self.now;
        let (node, peer_node, peer_ep, app, sender) = {
            let e = &self.eps[ep as usize];
            (e.node, e.peer_node, e.peer_ep, e.app, e.sender)
        };
        // Each packet goes onto the link as soon as the transport yields it (sending touches
        // no transport state, so the order of events is the same as collecting them first);
        // this saves copying every header through an intermediate buffer.
        loop {
            let id = self.slab.reserve_transport(node, peer_node, peer_ep);
            let (slot, payload) = self.slab.get_with_payload_mut(id);
            let Body::Transport { wire, .. } = &mut slot.body else {
                unreachable!("inserted above")
            };
            let Some(t) = self.eps[ep as usize]
                .transport
                .poll_transmit(now, wire, payload)
            else {
                self.slab.release(id);
                break;
            };
            (slot.size, slot.low_priority) = (t.size, t.low_priority);
            self.slab.commit();
            if let (App::Flow(fi), true, Some(d), Some(seg)) =
                (app, sender, t.data, &mut self.segments)
            {
                seg.push(&[
                    secs(now),
                    fi as f64,
                    d.offset as f64,
                    d.len as f64,
                    d.retransmission as u8 as f64,
                ]);
            }
            self.send_from(node, id);
        }
    }

    /// Re-arm the endpoint's timer event if its transport's deadline moved earlier.
    pub(super) fn arm_timer(&mut self, ep: u32) {
        let now = self.now;
        let e = &mut self.eps[ep as usize];
        if let Some(d) = e.transport.poll_timeout() {
            let d = d.max(now);
            if e.timer_at.is_none_or(|t| d < t) {
                e.timer_at = Some(d);
                self.q.schedule(d, Event::Timer(ep));
            }
        }
    }

    pub(super) fn check_flow_done(&mut self, fi: u32) {
        let f = &self.flows[fi as usize];
        if f.done || f.total.is_none() {
            return;
        }
        let Some((s, r)) = f.eps else { return };
        let (s, r) = (
            &self.eps[s as usize].transport,
            &self.eps[r as usize].transport,
        );
        if (s.is_finished() && r.is_finished()) || s.failed() || r.failed() {
            self.flows[fi as usize].done = true;
            self.alive -= 1;
            self.close_account(fi);
        }
    }

    pub(super) fn start_flow(&mut self, fi: u32) {
        let spec = match &self.flows[fi as usize].spec {
            TransportSpec::Ends(spec) => spec.clone(),
            TransportSpec::Bundles(spec) => {
                let spec = spec.clone();
                self.dtn_start_flow(fi, &spec);
                return;
            }
        };
        let f = &self.flows[fi as usize];
        let mut rng = Rng::for_component(self.seed, stream::ISN, fi as u64);
        let cport = 49152 + (fi % 16384) as u16;
        let sport = if f.workload.is_some() { 20 } else { 5001 };
        let s_ep = self.eps.len() as u32;
        let ends = Ends {
            client_node: f.from,
            server_node: f.to,
            client_port: cport,
            server_port: sport,
        };
        let (client, server) = spec.open(ends, &mut || rng.next_u64() as u32);
        self.eps.push(Endpoint {
            transport: client,
            node: f.from,
            peer_node: f.to,
            peer_ep: s_ep + 1,
            app: App::Flow(fi),
            sender: true,
            timer_at: None,
            dead: false,
            app_rate: f.write_rate.map(|rate| AppRate {
                rate,
                credit: 0.0,
                last: f.start,
                wake_at: None,
            }),
            bundled: false,
        });
        self.eps.push(Endpoint {
            transport: server,
            node: f.to,
            peer_node: f.from,
            peer_ep: s_ep,
            app: App::Flow(fi),
            sender: false,
            timer_at: None,
            dead: false,
            app_rate: f.read_rate.map(|rate| AppRate {
                rate,
                credit: 0.0,
                last: 0,
                wake_at: None,
            }),
            bundled: false,
        });
        if f.read_rate.is_some() {
            self.eps[s_ep as usize + 1].transport.set_manual_read();
        }
        if let Some(lifetime) = spec.bundle_lifetime() {
            self.dtn_bundle_ends(fi, (s_ep, s_ep + 1), lifetime);
        }
        self.flows[fi as usize].eps = Some((s_ep, s_ep + 1));
        self.open_account(fi);
        self.service(s_ep);
    }

    /// The flow's stop time: freeze its counters and abandon its connection. Abandoned
    /// ends hear no packet or timer again, so what they report stays as it is now and the
    /// summary is read at the end; a flow whose bundles travel on in the delay-tolerant
    /// network has its summary taken now. (Taking every flow's at its stop cost 10 000
    /// stopping flows 10 000 summaries of 1.3 kB, written and then copied out.)
    pub(super) fn stop_flow(&mut self, fi: u32) {
        if self.flows[fi as usize].done {
            return;
        }
        self.close_account(fi);
        let bundles = self.dtn.as_ref().is_some_and(|d| d.flows.contains_key(&fi));
        let f = &self.flows[fi as usize];
        if bundles || f.eps.is_none() {
            let snap = self.flow_summary(fi as usize);
            self.flows[fi as usize].snapshot = Some(Box::new(snap));
        }
        let f = &mut self.flows[fi as usize];
        f.done = true;
        if let Some((s, r)) = f.eps {
            self.eps[s as usize].dead = true;
            self.eps[r as usize].dead = true;
        }
        self.alive -= 1;
    }

    pub(super) fn request(&mut self, wi: u32, ci: u32) {
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
            spec: TransportSpec::Ends(w.spec.clone()),
            read_rate: None,
            write_rate: None,
            eps: None,
            delivered: 0,
            last_byte: None,
            window: None,
            delivered_by: [0; 2],
            done: false,
            snapshot: None,
            workload: Some(wi),
            facts: None,
            account: None,
            earlier_paths: Default::default(),
            fitted: w.fitted.clone(),
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

    pub(super) fn datagram(&mut self, si: u32) {
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
        let (ep, size, gap) = (s.eps.0, s.size, s.gap);
        self.q.schedule(now + gap, Event::Datagram(si));
        self.eps[ep as usize].transport.write(size as u64);
        self.service(ep);
    }

    /// Attack `ai` hands its next spoofed segment to its victim, as if it had just arrived
    /// from the victim's peer.
    pub(super) fn attack(&mut self, ai: u32) {
        let a = &mut self.attackers[ai as usize];
        a.sent += 1;
        let f = &self.flows[a.cfg.flow];
        let victim = f.eps.map(|(se, re)| match a.cfg.target {
            AttackTarget::Receiver => re,
            AttackTarget::Sender => se,
        });
        if let Some(v) = victim.filter(|&v| !self.eps[v as usize].dead) {
            let conn = self.eps[v as usize]
                .transport
                .forged_segments()
                .expect("attacks are checked to target TCP flows")
                .connection_mut();
            let (hdr, len) = a.forge(conn);
            a.injected += 1;
            if let Some(taken) = conn.on_segment(self.now, &hdr, len) {
                a.forged_bytes_accepted += taken.len as u64;
            }
            self.service(v);
        }
        if let Some(t) = self.attackers[ai as usize].next_at() {
            self.q.schedule(t.max(self.now), Event::Attack(ai));
        }
    }
}
