//! Agents of a small network over a contact plan, joined by ideal links: a bundle handed
//! to a neighbor arrives after its transmission at the contact's rate and the range's
//! light time. Times in the comments are worked out from the plans by hand.

use super::*;
use crate::contact_plan::ContactPlan;

const LANDER: u64 = 1;
const ORBITER: u64 = 2;
const EARTH: u64 = 3;

/// Agents for `nodes` over `plan`, and the bundles on their way: (arrival, to, from, bytes).
struct Net {
    agents: BTreeMap<u64, Agent>,
    plan: Arc<ContactPlan>,
    flying: Vec<(Time, u64, u64, Vec<u8>)>,
    /// When each link is free again (transmissions queue behind each other).
    free: BTreeMap<(u64, u64), Time>,
    events: Vec<(Time, u64, AgentEvent)>,
    now: Time,
}

impl Net {
    fn new(plan: &str, nodes: &[u64]) -> Net {
        let plan = Arc::new(ContactPlan::parse(plan).unwrap());
        let agents = nodes
            .iter()
            .map(|&n| (n, Agent::new(n, plan.clone(), None)))
            .collect();
        Net {
            agents,
            plan,
            flying: Vec::new(),
            free: BTreeMap::new(),
            events: Vec::new(),
            now: 0,
        }
    }

    fn agent(&mut self, n: u64) -> &mut Agent {
        self.agents.get_mut(&n).unwrap()
    }

    /// Run until nothing is left to do or `until`.
    fn run(&mut self, until: Time) {
        loop {
            // Hand out what may leave now.
            let nodes: Vec<u64> = self.agents.keys().copied().collect();
            for n in &nodes {
                while let Some((to, bytes)) = self.agents.get_mut(n).unwrap().poll_forward(self.now)
                {
                    let c = self
                        .plan
                        .contacts_between(*n, to)
                        .iter()
                        .find(|c| c.start <= self.now && self.now < c.end)
                        .expect("released during its contact")
                        .clone();
                    let start = self.free.get(&(*n, to)).copied().unwrap_or(0).max(self.now);
                    let done = start + (bytes.len() as f64 / c.rate_bytes_per_s * 1e9) as Time;
                    self.free.insert((*n, to), done);
                    let owlt = self.plan.owlt(*n, to, self.now).unwrap();
                    self.flying.push((done + owlt, to, *n, bytes));
                }
                while let Some(e) = self.agents.get_mut(n).unwrap().poll_event() {
                    self.events.push((self.now, *n, e));
                }
            }
            let next_arrival = self.flying.iter().map(|f| f.0).min();
            let next_timer = self
                .agents
                .values()
                .filter_map(|a| a.poll_timeout(self.now))
                .filter(|&t| t > self.now)
                .min();
            let Some(t) = [next_arrival, next_timer].into_iter().flatten().min() else {
                return;
            };
            if t > until {
                return;
            }
            self.now = t;
            let (due, rest): (Vec<_>, Vec<_>) = self.flying.drain(..).partition(|f| f.0 <= t);
            self.flying = rest;
            for (_, to, from, bytes) in due {
                let now = self.now;
                self.agent(to).on_block(now, from, &bytes);
            }
            for n in &nodes {
                let now = self.now;
                self.agent(*n).on_timeout(now);
                self.agent(*n).check_indexes();
            }
        }
    }

    fn delivered(&self) -> Vec<(Time, u64)> {
        self.events
            .iter()
            .filter_map(|(t, _, e)| match e {
                AgentEvent::Delivered { bytes, .. } => Some((*t, *bytes)),
                _ => None,
            })
            .collect()
    }
}

/// A lander whose orbiter passes for 10 minutes every 2 hours (8 kB/s, 1 ms apart), and an
/// orbiter that sees Earth for 50 minutes from 5000 s (4 kB/s, 10 light-minutes away).
const MARS: &str = "
a contact +3600 +4200 1 2 8000
a contact +10800 +11400 1 2 8000
a contact +3600 +4200 2 1 8000
a contact +10800 +11400 2 1 8000
a range +0 +86400 1 2 0.001
a contact +5000 +8000 2 3 4000
a contact +5000 +8000 3 2 4000
a contact +14000 +17000 2 3 4000
a range +0 +86400 2 3 600
";

fn eid(node: u64) -> Eid {
    Eid { node, service: 1 }
}

