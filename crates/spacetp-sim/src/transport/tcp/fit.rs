//! TCP and SCPS-TP settings fitted to the link (`fit = true`; `crate::fit`). Only what a
//! deployment sets per link, and only when the scenario leaves it unset:
//!
//! - socket buffers of the textbook and SCPS-TP profiles: a receive buffer (the window) of
//!   the bandwidth-delay product and a quarter, so that the window covers the pipe and the
//!   ACK clock's slack (RFC 7323 section 1: "the window must be at least the
//!   bandwidth-delay product"; the Linux and RHEL network tuning guides size it to the BDP),
//!   no more, so that a loss-based controller does not overrun a queue of one BDP in slow
//!   start; a send buffer of twice the BDP, which holds what is in flight and what is
//!   resent (ESnet's host tuning, fasterdata.es.net: 2 x BDP); window scaling on;
//! - SCPS-TP rate control at the link's rate (the SCPS Reference Implementation's gateway is
//!   configured with the link's rate, its `rate`/BW setting; MIL-STD-2045-44000 / CCSDS
//!   714.0-B-2 rate control "set to the rate of the link");
//! - SCPS-TP's fixed ACK period lengthened until its ACKs use at most half of the return
//!   link (RFC 3449 section 5.2: on a constrained return link, fewer ACKs), the buffers then
//!   covering the pipe plus one ACK period;
//! - SCPS-TP's slow start counting the bytes each periodic ACK covers (RFC 3465), up to one
//!   ACK period at the link's rate per ACK: per-ACK counting (RFC 5681) grows one segment per
//!   ACK period, minutes on a long fat pipe (the RI gateway's ACK behaviour and delay,
//!   `aif_ack_behave`/`aif_ack_delay`, are per-interface settings too).
//! - SCPS-TP's timers on a path whose round trip reaches the first timeout (1 s): that of a
//!   first RTT sample of the path's RTT, 3 x RTT (RFC 6298 section 2.2), instead of 1 s, as
//!   the RI gateway seeds its timer per interface (`aif_irto`, the `SCPS_IRTO` route
//!   option); the RTO's ceiling at twice that (the RI's `TP_RTOMAX`; RFC 6298 section 2.5:
//!   at least 60 s), so that a SYN or a segment on a deep-space path is not resent, and the
//!   connection not aborted, before its answer can arrive;
//! - SCPS-TP's initial window: the pipe at the rate control's rate, at most the receive
//!   buffer (the rate control spaces it at the link's rate, so it is no burst; the RI
//!   gateway's connections, congestion control off, send the receiver's window at once).
//!
//! Linux (`linux-*`, `bbr3`) and Windows profiles stay as deployed: their hosts size their
//! own buffers (Linux's autotuning up to `tcp_rmem`'s limit) and a user's host keeps those
//! limits; the limit analysis names them when they bind, and `spacetp tune` shows the gain.

use crate::fit::{user_set, FitPath, Fitted};
use crate::limits::text;
use spacetp_proto::cc::CongestionControlKind;
use spacetp_proto::config::InitialWindow;
use spacetp_proto::units::{Bytes, Duration, Rate};
use spacetp_proto::TcpConfig;

/// Bytes of an ACK on the return link (IPv4, TCP with timestamps and a SNACK or SACK).
const ACK_BYTES: f64 = 64.0;
/// The share of the return link SCPS-TP's ACKs may use.
const ACK_SHARE: f64 = 0.5;

const RULE_RECEIVE: &str = "the bandwidth-delay product and a quarter: the window covers the \
    pipe (RFC 7323 section 1; Linux/RHEL tuning: buffer = BDP), and no more: a larger one \
    overruns the bottleneck's queue in slow start";
const RULE_SEND: &str = "twice the bandwidth-delay product: in flight and resent (ESnet host \
    tuning: 2 x BDP)";
const RULE_RATE: &str = "the link's rate (the SCPS RI gateway's rate setting; CCSDS 714.0-B-2 \
    rate control at the link rate)";
