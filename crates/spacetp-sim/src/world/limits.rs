//! The limit analysis in the world (`crate::limits`): each flow's path facts, its account
//! kept at every service of its sender and every link-state change on its path, and its
//! shares in the summary.

use super::*;
use crate::limits::{describe, text, Account, Limit, LimitShare, PathFacts, ALL};
use crate::transport::SendLimit;

/// Bytes of an ACK on the return link (IPv4, TCP with timestamps and a SACK block).
const ACK_BYTES: f64 = 64.0;

impl World {
    /// The facts of the path from node `from` to `to` at `now`: its link directions both
    /// ways, their bottlenecks, the empty path's round trip, the bandwidth-delay product.
    pub(super) fn path_facts(&self, from: u16, to: u16, mss: u32) -> PathFacts {
        let now = self.now;
        let walk = |a: u16, b: u16| {
            let mut dirs = Vec::new();
            let mut n = a;
            while n != b {
                let Some(ld) = self.b.routes.hop_at(n, b, now) else {
                    break;
                };
                dirs.push(ld);
                n = self.b.links[ld as usize].to;
                if dirs.len() > self.b.links.len() {
                    break; // no loop can be longer than every link
                }
            }
            dirs
        };
        let (forward, back) = (walk(from, to), walk(to, from));
        let slowest = |dirs: &[u32]| {
            dirs.iter()
                .map(|&ld| (ld, self.b.links[ld as usize].nominal_rate()))
                .fold(None, |best: Option<(u32, f64)>, (ld, r)| match best {
                    Some((_, br)) if br <= r => best,
                    _ => Some((ld, r)),
                })
        };
        let (fb, bb) = (slowest(&forward), slowest(&back));
        let rate = fb.map_or(0.0, |b| b.1);
        let back_rate = bb.map_or(0.0, |b| b.1);
        let delay = |dirs: &[u32]| -> Time {
            dirs.iter()
                .map(|&ld| self.b.links[ld as usize].delay.at(now))
                .sum()
        };
        let ser = |bytes: f64, r: f64| {
            if r > 0.0 {
                (bytes * 8.0 / r * 1e9) as Time
            } else {
                0
            }
        };
        let rtt = delay(&forward)
            + delay(&back)
            + ser((mss + 40) as f64, rate)
            + ser(ACK_BYTES, back_rate);
        let has_outages = forward
            .iter()
            .chain(&back)
            .any(|&ld| !self.b.links[ld as usize].outages.is_empty());
        PathFacts {
            has_outages,
            forward,
            back,
            bottleneck: fb.map(|b| b.0),
            rate_bps: rate,
            back_bottleneck: bb.map(|b| b.0),
            back_rate_bps: back_rate,
            rtt,
            bdp: (rate * rtt as f64 / 8e9) as u64,
        }
    }

    /// The busy integral of flow `fi`'s bottleneck at `now`.
    fn bottleneck_busy(&self, fi: u32) -> Time {
        let f = &self.flows[fi as usize];
        f.facts
            .as_ref()
            .and_then(|p| p.bottleneck)
            .map_or(0, |ld| self.b.links[ld as usize].busy_time(self.now))
    }

    /// Open flow `fi`'s account as it starts (its path read now).
    pub(super) fn open_account(&mut self, fi: u32) {
        let f = &self.flows[fi as usize];
        let facts = self.path_facts(f.from, f.to, f.spec.mss());
        self.flows[fi as usize].facts = Some(facts);
        let busy = self.bottleneck_busy(fi);
        let timeline = self.trace_limits;
        self.flows[fi as usize].account = Some(Account::new(self.now, busy, timeline));
    }

    /// Account flow `fi`'s time up to now and note the state it is in from now on.
    pub(super) fn account_flow(&mut self, fi: u32) {
        let f = &self.flows[fi as usize];
        if f.account.as_ref().is_none_or(Account::is_closed) {
            return;
        }
        let (state, quantity) = self.limit_now(fi);
        if f.account
            .as_ref()
            .is_some_and(|a| a.goes_on(state, quantity))
        {
            return; // the common case: nothing changed, no interval to close
        }
        let busy = self.bottleneck_busy(fi);
        let now = self.now;
        if let Some(a) = self.flows[fi as usize].account.as_mut() {
            a.at(now, busy, state, quantity);
        }
    }

    /// The flow ended (its last byte arrived, it failed or stopped, or the run ended).
    pub(super) fn close_account(&mut self, fi: u32) {
        let busy = self.bottleneck_busy(fi);
        let now = self.now;
        if let Some(a) = self.flows[fi as usize].account.as_mut() {
            a.close(now, busy);
        }
    }

