//! Schedules of every link property (rate, up/down per direction, error rates), contact
//! plans driving a link, and what the core refuses to compute itself.

mod common;
use common::*;

/// Hosts a and b, a link with `link` lines (no rate or delay unless given), and a flow.
fn scenario(link: &str, flow: &str) -> String {
    format!(
        "seed = 3\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[links]]\nbetween = [\"a\", \"b\"]\n{link}\n{}",
        flow_a_to_b(flow)
    )
}

#[test]
fn a_rate_schedule_sets_how_fast_each_phase_of_a_transfer_goes() {
    // UDP-like datagrams at 4 Mb/s into a link whose rate is 1 Mb/s for 10 s, then
    // 3 Mb/s: the link carries rate x time in each phase (queue full throughout).
    let link = "delay = \"10 ms\"\nqueue = { packets = 50 }\n[links.rate]\nschedule = [[\"0 s\", \"1 Mb/s\"], [\"10 s\", \"3 Mb/s\"]]";
    let toml = format!(
        "stop = \"20 s\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[links]]\nbetween = [\"a\", \"b\"]\n{link}\n\
         [[traffic]]\nfrom = \"a\"\nto = \"b\"\nrate = \"4 Mb/s\"\nsize = \"1000 B\"\n\
         [[flows]]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1 kB\"\nstart = \"19 s\"\n"
    );
    let out = sim(&toml);
    let sent = out.summary.links[0].tx_bytes as f64 * 8.0;
    let want = 1e6 * 10.0 + 3e6 * 10.0;
    assert!((sent - want).abs() / want < 0.01, "{sent} bits vs {want}");
}

#[test]
fn a_packet_on_the_wire_waits_through_a_zero_rate() {
    // 12 kB at 96 kb/s take 1 s; the rate drops to 0 from 0.5 s to 2.5 s: the file ends
    // near 3 s (plus the handshake and propagation), not 1 s.
    let link = "delay = \"1 ms\"\n[links.rate]\nschedule = [[\"0 s\", \"96 kb/s\"], [\"0.5 s\", 0], [\"2.5 s\", \"96 kb/s\"]]";
    let out = sim(&scenario(link, "bytes = \"12 kB\"\nmtu = 1040\n[flows.tcp]\ninitial_window = 20\nreceive_buffer = \"1 MB\""));
    let t = out.summary.flows[0].completion_s.unwrap();
    assert!(t > 2.9 && t < 3.4, "completion {t}");
    let never = sim_err(&scenario(
        "delay = \"1 ms\"\nrate = { schedule = [[\"0 s\", \"1 Mb/s\"], [\"1 s\", \"0 b/s\"]] }",
        "bytes = \"1 kB\"",
    ));
    assert!(
        never.starts_with("links[0].rate.schedule[1]: the last (or only) rate must be above 0"),
        "{never}"
    );
}

#[test]
fn up_schedules_are_per_direction() {
    // The back direction (ACKs) is down from 2 s to 4 s: only it drops packets, and the
    // transfer still completes.
    let link = "rate = \"1 Mb/s\"\ndelay = \"10 ms\"\n[links.up_back]\nschedule = [[\"0 s\", true], [\"2 s\", false], [\"4 s\", true]]";
    let out = sim(&scenario(link, "bytes = \"600 kB\""));
    assert_exact(&out);
    assert_eq!(out.summary.links[0].outage_drops, 0, "forward never down");
    assert!(
        out.summary.links[1].outage_drops > 0,
        "ACKs lost while back is down"
    );
    let out = sim(&scenario(
        "rate = \"1 Mb/s\"\ndelay = \"10 ms\"\nup = false\nup_back = true",
        "bytes = \"1 kB\"\nstop = \"5 s\"",
    ));
    assert!(out.summary.links[0].outage_drops > 0);
    assert_eq!(out.summary.flows[0].bytes_delivered, 0);
}

