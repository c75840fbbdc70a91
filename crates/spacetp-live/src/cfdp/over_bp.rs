//! CFDP over the Bundle Protocol, live, as ION carries it (its `bputa`): the entity runs on a
//! DTN node (`spacetp dtn`'s, whose ipn number is the entity ID), and each PDU is one bundle
//! from the entity's CFDP endpoint (`ipn:N.64`) to the peer entity's (`ipn:PEER.65`). One thread turns both: the node's
//! contacts, LTP and bundles, then the entity's transactions, whose PDUs (paced at the
//! settings' `rate`, by default 90% of the slowest contact from this node) become bundles.

use super::config::CfdpConfig;
use super::entity::CfdpEntity;
use super::outlet::Way;
use super::report::CfdpReport;
use crate::dtn::{config_from_settings, DtnConfig, DtnNode, DtnSettings};
use crate::error::LiveError;
use crate::turns::Turns;
use spacetp_dtn::bundle::Eid;
use spacetp_proto::{FieldError, Time};
use std::collections::VecDeque;
use std::os::fd::RawFd;

/// The service numbers of CFDP's endpoints on every node, as ION's bputa (cfdp/bp/bputa.c,
/// `CFDP_SEND_SVC_NBR` and `CFDP_RECV_SVC_NBR`): PDUs leave from `ipn:N.64` for
/// `ipn:PEER.65`, and arrive at `ipn:N.65`.
pub const CFDP_SEND_SERVICE: u64 = 64;
pub const CFDP_RECV_SERVICE: u64 = 65;

/// The share of the slowest contact's rate CFDP is paced at by default, leaving room for
/// the bundles' and LTP's headers and LTP's reports (the simulator's `cfdp-bp` default).
const DEFAULT_RATE_SHARE: f64 = 0.9;

/// The node an entity over BP runs on, checked: its settings as `spacetp dtn` takes them,
/// with errors named under `cfdp.bp`. The entity's `duration` bounds the node too: a node
/// whose last bundles cannot leave (its peer gone) still stops then.
pub fn node_config(
    entity: u16,
    s: &DtnSettings,
    duration_s: Option<f64>,
) -> Result<DtnConfig, FieldError> {
    let at = |e: FieldError| FieldError::new(e.path.replacen("dtn", "cfdp.bp", 1), e.message);
    if s.node != entity as u64 {
        return Err(FieldError::new(
            "cfdp.bp.node",
            format!(
                "the node is {} and the entity {entity}: a CFDP entity over BP has its node's \
                 number as its ID (as in ION)",
                s.node
            ),
        ));
    }
    let unusable = [
        ("send", !s.send.is_empty()),
        ("out_dir", s.out_dir.is_some()),
        ("until_delivered", s.until_delivered.is_some()),
        ("until_sent", s.until_sent),
        ("service", s.service.is_some_and(|v| v != CFDP_SEND_SERVICE)),
    ];
    if let Some((key, _)) = unusable.iter().find(|u| u.1) {
        return Err(FieldError::new(
            format!("cfdp.bp.{key}"),
            "the entity decides what the node sends and when it stops: give this to the \
             entity (send, out_dir, until_*)",
        ));
    }
    let mut s = s.clone();
    s.service = Some(CFDP_SEND_SERVICE);
    s.duration_s = s.duration_s.or(duration_s);
    let epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    config_from_settings(s, epoch).map_err(at)
}

/// A CFDP entity on a DTN node. The node stops after the entity: at once when the entity
/// was stopped (a signal, its duration), else once what it sent has left.
pub struct CfdpOverBp {
    entity: CfdpEntity,
    node: DtnNode,
    /// The node was told the entity stopped.
    node_told: bool,
}

impl CfdpOverBp {
    /// The node binds its LTP socket and takes its contact plan; `unix_now_ms` is the wall
    /// clock (the bundles' creation times).
    pub fn new(mut cfg: CfdpConfig, unix_now_ms: u64) -> Result<CfdpOverBp, LiveError> {
        let dtn = cfg
            .bp
            .take()
            .ok_or_else(|| FieldError::new("cfdp.bp", "CFDP over BP needs the node's settings"))?;
        let rate = cfg.cfdp.rate.map(|r| r.0).or_else(|| default_rate(&dtn));
        let entity = CfdpEntity::with_way(cfg, Way::Bundles(VecDeque::new()), rate);
        let mut node = DtnNode::new(dtn, unix_now_ms)?;
        node.open_app(CFDP_RECV_SERVICE);
        node.share_clock(entity.started_at());
        Ok(CfdpOverBp {
            entity,
            node,
            node_told: false,
        })
    }

    /// Stop at the next turn (a signal): the entity's transactions as they are, the node's
    /// blocks canceled.
    pub fn begin_stop(&mut self, why: &str) {
        self.entity.begin_stop(why);
        self.node.begin_stop(why);
    }

    /// The entity's report, with its node's under `bp`.
    pub fn report(&self) -> CfdpReport {
        let mut r = self.entity.report();
        r.bp = Some(self.node.report());
        r
    }

    /// The address the node's LTP socket is bound to.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        self.node.local_addr()
    }

    /// What the node said while it ran (canceled LTP sessions, bundles given up).
    pub fn take_notices(&mut self) -> Vec<String> {
        self.node.take_notices()
    }
}

/// 90% of the slowest contact from this node to a neighbor (bits/s), if the plan has one.
fn default_rate(dtn: &DtnConfig) -> Option<f64> {
    let node = dtn.s.node;
    dtn.peers
        .iter()
        .flat_map(|p| dtn.plan.contacts_between(node, p.engine))
        .map(|c| c.rate_bytes_per_s * 8.0 * DEFAULT_RATE_SHARE)
        .filter(|r| *r > 0.0)
        .reduce(f64::min)
}

impl Turns for CfdpOverBp {
    fn now(&self) -> Time {
        self.entity.now()
    }

    fn step(&mut self, now: Time) {
        self.node.step(now);
        while let Some((_source, pdu)) = self.node.take_app() {
            self.entity.on_datagram(now, &pdu, None);
        }
        if !self.entity.stopped() {
            self.entity.step(now);
        }
        while let Some((peer, pdu)) = self.entity.take_bundle() {
            let dest = Eid {
                node: peer as u64,
                service: CFDP_RECV_SERVICE,
            };
            self.node.send_app(now, dest, pdu);
        }
        if let Some(why) = self.entity.stop_reason().filter(|_| !self.node_told) {
            self.node_told = true;
            match why {
                // Stopped from outside: the node too, its open blocks canceled.
                "signal" | "duration" => self.node.begin_stop(why),
                // Received, and every Finished PDU acknowledged: nothing more from here must
                // arrive. A Finished sent again (its ACK was late) may still be held for a
                // sender that has stopped; the node answers its peer for its linger and stops.
                "received" => self.node.stop_when_answered(),
                // Done sending: the last bundles go first (class 1's EOF, a Finished PDU's
                // ACK), and the node answers its peer for its linger (as `spacetp dtn
                // --until-sent`).
                _ => self.node.stop_when_sent(),
            }
        }
    }

    fn stopped(&self) -> bool {
        self.node.stopped()
    }

    fn next_deadline(&mut self, now: Time) -> Time {
        let node = self.node.next_deadline(now);
        match self.entity.stopped() {
            true => node,
            false => node.min(self.entity.next_deadline(now)),
        }
    }

    fn sockets(&self) -> Vec<RawFd> {
        self.node.sockets()
    }

    fn receive(&mut self) {
        self.node.receive();
    }
}
