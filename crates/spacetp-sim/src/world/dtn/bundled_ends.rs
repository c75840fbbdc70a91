//! Ends that send their packets as bundles (CFDP over BP): the agents carry them between
//! the ends' nodes.

use super::*;

impl World {
    /// Flow `fi`'s ends `eps` send their packets as bundles of `lifetime` (CFDP over BP).
    pub(in crate::world) fn dtn_bundle_ends(&mut self, fi: u32, eps: (u32, u32), lifetime: Time) {
        self.eps[eps.0 as usize].bundled = true;
        self.eps[eps.1 as usize].bundled = true;
        if let Some(d) = self.dtn.as_mut() {
            d.ends.insert(fi, (eps, lifetime));
        }
    }

    /// A bundled end's packets: each payload a bundle from its node's agent to the other
    /// end's node (service: the flow's number + 1), which the agents forward.
    #[cold]
    #[inline(never)]
    pub(in crate::world) fn transmit_bundles(&mut self, ep: u32) {
        let now = self.now;
        let (node, peer_node, app) = {
            let e = &self.eps[ep as usize];
            (e.node, e.peer_node, e.app)
        };
        let App::Flow(fi) = app else { return };
        let mut wire = Wire::Udp {
            src_port: 0,
            dst_port: 0,
            len: 0,
        };
        let mut payload = Vec::new();
        let mut sent = false;
        while let Some(_out) =
            self.eps[ep as usize]
                .transport
                .poll_transmit(now, &mut wire, &mut payload)
        {
            let Some(d) = self.dtn.as_mut() else { return };
            let Some(&(_, lifetime)) = d.ends.get(&fi) else {
                return;
            };
            let service = fi as u64 + 1;
            let dest = Eid {
                node: d.numbers[peer_node as usize],
                service,
            };
            d.agents[node as usize].send(
                now,
                service,
                dest,
                std::mem::take(&mut payload),
                lifetime,
            );
            sent = true;
        }
        if sent {
            self.dtn_pump(node);
        }
    }
}
