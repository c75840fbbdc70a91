//! What the node's bundle agent says: bundles delivered (written to the output folder,
//! whole, with their SHA-256), expired, or without a route.

use super::{sha256, write_file, DtnNode};
use crate::dtn::report::{DeliveredFile, Dropped};
use spacetp_dtn::agent::AgentEvent;
use spacetp_proto::time::secs;
use spacetp_proto::Time;

impl DtnNode {
    pub(super) fn agent_events(&mut self, now: Time) -> bool {
        let mut any = false;
        while let Some(ev) = self.agent.poll_event() {
            any = true;
            match ev {
                AgentEvent::Delivered {
                    id,
                    service,
                    bytes,
                    age_ms,
                    payload,
                } => {
                    let data = payload.unwrap_or_default();
                    if let Some(app) = self.app.as_mut().filter(|a| a.service == service) {
                        app.inbox.push_back((id.source, data));
                        continue;
                    }
                    let file = self.cfg.s.out_dir.as_ref().map(|dir| {
                        let name = format!(
                            "ipn{}.{}-{}-{}",
                            id.source.node, id.source.service, id.created_ms, id.seq
                        );
                        let path = dir.join(name);
                        if let Err(e) = write_file(&path, &data) {
                            eprintln!("spacetp dtn: writing {}: {e}", path.display());
                        }
                        path.display().to_string()
                    });
                    self.report.delivered.push(DeliveredFile {
                        source: format!("ipn:{}.{}", id.source.node, id.source.service),
                        service,
                        bytes,
                        sha256: sha256(&data),
                        file,
                        at_s: secs(now),
                        age_s: age_ms as f64 / 1e3,
                        since_creation_s: (id.created_ms > 0).then(|| {
                            (self.clock_ms + now / 1_000_000).saturating_sub(id.created_ms) as f64
                                / 1e3
                        }),
                    });
                }
                AgentEvent::Expired {
                    destination, bytes, ..
                } => self.report.dropped.push(Dropped {
                    destination: format!("ipn:{}.{}", destination.node, destination.service),
                    bytes,
                    why: "expired".into(),
                }),
                AgentEvent::NoRoute {
                    destination, bytes, ..
                } => self.report.dropped.push(Dropped {
                    destination: format!("ipn:{}.{}", destination.node, destination.service),
                    bytes,
                    why: "no route before it expires".into(),
                }),
            }
        }
        any
    }
}
