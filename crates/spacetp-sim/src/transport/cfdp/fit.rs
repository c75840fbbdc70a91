//! CFDP settings fitted to the link (`fit = true`; `crate::fit`), each only when the
//! scenario leaves it unset. cfdp-rs's defaults (10 s for the positive-ACK and NAK timers,
//! 5 s for the check timer) suit a round trip of seconds: on a longer path an EOF's ACK or
//! a NAK's repair cannot come back before the timer, every timer runs out, and at the
//! limit (2) the transaction ends with a fault. Fitting sets each timer to what the
//! answer it waits for takes:
//!
//! - `positive_ack_timer`, `nak_timer`: a round trip (the ACK, the repair, can come no
//!   sooner) plus 1 s for the peer's turnaround (as LTP's timers allow ION's `ownqtime`,
//!   1 s by default);
//! - `check_timer` (class 1): the same, for data still in flight after EOF;
//! - `inactivity_timeout`: three of those: the longest an entity waits in silence is a NAK
//!   (or EOF) whose answer is lost, its timer, and the round trip of the one sent again.
//!
//! The rate already follows the path (the bottleneck, by default).

use crate::fit::{user_set, FitPath, Fitted};
use spacetp_cfdp::CfdpSettings;
use spacetp_proto::units::Duration;
use spacetp_proto::SEC;

const RULE: &str = "a round trip plus 1 s for the peer's turnaround (the answer waited for \
    comes no sooner; ION's own-queuing allowance, ownqtime, is 1 s)";
const RULE_INACTIVITY: &str = "three round trips plus 1 s each: a lost answer, its timer and \
    the round trip of the one sent again, without a word from the peer";

/// Fit `s` to `path`; `user` is the flow's `[flows.cfdp]` table.
pub fn fit(
    s: &mut CfdpSettings,
    user: Option<&serde_json::Map<String, serde_json::Value>>,
    path: &FitPath,
) -> Vec<Fitted> {
    let want = Duration(path.rtt + SEC);
    let mut out = Vec::new();
    for (key, timer) in [
        ("positive_ack_timer", &mut s.positive_ack_timer),
        ("nak_timer", &mut s.nak_timer),
        ("check_timer", &mut s.check_timer),
    ] {
        if user_set(user, key) || *timer == want {
            continue;
        }
        out.push(Fitted::new(
            &format!("cfdp.{key}"),
            want.to_string(),
            timer.to_string(),
            RULE,
        ));
        *timer = want;
    }
    let idle = Duration(3 * (path.rtt + SEC));
    if !user_set(user, "inactivity_timeout") && s.inactivity_timeout != idle {
        out.push(Fitted::new(
            "cfdp.inactivity_timeout",
            idle.to_string(),
            s.inactivity_timeout.to_string(),
            RULE_INACTIVITY,
        ));
        s.inactivity_timeout = idle;
    }
    out
}
