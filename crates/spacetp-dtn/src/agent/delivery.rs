//! Delivery at the destination: an application data unit whole, its fragments joined.

use super::*;

/// Fragments of one application data unit collected at its destination (their bytes too,
/// when payloads are kept).
#[derive(Default)]
pub(super) struct Reassembly {
    total: u64,
    have: BTreeMap<u64, u64>,
    data: Vec<u8>,
}

impl Reassembly {
    /// Add [offset, offset + len); whether the unit is whole.
    fn add(&mut self, offset: u64, len: u64) -> bool {
        self.have.insert(offset, len);
        let mut covered = 0;
        for (&o, &l) in &self.have {
            if o > covered {
                return false;
            }
            covered = covered.max(o + l);
        }
        covered >= self.total
    }
}

impl Agent {
    pub(super) fn deliver(&mut self, b: Bundle) {
        self.stats.bundles_delivered += 1;
        let h = &b.header;
        let keep = self.keep_payloads;
        let (whole, total, payload) = match h.fragment {
            None => (true, h.payload_len, keep.then(|| b.payload().to_vec())),
            Some((offset, total)) => {
                let r = self.reassembly.entry(h.id).or_default();
                r.total = total;
                if keep {
                    let end = (offset + h.payload_len) as usize;
                    if r.data.len() < end {
                        r.data.resize(end, 0);
                    }
                    r.data[offset as usize..end].copy_from_slice(b.payload());
                }
                let whole = r.add(offset, h.payload_len);
                (whole, total, None)
            }
        };
        if whole {
            let joined = self.reassembly.remove(&h.id).map(|r| r.data);
            let payload = payload.or(if keep { joined } else { None });
            self.stats.adus_delivered += 1;
            self.stats.bytes_delivered += total;
            self.events.push_back(AgentEvent::Delivered {
                id: h.id,
                service: h.destination.service,
                bytes: total,
                age_ms: h.age_ms.unwrap_or(0),
                payload,
            });
        }
    }
}
