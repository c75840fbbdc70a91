//! Named presets users pass as `protocol = "..."`: each is a full `TcpConfig`; a scenario's
//! `[flows.tcp]` table overrides any of its fields. `spacetp protocols` prints them all.

use crate::cc::{ControllerParams, CubicParams};
use crate::config::{
    CongestionControlKind as Cc, InitialWindow, LossSource, RecoveryKind, RtoFormula, ScpsConfig,
    TcpConfig,
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
        "linux-reno",
        "Linux as deployed (a 6.x kernel, TSO off), with reno on the LINUX_BASE settings",
    ),
    (
        "linux-cubic",
        "Linux as deployed with cubic (tcp_cubic.c: beta 717/1024, C 0.4, fast convergence, \
         HyStart with ACK-train and delay detection) on the LINUX_BASE settings",
    ),
    (
        "linux-bbr",
        "Linux as deployed with bbr (tcp_bbr.c, BBR v1: Startup, Drain, ProbeBW gain cycling, \
         ProbeRTT, long-term bandwidth for policers; paced, each departure a TSO packet of \
         tcp_tso_segs segments) on the LINUX_BASE settings",
    ),
    ("bbr", "The same as linux-bbr"),
    (
        "bbr3",
        "BBRv3 as draft-ietf-ccwg-bbr-06 specifies it (not what a stock Linux kernel runs: that \
         is BBR v1): loss-bounded inflight, ProbeBW DOWN/CRUISE/REFILL/UP timed for Reno \
         coexistence, Startup's exit on loss, ProbeRTT every 5 s at half the BDP; paced, a send quantum \
         per departure; on the LINUX_BASE settings",
    ),
    (
        "scps-tp",
        "SCPS-TP as Nguyen & Sterbenz Table 1: Vegas (slow start every other RTT), SNACK without \
         bit vector, fixed ACK frequency 100 ms, rate control 1.5 Mb/s, window scaling, no \
         timestamps or header compression, 300 kB buffers; losses treated as corruption (the \
         default source of data loss of their model); plain TCP with a non-SCPS peer",
    ),
    (
        "scps-ri",
        "SCPS-TP with the Reference Implementation's defaults (stand-alone stack): Vegas \
         (alpha 3, beta 5, gamma 4), rate control 2 Mb/s, SNACK, timestamps, 32 kB buffers, \
         initial window per RFC 3390, initial RTO 6 s, losses treated as corruption",
    ),
    (
        "scps-ri-gateway",
        "SCPS-TP as an RI gateway connection gets it by default: congestion control off, rate \
         control 2 Mb/s, otherwise the stand-alone defaults",
    ),
    (
        "scps-nucc",
        "SCPS-TP as Nguyen & Sterbenz Table 2 (Edwards et al. case 2B style): congestion control \
         off, rate control 1.425 Mb/s, one ACK every 69 ms, SNACK without bit vector, window \
         scaling, losses treated as corruption",
    ),
    (
        "scps-1b",
        "Edwards et al. case 1B (Table 1): SCPS-TP with header compression on the RI's TCP core: \
         fast retransmit/recovery with SACK, 64 kB window with scaling, initial window 2 MSS, \
         initial RTO 3 s; congestion the default source of loss (the RI's default)",
    ),
    (
        "scps-1c",
        "Edwards et al. case 1C (Table 1): short SNACK (no bit vector) and header compression, SACK \
         superseded, fast retransmit/recovery, 241 kB window with scaling, initial window 2 MSS, \
         initial RTO 3 s",
    ),
    (
        "scps-2a",
        "Edwards et al. case 2A (Table 2): Vegas congestion control, short SNACK and header \
         compression, 241 kB window with scaling, initial window 8 MSS, initial RTO 3 s",
    ),
    (
        "scps-2b",
        "Edwards et al. case 2B (Table 2): SNACK (with bit vector) and no congestion control, \
         header compression, 241 kB window with scaling, initial window 80 kB, initial RTO 3 s; \
         rate control at 1.536 Mb/s (a T1's payload rate: assumed, the paper gives none)",
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

/// What the `linux-*` profiles share, setting by setting, with where Linux sets it (the
/// kernel's source file or sysctl). `spacetp protocols` prints it.
pub const LINUX_BASE: &[(&str, &str)] = &[
    ("recovery = rack", "RACK-TLP loss detection, net/ipv4/tcp_recovery.c (tcp_recovery = 1)"),
    ("prr = true", "proportional rate reduction, tcp_input.c tcp_cwnd_reduction"),
    ("sack, dsack, timestamps, window_scaling = true", "sysctls tcp_sack, tcp_dsack, tcp_timestamps, tcp_window_scaling (all 1)"),
    ("initial_window = 10", "TCP_INIT_CWND, include/net/tcp.h"),
    ("abc_limit = 64", "growth counts segments acknowledged, not ACKs: tcp_slow_start, tcp_cong_avoid_ai (tcp_cong.c)"),
    ("rto_formula = linux, min_rto = 200 ms", "tcp_rtt_estimator and __tcp_set_rto, tcp_input.c; TCP_RTO_MIN"),
    ("initial_rto = 1 s, syn_rto = 1 s", "TCP_TIMEOUT_INIT, include/net/tcp.h"),
    ("max_rto = 120 s", "TCP_RTO_MAX"),
    ("rto_undo = true", "a timeout whose originals the timestamp echo shows arrived is undone: window, ssthresh and lost marks restored (tcp_try_undo_loss, tcp_packet_delayed, tcp_undo_cwnd_reduction in tcp_input.c)"),
    ("syn_retries = 6, max_retries = 15", "sysctls tcp_syn_retries, tcp_retries2"),
    ("ack_delay = 40 ms", "TCP_ATO_MIN, the delayed-ACK timer's floor"),
    ("adaptive_ack_delay = true", "the timeout follows the segments' inter-arrival time, doubles when it fires, at most max(SRTT, 40 ms) and 200 ms; quick ACKs again after a pause longer than the RTO (tcp_event_data_recv, tcp_input.c; tcp_send_delayed_ack, tcp_output.c)"),
    ("ack_every = 2", "__tcp_ack_snd_check: ACK when more than one full segment is unacknowledged"),
    ("quick_acks = 16", "TCP_MAX_QUICKACKS: quick-ACK mode at connection start (tcp_incr_quickack)"),
    ("receive_autotuning = true, receive_buffer_initial = 128 KiB", "tcp_moderate_rcvbuf = 1, tcp_rmem[1] = 131072: the window opens from 64 KB as the application reads (tcp_rcv_space_adjust, tcp_grow_window, tcp_input.c), every segment ACKed while it opens"),
    ("receive_buffer = 6 MB", "tcp_rmem[2] = 6291456, the ceiling receive autotuning reaches"),
    ("send_buffer = 4 MB", "tcp_wmem[2] = 4194304. Send autotuning (tcp_sndbuf_expand) keeps sk_sndbuf at 2 max(cwnd, 10) skbs of 4352 B truesize per 1448-byte segment, about six windows of payload, so below this ceiling the send buffer never limits what is sent: the ceiling is all that is modelled"),
];

/// The settings of profile `name`, or None if there is no such profile.
pub fn profile(name: &str) -> Option<TcpConfig> {
    tcp_family(name)
        .or_else(|| linux(name))
        .or_else(|| draft(name))
        .or_else(|| scps(name))
        .or_else(|| crate::profiles_ri::scps_ri(name))
        .or_else(|| windows(name))
}

/// Which family a profile belongs to: "textbook" (the papers' and ns-3's mechanisms on
/// NewReno's defaults), "linux" (what a Linux kernel does), "draft" (IETF drafts no stock
/// kernel runs, on the Linux settings), "scps" (SCPS-TP as the papers configured it),
/// "scps-ri" (SCPS-TP with the Reference Implementation's defaults) or
/// "windows" (Edwards et al.'s Windows stacks).
pub fn family(name: &str) -> Option<&'static str> {
    if linux(name).is_some() {
        Some("linux")
    } else if draft(name).is_some() {
        Some("draft")
    } else if tcp_family(name).is_some() {
        Some("textbook")
    } else if scps(name).is_some() {
        Some("scps")
    } else if crate::profiles_ri::scps_ri(name).is_some() {
        Some("scps-ri")
    } else if windows(name).is_some() {
        Some("windows")
    } else {
        None
    }
}

