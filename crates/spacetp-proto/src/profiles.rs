//! Named presets users pass as `protocol = "..."`: each is a full `TcpConfig`; a scenario's
//! `[flows.tcp]` table overrides any of its fields. `spacetp protocols` prints them all.

use crate::config::{
    CongestionControlKind as Cc, InitialWindow, LossSource, RecoveryKind, ScpsConfig, TcpConfig,
};
use crate::time::{MS, SEC};
use crate::units::{Bytes, Duration, Rate};

/// Every profile name with a one-line description (and the sources of its settings).
pub const PROFILES: &[(&str, &str)] = &[
    ("tahoe", "TCP Tahoe: AIMD, fast retransmit then slow start from one segment (no fast recovery)"),
    ("reno", "TCP Reno: AIMD, RFC 5681 fast retransmit and fast recovery"),
    (
        "newreno",
        "TCP NewReno: RFC 5681 AIMD, RFC 6582 fast recovery, RFC 3042 limited transmit, no SACK",
    ),
    ("sack", "TCP SACK: NewReno's AIMD with RFC 2018 SACK and RFC 6675 loss recovery"),
    ("fack", "TCP FACK: SACK with forward-acknowledgment recovery (Mathis & Mahdavi 1996)"),
    (
        "peach+",
        "TCP-Peach+ (Akyildiz, Zhang & Fang 2002): AIMD with Jump Start (initial window 1 plus \
         rwnd - 1 low-priority NIL segments paced over the first RTT) and Quick Recovery (NIL \
         segments rebuild the halved window within one RTT after a link-error loss)",
    ),

    ("vegas", "TCP Vegas (Brakmo et al. 1994): delay-based AIMD, slow start every other RTT; alpha/beta/gamma 2/4/1 (ns-3, Linux)"),
    ("westwood", "TCP Westwood+ (Mascolo et al.): ssthresh = bandwidth estimate x min RTT after a loss"),
    ("highspeed", "HighSpeed TCP (RFC 3649): a(w)/b(w) response function above 38 segments"),
    ("hybla", "TCP Hybla (Caini & Firrincieli 2004): growth normalised to RTT0 = 25 ms"),
    ("scalable", "Scalable TCP (Kelly 2003): +0.01 segment per ACK, x0.875 on loss, above a 16-segment legacy window"),
    ("bic", "BIC TCP (Xu, Harfoush & Rhee 2004): binary search increase, beta 0.8"),
    ("cubic", "CUBIC (RFC 9438): cubic window growth, beta 0.7, Reno-friendly region"),
    (
        "scps-tp",
        "SCPS-TP as Nguyen & Sterbenz Table 1: Vegas (slow start every other RTT), SNACK without \
         bit vector, fixed ACK frequency 100 ms, rate control 1.5 Mb/s, window scaling, no \
         timestamps or header compression, 300 kB buffers; losses treated as corruption (the \
         default source of data loss of their model); plain TCP with a non-SCPS peer",
    ),
    (
        "scps-nucc",
        "SCPS-TP as Nguyen & Sterbenz Table 2 (Edwards et al. case 2B style): congestion control \
         off, rate control 1.425 Mb/s, one ACK every 69 ms, SNACK without bit vector, window \
         scaling, losses treated as corruption",
    ),
    (
        "win2000",
        "Windows 2000 baseline of Edwards et al. Table 1: SACK, 64 kB window with scaling, initial \
         window 2 MSS, initial RTO 3 s; fast retransmit after 2 duplicate ACKs (TcpMaxDupAcks \
         default 2, Microsoft KB 224829), 5 data retransmissions; min RTO 300 ms (assumed: not \
         published for Windows 2000)",
    ),
    (
        "winnt",
        "Windows NT 4.0 (SP2+): Reno fast retransmit/recovery after 2 duplicate ACKs, no SACK, no \
         window scaling or timestamps (RFC 1323/2018 arrived with Windows 2000), 8760-byte \
         Ethernet window, initial window 1 MSS, initial RTO 3 s, 5 data retransmissions; min RTO \
         300 ms (assumed)",
    ),
];

