//! CFDP flows (`protocol = "cfdp"`): spacetp-cfdp's entities (cfdp-rs) at both ends of a
//! flow, their PDUs real bytes in UDP datagrams. What a user of CFDP expects on a lossy,
//! long-delay link: class 1 sends the file once at the rate it is given and cannot repair
//! a loss (the transaction ends without the file, said as the flow's failure); class 2
//! repairs every loss with NAKs and delivers the file exactly, one round trip after EOF at
//! best.

mod common;
use common::*;

/// A 1 Mb/s link of `one_way` delay with `errors`, and a CFDP flow of `bytes`.
fn link(one_way: &str, errors: &str, bytes: &str, cfdp: &str) -> String {
    hosts_a_b(
        "seed = 3\nstop = \"2000 s\"",
        "1 Mb/s",
        one_way,
        &format!("{errors}\nqueue = {{ packets = 1000 }}"),
    ) + &flow_a_to_b(&format!(
        "protocol = \"cfdp\"\nbytes = \"{bytes}\"\ncfdp = {{ {cfdp} }}"
    ))
}

#[test]
fn class_1_sends_the_file_once_at_the_paths_rate() {
    let out = sim(&link("250 ms", "", "1 MB", "class = 1"));
    let f = &out.summary.flows[0];
    assert!(f.complete && f.failure.is_none(), "{f:?}");
    assert_eq!(f.bytes_delivered, 1_000_000);
    let c = f.cfdp.as_ref().expect("CFDP counters");
    // 1500-byte packets: 1458 B of file data each (less IPv4, UDP and 14 B of CFDP
    // header), paced at the 1 Mb/s bottleneck, then one way of 250 ms.
    let pdus = 1_000_000u64.div_ceil(1458);
    assert_eq!(c.sender_pdus.file_data, pdus);
    assert_eq!(
        c.receiver_pdus.total(),
        0,
        "class 1: the receiver never answers"
    );
    let on_air = (1_000_000.0 + pdus as f64 * 42.0) * 8.0 / 1e6;
    let t = f.completion_s.unwrap();
    assert!(
        t > on_air + 0.25 && t < on_air * 1.01 + 0.3,
        "{t} s, {on_air} s on air"
    );
    assert!(c.file_intact && c.file_bytes_received == 1_000_000);
}

#[test]
fn class_1_cannot_repair_a_loss_and_the_flow_fails_with_cfdps_condition() {
    let out = sim(&link(
        "250 ms",
        "errors = { per = 0.01 }",
        "1 MB",
        "class = 1",
    ));
    let f = &out.summary.flows[0];
    assert!(!f.complete && f.bytes_delivered == 0, "{f:?}");
    let why = f.failure.as_deref().expect("a failure");
    assert!(why.contains("CheckLimitReached"), "{why}");
    let c = f.cfdp.as_ref().unwrap();
    assert_eq!(
        c.receiver_timer_expiries[0], 2,
        "the check timer ran out check_limit times"
    );
}

#[test]
fn class_2_repairs_every_loss_with_naks_and_delivers_the_file_exactly() {
    for nak_mode in ["immediate", "deferred"] {
        let cfdp = format!("class = 2, nak_mode = \"{nak_mode}\"");
        let out = sim(&link("250 ms", "errors = { per = 0.02 }", "2 MB", &cfdp));
        let f = &out.summary.flows[0];
        assert!(f.complete && f.failure.is_none(), "{nak_mode}: {f:?}");
        assert_eq!(f.bytes_delivered, 2_000_000);
        let c = f.cfdp.as_ref().unwrap();
        assert!(c.file_intact && c.naks_sent > 0, "{nak_mode}: {c:?}");
        let lost = out.summary.links[0].error_drops;
        assert!(f.retransmitted_segments >= lost.min(1), "{nak_mode}: {f:?}");
        assert_eq!(c.receiver_pdus.finished, 1, "{nak_mode}");
        assert_eq!(c.receiver_condition.as_deref(), Some("NoError"));
        assert!(
            c.sender_faults.is_empty() && c.receiver_faults.is_empty(),
            "{c:?}"
        );
        if nak_mode == "deferred" {
            // One NAK for the whole file after EOF, then again only on the NAK timer.
            assert!(c.naks_sent <= 1 + c.receiver_timer_expiries[1], "{c:?}");
        }
    }
}

#[test]
fn cfdp_settings_are_checked_and_named() {
    let err = sim_err(&link("250 ms", "", "1 MB", "class = 3"));
    assert!(
        err.contains("flows[0].cfdp.class") && err.contains("1 (unacknowledged) or 2"),
        "{err}"
    );
    let err = sim_err(&link("250 ms", "", "1 MB", "nak_timer = \"0 s\""));
    assert!(err.contains("flows[0].cfdp.nak_timer"), "{err}");
    let err = sim_err(&link("250 ms", "", "1 MB", "segment_size = \"1600 B\""));
    assert!(err.contains("flows[0].cfdp.segment_size"), "{err}");
    let err = sim_err(&link("250 ms", "", "1 MB", "windw = 3"));
    assert!(
        err.contains("flows[0].cfdp") && err.contains("windw"),
        "{err}"
    );
    let toml = hosts_a_b("stop = \"10 s\"", "1 Mb/s", "10 ms", "")
        + &flow_a_to_b("protocol = \"cfdp\"\nread_rate = \"1 Mb/s\"\nbytes = \"1 kB\"");
    let err = sim_err(&toml);
    assert!(
        err.contains("flows[0].read_rate") && err.contains("whole file"),
        "{err}"
    );
}