/// Linux as deployed (LINUX_BASE), with one of its congestion controls.
fn linux(name: &str) -> Option<TcpConfig> {
    let base = TcpConfig {
        recovery: RecoveryKind::Rack,
        prr: true,
        sack: true,
        dsack: true,
        timestamps: true,
        window_scaling: true,
        initial_window: InitialWindow::Segments(10),
        rto_formula: RtoFormula::Linux,
        abc_limit: Some(64),
        min_rto: Duration(200 * MS),
        initial_rto: Duration(SEC),
        syn_rto: Some(Duration(SEC)),
        max_rto: Duration(120 * SEC),
        syn_retries: 6,
        max_retries: 15,
        ack_delay: Duration(40 * MS),
        ack_every: 2,
        quick_acks: 16,
        adaptive_ack_delay: true,
        rto_undo: true,
        receive_buffer: Bytes(6_291_456),
        receive_autotuning: true,
        send_buffer: Bytes(4_194_304),
        ..TcpConfig::default()
    };
    let cfg = match name {
        "linux-reno" => base,
        "linux-cubic" => TcpConfig {
            congestion_control: Cc::Cubic,
            cc: ControllerParams {
                cubic: CubicParams {
                    beta: 717.0 / 1024.0,
                    c: 41.0 * 10.0 / 1024.0,
                    hystart: true,
                    ..Default::default()
                },
                ..Default::default()
            },
            ..base
        },
        "linux-bbr" | "bbr" => TcpConfig {
            congestion_control: Cc::Bbr,
            ..base
        },
        _ => return None,
    };
    Some(cfg)
}