const RULE_ACKS: &str = "ACKs at most half of the return link (RFC 3449 section 5.2: fewer ACKs \
    on a constrained return link)";
const RULE_ABC: &str = "byte counting over one ACK period at the link's rate (RFC 3465 \
    section 2: growth per byte acknowledged, not per ACK; the rate control paces the increase)";
/// IPv4 and TCP headers of a full segment: the MTU less these is the segment.
const IP_TCP_HEADERS: u32 = 40;
const RULE_IRTO: &str = "the timeout a first RTT sample of the path gives, 3 x RTT (RFC 6298 \
    section 2.2: SRTT = R, RTTVAR = R/2); the SCPS RI gateway seeds it per interface (aif_irto)";
const RULE_RTOMAX: &str = "twice the first timeout, room for one backoff (the SCPS RI's \
    TP_RTOMAX; RFC 6298 section 2.5: a ceiling of at least 60 s)";
const RULE_IW: &str = "the pipe at the rate control's rate, in segments: rate control spaces \
    the first window at its rate, so it is no burst (RFC 3390's concern; CCSDS 714.0-B-2 rate \
    control), as the SCPS RI gateway's connections, congestion control off, send the \
    receiver's whole window from the first round trip";
const RULE_WSCALE: &str = "needed for a window over 64 kB (RFC 7323 section 2)";

/// What the scenario itself sets for a flow, which fitting leaves alone.
pub struct UserSettings<'a> {
    pub tcp: Option<&'a serde_json::Map<String, serde_json::Value>>,
    pub receive_buffer: bool,
    pub send_buffer: bool,
}

/// Fit `cfg` (profile `family`) to `path`; the settings changed.
pub fn fit(cfg: &mut TcpConfig, family: &str, user: &UserSettings, path: &FitPath) -> Vec<Fitted> {
    let mut out = Vec::new();
    if !matches!(family, "textbook" | "scps" | "scps-ri") || path.rate_bps <= 0.0 {
        return out;
    }
    let set = |k: &str| user_set(user.tcp, k);
    let scps = family.starts_with("scps");
    // SCPS-TP: ACKs first (the buffers cover their period too), then the rate.
    let mut ack_period = 0;
    if scps {
        if let Some(p) = cfg.scps.ack_period.filter(|_| !set("scps.ack_period")) {
            let need = (ACK_BYTES * 8.0 / (ACK_SHARE * path.back_rate_bps) * 1e9) as u64;
            if path.back_rate_bps > 0.0 && need > p.0 {
                out.push(Fitted::new(
                    "tcp.scps.ack_period",
                    ms(need),
                    ms(p.0),
                    RULE_ACKS,
                ));
                cfg.scps.ack_period = Some(Duration(need));
            }
        }
        ack_period = cfg.scps.ack_period.map_or(0, |d| d.0);
        if let Some(r) = cfg.scps.rate.filter(|_| !set("scps.rate")) {
            if (r.0 - path.rate_bps).abs() > 1e-6 * path.rate_bps {
                let v = text::rate(path.rate_bps);
                out.push(Fitted::new("tcp.scps.rate", v, text::rate(r.0), RULE_RATE));
                cfg.scps.rate = Some(Rate(path.rate_bps));
            }
        }
    }
    // SCPS-TP's ACKs, one per ACK period, each cover a period of data at the link's rate:
    // counted per ACK (RFC 5681), slow start would grow by one segment per period and take
    // minutes to open a long fat pipe; counted in bytes (RFC 3465), as it would with an ACK
    // per segment or two. L covers one period at the rate (at least RFC 3465's 2): the
    // larger per-ACK increase that L guards against leaves paced by the rate control.
    if scps && ack_period > 0 && !set("abc_limit") {
        let segment = path.mtu.saturating_sub(IP_TCP_HEADERS).max(1) as f64;
        let per_period = path.rate_bps * ack_period as f64 / 8e9 / segment;
        let want = (per_period.ceil() as u32).max(2);
        if cfg.abc_limit.is_none_or(|l| l < want) {
            let was = cfg
                .abc_limit
                .map_or("per ACK (RFC 5681)".into(), |l| l.to_string());
            out.push(Fitted::new(
                "tcp.abc_limit",
                want.to_string(),
                was,
                RULE_ABC,
            ));
            cfg.abc_limit = Some(want);
        }
    }
    if scps {
        fit_timers(cfg, &set, path, &mut out);
    }
    let pipe = (path.rate_bps * (path.rtt + ack_period) as f64 / 8e9) as u64;
    let receive = user.receive_buffer || set("receive_buffer");
    let send = user.send_buffer || set("send_buffer");
    // The window is set both ways (a larger one only overruns the queue in slow start); the
    // send buffer only grows (a larger one costs memory, never packets).
    let buffers = [
        ("receive_buffer", receive, pipe * 5 / 4, RULE_RECEIVE, true),
        ("send_buffer", send, 2 * pipe, RULE_SEND, false),
    ];
    for (name, by_user, want, rule, shrink) in buffers {
        let b = match name {
            "receive_buffer" => &mut cfg.receive_buffer,
            _ => &mut cfg.send_buffer,
        };
        if !by_user && (b.0 < want || (shrink && b.0 > want)) {
            let (v, was) = (text::bytes(want as f64), text::bytes(b.0 as f64));
            out.push(Fitted::new(name, v, was, rule));
            *b = Bytes(want);
        }
    }
    if scps {
        fit_initial_window(cfg, &set, path, pipe, &mut out);
    }
    let big = cfg.receive_buffer.0.max(cfg.send_buffer.0) > 65_535;
    if big && !cfg.window_scaling && !set("window_scaling") {
        out.push(Fitted::new(
            "tcp.window_scaling",
            "true".into(),
            "false".into(),
            RULE_WSCALE,
        ));
        cfg.window_scaling = true;
    }
    out
}

