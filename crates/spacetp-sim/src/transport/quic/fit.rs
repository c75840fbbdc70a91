//! QUIC settings fitted to the link (`fit = true`; `crate::fit`), each only when the
//! scenario leaves it unset:
//!
//! - the flow-control windows (`stream_receive_window`, `receive_window` if set) and the
//!   send window: twice the bandwidth-delay product (quinn's `TransportConfig` docs: "at
//!   least the expected connection latency multiplied by the maximum desired throughput";
//!   twice rides out a loss), never below quinn's defaults, and on a lossy path no more
//!   than keeps the expected holes in the window under half of quinn-proto's limit of
//!   1 024 out-of-order pieces per stream (`MAX_CHUNKS`, docs/quic.md);
//! - `initial_rtt`: the path's round trip (RFC 9002 section 6.2.2: an RTT known before the
//!   handshake is used instead of 333 ms);
//! - `max_idle_timeout`: at least ten round trips (RFC 9000 section 10.1: at least three
//!   PTOs, a PTO being about three round trips before the first samples), so that a
//!   deep-space handshake is not taken for an idle connection.

use crate::fit::{user_set, FitPath, Fitted};
use crate::limits::text;
use spacetp_proto::units::{Bytes, Duration};
use spacetp_quic::QuicSettings;

/// quinn-proto's limit of separate out-of-order pieces per stream, and the share of it the
/// fitted window may expect to use.
const MAX_CHUNKS: f64 = 1024.0;
const CHUNK_SHARE: f64 = 0.5;

const RULE_WINDOWS: &str = "twice the bandwidth-delay product (quinn's TransportConfig: latency x \
    throughput), on a lossy path at most what keeps the holes under half of quinn's 1 024 pieces";
const RULE_RTT: &str = "the path's round trip (RFC 9002 section 6.2.2)";
const RULE_IDLE: &str = "at least ten round trips (RFC 9000 section 10.1: three PTOs)";

/// Fit `q` to `path`; `user` is the flow's `[flows.quic]` table.
pub fn fit(
    q: &mut QuicSettings,
    user: Option<&serde_json::Map<String, serde_json::Value>>,
    path: &FitPath,
) -> Vec<Fitted> {
    let mut out = Vec::new();
    if path.rate_bps <= 0.0 {
        return out;
    }
    let set = |k: &str| user_set(user, k);
    let mut want = 2 * path.bdp;
    if path.loss > 0.0 {
        let holes_cap = CHUNK_SHARE * MAX_CHUNKS * path.mtu as f64 / path.loss;
        want = want.min(holes_cap as u64);
    }
    let mut window = |name: &'static str, b: &mut Bytes| {
        if !set(name) && b.0 < want {
            let f = Fitted::new(
                &format!("quic.{name}"),
                text::bytes(want as f64),
                text::bytes(b.0 as f64),
                RULE_WINDOWS,
            );
            out.push(f);
            *b = Bytes(want);
        }
    };
    window("stream_receive_window", &mut q.stream_receive_window);
    window("send_window", &mut q.send_window);
    if let Some(r) = q.receive_window.as_mut() {
        window("receive_window", r);
    }
    let rtt = path.rtt.max(1_000_000);
    if !set("initial_rtt") && q.initial_rtt.0 != rtt {
        let was = text::seconds(q.initial_rtt.0 as f64 / 1e9);
        out.push(Fitted::new(
            "quic.initial_rtt",
            text::seconds(rtt as f64 / 1e9),
            was,
            RULE_RTT,
        ));
        q.initial_rtt = Duration(rtt);
    }
    if let Some(idle) = q.max_idle_timeout.filter(|_| !set("max_idle_timeout")) {
        if idle.0 < 10 * rtt {
            let was = text::seconds(idle.0 as f64 / 1e9);
            let v = text::seconds(10.0 * rtt as f64 / 1e9);
            out.push(Fitted::new("quic.max_idle_timeout", v, was, RULE_IDLE));
            q.max_idle_timeout = Some(Duration(10 * rtt));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geo(loss: f64) -> FitPath {
        FitPath {
            rate_bps: 250e6,
            back_rate_bps: 3e6,
            rtt: 600_000_000,
            bdp: 18_750_000,
            mtu: 1500,
            loss,
            hops: 1,
        }
    }

    #[test]
    fn windows_cover_twice_the_pipe_and_the_handshake_knows_the_round_trip() {
        let mut q = QuicSettings::default();
        let got = fit(&mut q, None, &geo(0.0));
        assert_eq!(q.stream_receive_window.0, 37_500_000);
        assert_eq!(q.send_window.0, 37_500_000);
        assert_eq!(q.initial_rtt.0, 600_000_000);
        assert!(got
            .iter()
            .any(|f| f.setting == "quic.stream_receive_window" && f.was == "1.25 MB"));
    }

    #[test]
    fn on_a_lossy_path_the_window_stays_under_quinns_hole_limit() {
        // At 10% loss, 512 expected holes of 1500-byte packets span 512 x 1500 / 0.1 =
        // 7.68 MB, under twice the 18.75 MB pipe (at 1% it would be 76.8 MB, above it).
        let mut q = QuicSettings::default();
        fit(&mut q, None, &geo(0.1));
        assert_eq!(q.stream_receive_window.0, 7_680_000);
    }

    #[test]
    fn a_deep_space_round_trip_raises_the_idle_timeout() {
        let mut q = QuicSettings::default();
        let mut p = geo(0.0);
        p.rtt = 1_200_000_000_000; // 20 minutes
        fit(&mut q, None, &p);
        if let Some(t) = q.max_idle_timeout {
            assert!(t.0 >= 10 * p.rtt);
        }
    }

    #[test]
    fn what_the_scenario_sets_stays() {
        let mut q = QuicSettings::default();
        let user: serde_json::Map<_, _> =
            serde_json::from_str(r#"{"stream_receive_window": "64 kB"}"#).unwrap();
        let before = q.stream_receive_window;
        fit(&mut q, Some(&user), &geo(0.0));
        assert_eq!(q.stream_receive_window, before);
    }
}