/// IETF drafts on the LINUX_BASE settings: algorithms no stock kernel runs.
fn draft(name: &str) -> Option<TcpConfig> {
    let base = linux("linux-reno")?;
    let cfg = match name {
        "bbr3" => TcpConfig {
            congestion_control: Cc::Bbr3,
            ..base
        },
        _ => return None,
    };
    Some(cfg)
}

/// The TCP variants of the literature: a recovery algorithm or a congestion controller on
/// NewReno's defaults.
fn tcp_family(name: &str) -> Option<TcpConfig> {
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
        _ => return None,
    };
    Some(cfg)
}

/// SCPS-TP as the papers configured it: Nguyen & Sterbenz's two, Edwards et al.'s cases.
fn scps(name: &str) -> Option<TcpConfig> {
    let base = TcpConfig::default();
    let cfg = match name {
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
        "scps-1b" => edwards(TcpConfig {
            recovery: RecoveryKind::Sack,
            sack: true,
            receive_buffer: Bytes(65536),
            send_buffer: Bytes(65536),
            scps: edwards_scps(false, false),
            ..base
        }),
        "scps-1c" => edwards(TcpConfig {
            scps: edwards_scps(true, false),
            ..base
        }),
        "scps-2a" => edwards(TcpConfig {
            congestion_control: Cc::Vegas,
            initial_window: InitialWindow::Segments(8),
            scps: edwards_scps(true, false),
            ..base
        }),
        "scps-2b" => edwards(TcpConfig {
            congestion_control: Cc::None,
            initial_window: InitialWindow::Bytes(Bytes(80_000)),
            scps: ScpsConfig {
                rate: Some(Rate(1.536e6)),
                ..edwards_scps(true, true)
            },
            ..base
        }),
        _ => return None,
    };
    Some(cfg)
}