    /// The forwarding state changed: every open flow whose path changed closes its interval
    /// on the old path's facts and reads the new path's (its bottleneck, round trip,
    /// bandwidth-delay product), so the analysis follows the path as it is re-routed. Not
    /// bp flows: their bundles route by contacts, not by the packets' forwarding state.
    pub(super) fn account_rerouted_flows(&mut self) {
        for fi in 0..self.flows.len() as u32 {
            let f = &self.flows[fi as usize];
            let (Some(old), Some(a)) = (f.facts.as_ref(), f.account.as_ref()) else {
                continue;
            };
            if a.is_closed() || matches!(f.spec, crate::transport::TransportSpec::Bundles(_)) {
                continue;
            }
            let new = self.path_facts(f.from, f.to, f.spec.mss());
            if new.forward == old.forward && new.back == old.back {
                continue;
            }
            let now = self.now;
            let busy_old = self.bottleneck_busy(fi);
            let busy_new = new
                .bottleneck
                .map_or(0, |ld| self.b.links[ld as usize].busy_time(now));
            let f = &mut self.flows[fi as usize];
            let Some(a) = f.account.as_mut() else {
                continue;
            };
            a.rebase(now, busy_old, busy_new);
            let old = f.facts.replace(new).expect("read above");
            f.earlier_paths.path_ended(old, &a.states());
            // The state from now on, judged on the new path's facts.
            let (state, quantity) = self.limit_now(fi);
            if let Some(a) = self.flows[fi as usize].account.as_mut() {
                a.at(now, busy_new, state, quantity);
            }
        }
    }

    /// A link went down or came up: every open flow whose path crosses it changes state.
    pub(super) fn account_flows_on_link(&mut self, link: u32) {
        for fi in 0..self.flows.len() as u32 {
            let on_path = self.flows[fi as usize]
                .facts
                .as_ref()
                .is_some_and(|p| p.forward.iter().chain(&p.back).any(|&ld| ld / 2 == link));
            if on_path {
                self.account_flow(fi);
            }
        }
    }

    /// Flow `fi`'s state now: a link of its path down, else what its sender says, refined
    /// with what the world sees. With the binding quantity (a window's bytes) or 0.
    fn limit_now(&self, fi: u32) -> (Limit, f64) {
        let f = &self.flows[fi as usize];
        if matches!(f.spec, crate::transport::TransportSpec::Bundles(_)) {
            return self.bp_limit_now(fi);
        }
        let (Some((s, r)), Some(facts)) = (f.eps, f.facts.as_ref()) else {
            return (Limit::Propagation, 0.0);
        };
        let now = self.now;
        let down = facts.has_outages
            && facts
                .forward
                .iter()
                .chain(&facts.back)
                .any(|&ld| self.b.links[ld as usize].is_down(now));
        if down {
            return (Limit::LinkDown, 0.0);
        }
        let (se, re) = (&self.eps[s as usize], &self.eps[r as usize]);
        let bdp = facts.bdp;
        match se.transport.send_limit(now, re.transport.as_ref()) {
            SendLimit::Handshake => (Limit::Handshake, 0.0),
            SendLimit::Outage => (Limit::LinkDown, 0.0),
            SendLimit::Recovery => (Limit::Recovery, 0.0),
            SendLimit::AllSent if f.total.is_some() && f.to_write == 0 => (Limit::Propagation, 0.0),
            SendLimit::AllSent => (Limit::Application, 0.0),
            SendLimit::Closed => (Limit::Propagation, 0.0),
            SendLimit::SendBuffer { buffer } => (Limit::SendBuffer, buffer as f64),
            SendLimit::ReceiveWindow { window } => {
                if re.app_rate.is_some() && re.transport.readable() > 0 {
                    (Limit::SlowReader, window as f64)
                } else if window >= bdp {
                    (Limit::ReturnPath, window as f64)
                } else {
                    (Limit::ReceiveWindow, window as f64)
                }
            }
            SendLimit::CongestionWindow { window } if window >= bdp => {
                (Limit::ReturnPath, window as f64)
            }
            SendLimit::CongestionWindow { window } => (Limit::CongestionWindow, window as f64),
            SendLimit::RateControl => (Limit::RateControl, 0.0),
            SendLimit::Pacing => (Limit::Pacing, 0.0),
            SendLimit::Sessions => (Limit::LtpSessions, 0.0),
            SendLimit::Ready => (Limit::Link, 0.0),
        }
    }

