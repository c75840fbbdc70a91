//! LTP flows (`protocol = "ltp"`): spacetp-ltp's engines at both ends of a flow, their
//! segments real bytes on the links. What a user of ION expects of LTP on a lossy,
//! long-delay link: with export sessions enough for the bandwidth-delay product the link
//! stays full whatever the delay (LTP has no congestion control and no slow start), only
//! the lost segments are sent again, too few sessions leave the link idle between reports
//! and the summary says so, and an outage a ground station announces stops the timers.

mod common;
use common::*;

/// A 1 Mb/s link with PER 1e-3 both ways and `one_way` delay, and an LTP flow of `bytes`.
fn akan_like(one_way: &str, bytes: &str, ltp: &str, extra: &str) -> String {
    hosts_a_b(
        "seed = 2",
        "1 Mb/s",
        one_way,
        &format!("errors = {{ per = 1e-3 }}\nqueue = {{ packets = 200 }}\n{extra}"),
    ) + &flow_a_to_b(&format!(
        "protocol = \"ltp\"\nbytes = \"{bytes}\"\nltp = {{ {ltp} }}"
    ))
}

/// The payload share of a packet: LTP data over the IP packet (20 + 8 B of IPv4 and UDP,
/// about 20 B of LTP header for a data segment) for segments of 1472 B.
const PAYLOAD_SHARE: f64 = (1472.0 - 20.0) / 1500.0;

#[test]
fn with_sessions_for_the_bandwidth_delay_product_the_link_stays_full_and_only_losses_are_resent() {
    for (one_way, rtt) in [("1 ms", 0.002_f64), ("500 ms", 1.0), ("20 s", 40.0)] {
        // Sessions for the bandwidth-delay product: a block's session lasts its round trip
        // and the timers' margins (2 s), twice for a block that lost a segment. Many more
        // would only queue blocks (ION segments a block when its session opens, and its
        // repairs queue behind what is already queued).
        let sessions = (2.5 * 125_000.0 * (rtt + 2.0) / 64_000.0).ceil() as u32;
        // Steady state, as Akan et al. measure: bytes delivered in a window that starts
        // once the first blocks' repairs are done, over two minutes.
        let from = 2.5 * rtt + 10.0;
        let to = from + 120.0;
        let scenario = hosts_a_b(
            &format!("seed = 2\nstop = \"{to} s\""),
            "1 Mb/s",
            one_way,
            "errors = { per = 1e-3 }\nqueue = { packets = 200 }",
        ) + &flow_a_to_b(&format!(
            "protocol = \"ltp\"\nltp = {{ max_export_sessions = {sessions} }}\n\
             goodput_window = [\"{from} s\", \"{to} s\"]"
        ));
        let out = sim(&scenario);
        let f = &out.summary.flows[0];
        let l = f.ltp.as_ref().expect("LTP counters");
        let link = &out.summary.links[0];
        // Only lost data is sent again (a lost segment's data, at most a segment of 1472 B;
        // a resent range may take two segments, the checkpoint carrying serial numbers
        // besides its data), or a checkpoint whose answer was lost; no queue overflows: the
        // span is paced to the link.
        assert_eq!(link.queue_drops, 0, "{one_way}");
        let lost = link.error_drops;
        assert!(lost > 0, "PER 1e-3 loses some of 10 000 segments");
        let resent_bound = (lost + l.checkpoints_retransmitted) * 1472;
        assert!(f.retransmitted_bytes <= resent_bound, "{one_way}: {f:?}");
        assert!(f.retransmitted_bytes > 0);
        // The link's payload rate less the resent share, within 10%, whatever the delay.
        let resent = f.retransmitted_bytes as f64 / (f.data_segments_sent as f64 * 1452.0);
        let good = f.goodput_window_bps.unwrap();
        let ceiling = 1e6 * PAYLOAD_SHARE * (1.0 - resent);
        assert!(
            good > 0.9 * ceiling && good < 1.02 * ceiling,
            "{one_way}: {good} b/s of {ceiling}"
        );
        assert!(!l.session_limited, "{one_way}: {l:?}");
    }
}