/// SCPS-TP's first window: the pipe at the rate control's rate (`pipe` at the link's,
/// scaled down to a lower rate), at most the receive buffer, when the rate control is on
/// and a controller runs. The rate control spaces the window's segments at its rate, so a
/// first window of the pipe is no burst (RFC 3390's concern) and Vegas's slow start (which
/// doubles every other round trip) does not spend its first round trips below the pipe.
fn fit_initial_window(
    cfg: &mut TcpConfig,
    set: &dyn Fn(&str) -> bool,
    path: &FitPath,
    pipe: u64,
    out: &mut Vec<Fitted>,
) {
    let Some(rate) = cfg.scps.rate else { return };
    if set("initial_window") || cfg.congestion_control == CongestionControlKind::None {
        return;
    }
    let at_rate = (pipe as f64 * (rate.0 / path.rate_bps).min(1.0)) as u64;
    let segment = path.mtu.saturating_sub(IP_TCP_HEADERS).max(1) as u64;
    let want = at_rate.min(cfg.receive_buffer.0).div_ceil(segment) as u32;
    let now = cfg.initial_window.bytes(segment);
    if want as u64 * segment > now {
        out.push(Fitted::new(
            "tcp.initial_window",
            want.to_string(),
            format!("{} B", now),
            RULE_IW,
        ));
        cfg.initial_window = InitialWindow::Segments(want);
    }
}

/// SCPS-TP's first timeout (SYN included) and the timeout's ceiling, raised to the path's
/// when its round trip reaches the first timeout (which would fire before any answer):
/// never lowered, and a GEO path keeps RFC 6298's 1 s and the profile's ceiling.
fn fit_timers(
    cfg: &mut TcpConfig,
    set: &dyn Fn(&str) -> bool,
    path: &FitPath,
    out: &mut Vec<Fitted>,
) {
    if path.rtt < cfg.initial_rto.0.min(cfg.syn_rto.map_or(u64::MAX, |s| s.0)) {
        return;
    }
    let first = 3 * path.rtt;
    if !set("initial_rto") && first > cfg.initial_rto.0 {
        out.push(Fitted::new(
            "tcp.initial_rto",
            ms(first),
            ms(cfg.initial_rto.0),
            RULE_IRTO,
        ));
        cfg.initial_rto = Duration(first);
    }
    if let Some(syn) = cfg.syn_rto.filter(|s| !set("syn_rto") && first > s.0) {
        out.push(Fitted::new("tcp.syn_rto", ms(first), ms(syn.0), RULE_IRTO));
        cfg.syn_rto = Some(Duration(first));
    }
    let ceiling = 2 * cfg.initial_rto.0.max(cfg.syn_rto.map_or(0, |s| s.0));
    if !set("max_rto") && ceiling > cfg.max_rto.0 {
        out.push(Fitted::new(
            "tcp.max_rto",
            ms(ceiling),
            ms(cfg.max_rto.0),
            RULE_RTOMAX,
        ));
        cfg.max_rto = Duration(ceiling);
    }
}

