//! Simulated attackers (`[[attacks]]`) against a running transfer, each class against what
//! RFC 5961 says it must do: blind resets and SYNs change nothing, in-window resets draw
//! rate-limited challenge ACKs, an on-path reset at the exact number ends the connection on
//! both sides (never a hang), ACKs of unsent data are dropped with their data.

mod common;
use common::*;

/// A 2 MB transfer (2 Mb/s, 40 ms: about 9 s) under `attack` (the fields of one entry).
fn attacked(attack: &str) -> spacetp_sim::RunOutput {
    let mut toml = two_nodes("queue = { bdp = 1.0 }", r#"bytes = "2 MB""#);
    toml.push_str(&format!("[[attacks]]\nflow = 0\n{attack}\n"));
    sim(&toml)
}

#[test]
fn a_thousand_blind_resets_do_not_stop_a_transfer() {
    let out = attacked(
        "kind = \"rst\"\nseq = \"blind\"\nstart = \"0.5 s\"\ncount = 1000\ninterval = \"5 ms\"",
    );
    assert_exact(&out);
    let a = &out.summary.attacks[0];
    assert_eq!(a.injected, 1000);
    // A blind number falls in a 300 kB window about once in 14 000: all rejected, silently
    // or with a challenge ACK.
    assert_eq!(tcp(&out).rst_rejected, 1000);
}

#[test]
fn in_window_resets_draw_rate_limited_challenge_acks_and_change_nothing() {
    let out = attacked(
        "kind = \"rst\"\nseq = \"in_window\"\nstart = \"1 s\"\ncount = 200\ninterval = \"10 ms\"",
    );
    assert_exact(&out);
    let f = tcp(&out);
    assert_eq!(f.rst_rejected, 200);
    // 200 resets over 2 s: at most one challenge ACK per 500 ms.
    assert!((3..=5).contains(&f.challenge_acks), "{}", f.challenge_acks);
}

#[test]
fn a_reset_at_the_exact_number_ends_the_transfer_at_once() {
    // An attacker on the path wins (RFC 5961 cannot help): the receiver is reset, the flow
    // is reported incomplete with its undelivered bytes, and the run ends then, no hang.
    let out = attacked("kind = \"rst\"\nseq = \"exact\"\nstart = \"2 s\"");
    let f = &out.summary.flows[0];
    assert!(!f.complete && f.bytes_delivered < 2_000_000);
    assert_eq!(f.bytes_undelivered, Some(2_000_000 - f.bytes_delivered));
    assert_eq!(f.receiver_state, "reset by peer");
    assert!(
        out.summary.run.end_s < 2.1,
        "ended at {} s",
        out.summary.run.end_s
    );
}

#[test]
fn syns_on_the_running_connection_change_nothing() {
    for target in ["receiver", "sender"] {
        let out = attacked(&format!(
            "kind = \"syn\"\ntarget = \"{target}\"\nstart = \"1 s\"\ncount = 100\ninterval = \"20 ms\""
        ));
        assert_exact(&out);
        assert_eq!(tcp(&out).syn_rejected, 100, "{target}");
    }
}

#[test]
fn data_acknowledging_unsent_bytes_is_dropped_with_its_data() {
    let out = attacked(
        "kind = \"ack\"\nseq = \"in_window\"\nstart = \"1 s\"\ncount = 50\ninterval = \"20 ms\"",
    );
    assert_exact(&out);
    assert_eq!(tcp(&out).ack_rejected, 50);
    assert_eq!(out.summary.attacks[0].forged_bytes_accepted, 0);
    // With a valid acknowledgment in-window data is taken: what RFC 5961 cannot stop, and
    // the summary says how much.
    let out = attacked("kind = \"data\"\nseq = \"in_window\"\nstart = \"1 s\"\ncount = 5");
    assert!(out.summary.attacks[0].forged_bytes_accepted > 0);
}

#[test]
fn attack_settings_are_checked_with_the_field_named() {
    let base = two_nodes("", r#"bytes = "1 MB""#);
    let e = sim_err(&format!("{base}[[attacks]]\nflow = 3\nkind = \"rst\"\n"));
    assert!(
        e.starts_with("attacks[0].flow: 3, but the scenario has 1 flow"),
        "{e}"
    );
    let e = sim_err(&format!("{base}[[attacks]]\nflow = 0\nkind = \"fin\"\n"));
    assert!(e.contains("attacks[0].kind") && e.contains("rst"), "{e}");
    let e = sim_err(&format!(
        "{base}[[attacks]]\nflow = 0\nkind = \"rst\"\ncount = 0\n"
    ));
    assert!(e.starts_with("attacks[0].count:"), "{e}");
}
