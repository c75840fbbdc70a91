//! Settings that let a run match ns-3 (or Linux) where spacetp's textbook default differs,
//! each shown to change behaviour as described (issue: every setting a user needs to match
//! an ns-3 run, and none silently clamped).

use super::*;
use crate::testing::Pipe;
use crate::time::{MS, SEC};
use crate::units::Duration;
use spacetp_wire::flags;

/// Times at which a sent data segments out again (retransmissions), from the pipe's log.
fn retransmission_times(p: &Pipe) -> Vec<Time> {
    p.log_ab
        .iter()
        .filter(|l| l.3 && l.2 > 0)
        .map(|l| l.0)
        .collect()
}

#[test]
fn max_backoff_caps_backed_off_timeouts_below_min_rto_as_ns3() {
    // Every data segment after the handshake is lost: the first timeout waits min_rto (10 s),
    // later ones double to 20 s, 40 s; with max_backoff = 6 s (ns-3's 60 s cap, scaled) they
    // wait 6 s each, below min_rto.
    let gaps = |max_backoff: Option<Duration>| {
        let c = TcpConfig {
            initial_rto: Duration(10 * SEC),
            min_rto: Duration(10 * SEC),
            max_rto: Duration(100 * SEC),
            max_backoff,
            max_retries: 3,
            ..TcpConfig::default()
        };
        let mut p = Pipe::new(&c, 1000, 1000);
        p.drop_ab = (1..50).collect();
        p.run(300 * SEC);
        let t = retransmission_times(&p);
        t.windows(2)
            .map(|w| (w[1] - w[0]) / SEC)
            .collect::<Vec<_>>()
    };
    assert_eq!(gaps(None), vec![20, 40]);
    assert_eq!(gaps(Some(Duration(6 * SEC))), vec![6, 6]);
}

#[test]
fn syn_rto_times_the_handshake_apart_from_the_rto() {
    // The first three SYNs are lost. With the RTO's rules the SYN goes at 0, 1, 3 and 7 s
    // (initial_rto 1 s, doubled); with syn_rto = 3 s (ns-3's ConnTimeout) at 0, 3, 9, 21 s.
    let syn_times = |syn_rto: Option<Duration>| {
        let c = TcpConfig {
            syn_rto,
            ..TcpConfig::default()
        };
        let mut p = Pipe::new(&c, 1000, 1000);
        p.drop_ab = vec![0, 1, 2];
        p.run(60 * SEC);
        assert_eq!(p.b.delivered(), 1000);
        p.log_ab
            .iter()
            .filter(|l| l.4 & flags::SYN != 0)
            .map(|l| l.0 / SEC)
            .collect::<Vec<_>>()
    };
    assert_eq!(syn_times(None), vec![0, 1, 3, 7]);
    assert_eq!(syn_times(Some(Duration(3 * SEC))), vec![0, 3, 9, 21]);
}

#[test]
fn quick_acks_answer_the_first_data_segment_at_once_as_ns3() {
    // Initial window 1: the sender waits for the ACK of its first segment. The textbook
    // receiver holds it for the delayed-ACK timer (200 ms); with quick_acks = 1 (ns-3) it
    // answers at once, and the second segment leaves one RTT (100 ms) after the first.
    let second_send = |quick_acks: u32| {
        let c = TcpConfig {
            initial_window: crate::config::InitialWindow::Segments(1),
            quick_acks,
            ..TcpConfig::default()
        };
        let mut p = Pipe::new(&c, 1000, 5000);
        p.run(10 * SEC);
        let data: Vec<Time> = p.log_ab.iter().filter(|l| l.2 > 0).map(|l| l.0).collect();
        (data[1] - data[0]) / MS
    };
    assert_eq!(second_send(0), 300);
    assert_eq!(second_send(1), 100);
}

#[test]
fn contradictory_settings_are_errors_naming_both_fields_not_silent_changes() {
    let err = |c: TcpConfig| c.validate().unwrap_err().to_string();
    let e = err(TcpConfig {
        initial_rto: Duration(120 * SEC),
        ..TcpConfig::default()
    });
    assert!(
        e.starts_with("initial_rto: 120 s is outside [min_rto, max_rto]"),
        "{e}"
    );
    let e = err(TcpConfig {
        min_rto: Duration(2 * SEC),
        ..TcpConfig::default()
    });
    assert!(
        e.starts_with("initial_rto:") && e.contains("min_rto"),
        "{e}"
    );
    let e = err(TcpConfig {
        recovery: crate::config::RecoveryKind::Sack,
        sack: false,
        ..TcpConfig::default()
    });
    assert!(e.starts_with("recovery: \"sack\" needs sack = true"), "{e}");
    let e = err(TcpConfig {
        window_scaling: false,
        ..TcpConfig::default()
    });
    assert!(
        e.starts_with("receive_buffer:") && e.contains("window_scaling"),
        "{e}"
    );
    let e = err(TcpConfig {
        max_backoff: Some(Duration(0)),
        ..TcpConfig::default()
    });
    assert!(e.starts_with("max_backoff:"), "{e}");
}