/// The settings of profile `name`, or None if there is no such profile.
pub fn profile(name: &str) -> Option<TcpConfig> {
    let base = TcpConfig::default();
    let cfg = match name {
        "newreno" => base,
        "tahoe" => TcpConfig {
            recovery: RecoveryKind::Tahoe,
            ..base
        },
        "reno" => TcpConfig {
            recovery: RecoveryKind::Reno,
            ..base
        },
        "sack" => TcpConfig {
            recovery: RecoveryKind::Sack,
            sack: true,
            ..base
        },
        "fack" => TcpConfig {
            recovery: RecoveryKind::Fack,
            sack: true,
            ..base
        },
        "peach+" => TcpConfig {
            recovery: RecoveryKind::Peach,
            peach: true,
            initial_window: InitialWindow::Segments(1),
            ..base
        },
        "vegas" => TcpConfig {
            congestion_control: Cc::Vegas,
            ..base
        },
        "westwood" => TcpConfig {
            congestion_control: Cc::Westwood,
            ..base
        },
        "highspeed" => TcpConfig {
            congestion_control: Cc::Highspeed,
            ..base
        },
        "hybla" => TcpConfig {
            congestion_control: Cc::Hybla,
            ..base
        },
        "scalable" => TcpConfig {
            congestion_control: Cc::Scalable,
            ..base
        },
        "bic" => TcpConfig {
            congestion_control: Cc::Bic,
            ..base
        },
        "cubic" => TcpConfig {
            congestion_control: Cc::Cubic,
            ..base
        },
        "scps-tp" => TcpConfig {
            congestion_control: Cc::Vegas,
            scps: ScpsConfig {
                enabled: true,
                snack: true,
                loss_source: LossSource::Corruption,
                ack_period: Some(Duration(100 * MS)),
                rate: Some(Rate(1.5e6)),
                ..ScpsConfig::default()
            },
            ..base
        },
        "scps-nucc" => TcpConfig {
            congestion_control: Cc::None,
            scps: ScpsConfig {
                enabled: true,
                snack: true,
                loss_source: LossSource::Corruption,
                ack_period: Some(Duration(69 * MS)),
                rate: Some(Rate(1.425e6)),
                ..ScpsConfig::default()
            },
            ..base
        },
        "win2000" => TcpConfig {
            recovery: RecoveryKind::Sack,
            sack: true,
            window_scaling: true,
            receive_buffer: Bytes(65536),
            send_buffer: Bytes(65536),
            initial_window: InitialWindow::Segments(2),
            initial_rto: Duration(3 * SEC),
            min_rto: Duration(300 * MS),
            dupack_threshold: 2,
            max_retries: 5,
            limited_transmit: false,
            ..base
        },
        "winnt" => TcpConfig {
            recovery: RecoveryKind::Reno,
            window_scaling: false,
            receive_buffer: Bytes(8760),
            send_buffer: Bytes(8760),
            initial_window: InitialWindow::Segments(1),
            initial_rto: Duration(3 * SEC),
            min_rto: Duration(300 * MS),
            dupack_threshold: 2,
            max_retries: 5,
            limited_transmit: false,
            ..base
        },
        _ => return None,
    };
    Some(cfg)
}

pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_profile_exists_and_is_valid() {
        for (name, _) in PROFILES {
            let p = profile(name).unwrap_or_else(|| panic!("{name}"));
            p.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        assert!(profile("tcp-x").is_none());
    }

    #[test]
    fn windows_baselines_follow_edwards_table_1() {
        let w = profile("win2000").unwrap();
        assert!(w.sack && w.window_scaling);
        assert_eq!(w.receive_buffer.0, 65536);
        assert_eq!(w.initial_window.bytes(1460), 2920);
        assert_eq!(w.initial_rto.0, 3 * SEC);
        let nt = profile("winnt").unwrap();
        assert!(!nt.sack && !nt.window_scaling);
        assert_eq!(nt.receive_buffer.0, 8760);
    }
}
