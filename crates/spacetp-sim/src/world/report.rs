//! What a run returns: sampled time series, flow summaries and the final summary.

use super::*;

impl World {
    pub(super) fn sample(&mut self) {
        let now = self.now;
        if let Some(tab) = &mut self.samples {
            for (fi, f) in self.flows.iter().enumerate() {
                let Some((s, _)) = f.eps else { continue };
                if f.done {
                    continue;
                }
                let st = self.eps[s as usize].transport.sender_state();
                tab.push(&[
                    secs(now),
                    fi as f64,
                    st.cwnd as f64,
                    if st.ssthresh == u64::MAX {
                        f64::INFINITY
                    } else {
                        st.ssthresh as f64
                    },
                    st.srtt.map_or(f64::NAN, secs),
                    st.in_flight as f64,
                    st.sent as f64,
                    st.acked as f64,
                    f.delivered as f64,
                ]);
            }
        }
        if let Some(iv) = self.sample_every {
            self.q.schedule(now + iv, Event::Sample);
        }
    }

    pub(super) fn flow_summary(&self, fi: usize) -> FlowSummary {
        let f = &self.flows[fi];
        let mut s = FlowSummary {
            name: f.name.clone(),
            protocol: f.protocol.clone(),
            from: self.b.node_names[f.from as usize].clone(),
            to: self.b.node_names[f.to as usize].clone(),
            bytes_requested: f.total,
            bytes_delivered: f.delivered,
            bytes_undelivered: f.total.map(|t| t - f.delivered.min(t)),
            complete: f.total.is_some_and(|t| f.delivered >= t),
            start_s: secs(f.start),
            last_byte_s: f.last_byte.map(secs),
            workload: f.workload.map(|w| self.workloads[w as usize].name.clone()),
            state: "not started".into(),
            ..Default::default()
        };
        if s.complete {
            s.completion_s = f.last_byte.map(|t| secs(t - f.start));
        }
        if let Some(t) = f.last_byte {
            if t > f.start {
                s.goodput_bps = f.delivered as f64 * 8.0 / secs(t - f.start);
            }
        }
        if let Some((a, b)) = f.window {
            let bytes = f.delivered_by[1] - f.delivered_by[0];
            s.goodput_window_bps = Some(bytes as f64 * 8.0 / secs(b - a));
        }
        if let Some((se, re)) = f.eps {
            let (se, re) = (&self.eps[se as usize], &self.eps[re as usize]);
            se.transport.report_sender(&mut s);
            re.transport.report_receiver(&mut s);
            s.failure = se.transport.failure().or_else(|| {
                re.transport
                    .failure()
                    .map(|why| format!("the receiving end: {why}"))
            });
        }
        self.dtn_report_flow(fi, &mut s);
        s.limits = self.limit_shares(fi);
        s.fitted = f.fitted.clone();
        s
    }

    /// What fitting gave each flow (`fit = true`), without running: its path's facts as the
    /// rules read them and the settings fitted (`spacetp fit`).
    pub fn fitted_settings(&self) -> serde_json::Value {
        let flows: Vec<_> = self
            .flows
            .iter()
            .map(|f| {
                let p = crate::fit::FitPath::new(&self.b, f.from, f.to, f.spec.mss() + 40);
                serde_json::json!({
                    "name": f.name,
                    "protocol": f.protocol,
                    "path": {
                        "rate_bps": p.rate_bps,
                        "back_rate_bps": p.back_rate_bps,
                        "rtt_s": p.rtt as f64 / 1e9,
                        "bdp_bytes": p.bdp,
                        "mtu": p.mtu,
                        "loss": p.loss,
                    },
                    "fitted": f.fitted,
                })
            })
            .collect();
        serde_json::json!({ "flows": flows })
    }

    pub(super) fn finish(mut self) -> RunOutput {
        for fi in 0..self.flows.len() as u32 {
            self.close_account(fi); // the run ended with these flows still going
        }
        let flows = (0..self.flows.len())
            .map(|i| {
                self.flows[i]
                    .snapshot
                    .as_deref()
                    .cloned()
                    .unwrap_or_else(|| self.flow_summary(i))
            })
            .collect();
        let datagrams = self
            .sources
            .iter()
            .map(|s| {
                let counts = |ep: u32| {
                    self.eps[ep as usize]
                        .transport
                        .datagram_counts()
                        .unwrap_or_default()
                };
                let (sender, receiver) = (counts(s.eps.0), counts(s.eps.1));
                DatagramSummary {
                    from: self.b.node_names[s.from as usize].clone(),
                    to: self.b.node_names[s.to as usize].clone(),
                    packets_sent: s.sent,
                    packets_received: receiver.received,
                    bytes_received: receiver.bytes_received,
                    quic: sender
                        .frames
                        .map(|(sent_in_frames, too_large)| QuicDatagramSummary {
                            sent_in_frames,
                            too_large,
                        }),
                }
            })
            .collect();
        let summary = Summary {
            run: RunSummary {
                name: self.name.clone(),
                seed: self.seed,
                end_s: secs(self.now),
                events: self.q.processed,
                peak_packets: self.slab.capacity_used() as u64,
                corruption_notices: self.corruption_notices,
            },
            flows,
            links: self.b.links.iter().map(|l| l.stats.clone()).collect(),
            datagrams,
            attacks: self.attackers.iter().map(Attacker::summary).collect(),
            dtn: self.dtn_summary(),
        };
        RunOutput {
            summary,
            limits: self.limits_table(),
            samples: self.samples,
            segments: self.segments,
        }
    }
}