#[test]
fn a_bundle_waits_for_the_pass_then_for_earth_and_arrives_through_the_relay() {
    let mut net = Net::new(MARS, &[LANDER, ORBITER, EARTH]);
    net.agent(LANDER)
        .send(0, 1, eid(EARTH), vec![0u8; 100_000], 86_400 * SEC);
    net.run(86_400 * SEC);
    let d = net.delivered();
    assert_eq!(d.len(), 1, "{:?}", net.events);
    // Stored at the lander until the pass at 3600 s; about 100 kB at 8 kB/s (12.5 s, a
    // little more with the bundle's headers) and 1 ms of light time: at the orbiter by
    // 3612.5 s, stored until Earth rises at 5000 s; 100 kB at 4 kB/s (25 s) and 600 s of
    // light time: at Earth at about 5625 s.
    let t = spacetp_proto::time::secs(d[0].0);
    assert!((5625.0..5627.0).contains(&t), "delivered at {t} s");
    assert_eq!(d[0].1, 100_000);
    let l = net.agents[&LANDER].stats();
    let o = net.agents[&ORBITER].stats();
    assert_eq!((l.bundles_forwarded, o.bundles_forwarded), (1, 1));
    // The orbiter kept it from ~3612 s to 5000 s.
    let kept = spacetp_proto::time::secs(o.storage_time_total);
    assert!((1385.0..1390.0).contains(&kept), "stored {kept} s");
    // The age on delivery: residences (3600 s + ~1387 s) plus the light times (~600 s).
    match &net
        .events
        .iter()
        .find(|e| matches!(e.2, AgentEvent::Delivered { .. }))
        .unwrap()
        .2
    {
        AgentEvent::Delivered { age_ms, .. } => {
            assert!((5_585_000..5_600_000).contains(age_ms), "age {age_ms} ms")
        }
        _ => unreachable!(),
    }
}

#[test]
fn a_bundle_larger_than_a_pass_is_fragmented_and_reassembled_at_earth() {
    // A pass carries 8 kB/s x 600 s = 4.8 MB; a bundle of 6 MB goes in two passes.
    let mut net = Net::new(MARS, &[LANDER, ORBITER, EARTH]);
    net.agent(LANDER)
        .send(0, 1, eid(EARTH), vec![0u8; 6_000_000], 86_400 * SEC);
    net.run(86_400 * SEC);
    let d = net.delivered();
    assert_eq!(d, vec![(d[0].0, 6_000_000)], "{:?}", net.events);
    assert!(net.agents[&LANDER].stats().fragmentations >= 1);
    assert!(
        net.agents[&EARTH].stats().bundles_delivered >= 2,
        "fragments arrived"
    );
    // The second fragment leaves on the pass at 10800 s and reaches Earth in the window
    // from 14000 s: whole only then.
    assert!(spacetp_proto::time::secs(d[0].0) > 14_000.0);
}

#[test]
fn a_bundle_that_cannot_arrive_before_it_expires_is_reported_at_once() {
    let mut net = Net::new(MARS, &[LANDER, ORBITER, EARTH]);
    // The earliest delivery is about 5625 s; a lifetime of an hour cannot make it.
    let id = net
        .agent(LANDER)
        .send(0, 1, eid(EARTH), vec![0u8; 1000], 3600 * SEC);
    net.run(86_400 * SEC);
    assert!(net.delivered().is_empty());
    assert!(matches!(
        net.events[0].2,
        AgentEvent::NoRoute { id: i, bytes: 1000, .. } if i == id
    ));
    assert_eq!(net.agents[&LANDER].stored_bytes(), 0, "deleted, not kept");
}

#[test]
fn a_bundle_older_than_its_lifetime_on_arrival_is_deleted_as_expired() {
    let plan = Arc::new(ContactPlan::parse(MARS).unwrap());
    let mut orbiter = Agent::new(ORBITER, plan, None);
    let mut b = Bundle::new(eid(LANDER), eid(EARTH), 0, 1, 60_000, vec![0u8; 100]);
    b.add_age(61_000);
    orbiter.on_bundle(3700 * SEC, LANDER, b);
    assert!(matches!(
        orbiter.poll_event(),
        Some(AgentEvent::Expired { bytes: 100, .. })
    ));
    assert_eq!(orbiter.stats().bundles_expired, 1);
}