fn ms(ns: u64) -> String {
    text::seconds(ns as f64 / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;
    use spacetp_proto::profiles::profile;

    fn path(rate: f64, back: f64, rtt_ms: u64) -> FitPath {
        let rtt = rtt_ms * 1_000_000;
        FitPath {
            rate_bps: rate,
            back_rate_bps: back,
            rtt,
            bdp: (rate * rtt as f64 / 8e9) as u64,
            mtu: 1500,
            loss: 0.0,
            hops: 1,
        }
    }

    fn nobody() -> UserSettings<'static> {
        UserSettings {
            tcp: None,
            receive_buffer: false,
            send_buffer: false,
        }
    }

    #[test]
    fn scps_tp_takes_the_links_rate_and_buffers_for_the_pipe() {
        // The Ka GEO of the issue: 100/10 Mb/s, 560 ms: the papers' 1.5 Mb/s becomes 100.
        let mut c = profile("scps-tp").unwrap();
        let got = fit(&mut c, "scps", &nobody(), &path(100e6, 10e6, 560));
        assert_eq!(c.scps.rate.unwrap().0, 100e6);
        let pipe = 100e6 * (0.56 + c.scps.ack_period.map_or(0.0, |d| d.0 as f64 / 1e9)) / 8.0;
        assert_eq!(c.receive_buffer.0, pipe as u64 * 5 / 4);
        assert_eq!(c.send_buffer.0, 2 * pipe as u64);
        assert!(c.window_scaling);
        assert!(got
            .iter()
            .any(|f| f.setting == "tcp.scps.rate" && f.value == "100 Mb/s"));
    }

    #[test]
    fn scps_tp_starts_with_the_pipe_its_rate_control_paces() {
        // Ka: 100 Mb/s x (560 ms + the 100 ms ACK period) = 8.25 MB = 5651 segments of
        // 1460 B, the rate control spacing them at the link's rate.
        let mut c = profile("scps-tp").unwrap();
        let got = fit(&mut c, "scps", &nobody(), &path(100e6, 10e6, 560));
        assert_eq!(c.initial_window, InitialWindow::Segments(5651));
        assert!(got.iter().any(|f| f.setting == "tcp.initial_window"));
        // A rate set below the link's: the pipe at that rate.
        let mut c = profile("scps-tp").unwrap();
        c.scps.rate = Some(Rate(10e6));
        let tcp = serde_json::json!({"scps": {"rate": "10 Mb/s"}});
        let user = UserSettings {
            tcp: tcp.as_object(),
            ..nobody()
        };
        fit(&mut c, "scps", &user, &path(100e6, 10e6, 560));
        assert_eq!(c.initial_window, InitialWindow::Segments(566));
        // No controller (NUCC): the receiver's window already governs; nothing to fit.
        let mut c = profile("scps-nucc").unwrap();
        let was = c.initial_window;
        let got = fit(&mut c, "scps", &nobody(), &path(100e6, 10e6, 560));
        assert_eq!(c.initial_window, was);
        assert!(!got.iter().any(|f| f.setting == "tcp.initial_window"));
    }

    #[test]
    fn a_window_far_over_the_pipe_is_brought_down_to_it() {
        // The GEO example: 2 Mb/s, 550 ms, a 300 kB window over a queue of one BDP (138 kB)
        // overruns the queue in slow start; the send buffer is left larger.
        let mut c = profile("newreno").unwrap();
        let send = c.send_buffer.0;
        fit(&mut c, "textbook", &nobody(), &path(2e6, 64e3, 550));
        let pipe = (2e6 * 0.55 / 8.0) as u64;
        assert_eq!(c.receive_buffer.0, pipe * 5 / 4);
        assert_eq!(c.send_buffer.0, send.max(2 * pipe));
    }

    #[test]
    fn scps_tp_counts_the_bytes_an_ack_of_its_period_covers() {
        // Ka: 100 Mb/s x 100 ms per ACK = 1.25 MB = 857 segments of 1460 B.
        let mut c = profile("scps-tp").unwrap();
        let got = fit(&mut c, "scps", &nobody(), &path(100e6, 10e6, 560));
        assert_eq!(c.abc_limit, Some(857));
        assert!(got.iter().any(|f| f.setting == "tcp.abc_limit"));
        // The textbook family keeps RFC 5681's per-ACK counting.
        let mut n = profile("newreno").unwrap();
        fit(&mut n, "textbook", &nobody(), &path(100e6, 10e6, 560));
        assert_eq!(n.abc_limit, None);
    }

    #[test]
    fn a_starved_return_link_lengthens_scps_tps_ack_period() {
        // 64 kb/s back: ACKs of 64 B at most every 16 ms.
        let mut c = profile("scps-tp").unwrap();
        c.scps.ack_period = Some(Duration(1_000_000));
        fit(&mut c, "scps", &nobody(), &path(2e6, 64e3, 540));
        assert_eq!(c.scps.ack_period.unwrap().0, 16_000_000);
    }

    #[test]
    fn scps_tp_times_out_after_the_answer_of_a_deep_space_path_could_arrive() {
        // RTT 1200 s: the first timeout 3600 s (RFC 6298's RTO of a first sample), the
        // ceiling 7200 s; a GEO path (RTT 560 ms) keeps 1 s and the profile's 60 s.
        let mut c = profile("scps-tp").unwrap();
        let got = fit(&mut c, "scps", &nobody(), &path(1e6, 1e6, 1_200_000));
        assert_eq!(c.initial_rto.0, 3_600 * 1_000_000_000);
        assert_eq!(c.max_rto.0, 7_200 * 1_000_000_000);
        assert!(got.iter().any(|f| f.setting == "tcp.initial_rto"));
        let mut g = profile("scps-tp").unwrap();
        let (irto, max) = (g.initial_rto, g.max_rto);
        fit(&mut g, "scps", &nobody(), &path(100e6, 10e6, 560));
        assert_eq!((g.initial_rto, g.max_rto), (irto, max));
        // Textbook TCP knows no RTT before its first sample: left at RFC 6298's 1 s.
        let mut n = profile("newreno").unwrap();
        let irto = n.initial_rto;
        fit(&mut n, "textbook", &nobody(), &path(1e6, 1e6, 1_200_000));
        assert_eq!(n.initial_rto, irto);
    }

    #[test]
    fn what_the_scenario_sets_and_what_linux_sizes_itself_stay() {
        let mut c = profile("scps-tp").unwrap();
        let tcp: serde_json::Map<_, _> =
            serde_json::from_str(r#"{"scps": {"rate": "10 Mb/s"}}"#).unwrap();
        let user = UserSettings {
            tcp: Some(&tcp),
            receive_buffer: true,
            send_buffer: false,
        };
        let (rate, rb) = (c.scps.rate, c.receive_buffer);
        fit(&mut c, "scps", &user, &path(100e6, 10e6, 560));
        assert_eq!((c.scps.rate, c.receive_buffer), (rate, rb));
        let mut l = profile("linux-cubic").unwrap();
        let before = format!("{l:?}");
        assert!(fit(&mut l, "linux", &nobody(), &path(100e6, 10e6, 560)).is_empty());
        assert_eq!(format!("{l:?}"), before);
    }
}
