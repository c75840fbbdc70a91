//! One flow's account: the time spent in each state, closed at every accounting point.

use super::{Limit, ALL};
use spacetp_proto::Time;

/// The facts of a flow's path that the analysis compares with.
#[derive(Clone, Debug, Default)]
pub struct PathFacts {
    /// Link directions from the sender to the receiver, and back.
    pub forward: Vec<u32>,
    pub back: Vec<u32>,
    /// The slowest forward direction (the first of equals) and its rate, bits/s.
    pub bottleneck: Option<u32>,
    pub rate_bps: f64,
    /// The slowest direction back (where the ACKs queue) and its rate, bits/s.
    pub back_bottleneck: Option<u32>,
    pub back_rate_bps: f64,
    /// Propagation both ways at the flow's start, plus a full packet's serialisation at the
    /// bottleneck: the round trip of an empty path, ns.
    pub rtt: Time,
    /// The bandwidth-delay product: `rate_bps` x `rtt`, bytes.
    pub bdp: u64,
    /// Whether any direction of the path (either way) ever goes down: only then is it
    /// checked at each accounting point.
    pub has_outages: bool,
}

/// Where a flow's time went, state by state.
#[derive(Clone, Debug)]
pub struct Account {
    /// The open interval: since when, in which state, with which binding quantity (a
    /// window's bytes; 0 for none), and the bottleneck's busy integral then.
    since: Time,
    state: Limit,
    quantity: f64,
    busy_at_since: Time,
    /// Time in each state (index of [`ALL`]), and the quantity integrated over it.
    time: [Time; ALL.len()],
    quantity_time: [f64; ALL.len()],
    closed: bool,
    /// The state shown at each change (time, index of [`ALL`]), when asked for: what the
    /// figures shade. An interval shows as the link when the link was busy most of it.
    timeline: Option<Vec<(Time, u8)>>,
}

impl Account {
    /// A flow that starts at `now` (opening its connection); `busy` is its bottleneck's
    /// busy integral now.
    pub fn new(now: Time, busy: Time, timeline: bool) -> Self {
        Account {
            since: now,
            state: Limit::Handshake,
            quantity: 0.0,
            busy_at_since: busy,
            time: [0; ALL.len()],
            quantity_time: [0.0; ALL.len()],
            closed: false,
            timeline: timeline.then(|| vec![(now, Limit::Handshake.index() as u8)]),
        }
    }

    /// Close the open interval at `now` (`busy`: the bottleneck's busy integral now) and
    /// open one in `state`, whose binding quantity is `quantity`; nothing when the state is
    /// the same and its quantity within 3% (the mean of a window is kept to that).
    pub fn at(&mut self, now: Time, busy: Time, state: Limit, quantity: f64) {
        if self.closed || self.goes_on(state, quantity) {
            return;
        }
        self.close_interval(now, busy);
        self.state = state;
        self.quantity = quantity;
    }

    /// Whether `at` would change nothing: the same state, its quantity within 3% (the
    /// interval goes on). Asked first, it spares reading the bottleneck's busy integral,
    /// which only a change needs.
    pub fn goes_on(&self, state: Limit, quantity: f64) -> bool {
        state == self.state && (quantity - self.quantity).abs() * 32.0 <= self.quantity
    }

    /// The flow's bottleneck changed at `now` (its path was re-routed): close the open
    /// interval on the old one's busy integral (`busy_old`) and go on in the same state
    /// from the new one's (`busy_new`).
    pub fn rebase(&mut self, now: Time, busy_old: Time, busy_new: Time) {
        if !self.closed {
            self.close_interval(now, busy_old);
            self.busy_at_since = busy_new;
        }
    }

    /// The flow ended (its last byte arrived, it failed, it stopped, or the run ended).
    pub fn close(&mut self, now: Time, busy: Time) {
        if !self.closed {
            self.close_interval(now, busy);
            self.closed = true;
        }
    }

    pub fn is_closed(&self) -> bool {
        self.closed
    }

    fn close_interval(&mut self, now: Time, busy: Time) {
        let dt = now.saturating_sub(self.since);
        let on_link = if self.state.yields_to_link() {
            busy.saturating_sub(self.busy_at_since).min(dt)
        } else {
            0
        };
        let rest = dt - on_link;
        self.time[Limit::Link.index()] += on_link;
        let i = self.state.index();
        self.time[i] += rest;
        self.quantity_time[i] += self.quantity * rest as f64;
        if let Some(tl) = &mut self.timeline {
            let shown = if dt > 0 && 2 * on_link > dt {
                Limit::Link
            } else {
                self.state
            };
            if dt > 0 && tl.last().is_none_or(|&(_, s)| s != shown.index() as u8) {
                tl.push((self.since, shown.index() as u8));
            }
        }
        self.since = now;
        self.busy_at_since = busy;
    }

    /// Each state with time in it: (state, ns, mean of its quantity over that time).
    pub fn states(&self) -> Vec<(Limit, Time, f64)> {
        ALL.iter()
            .enumerate()
            .filter(|&(i, _)| self.time[i] > 0)
            .map(|(i, &l)| (l, self.time[i], self.quantity_time[i] / self.time[i] as f64))
            .collect()
    }

    /// Time accounted so far, ns.
    pub fn total(&self) -> Time {
        self.time.iter().sum()
    }

    /// The shown state at each change, if kept.
    pub fn timeline(&self) -> Option<&[(Time, u8)]> {
        self.timeline.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_time_of_the_bottleneck_goes_to_the_link_the_rest_to_the_state() {
        let mut a = Account::new(0, 0, true);
        a.at(100, 0, Limit::CongestionWindow, 1000.0); // 100 ns of handshake
        a.at(400, 250, Limit::ReceiveWindow, 2000.0); // 250 of 300 ns busy
        a.at(500, 250, Limit::LinkDown, 0.0); // 100 ns idle, rwnd
        a.close(700, 450); // link down: its busy time is not the link's
        let got = a.states();
        assert_eq!(
            got,
            vec![
                (Limit::Link, 250, 0.0),
                (Limit::Handshake, 100, 0.0),
                (Limit::CongestionWindow, 50, 1000.0),
                (Limit::ReceiveWindow, 100, 2000.0),
                (Limit::LinkDown, 200, 0.0),
            ]
        );
        assert_eq!(a.total(), 700, "the shares add up to the flow's time");
        let shown: Vec<_> = a
            .timeline()
            .unwrap()
            .iter()
            .map(|&(t, s)| (t, ALL[s as usize]))
            .collect();
        assert_eq!(
            shown,
            vec![
                (0, Limit::Handshake),
                (100, Limit::Link),
                (400, Limit::ReceiveWindow),
                (500, Limit::LinkDown),
            ]
        );
    }

    #[test]
    fn nothing_is_accounted_after_the_close() {
        let mut a = Account::new(10, 0, false);
        a.close(20, 0);
        a.at(50, 0, Limit::Recovery, 0.0);
        a.close(90, 0);
        assert_eq!(a.total(), 10);
    }
}
