//! A bp flow: its file made into bundles as the source's store drains.

use super::*;

impl World {
    /// A bp flow starts: its source agent makes the bundles.
    pub(in crate::world) fn dtn_start_flow(&mut self, fi: u32, spec: &BpSpec) {
        let (from, to, total) = {
            let f = &self.flows[fi as usize];
            (f.from, f.to, f.total.unwrap_or(0))
        };
        let Some(d) = self.dtn.as_mut() else { return };
        let dest = Eid {
            node: d.numbers[to as usize],
            service: fi as u64 + 1,
        };
        d.flows.insert(
            fi,
            BpFlowState {
                left: total,
                bundle_size: spec.bundle_size,
                lifetime: spec.lifetime,
                source: from,
                dest,
                ..Default::default()
            },
        );
        self.open_account(fi);
        self.dtn_pump(from);
    }

    /// The source agents of `node`'s flows make bundles of the files while they hold less
    /// than `FEED_AHEAD`.
    pub(super) fn dtn_feed(&mut self, node: u16) {
        let now = self.now;
        let Some(d) = self.dtn.as_mut() else { return };
        let flows: Vec<u32> = d
            .flows
            .iter()
            .filter(|(_, st)| st.source == node && st.left > 0)
            .map(|(&fi, _)| fi)
            .collect();
        for fi in flows {
            loop {
                let stored = d.agents[node as usize].stored_bytes();
                let st = d.flows.get_mut(&fi).expect("listed above");
                if st.left == 0 || stored >= FEED_AHEAD {
                    break;
                }
                let n = st.left.min(st.bundle_size);
                st.left -= n;
                st.bundles += 1;
                let (dest, lifetime) = (st.dest, st.lifetime);
                let payload = vec![0u8; n as usize];
                let agent = &mut d.agents[node as usize];
                let no_route = agent.stats().bundles_no_route;
                agent.send(now, fi as u64 + 1, dest, payload, lifetime);
                if agent.stats().bundles_no_route > no_route {
                    // The plan is fixed: no route now is no route for the rest of the file
                    // either. It is not made into bundles (counted as dropped).
                    let st = d.flows.get_mut(&fi).expect("listed above");
                    st.bytes_dropped += std::mem::take(&mut st.left);
                    break;
                }
            }
        }
    }
}
