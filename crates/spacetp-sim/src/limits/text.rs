//! What the summary says of each state: its share, the setting that lifts it (by its
//! scenario path and value), the path fact it is compared with, and one line for people.

use super::{Limit, PathFacts};
use serde::Serialize;

/// One state of a flow's limit analysis.
#[derive(Clone, Debug, Serialize)]
pub struct LimitShare {
    pub state: &'static str,
    pub seconds: f64,
    /// Of the flow's time from its start to its last byte (or its end); the shares add up
    /// to 1.
    pub share: f64,
    /// The mean of what bound the flow in this state (a window's bytes), if it has one.
    pub mean_bytes: Option<f64>,
    /// The setting that lifts it: its path in the scenario and the value it had.
    pub setting: Option<String>,
    pub value: Option<String>,
    /// The fact of the path it is compared with ("BDP 18.8 MB", "link 250 Mb/s").
    pub fact: Option<String>,
    /// What held the flow and what lifts it, in one line.
    pub text: String,
}

/// A size for people: 3 significant digits, SI units.
pub fn bytes(b: f64) -> String {
    let (v, u) = match b {
        b if b >= 1e9 => (b / 1e9, "GB"),
        b if b >= 1e6 => (b / 1e6, "MB"),
        b if b >= 1e3 => (b / 1e3, "kB"),
        b => (b, "B"),
    };
    format!("{} {u}", sig3(v))
}

/// A rate for people.
pub fn rate(bps: f64) -> String {
    let (v, u) = match bps {
        r if r >= 1e9 => (r / 1e9, "Gb/s"),
        r if r >= 1e6 => (r / 1e6, "Mb/s"),
        r if r >= 1e3 => (r / 1e3, "kb/s"),
        r => (r, "b/s"),
    };
    format!("{} {u}", sig3(v))
}

/// A duration in seconds for people.
pub fn seconds(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{} s", sig3(s)),
        s => format!("{} ms", sig3(s * 1e3)),
    }
}

