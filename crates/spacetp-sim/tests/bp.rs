//! Bundle Protocol flows (`protocol = "bp"`): bundles from the source's agent, stored and
//! forwarded by Contact Graph Routing over the contact plan, hop by hop over LTP, to the
//! destination's agent. Times are worked out from the plans by hand in the comments.

mod common;
use common::*;

/// A lander (1), an orbiter (2) and Earth (3). The lander sees the orbiter for 10 minutes
/// every 2 hours at 32 kB/s; the orbiter sees Earth for 50 minutes from 5000 s and from
/// 14000 s at 8 kB/s, 10 light-minutes away.
const MARS: &str = r#"
seed = 1
[[nodes]]
name = "lander"
[[nodes]]
name = "orbiter"
[[nodes]]
name = "earth"
[[links]]
between = ["lander", "orbiter"]
rate = "256 kb/s"
delay = "1 ms"
[[links]]
between = ["orbiter", "earth"]
rate = "64 kb/s"
delay = "600 s"
[dtn]
contact_plan = """
a contact +3600 +4200 1 2 32000
a contact +3600 +4200 2 1 32000
a contact +10800 +11400 1 2 32000
a contact +10800 +11400 2 1 32000
a range +0 +86400 1 2 0
a contact +5000 +8000 2 3 8000
a contact +5000 +8000 3 2 8000
a contact +14000 +17000 2 3 8000
a contact +14000 +17000 3 2 8000
a range +0 +86400 2 3 600
"""
"#;

fn mars(flow: &str) -> String {
    format!("{MARS}\n[[flows]]\nfrom = \"lander\"\nto = \"earth\"\nprotocol = \"bp\"\n{flow}\n")
}

#[test]
fn a_file_crosses_the_mars_relay_through_the_next_pass_and_the_next_earth_window() {
    let out = sim(&mars("bytes = \"2 MB\"\nbp = { bundle_size = \"100 kB\" }"));
    let f = &out.summary.flows[0];
    assert!(f.complete, "{f:?}");
    assert_eq!(f.bytes_delivered, 2_000_000);
    let bp = f.bp.as_ref().unwrap();
    assert_eq!((bp.bundles, bp.bundles_delivered), (20, 20));
    // Stored at the lander until the pass at 3600 s (2 MB at 32 kB/s: 62.5 s), at the
    // orbiter until Earth rises at 5000 s; 2 MB at 8 kB/s (250 s, about 1% more with
    // bundle, LTP, UDP and IP headers) and 600 s of light time: the last byte at about
    // 5850 s.
    let t = f.completion_s.unwrap();
    assert!((5850.0..5865.0).contains(&t), "delivered at {t} s");
    let dtn = out.summary.dtn.as_ref().unwrap();
    let node = |n: &str| dtn.nodes.iter().find(|x| x.node == n).unwrap();
    assert_eq!(node("lander").bundles_forwarded, 20);
    assert_eq!(node("orbiter").bundles_forwarded, 20);
    assert_eq!(node("earth").bundles_delivered, 20);
    // The lander kept each bundle about an hour, the orbiter from its arrival (3600 s to
    // 3663 s) until it could leave in the Earth window (5000 s to 5250 s).
    let lander = node("lander").storage_time_mean_s.unwrap();
    assert!((3600.0..3665.0).contains(&lander), "{lander}");
    let orbiter = node("orbiter").storage_time_mean_s.unwrap();
    assert!((1340.0..1600.0).contains(&orbiter), "{orbiter}");
    // The links followed the plan: nothing crossed outside the contacts.
    assert_eq!(dtn.hops.len(), 2);
    assert!(out.summary.links.iter().all(|l| l.outage_drops == 0));
}

#[test]
fn a_bundle_larger_than_a_pass_goes_in_fragments_over_two_passes() {
    // A pass carries 32 kB/s x 600 s = 19.2 MB: a 25 MB bundle cannot go whole.
    let out = sim(&mars("bytes = \"25 MB\""));
    let f = &out.summary.flows[0];
    assert!(f.complete, "{f:?}");
    let dtn = out.summary.dtn.as_ref().unwrap();
    let lander = dtn.nodes.iter().find(|n| n.node == "lander").unwrap();
    assert!(lander.fragmentations >= 1, "{lander:?}");
    // The rest waits for the pass at 10800 s; 25 MB at 8 kB/s do not fit one Earth window
    // (24 MB) either: the last fragment leaves in the window from 14000 s.
    assert!(f.completion_s.unwrap() > 14_000.0);
}

#[test]
fn a_bundle_that_cannot_arrive_before_it_expires_is_reported_and_the_run_ends() {
    // The first delivery possible is after 5600 s; a lifetime of one hour cannot make it.
    let out = sim(&mars("bytes = \"100 kB\"\nbp = { lifetime = \"1 h\" }"));
    let f = &out.summary.flows[0];
    assert!(!f.complete);
    let bp = f.bp.as_ref().unwrap();
    assert_eq!((bp.bundles_no_route, bp.bytes_dropped), (1, 100_000));
    assert_eq!(f.state, "bundles lost");
    assert!(
        out.summary.run.end_s < 1.0,
        "reported at once, not waited on"
    );
}