#[test]
fn too_few_sessions_leave_the_link_idle_between_reports_and_the_summary_says_so() {
    // 2 sessions of 64 kB per round trip of 2.4 s + the block's 0.5 s: about 350 kb/s.
    let out = sim(&akan_like("1200 ms", "2 MB", "max_export_sessions = 2", ""));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    let l = f.ltp.as_ref().unwrap();
    assert!(l.session_limited, "{l:?}");
    assert!(l.session_limited_s > 0.3 * f.completion_s.unwrap(), "{l:?}");
    let expected = 2.0 * 64_000.0 * 8.0 / (2.4 + 64_000.0 * 8.0 / 1e6);
    assert!(
        (f.goodput_bps / expected - 1.0).abs() < 0.2,
        "goodput {} against {expected}",
        f.goodput_bps
    );
}

#[test]
fn an_announced_outage_suspends_the_timers_and_the_transfer_resumes_when_it_ends() {
    // A 60 s outage from 5 s. The sender's host is the ground station: it is told the link
    // went down and came back (RFC 5326 section 6, link state cues), so no checkpoint
    // timer runs out during it and no session is canceled.
    let out = sim(&akan_like(
        "500 ms",
        "5 MB",
        "max_export_sessions = 50",
        "outages = [[\"5 s\", \"65 s\"]]",
    ));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    let l = f.ltp.as_ref().unwrap();
    assert!(out.summary.links[0].outage_drops > 0);
    assert_eq!(l.sessions_canceled, 0);
    // At most the checkpoints the outage swallowed as it began are sent again (their
    // timers were suspended, not run out during the outage).
    assert!(l.checkpoints_retransmitted <= 5, "{l:?}");
    assert!(f.completion_s.unwrap() > 60.0);
}

#[test]
fn a_round_trip_of_forty_minutes_with_enough_sessions() {
    // 20 min each way: TCP gets tens of bytes per second here (Akan et al.); LTP, with
    // sessions for the bandwidth-delay product (1 Mb/s x 2400 s = 300 MB in 1 MB blocks),
    // delivers 100 MB after one light time plus the data's own 800 s.
    let out = sim(&akan_like(
        "1200 s",
        "100 MB",
        "max_export_sessions = 400, block_size = \"1 MB\", aggregation_size_limit = \"1 MB\"",
        "",
    ));
    assert_exact(&out);
    let f = &out.summary.flows[0];
    let t = f.completion_s.unwrap();
    // One light time (1200 s) + 100 MB at the payload rate (~826 s), and for the blocks
    // that lost a segment a second round trip (2400 s + the timers' margins) at the end.
    assert!(t > 2000.0 && t < 2000.0 + 2600.0, "{t} s");
}

#[test]
fn ltp_settings_are_checked_and_errors_name_the_field() {
    let base = |ltp: &str| akan_like("10 ms", "1 MB", ltp, "");
    let e = sim_err(&base("max_export_sessions = 0"));
    assert!(e.contains("flows[0].ltp.max_export_sessions"), "{e}");
    let e = sim_err(&base("sessions = 3"));
    assert!(e.contains("flows[0].ltp") && e.contains("sessions"), "{e}");
    let e = sim_err(&base("red_share = 1.5"));
    assert!(e.contains("flows[0].ltp.red_share"), "{e}");
    let e = sim_err(&base("peer_engine_id = 4"));
    assert!(e.contains("flows[0].ltp.peer_engine_id"), "{e}");
    let tcp_on_ltp = akan_like("10 ms", "1 MB", "", "") + "tcp = { sack = true }\n";
    let e = sim_err(&tcp_on_ltp);
    assert!(e.contains("flows[0].tcp"), "{e}");
    let ltp_on_tcp = hosts_a_b("", "1 Mb/s", "10 ms", "")
        + &flow_a_to_b(
            "protocol = \"newreno\"\nbytes = \"1 MB\"\nltp = { max_export_sessions = 4 }",
        );
    let e = sim_err(&ltp_on_tcp);
    assert!(
        e.contains("flows[0].ltp") && e.contains("protocol = \"ltp\""),
        "{e}"
    );
}

#[test]
fn a_green_share_is_sent_once_and_its_losses_stay_lost() {
    let out = sim(&akan_like("100 ms", "2 MB", "red_share = 0.0", ""));
    let f = &out.summary.flows[0];
    let lost = out.summary.links[0].error_drops;
    assert_eq!(f.retransmitted_segments, 0);
    assert!(lost > 0);
    // Every lost green segment's bytes (at most a segment of 1472 B each) are missing;
    // nothing else is.
    assert!(f.bytes_delivered < 2_000_000);
    assert!(
        f.bytes_delivered >= 2_000_000 - lost * 1472,
        "{}",
        f.bytes_delivered
    );
    assert_eq!(
        f.ltp.as_ref().unwrap().report_segments_sent,
        0,
        "green data is never reported"
    );
}