#[test]
fn on_a_40_s_round_trip_the_default_timers_end_the_transaction_and_fitted_ones_deliver() {
    // cfdp-rs's 10 s NAK and positive-ACK timers run out before a repair or EOF's ACK
    // can return: at their limits the transaction ends without the file.
    let as_configured = sim(&link(
        "20 s",
        "errors = { per = 0.01 }",
        "1 MB",
        "class = 2",
    ));
    let f = &as_configured.summary.flows[0];
    assert!(!f.complete, "{f:?}");
    let why = f.failure.as_deref().unwrap_or_default();
    assert!(why.contains("LimitReached"), "{why}");
    // Fitted: each timer a round trip plus 1 s.
    let toml = link("20 s", "errors = { per = 0.01 }", "1 MB", "class = 2")
        .replace("protocol = \"cfdp\"", "protocol = \"cfdp\"\nfit = true");
    let fitted = sim(&toml);
    let f = &fitted.summary.flows[0];
    assert!(f.complete && f.bytes_delivered == 1_000_000, "{f:?}");
    let names: Vec<_> = f.fitted.iter().map(|x| x.setting.as_str()).collect();
    assert!(names.contains(&"cfdp.positive_ack_timer") && names.contains(&"cfdp.nak_timer"));
    let timers = f
        .fitted
        .iter()
        .filter(|x| x.setting != "cfdp.inactivity_timeout");
    assert!(timers.clone().all(|x| x.value == "41 s"), "{:?}", f.fitted);
    assert!(f
        .fitted
        .iter()
        .any(|x| x.setting == "cfdp.inactivity_timeout" && x.value == "123 s"));
}

#[test]
fn a_transaction_that_ends_without_the_file_is_a_failure_never_a_silent_success() {
    // 5% of packets lost on a 4 s round trip: in this run the metadata PDU is lost and
    // cfdp-rs 0.3.0's receiver ends its transaction "NoError" with no file retained (its
    // status "Unreported"): the flow is incomplete and says why.
    let toml = hosts_a_b(
        "seed = 8\nstop = \"20000 s\"",
        "2 Mb/s",
        "2 s",
        "errors = { per = 0.05 }\nqueue = { packets = 100000 }",
    ) + &flow_a_to_b("protocol = \"cfdp\"\nbytes = \"5 MB\"\nfit = true");
    let out = sim(&toml);
    let f = &out.summary.flows[0];
    if f.complete {
        // A change in cfdp-rs (or in this run's losses) delivered it: then it is exact.
        assert_eq!(f.bytes_delivered, 5_000_000);
        assert!(f.cfdp.as_ref().unwrap().file_intact);
        return;
    }
    let why = f
        .failure
        .as_deref()
        .expect("an incomplete CFDP flow says why");
    assert!(why.contains("without the file"), "{why}");
    assert_eq!(f.bytes_delivered, 0);
}

#[test]
fn a_workload_of_many_files_is_one_transaction_each_every_file_exact() {
    // One file every 5 s, each 1.7 s on the link: one transaction at a time. (Transactions
    // at once each pace at cfdp.rate; CFDP has no congestion control, so n of them need a
    // rate of the link's n-th: at the full rate each, queues grow past the timers.)
    let toml = hosts_a_b(
        "seed = 4\nstop = \"600 s\"",
        "1 Mb/s",
        "250 ms",
        "errors = { per = 0.01 }\nqueue = { packets = 1000 }",
    ) + "[[workloads]]\nkind = \"file_requests\"\nclients = [\"b\"]\nserver = \"a\"\n\
         protocol = \"cfdp\"\ncount = 6\nsize = { constant = \"200 kB\" }\n\
         interval = { constant = \"5 s\" }\nfit = true\n[workloads.cfdp]\nclass = 2\n";
    let out = sim(&toml);
    let files = &out.summary.flows;
    assert_eq!(files.len(), 6);
    for f in files {
        assert!(f.complete && f.bytes_delivered == 200_000, "{f:?}");
        assert!(f.cfdp.as_ref().unwrap().file_intact);
    }
    // Six transfers at once share the link: the last ends after 6 x 200 kB at 1 Mb/s.
    let last = files
        .iter()
        .map(|f| f.start_s + f.completion_s.unwrap())
        .fold(0.0, f64::max);
    assert!(last > 9.6, "{last}");
}

