//! The ECN response. draft-ietf-ccwg-bbr-06 (3.7) specifies none beyond "treat any CE mark
//! as congestion"; this is Google's BBRv3 Linux module's (`bbr_update_ecn_alpha`,
//! `bbr_ecn_lower_bounds`, `bbr_check_ecn_too_high_in_startup`): once per round trip, alpha
//! = (1 - g) alpha + g x (CE-marked / delivered) with g = 1/16, from alpha = 1; a round with
//! CE outside probing cuts inflight_shortterm by (1 - alpha / 3); a CE ratio above 1/2 means
//! inflight was too high (as a loss rate above 2% does); two rounds in Startup at or above
//! it end Startup.
//!
//! No simulated link marks CE yet: the connection reports `ControlInput::ce_delivered` = 0,
//! so none of this acts in a simulation today; the unit tests drive it directly. The flow
//! takes part once it has seen a CE mark (Linux also asks for ECN negotiated and a min_rtt
//! under 5 ms, which no simulated path has to offer).

/// `bbr_ecn_alpha_gain`: 1/16.
const ECN_ALPHA_GAIN: f64 = 1.0 / 16.0;
/// `bbr_ecn_alpha_init`: 1, to respond at once if the path is congested at the start.
const ECN_ALPHA_INIT: f64 = 1.0;
/// `bbr_ecn_factor`: a round with CE cuts inflight_shortterm by alpha x 1/3.
const ECN_FACTOR: f64 = 1.0 / 3.0;
/// `bbr_ecn_thresh`: a CE ratio above this means inflight was too high.
pub(super) const ECN_THRESH: f64 = 0.5;
/// `bbr_full_ecn_cnt`: rounds in Startup at or above ECN_THRESH that end it.
const FULL_ECN_COUNT: u32 = 2;

#[derive(Clone, Copy, Debug)]
pub(super) struct Ecn {
    pub alpha: f64,
    /// Whether the flow responds to CE (from its first CE mark on).
    pub eligible: bool,
    /// A CE mark arrived this round (`ecn_in_round`).
    pub in_round: bool,
    /// The last round's CE ratio.
    pub last_ratio: f64,
    /// Delivered and CE-marked bytes when alpha was last updated, and the CE count last seen.
    last_delivered: u64,
    last_ce: u64,
    seen_ce: u64,
    startup_rounds: u32,
}

impl Default for Ecn {
    fn default() -> Self {
        Ecn {
            alpha: ECN_ALPHA_INIT,
            eligible: false,
            in_round: false,
            last_ratio: 0.0,
            last_delivered: 0,
            last_ce: 0,
            seen_ce: 0,
            startup_rounds: 0,
        }
    }
}

impl Ecn {
    /// Every ACK: `ce_delivered`, the connection's CE-marked bytes so far.
    pub fn on_ack(&mut self, ce_delivered: u64) {
        if ce_delivered > self.seen_ce {
            self.eligible = true;
            self.in_round = true;
        }
        self.seen_ce = ce_delivered;
    }

    /// At each round start: update alpha from the round's CE ratio, which it returns.
    pub fn on_round_start(&mut self, delivered: u64, ce_delivered: u64) -> Option<f64> {
        let d = delivered.saturating_sub(self.last_delivered);
        let ce = ce_delivered.saturating_sub(self.last_ce);
        if d == 0 {
            return None;
        }
        self.last_delivered = delivered;
        self.last_ce = ce_delivered;
        if !self.eligible {
            return None;
        }
        let ratio = (ce as f64 / d as f64).min(1.0);
        self.alpha = ((1.0 - ECN_ALPHA_GAIN) * self.alpha + ECN_ALPHA_GAIN * ratio).min(1.0);
        self.last_ratio = ratio;
        Some(ratio)
    }

    /// The factor a round with CE applies to inflight_shortterm.
    pub fn cut(&self) -> f64 {
        1.0 - self.alpha * ECN_FACTOR
    }

    /// The last round's CE ratio says inflight was too high.
    pub fn too_high(&self) -> bool {
        self.eligible && self.last_ratio > ECN_THRESH
    }

    /// Startup: whether this round's ratio makes FULL_ECN_COUNT high rounds in a row.
    pub fn startup_too_high(&mut self, ratio: f64) -> bool {
        if ratio >= ECN_THRESH {
            self.startup_rounds += 1;
        } else {
            self.startup_rounds = 0;
        }
        self.startup_rounds >= FULL_ECN_COUNT
    }
}
