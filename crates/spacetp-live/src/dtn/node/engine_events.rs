//! What the node's LTP engine says: export sessions opened, completed and canceled (the
//! bundles of a canceled block routed again, or given up), blocks received for the bundle
//! agent, import sessions canceled.

use super::DtnNode;
use crate::dtn::notices::{self, Cancel, SpanContext};
use crate::dtn::report::Dropped;
use spacetp_dtn::bundle::{split_block, Bundle};
use spacetp_ltp::{CancelReason, CanceledBy, Event};
use spacetp_proto::Time;
use spacetp_sim::transport::ltp::BP_CLIENT_SERVICE;

impl DtnNode {
    pub(super) fn engine_events(&mut self, now: Time) -> bool {
        let mut any = false;
        while let Some(ev) = self.engine.poll_event() {
            any = true;
            match ev {
                Event::ExportStarted {
                    peer,
                    session,
                    length,
                    ..
                } => {
                    self.exports.insert(session, (peer, length));
                }
                Event::ExportCompleted { session, .. } => {
                    let (_, len) = self.exports.remove(&session).unwrap_or_default();
                    self.in_ltp = self.in_ltp.saturating_sub(len);
                }
                Event::ExportCanceled {
                    peer,
                    session,
                    reason,
                    by,
                    limit,
                    sdus,
                    ..
                } => {
                    let (_, len) = self.exports.remove(&session).unwrap_or_default();
                    self.in_ltp = self.in_ltp.saturating_sub(len);
                    // This node's own stop: the bundles go back to the store, said nowhere.
                    if by == CanceledBy::Local && reason == CancelReason::UserCanceled {
                        for s in sdus {
                            self.agent.on_forward_failed(now, peer, &s);
                        }
                        continue;
                    }
                    let cause = self.note_cancel(
                        now,
                        Cancel {
                            export: true,
                            peer,
                            session,
                            reason,
                            by,
                            limit,
                        },
                    );
                    // ION's BP takes the bundles of a canceled block back and routes them
                    // again; here up to max_session_cancels times each.
                    for s in sdus {
                        for b in split_block(&s).into_iter().flatten() {
                            self.retry_or_give_up(now, peer, b, &cause);
                        }
                    }
                }
                Event::RedPartReceived {
                    peer,
                    client_service_id,
                    data,
                    ..
                } => {
                    if client_service_id == BP_CLIENT_SERVICE {
                        self.agent.on_block(now, peer, &data);
                    } else {
                        self.report.blocks_for_other_services += 1;
                    }
                }
                Event::ImportCanceled {
                    peer,
                    session,
                    reason,
                    by,
                    limit,
                    ..
                } => {
                    if !(by == CanceledBy::Local && reason == CancelReason::UserCanceled) {
                        self.note_cancel(
                            now,
                            Cancel {
                                export: false,
                                peer,
                                session,
                                reason,
                                by,
                                limit,
                            },
                        );
                    }
                }
                Event::GreenSegment { .. } => {}
            }
        }
        any
    }

    /// A canceled session said (rate-limited); returns its short cause.
    fn note_cancel(&mut self, now: Time, c: Cancel) -> String {
        let seg = self
            .cfg
            .peers
            .iter()
            .find(|p| p.engine == c.peer)
            .map_or(1400, |p| p.span.max_segment_size.0);
        let stats = self.engine.span_stats(c.peer).copied().unwrap_or_default();
        let ctx = SpanContext {
            peer: c.peer,
            max_ber: self.cfg.engine.max_ber,
            segment_size: seg,
            first_scope: stats.first_report_scope_bytes,
            first_claimed: stats.first_report_claimed_bytes,
        };
        let (cause, line) = notices::describe(&c, &ctx);
        self.notices.canceled(now, &cause, &line);
        cause
    }

    /// A bundle of a canceled block: routed again, or given up once the blocks that carried
    /// it were canceled `max_session_cancels` times.
    fn retry_or_give_up(&mut self, now: Time, peer: u64, mut b: Bundle, cause: &str) {
        let h = &b.header;
        let key = (h.id, h.fragment.map_or(0, |f| f.0));
        let n = self.cancels.entry(key).or_default();
        *n += 1;
        let n = *n;
        let max = self.cfg.max_session_cancels;
        if max == 0 || n < max {
            self.agent.on_forward_failed(now, peer, &b.to_bytes());
            return;
        }
        self.cancels.remove(&key);
        self.report.given_up += 1;
        let destination = format!("ipn:{}.{}", h.destination.node, h.destination.service);
        let why = format!(
            "given up: the LTP blocks that carried it were canceled {n} times \
             (max_session_cancels={max}); the last: {cause}"
        );
        let line = format!(
            "gave up the bundle from ipn:{}.{} to {destination} ({} bytes, created {} ms, \
             seq {}): {why}",
            h.id.source.node, h.id.source.service, h.payload_len, h.id.created_ms, h.id.seq
        );
        self.notices.always(now, &line);
        self.report.dropped.push(Dropped {
            destination,
            bytes: h.payload_len,
            why,
        });
    }
}