    /// A bp flow's state: while the source holds some of it, its first hop's (the contact
    /// down, every LTP session busy, LTP's pacing); once everything has left the source, the
    /// relays' (bundles stored, waiting for a contact onward) or the last bundles' light time.
    fn bp_limit_now(&self, fi: u32) -> (Limit, f64) {
        let (Some(d), Some(facts)) = (self.dtn.as_ref(), self.flows[fi as usize].facts.as_ref())
        else {
            return (Limit::Propagation, 0.0);
        };
        let Some(st) = d.flows.get(&fi) else {
            return (Limit::Propagation, 0.0);
        };
        let source = st.source;
        let at_source = st.left > 0 || d.agents[source as usize].stored_bytes() > 0;
        if at_source {
            let next = facts
                .forward
                .first()
                .map(|&ld| self.b.links[ld as usize].to);
            let hop = next.and_then(|n| d.hop_end.get(&(source, n)).copied());
            let Some(ep) = hop else {
                return (Limit::LinkDown, 0.0); // no hop onward yet: no contact
            };
            let e = &self.eps[ep as usize];
            let peer = &self.eps[e.peer_ep as usize];
            return match e.transport.send_limit(self.now, peer.transport.as_ref()) {
                SendLimit::Outage => (Limit::LinkDown, 0.0),
                SendLimit::Sessions => (Limit::LtpSessions, 0.0),
                SendLimit::RateControl => (Limit::RateControl, 0.0),
                _ => (Limit::Link, 0.0),
            };
        }
        let stored: u64 = d
            .agents
            .iter()
            .enumerate()
            .filter(|&(n, _)| n != source as usize)
            .map(|(_, a)| a.stored_bytes())
            .sum();
        if stored > 0 {
            (Limit::BundleStorage, stored as f64)
        } else {
            (Limit::Propagation, 0.0)
        }
    }

    /// Flow `fi`'s states, the largest share first (ties in the order of `ALL`).
    pub(super) fn limit_shares(&self, fi: usize) -> Vec<LimitShare> {
        let f = &self.flows[fi];
        let (Some(a), Some(facts)) = (f.account.as_ref(), f.facts.as_ref()) else {
            return Vec::new();
        };
        let total = a.total().max(1) as f64;
        let mut states = a.states();
        states.sort_by_key(|&(l, t, _)| (std::cmp::Reverse(t), l.index()));
        states
            .into_iter()
            .map(|(l, t, mean)| {
                // A re-routed flow: the path the state had the most time on.
                let facts = f.earlier_paths.facts_for(l, t, facts);
                let setting = self.limit_setting(fi, l, facts);
                describe(l, t as f64 / 1e9, t as f64 / total, mean, setting, facts)
            })
            .collect()
    }

    /// The setting that lifts state `l` of flow `fi`: the link's for the link's states,
    /// the receiving end's for its window, the sending end's for the rest; as (scenario
    /// path, value).
    fn limit_setting(&self, fi: usize, l: Limit, facts: &PathFacts) -> Option<(String, String)> {
        let f = &self.flows[fi];
        let link = |ld: u32, what: &str| {
            let li = (ld / 2) as usize;
            let path = &self.b.link_paths[li];
            let back = if ld % 2 == 1 && !self.b.link_one_setting[li] {
                "_back"
            } else {
                ""
            };
            format!("{path}.{what}{back}")
        };
        let rate = |ld: u32| text::rate(self.b.links[ld as usize].nominal_rate());
        match l {
            Limit::Link => facts.bottleneck.map(|ld| (link(ld, "rate"), rate(ld))),
            Limit::ReturnPath => facts.back_bottleneck.map(|ld| (link(ld, "rate"), rate(ld))),
            Limit::LinkDown => {
                let ld = facts
                    .forward
                    .iter()
                    .chain(&facts.back)
                    .copied()
                    .find(|&ld| !self.b.links[ld as usize].outages.is_empty())?;
                let n = self.b.links[ld as usize].outages.len();
                let path = &self.b.link_paths[(ld / 2) as usize];
                Some((format!("{path}.outages"), format!("{n} outages")))
            }
            Limit::SlowReader => f
                .read_rate
                .map(|r| ("read_rate".to_string(), text::rate(r))),
            Limit::Application => f
                .write_rate
                .map(|r| ("write_rate".to_string(), text::rate(r))),
            Limit::ReceiveWindow => {
                let (_, r) = f.eps?;
                self.eps[r as usize].transport.limit_setting(l)
            }
            _ => {
                let (s, _) = f.eps?;
                self.eps[s as usize].transport.limit_setting(l)
            }
        }
        .map(|(path, value)| {
            let scenario_wide = ["links[", "topology.", "constellation."];
            if scenario_wide.iter().any(|p| path.starts_with(p)) {
                (path, value)
            } else {
                (format!("{}.{path}", self.flow_path(fi)), value)
            }
        })
    }

    /// Flow `fi`'s path in the scenario: `flows[i]`, or the workload's for its files.
    fn flow_path(&self, fi: usize) -> String {
        match self.flows[fi].workload {
            Some(w) => format!("workloads[{w}]"),
            None => format!("flows[{fi}]"),
        }
    }

    /// The timeline of every flow's shown state, if traced: rows of (time_s, flow, state
    /// index in `limits::ALL`).
    pub(super) fn limits_table(&self) -> Option<Table> {
        if !self.trace_limits {
            return None;
        }
        let mut t = Table::new(&["time_s", "flow", "state"]);
        for (fi, f) in self.flows.iter().enumerate() {
            for &(at, s) in f
                .account
                .as_ref()
                .and_then(Account::timeline)
                .unwrap_or(&[])
            {
                t.push(&[secs(at), fi as f64, s as f64]);
            }
        }
        debug_assert!(ALL.len() < 256);
        Some(t)
    }
}