#[test]
fn without_a_plan_the_links_make_one_and_bundles_cross_a_lossy_link() {
    let sc =
        hosts_a_b(
            "seed = 3",
            "1 Mb/s",
            "2 s",
            "errors = { per = 1e-3 }\nqueue = { packets = 200 }",
        ) + &flow_a_to_b("protocol = \"bp\"\nbytes = \"5 MB\"\nbp = { bundle_size = \"500 kB\" }");
    let out = sim(&sc);
    let f = &out.summary.flows[0];
    assert!(f.complete, "{f:?}");
    let hop = &out.summary.dtn.as_ref().unwrap().hops[0];
    assert!(
        hop.data_segments_retransmitted > 0,
        "PER 1e-3 cost segments LTP resent"
    );
    // 5 MB at 1 Mb/s is 40 s; LTP's repairs add a round trip (4 s) or two.
    assert!(f.completion_s.unwrap() < 60.0, "{:?}", f.completion_s);
}

#[test]
fn bad_dtn_settings_name_the_field_and_the_plan_s_line() {
    let e = sim_err(&mars("bytes = \"1 MB\"").replace(
        "a contact +5000 +8000 2 3 8000",
        "a contact +5000 +8000 2 9 8000",
    ));
    assert!(
        e.contains("dtn.contact_plan") && e.contains("line") && e.contains('9'),
        "{e}"
    );
    let e = sim_err(&mars("bytes = \"1 MB\"").replace("+10800 +11400 1 2", "+4000 +11400 1 2"));
    assert!(e.contains("dtn.contact_plan") && e.contains("line"), "{e}");
    let e = sim_err(&mars("bp = { bundle_size = \"1 MB\" }"));
    assert!(e.contains("flows[0].bytes"), "{e}");
    let e = sim_err(&mars("bytes = \"1 MB\"\ntcp = { sack = true }"));
    assert!(e.contains("flows[0].tcp"), "{e}");
    let e = sim_err(&mars("bytes = \"1 MB\"\nbp = { lifetime = \"0 s\" }"));
    assert!(e.contains("flows[0].bp.lifetime"), "{e}");
    let tcp_with_bp = hosts_a_b("", "1 Mb/s", "10 ms", "")
        + &flow_a_to_b("protocol = \"newreno\"\nbytes = \"1 MB\"\nbp = { lifetime = \"1 h\" }");
    let e = sim_err(&tcp_with_bp);
    assert!(
        e.contains("flows[0].bp") && e.contains("protocol = \"bp\""),
        "{e}"
    );
}

fn mars_cfdp(flow: &str) -> String {
    format!(
        "{MARS}\n[[flows]]\nfrom = \"lander\"\nto = \"earth\"\nprotocol = \"cfdp-bp\"\n{flow}\n"
    )
}

#[test]
fn cfdp_over_bundles_crosses_the_mars_relay_as_bp_does() {
    // CFDP class 1 (cfdp-bp's default): each PDU a bundle, stored at the lander until the
    // pass, at the orbiter until Earth rises; the file complete at Earth with its checksum
    // verified about when a bp flow's last bundle arrives (the test above: 5850 s), PDU
    // bundles' headers costing a little more of the 8 kB/s window.
    let out = sim(&mars_cfdp("bytes = \"2 MB\""));
    let f = &out.summary.flows[0];
    assert!(f.complete && f.failure.is_none(), "{f:?}");
    assert_eq!(f.bytes_delivered, 2_000_000);
    let c = f.cfdp.as_ref().expect("CFDP counters");
    assert_eq!(c.class, 1);
    assert!(c.file_intact && c.file_bytes_received == 2_000_000);
    assert_eq!(c.receiver_condition.as_deref(), Some("NoError"));
    let t = f.completion_s.unwrap();
    assert!((5850.0..6000.0).contains(&t), "delivered at {t} s");
    let dtn = out.summary.dtn.as_ref().unwrap();
    let node = |n: &str| dtn.nodes.iter().find(|x| x.node == n).unwrap();
    // Metadata, file data (2 MB in 1458-byte PDUs) and EOF: a bundle each.
    let pdus = 1 + 2_000_000u64.div_ceil(1458) + 1;
    assert_eq!(node("lander").bundles_created, pdus);
    assert_eq!(node("earth").bundles_delivered, pdus);
    assert!(out.summary.links.iter().all(|l| l.outage_drops == 0));
}

#[test]
fn cfdp_class_2_over_bundles_gets_its_finished_pdu_back_at_the_next_pass() {
    // The Finished PDU leaves Earth at about 5850 s, reaches the orbiter in its window
    // (600 s of light), and the lander at the next pass (10 800 s): only then does the
    // sender's transaction end; the file was complete at Earth long before.
    let out = sim(&mars_cfdp("bytes = \"1 MB\"\ncfdp = { class = 2 }"));
    let f = &out.summary.flows[0];
    assert!(f.complete && f.failure.is_none(), "{f:?}");
    let c = f.cfdp.as_ref().unwrap();
    assert_eq!(c.class, 2);
    assert_eq!(c.sender_condition.as_deref(), Some("NoError"), "{c:?}");
    assert_eq!(c.receiver_pdus.finished, 1, "{c:?}");
    assert!(
        c.sender_timer_expiries.iter().all(|&n| n == 0),
        "day-long timers: {c:?}"
    );
    let dtn = out.summary.dtn.as_ref().unwrap();
    let lander = dtn.nodes.iter().find(|x| x.node == "lander").unwrap();
    assert!(
        lander.bundles_delivered >= 2,
        "EOF's ACK and the Finished PDU: {lander:?}"
    );
}

#[test]
fn bundle_settings_on_cfdp_over_udp_are_refused_and_workloads_say_not_yet() {
    let text = hosts_a_b("seed = 1", "1 Mb/s", "10 ms", "")
        + &flow_a_to_b("protocol = \"cfdp\"\nbytes = \"1 MB\"\nbp = { lifetime = \"1 h\" }");
    let e = sim_err(&text);
    assert!(e.contains("flows[0].bp") && e.contains("cfdp-bp"), "{e}");
}