#[test]
fn a_bundle_given_back_by_its_convergence_layer_takes_the_next_pass() {
    let mut net = Net::new(MARS, &[LANDER, ORBITER, EARTH]);
    net.agent(LANDER)
        .send(0, 1, eid(EARTH), vec![0u8; 50_000], 86_400 * SEC);
    // The pass at 3600 s: the lander hands the bundle out, and after the pass LTP gives it
    // back (its session canceled): it goes again on the pass at 10800 s, then to Earth in
    // the window from 14000 s.
    net.run(3599 * SEC);
    let (to, bytes) = net
        .agent(LANDER)
        .poll_forward(3600 * SEC)
        .expect("the bundle leaves at the pass");
    assert_eq!(to, ORBITER);
    net.now = 4300 * SEC;
    net.agent(LANDER)
        .on_forward_failed(4300 * SEC, ORBITER, &bytes);
    net.run(86_400 * SEC);
    let d = net.delivered();
    assert_eq!(d.len(), 1);
    assert!(spacetp_proto::time::secs(d[0].0) > 14_000.0);
    assert_eq!(net.agents[&LANDER].stats().reroutes, 1);
}

#[test]
fn a_bundle_that_arrives_twice_is_delivered_once() {
    let plan = Arc::new(ContactPlan::parse(MARS).unwrap());
    let mut earth = Agent::new(EARTH, plan, None);
    let b = Bundle::new(eid(LANDER), eid(EARTH), 0, 7, 86_400_000, vec![1u8; 10]);
    earth.on_bundle(5700 * SEC, ORBITER, b.clone());
    earth.on_bundle(5800 * SEC, ORBITER, b);
    assert_eq!(earth.stats().adus_delivered, 1);
    assert_eq!(earth.stats().duplicates, 1);
}

#[test]
fn a_pass_s_rate_paces_what_leaves_for_it() {
    // Ten bundles of 100 kB for one pass at 8 kB/s: they leave as the contact's rate
    // allows (a second ahead), not all at the pass's start.
    let mut net = Net::new(MARS, &[LANDER, ORBITER, EARTH]);
    for _ in 0..10 {
        net.agent(LANDER)
            .send(0, 1, eid(EARTH), vec![0u8; 100_000], 86_400 * SEC);
    }
    let mut left_at = Vec::new();
    let mut t = 3600 * SEC;
    while t < 4200 * SEC {
        while net.agent(LANDER).poll_forward(t).is_some() {
            left_at.push(t);
        }
        if left_at.len() == 10 {
            break;
        }
        let next = net.agent(LANDER).poll_timeout(t);
        assert!(
            next.is_some(),
            "{} left, nothing next at {t}",
            left_at.len()
        );
        t = next.unwrap().max(t + MS);
    }
    assert_eq!(left_at.len(), 10);
    // The tenth can leave once nine have had their time at 8 kB/s (about 112 s), less the
    // second of look-ahead.
    let last = spacetp_proto::time::secs(left_at[9]) - 3600.0;
    assert!(
        (110.0..115.0).contains(&last),
        "the tenth left {last} s into the pass"
    );
}

/// The indexes an agent keeps beside its store agree with a walk over the store and its
/// queues, at every step of every run above (`Net::run` checks); here with bundles that
/// have no route in their lifetime (deleted at once), are forwarded from the front, and
/// arrive.
#[test]
fn queued_bytes_and_deadlines_match_the_store_as_bundles_come_and_go() {
    let mut net = Net::new(MARS, &[LANDER, ORBITER, EARTH]);
    for i in 0..40u64 {
        let lifetime = if i % 3 == 0 {
            3700 * SEC
        } else {
            20 * 3600 * SEC
        };
        let to = Eid {
            node: EARTH,
            service: 1,
        };
        net.agent(LANDER)
            .send(0, 1, to, vec![i as u8; 2000 + 37 * i as usize], lifetime);
        net.agent(LANDER).check_indexes();
    }
    // The 14 that live 3700 s cannot reach Earth (its contact opens at 5000 s).
    assert_eq!(net.agent(LANDER).stats().bundles_no_route, 14);
    let queued = net.agent(LANDER).backlog()[&ORBITER];
    assert!(queued > 26 * 2000, "26 wait for the orbiter: {queued}");
    net.run(4000 * SEC);
    let a = net.agent(LANDER);
    let left = a.backlog().get(&ORBITER).copied().unwrap_or(0);
    assert!(
        left < queued,
        "some left during the first pass: {left} of {queued}"
    );
    net.run(86400 * SEC);
    assert_eq!(net.agent(LANDER).stored_bytes(), 0);
    assert_eq!(net.delivered().len(), 26);
}