#[test]
fn a_link_outage_suspends_the_transaction_and_it_resumes_where_it_stopped() {
    // 2 MB take 16.7 s on the link; a 60 s outage begins as EOF is on its way, while the
    // sender waits for its ACK and the receiver for its repairs. Timers fitted to the 0.5 s
    // round trip (1.5 s): held, they wait the outage out; running, they reach their limits.
    let run = |suspend: bool| {
        let toml = hosts_a_b(
            "seed = 5\nstop = \"2000 s\"",
            "1 Mb/s",
            "250 ms",
            "errors = { per = 0.01 }\nqueue = { packets = 1000 }\noutages = [[\"16.8 s\", \"76.8 s\"]]",
        ) + &flow_a_to_b(&format!(
            "protocol = \"cfdp\"\nbytes = \"2 MB\"\nfit = true\n\
             cfdp = {{ suspend_on_outage = {suspend} }}"
        ));
        sim(&toml).summary.flows[0].clone()
    };
    let held = run(true);
    assert!(
        held.complete && held.bytes_delivered == 2_000_000,
        "{held:?}"
    );
    let c = held.cfdp.as_ref().unwrap();
    assert!(
        c.sender_suspensions >= 1 && c.receiver_suspensions >= 1,
        "{c:?}"
    );
    // The outage's 60 s added to the transfer, and little more.
    let t = held.completion_s.unwrap();
    assert!(t > 60.0 + 16.0 && t < 60.0 + 16.0 * 1.05 + 4.0, "{t}");
    let running = run(false);
    assert!(!running.complete, "{running:?}");
    let why = running.failure.as_deref().unwrap_or_default();
    assert!(why.contains("LimitReached"), "{why}");
}

/// A 1 Mb/s link of `one_way` delay with `errors`, and a CFDP flow over LTP (`cfdp-ltp`).
fn over_ltp(one_way: &str, errors: &str, bytes: &str, extra: &str) -> String {
    hosts_a_b(
        "seed = 3\nstop = \"4000 s\"",
        "1 Mb/s",
        one_way,
        &format!("{errors}\nqueue = {{ packets = 1000 }}"),
    ) + &flow_a_to_b(&format!(
        "protocol = \"cfdp-ltp\"\nbytes = \"{bytes}\"\n{extra}"
    ))
}

#[test]
fn class_1_over_ltp_red_delivers_the_file_where_class_1_over_udp_fails() {
    // The loss that ends class 1 over UDP at its check limit (test above) is LTP's to
    // repair: its reports ask for the missing segments, CFDP sees every PDU once.
    let out = sim(&over_ltp("250 ms", "errors = { per = 0.01 }", "1 MB", ""));
    let f = &out.summary.flows[0];
    assert!(f.complete && f.failure.is_none(), "{f:?}");
    assert_eq!(f.bytes_delivered, 1_000_000);
    let c = f.cfdp.as_ref().expect("CFDP counters");
    assert_eq!(c.class, 1);
    assert!(c.file_intact && c.file_bytes_received == 1_000_000);
    assert_eq!(c.naks_sent, 0, "class 1: nothing asked of CFDP");
    assert_eq!(c.receiver_condition.as_deref(), Some("NoError"));
    let l = f.ltp.as_ref().expect("the LTP span's counters");
    assert!(
        f.retransmitted_segments > 0,
        "LTP resent what was lost: {f:?}"
    );
    assert!(
        l.sessions_completed > 0 && l.report_segments_received > 0,
        "{l:?}"
    );
    // The links carried LTP: port 1113, not CFDP's 4556.
    let pdus = 1_000_000u64.div_ceil(1458);
    assert_eq!(c.sender_pdus.file_data, pdus, "each PDU handed to LTP once");
}

#[test]
fn cfdp_over_ltp_crosses_a_ten_minute_light_time_with_fitted_timers() {
    // Mars at its nearest is about 3 light minutes, at its farthest 22: at 10 minutes one
    // way, class 1's check timer and LTP's timers must outlast the round trip.
    let out = sim(&over_ltp(
        "600 s",
        "errors = { per = 0.001 }",
        "500 kB",
        "fit = true",
    ));
    let f = &out.summary.flows[0];
    assert!(f.complete && f.failure.is_none(), "{f:?}");
    assert_eq!(f.bytes_delivered, 500_000);
    let t = f.completion_s.unwrap();
    // The pass (about 4.2 s), one way (600 s), LTP's repairs a round trip each.
    assert!(t > 604.0 && t < 3000.0, "{t} s");
}

#[test]
fn ltp_settings_on_cfdp_over_udp_are_refused_naming_the_field() {
    let text = link("250 ms", "", "1 MB", "class = 2") + "ltp = { max_export_sessions = 4 }\n";
    let e = sim_err(&text);
    assert!(e.contains("flows[0].ltp") && e.contains("cfdp-ltp"), "{e}");
    // Over LTP they are the span's.
    let ok = over_ltp("250 ms", "", "200 kB", "ltp = { max_export_sessions = 4 }");
    let out = sim(&ok);
    let f = &out.summary.flows[0];
    assert!(f.complete, "{f:?}");
    assert_eq!(f.ltp.as_ref().unwrap().max_export_sessions, 4);
}