fn sig3(v: f64) -> String {
    let digits = if v >= 100.0 {
        0
    } else if v >= 10.0 {
        1
    } else {
        2
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The summary of one state: `setting` is its (path, value) when a setting lifts it.
pub fn describe(
    limit: Limit,
    time_s: f64,
    share: f64,
    mean: f64,
    setting: Option<(String, String)>,
    facts: &PathFacts,
) -> LimitShare {
    // Only the fact shown is written (a summary of 10 000 flows writes tens of thousands).
    let fact = match limit {
        Limit::Link | Limit::RateControl | Limit::Pacing => {
            Some(format!("link {}", rate(facts.rate_bps)))
        }
        Limit::CongestionWindow
        | Limit::ReceiveWindow
        | Limit::SendBuffer
        | Limit::LtpSessions
        | Limit::SlowReader => Some(format!("BDP {}", bytes(facts.bdp as f64))),
        Limit::ReturnPath => Some(format!("return link {}", rate(facts.back_rate_bps))),
        Limit::Handshake | Limit::Propagation => {
            Some(format!("RTT {}", seconds(facts.rtt as f64 / 1e9)))
        }
        Limit::Recovery | Limit::Application | Limit::LinkDown | Limit::BundleStorage => None,
    };
    let mean_bytes = matches!(
        limit,
        Limit::CongestionWindow | Limit::ReceiveWindow | Limit::SendBuffer | Limit::ReturnPath
    )
    .then_some(mean)
    .filter(|&m| m > 0.0);
    let what = match (limit, mean_bytes) {
        (Limit::CongestionWindow, Some(m)) => format!("congestion window {}", bytes(m)),
        (Limit::ReceiveWindow, Some(m)) => format!("receive window {}", bytes(m)),
        (Limit::SendBuffer, Some(m)) => format!("send buffer {}", bytes(m)),
        (Limit::ReturnPath, Some(m)) => format!("return path (window {})", bytes(m)),
        _ => name(limit).to_string(),
    };
    let pct = share * 100.0;
    let mut text = format!("limited by {what} for {pct:.0}% of the time");
    if let Some(f) = &fact {
        text += &format!(" ({f})");
    }
    if let Some(fix) = lift(limit, setting.as_ref()) {
        text += &format!(": {fix}");
    }
    let (setting, value) = setting.unzip();
    LimitShare {
        state: limit.key(),
        seconds: time_s,
        share,
        mean_bytes,
        setting,
        value,
        fact,
        text,
    }
}

/// The state's name in a sentence.
pub fn name(limit: Limit) -> &'static str {
    match limit {
        Limit::Link => "the link",
        Limit::Handshake => "the handshake",
        Limit::CongestionWindow => "congestion window",
        Limit::ReceiveWindow => "receive window",
        Limit::SlowReader => "a slow receiving application",
        Limit::SendBuffer => "send buffer",
        Limit::RateControl => "rate control",
        Limit::Pacing => "pacing",
        Limit::LtpSessions => "LTP export sessions",
        Limit::BundleStorage => "bundles stored at a relay",
        Limit::ReturnPath => "the return path",
        Limit::Recovery => "loss recovery and timeouts",
        Limit::Application => "the sending application",
        Limit::LinkDown => "the link being down",
        Limit::Propagation => "propagation of the last bytes",
    }
}

/// What lifts it, naming the setting when one does.
fn lift(limit: Limit, setting: Option<&(String, String)>) -> Option<String> {
    let s = setting.map(|(p, v)| format!("{p} ({v})"));
    Some(match (limit, s) {
        (Limit::Link, Some(s)) => format!("the good case, {s}"),
        (Limit::Link, None) => "the good case".into(),
        (Limit::Handshake, _) => "a round trip to open the connection".into(),
        (Limit::Propagation, _) => "the path's one-way delay".into(),
        (Limit::CongestionWindow, Some(s)) => {
            format!("a controller that opens faster on this path, or raise {s}")
        }
        (Limit::ReceiveWindow | Limit::SendBuffer, Some(s)) => {
            format!("raise {s} to the BDP")
        }
        (Limit::SlowReader, Some(s)) => format!("the receiver reads at {s}"),
        (Limit::RateControl, Some(s)) => format!("raise {s} to the link rate"),
        (Limit::Pacing, Some(s)) => format!("raise {s}"),
        (Limit::LtpSessions, Some(s)) => {
            format!("raise {s} to cover the BDP in blocks")
        }
        (Limit::ReturnPath, Some(s)) => format!("a faster {s}, or fewer ACKs"),
        (Limit::Recovery, Some(s)) => format!("fewer losses, or {s}"),
        (Limit::LinkDown, Some(s)) => format!("the outages of {s}"),
        (Limit::BundleStorage, _) => "more or longer contacts onward (the contact plan)".into(),
        (Limit::Application, Some(s)) => format!("the application writes at {s}"),
        (Limit::Application, None) => "the application wrote no faster".into(),
        (_, None) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_rates_read_as_people_write_them() {
        assert_eq!(bytes(3_930_000.0), "3.93 MB");
        assert_eq!(bytes(18_750_000.0), "18.8 MB");
        assert_eq!(bytes(1_250_000.0), "1.25 MB");
        assert_eq!(bytes(64_000.0), "64 kB");
        assert_eq!(rate(250e6), "250 Mb/s");
        assert_eq!(rate(1.5e6), "1.5 Mb/s");
        assert_eq!(seconds(0.6), "600 ms");
    }

    #[test]
    fn the_line_names_the_window_the_share_the_fact_and_the_setting() {
        let facts = PathFacts {
            rate_bps: 250e6,
            rtt: 600_000_000,
            bdp: 18_750_000,
            ..Default::default()
        };
        let s = describe(
            Limit::ReceiveWindow,
            14.2,
            0.71,
            3.93e6,
            Some(("flows[0].receive_buffer".into(), "6 MB".into())),
            &facts,
        );
        assert_eq!(
            s.text,
            "limited by receive window 3.93 MB for 71% of the time (BDP 18.8 MB): raise \
             flows[0].receive_buffer (6 MB) to the BDP"
        );
        assert_eq!(s.state, "receive_window");
        assert_eq!(s.setting.as_deref(), Some("flows[0].receive_buffer"));
    }
}