#[test]
fn schedule_times_that_go_backwards_are_refused_with_the_point() {
    let e = sim_err(&scenario(
        "rate = \"1 Mb/s\"\ndelay = \"1 ms\"\nup = { schedule = [[\"5 s\", true], [\"2 s\", false]] }",
        "bytes = \"1 kB\"",
    ));
    assert_eq!(
        e,
        "links[0].up.schedule[1]: time 2 s is not after the previous point's 5 s; times must \
         be strictly increasing"
    );
    let e = sim_err(&scenario(
        "rate = \"1 Mb/s\"\ndelay = \"1 ms\"\nerrors = { per = { schedule = [[\"0 s\", 0.1], [\"1 s\", 2]] } }",
        "bytes = \"1 kB\"",
    ));
    assert_eq!(
        e,
        "links[0].errors.per.schedule[1]: 2 is not a probability; must be in [0, 1]"
    );
}

#[test]
fn a_per_schedule_loses_packets_only_while_it_is_high() {
    let link = "rate = \"10 Mb/s\"\ndelay = \"1 ms\"\nerrors = { per = { schedule = [[\"0 s\", 0.0], [\"1 s\", 0.5], [\"1.5 s\", 0.0]] } }";
    let toml = format!(
        "stop = \"3 s\"\n[[nodes]]\nname = \"a\"\n[[nodes]]\nname = \"b\"\n[[links]]\nbetween = [\"a\", \"b\"]\n{link}\n\
         [[traffic]]\nfrom = \"a\"\nto = \"b\"\nrate = \"1 Mb/s\"\nsize = \"1000 B\"\n\
         [[flows]]\nfrom = \"a\"\nto = \"b\"\nbytes = \"1 kB\"\nstart = \"2.5 s\"\n"
    );
    let out = sim(&toml);
    // 62.5 datagrams in the lossy half second, half of them lost.
    let lost = out.summary.links[0].error_drops as f64;
    assert!((15.0..=48.0).contains(&lost), "{lost}");
    assert!(out.summary.flows[0].complete);
}

#[test]
fn a_contact_plan_drives_the_link() {
    // Contacts 1 -> 2 and 2 -> 1 from +5 s to +65 s at 125000 B/s (1 Mb/s), light time 2 s:
    // the SYNs before the contact are lost; the smallest RTT is 4 s plus a segment's 12 ms
    // at 1 Mb/s.
    let plan = "a contact +5 +65 1 2 125000\na contact +5 +65 2 1 125000\na range +0 +100 1 2 2\n";
    let link = format!("contacts = {{ plan = \"\"\"{plan}\"\"\", nodes = [1, 2] }}");
    let toml = scenario(
        &link.replace("\"\"\"", "'''"),
        "bytes = \"200 kB\"\n[flows.tcp]\nsyn_rto = \"1 s\"\ninitial_rto = \"10 s\"",
    );
    let out = sim(&toml);
    let f = &out.summary.flows[0];
    assert!(f.complete, "{}", f.state);
    let rtt = f.min_rtt_s.unwrap();
    assert!((4.0..4.02).contains(&rtt), "{rtt}");
    assert!(
        out.summary.links[0].outage_drops >= 1,
        "SYNs before the contact"
    );
    let e = sim_err(&scenario(
        &(link.replace("\"\"\"", "'''") + "\nrate = \"1 Mb/s\""),
        "bytes = \"1 kB\"",
    ));
    assert_eq!(
        e,
        "links[0].rate: the contact plan (`contacts`) sets it; give one or the other"
    );
}

#[test]
fn python_side_sources_are_refused_by_the_core() {
    let e = sim_err(&scenario(
        "rate = \"1 Mb/s\"\n[links.orbit]\nstart = \"2019-12-09T17:00:00Z\"\nstation = { lat = 0.0, lon = 0.0 }",
        "bytes = \"1 kB\"",
    ));
    assert!(
        e.starts_with("links[0].orbit: an orbit is turned into schedules by the Python front"),
        "{e}"
    );
    let e = sim_err(&scenario("rate = \"1 Mb/s\"", "bytes = \"1 kB\""));
    assert!(e.starts_with("links[0].delay: required"), "{e}");
}
