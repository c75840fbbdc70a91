//! What the network's agents report: a bp flow's summary block and the run's DTN summary.

use super::*;

impl World {
    /// A bp flow's share of its summary.
    pub(in crate::world) fn dtn_report_flow(&self, fi: usize, s: &mut FlowSummary) {
        let Some(st) = self.dtn.as_ref().and_then(|d| d.flows.get(&(fi as u32))) else {
            return;
        };
        s.state = if st.left == 0 && st.adus_delivered == st.bundles {
            "delivered".into()
        } else if st.expired + st.no_route > 0 {
            "bundles lost".into()
        } else {
            "in transit".into()
        };
        s.receiver_state = s.state.clone();
        s.bp = Some(BpSummary {
            bundles: st.bundles,
            bundles_delivered: st.adus_delivered,
            bundles_expired: st.expired,
            bundles_no_route: st.no_route,
            bytes_dropped: st.bytes_dropped,
            delivery_age_mean_s: (st.adus_delivered > 0)
                .then(|| st.age_sum_ms as f64 / 1e3 / st.adus_delivered as f64),
            delivery_age_max_s: st.age_max_ms as f64 / 1e3,
        });
    }

    /// The network's agents and hops.
    pub(in crate::world) fn dtn_summary(&self) -> Option<DtnSummary> {
        let d = self.dtn.as_ref()?;
        let nodes = d
            .agents
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let st = a.stats();
                DtnNodeSummary {
                    node: self.b.node_names[i].clone(),
                    ipn: d.numbers[i],
                    bundles_created: st.bundles_created,
                    bundles_received: st.bundles_received,
                    bundles_forwarded: st.bundles_forwarded,
                    bundles_delivered: st.bundles_delivered,
                    bundles_expired: st.bundles_expired,
                    bundles_no_route: st.bundles_no_route,
                    fragmentations: st.fragmentations,
                    reroutes: st.reroutes,
                    duplicates: st.duplicates,
                    storage_time_mean_s: (st.bundles_forwarded > 0)
                        .then(|| secs(st.storage_time_total) / st.bundles_forwarded as f64),
                    storage_time_max_s: secs(st.storage_time_max),
                    stored_bytes_max: st.stored_bytes_max,
                }
            })
            .collect();
        let hops = d
            .hops
            .iter()
            .map(|h| {
                let stats = |ep: u32| {
                    self.eps[ep as usize]
                        .transport
                        .convergence_layer_ref()
                        .map(|c| c.span_stats())
                        .unwrap_or_default()
                };
                let (x, y) = (stats(h.eps.0), stats(h.eps.1));
                DtnHopSummary {
                    between: [
                        self.b.node_names[h.a as usize].clone(),
                        self.b.node_names[h.b as usize].clone(),
                    ],
                    sessions: x.export_sessions_started + y.export_sessions_started,
                    sessions_canceled: x.export_canceled_locally.total()
                        + x.export_canceled_by_peer.total()
                        + y.export_canceled_locally.total()
                        + y.export_canceled_by_peer.total(),
                    segments_sent: x.segments_sent + y.segments_sent,
                    data_segments_retransmitted: x.data_segments_retransmitted
                        + y.data_segments_retransmitted,
                    report_segments: x.reports_sent + y.reports_sent,
                    blocks_delivered: x.blocks_delivered + y.blocks_delivered,
                }
            })
            .collect();
        Some(DtnSummary {
            contacts: d.plan.contacts().len() as u64,
            nodes,
            hops,
        })
    }
}
