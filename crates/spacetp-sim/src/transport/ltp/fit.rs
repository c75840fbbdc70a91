//! LTP settings fitted to the link (`fit = true`; `crate::fit`), each only when the
//! scenario leaves it unset. The segment size and the one-way light time already follow the
//! path (`spec.rs`); fitting adds what ION's configuration guide sizes per link:
//!
//! - `max_export_sessions` (and the receiver's `max_import_sessions`): enough sessions to
//!   keep the link busy while a session awaits its report (a round trip and the peer's
//!   turnaround, `queuing_latency`), that many bytes in blocks plus one
//!   (ION's ltprc span: "the maximum number of export sessions ... to fill the link for the
//!   round trip", rate x RTT / block size);
//! - `max_ber`: twice the path's own bit-error rate when that is above ION's 1e-6 (ION's
//!   ltprc `m maxber`: the link's expected maximum bit-error rate, from which the engine
//!   derives how often it retransmits before it cancels a session: at the default 1e-6, a
//!   link losing 5% of its segments cancels every session).

use super::LtpSpec;
use crate::fit::{user_set, FitPath, Fitted};

const RULE_SESSIONS: &str = "the bandwidth-delay product in blocks, plus one (ION's ltprc span \
    configuration: rate x RTT / block size)";
const RULE_BER: &str = "twice the path's bit-error rate (ION's ltprc m maxber: the link's \
    expected maximum)";

/// Fit `spec` to `path`; `user` is the flow's `[flows.ltp]` table.
pub fn fit(
    spec: &mut LtpSpec,
    user: Option<&serde_json::Map<String, serde_json::Value>>,
    path: &FitPath,
) -> Vec<Fitted> {
    let mut out = Vec::new();
    let set = |k: &str| user_set(user, k);
    let block = spec.block_size.max(1);
    // A session waits for its report a round trip plus the peer's turnaround.
    let wait = 2 * spec.span.one_way_light_time.0 + spec.span.queuing_latency.0;
    let pipe = (path.rate_bps * wait as f64 / 8e9).max(path.bdp as f64);
    let need = (pipe / block as f64).ceil() as u32 + 1;
    if !set("max_export_sessions") && spec.span.max_export_sessions < need {
        let was = spec.span.max_export_sessions.to_string();
        out.push(Fitted::new(
            "ltp.max_export_sessions",
            need.to_string(),
            was,
            RULE_SESSIONS,
        ));
        spec.span.max_export_sessions = need;
        if !set("max_import_sessions") {
            spec.span.max_import_sessions = spec.span.max_import_sessions.max(need);
        }
    }
    let ber = 2.0 * path.ber();
    if !set("max_ber") && ber > spec.engine.max_ber {
        let was = format!("{:e}", spec.engine.max_ber);
        let v = format!("{:.1e}", ber);
        out.push(Fitted::new("ltp.max_ber", v.clone(), was, RULE_BER));
        spec.engine.max_ber = v.parse().unwrap_or(ber);
    }
    out
}
