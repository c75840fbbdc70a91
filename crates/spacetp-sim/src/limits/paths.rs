//! Which path describes each state of a re-routed flow. A flow's path can change under it
//! (`[[forwarding]]`); each state is then described, its fact and its setting, by the path
//! on which it had the most time, so that "the link 20 Mb/s" is said of the link that held
//! the flow, not of one it crossed for a second.

use super::{Limit, PathFacts};
use spacetp_proto::Time;
use std::rc::Rc;

/// The earlier paths' share of each state.
#[derive(Debug, Default)]
pub struct PathsTaken {
    /// Per state: the earlier path on which it had the most time, and that time.
    best: Vec<(Limit, Time, Rc<PathFacts>)>,
    /// Each state's time in all when the current path began.
    at_change: Vec<(Limit, Time)>,
}

impl PathsTaken {
    fn before(&self, l: Limit) -> Time {
        self.at_change
            .iter()
            .find(|(e, _)| *e == l)
            .map_or(0, |e| e.1)
    }

    /// The path `old` ended; `states` is each state's time in all (closed at the change).
    pub fn path_ended(&mut self, old: PathFacts, states: &[(Limit, Time, f64)]) {
        let old = Rc::new(old);
        for &(l, t, _) in states {
            let on_old = t - self.before(l);
            match self.best.iter_mut().find(|(e, _, _)| *e == l) {
                Some(b) if b.1 >= on_old => {}
                Some(b) => *b = (l, on_old, old.clone()),
                None if on_old > 0 => self.best.push((l, on_old, old.clone())),
                None => {}
            }
        }
        self.at_change = states.iter().map(|&(l, t, _)| (l, t)).collect();
    }

    /// The facts that describe state `l` (`total`: its time in all), `current` being the
    /// path the flow is on: an earlier path's if the state had more time there.
    pub fn facts_for<'a>(&'a self, l: Limit, total: Time, current: &'a PathFacts) -> &'a PathFacts {
        let on_current = total - self.before(l);
        match self.best.iter().find(|(e, _, _)| *e == l) {
            Some((_, t, p)) if *t > on_current => p,
            _ => current,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(rate: f64) -> PathFacts {
        PathFacts {
            rate_bps: rate,
            ..Default::default()
        }
    }

    #[test]
    fn a_state_is_described_by_the_path_it_spent_most_time_on() {
        let mut p = PathsTaken::default();
        // 2 s of link on the first path (5 Mb/s), 1 s of handshake.
        p.path_ended(
            facts(5e6),
            &[(Limit::Link, 2, 0.0), (Limit::Handshake, 1, 0.0)],
        );
        let now = facts(20e6);
        // 18 s of link in all (16 on the current path): the current path describes it.
        assert_eq!(p.facts_for(Limit::Link, 18, &now).rate_bps, 20e6);
        // The handshake had all its time on the first path.
        assert_eq!(p.facts_for(Limit::Handshake, 1, &now).rate_bps, 5e6);
        // 3 s of link in all (1 on the current path): the first path's.
        assert_eq!(p.facts_for(Limit::Link, 3, &now).rate_bps, 5e6);
    }

    #[test]
    fn a_third_path_is_compared_with_the_best_earlier_one() {
        let mut p = PathsTaken::default();
        p.path_ended(facts(5e6), &[(Limit::Link, 2, 0.0)]);
        p.path_ended(facts(10e6), &[(Limit::Link, 7, 0.0)]); // 5 s on the second path
        let now = facts(20e6);
        assert_eq!(p.facts_for(Limit::Link, 11, &now).rate_bps, 10e6); // 4 s on the third
        assert_eq!(p.facts_for(Limit::Link, 13, &now).rate_bps, 20e6); // 6 s on the third
    }
}
