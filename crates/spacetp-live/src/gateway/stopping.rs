//! How a gateway stops: at once (an unusable link fd), or in order (a signal, the duration):
//! stop accepting, let open flows drain for the configured time, reset the rest on both
//! sides and linger to repeat the resets to a peer that challenges them (RFC 5961).

use super::*;

/// How a stopping gateway ends its flows.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Stopping {
    /// Not accepting; open flows may finish until then, the rest are reset.
    Draining { until: Time },
    /// Every flow was reset; the gateway stays until then to repeat the resets to a peer
    /// that challenges them (RFC 5961), then stops.
    Resetting { until: Time },
}

/// A stopping gateway that reset its flows stays two round trips plus this long to answer
/// challenge ACKs (and past its RST repeats), and never longer than `STOP_LINGER_MAX`.
const STOP_MARGIN: Time = 100 * MS;
const STOP_LINGER_MAX: Time = 5 * SEC;

impl Gateway {
    /// Stop at once, relaying nothing more (an unusable link fd).
    pub fn stop(&mut self, why: &str) {
        self.stopped.get_or_insert_with(|| why.to_string());
    }

    /// Begin an orderly stop (a signal, or the configured duration): stop accepting, and with
    /// a drain time let open flows finish for up to that long; every flow still open then is
    /// reset on both sides. A second call while draining resets at once. `run_for` returns
    /// false once done.
    pub fn begin_stop(&mut self, why: &str) {
        let now = self.now();
        self.listeners.clear();
        self.stop_reason.get_or_insert_with(|| why.to_string());
        match (self.stopping, self.cfg.drain) {
            (None, Some(d)) => self.stopping = Some(Stopping::Draining { until: now + d }),
            (None, None) | (Some(Stopping::Draining { .. }), _) => self.reset_all(now),
            (Some(Stopping::Resetting { .. }), _) => {}
        }
    }

    /// Reset every open flow on both sides, then linger long enough for a peer that
    /// challenges the RST (its RCV.NXT was not our SND.NXT) to get the exact one.
    pub(super) fn reset_all(&mut self, now: Time) {
        let mut until = now;
        for f in self.flows.values_mut() {
            if f.finished_at.is_some() {
                continue;
            }
            self.rep.open_at_stop.push(f.describe(now));
            f.ended_by = Some("stop");
            f.abort();
            self.rep.reset_on_stop += 1;
            let rtt = f.conn.rtt().srtt().unwrap_or(self.cfg.tcp.initial_rto.0);
            until = until.max(now + 2 * rtt + STOP_MARGIN);
            if let Some(t) = f.owed_resets_end(now) {
                until = until.max(t + STOP_MARGIN);
            }
        }
        self.stopping = Some(Stopping::Resetting {
            until: until.min(now + STOP_LINGER_MAX),
        });
    }
}