/// The Windows stacks of Edwards et al.'s FTP network.
fn windows(name: &str) -> Option<TcpConfig> {
    let base = TcpConfig::default();
    let cfg = match name {
        "win2000" => windows_baseline(TcpConfig {
            recovery: RecoveryKind::Sack,
            sack: true,
            window_scaling: true,
            receive_buffer: Bytes(65536),
            send_buffer: Bytes(65536),
            initial_window: InitialWindow::Segments(2),
            ..base
        }),
        "winnt" => windows_baseline(TcpConfig {
            recovery: RecoveryKind::Reno,
            window_scaling: false,
            receive_buffer: Bytes(8760),
            send_buffer: Bytes(8760),
            initial_window: InitialWindow::Segments(1),
            ..base
        }),
        _ => return None,
    };
    Some(cfg)
}

/// What every Edwards et al. SCPS case shares (Tables 1-2): window scaling, initial RTO 3 s,
/// the 241 kB window of cases 1C-2B unless the case sets its own, initial window 2 MSS.
fn edwards(cfg: TcpConfig) -> TcpConfig {
    let default = TcpConfig::default();
    let window = if cfg.receive_buffer == default.receive_buffer {
        Bytes(241_000)
    } else {
        cfg.receive_buffer
    };
    let initial_window = if cfg.initial_window == default.initial_window {
        InitialWindow::Segments(2)
    } else {
        cfg.initial_window
    };
    TcpConfig {
        window_scaling: true,
        initial_rto: Duration(3 * SEC),
        receive_buffer: window,
        send_buffer: window,
        initial_window,
        ..cfg
    }
}

/// What the Windows 2000 and NT baselines share: initial RTO 3 s, min RTO 300 ms (assumed),
/// fast retransmit after 2 duplicate ACKs, 5 data retransmissions, no limited transmit.
fn windows_baseline(cfg: TcpConfig) -> TcpConfig {
    TcpConfig {
        initial_rto: Duration(3 * SEC),
        min_rto: Duration(300 * MS),
        dupack_threshold: 2,
        max_retries: 5,
        limited_transmit: false,
        ..cfg
    }
}

/// SCPS-TP with header compression, and SNACK (short form, or with the bit vector) if asked.
fn edwards_scps(snack: bool, bitvector: bool) -> ScpsConfig {
    ScpsConfig {
        enabled: true,
        compression: true,
        snack,
        snack_bitvector: bitvector,
        ..ScpsConfig::default()
    }
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

    #[test]
    fn scps_cases_follow_edwards_tables_1_and_2() {
        for name in ["scps-1b", "scps-1c", "scps-2a", "scps-2b"] {
            let p = profile(name).unwrap();
            assert!(
                p.scps.enabled && p.scps.compression && p.window_scaling,
                "{name}"
            );
            assert_eq!(p.initial_rto.0, 3 * SEC, "{name}");
        }
        let b = profile("scps-1b").unwrap();
        assert!(b.sack && !b.scps.snack);
        assert_eq!(
            (b.receive_buffer.0, b.initial_window.bytes(1460)),
            (65536, 2920)
        );
        let c = profile("scps-1c").unwrap();
        assert!(!c.sack && c.scps.snack && !c.scps.snack_bitvector);
        assert_eq!(
            (c.receive_buffer.0, c.initial_window.bytes(1460)),
            (241_000, 2920)
        );
        let a = profile("scps-2a").unwrap();
        assert_eq!(a.congestion_control, Cc::Vegas);
        assert_eq!(a.initial_window.bytes(1460), 8 * 1460);
        let n = profile("scps-2b").unwrap();
        assert_eq!(n.congestion_control, Cc::None);
        assert!(n.scps.snack_bitvector);
        assert_eq!(n.initial_window.bytes(1460), 80_000);
    }
}
