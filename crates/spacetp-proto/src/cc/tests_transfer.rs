//! Every controller runs a real transfer: 2 MB over a 10 Mb/s, 50 ms (one way) pipe, with
//! scripted drops or a drop-tail bottleneck queue, through the connection's own hooks. Each
//! test checks exact delivery and the window behaviour that distinguishes the controller.

use crate::config::{CongestionControlKind as Kind, TcpConfig};
use crate::connection::CloseReason;
use crate::testing::{Pipe, Sample};
use crate::time::{Time, MS, SEC, US};

const MSS: u32 = 1000;
const BYTES: u64 = 2_000_000;
/// 1000-byte segments at 10 Mb/s.
const GAP: Time = 800 * US;
/// 10 Mb/s x 100 ms round trip.
const BDP: u64 = 125_000;

fn cfg(kind: Kind) -> TcpConfig {
    TcpConfig {
        congestion_control: kind,
        ..TcpConfig::default()
    }
}

/// Runs the transfer and checks what every controller must do: deliver all 2 MB and close.
fn transfer(cfg: &TcpConfig, drops: &[u64], queue: Option<u64>) -> Pipe {
    let mut p = Pipe::new(cfg, MSS, BYTES);
    p.gap_ab = GAP;
    p.drop_ab = drops.to_vec();
    p.queue_limit = queue;
    p.run(600 * SEC);
    let name = format!("{:?}", cfg.congestion_control);
    assert_eq!(p.b.delivered(), BYTES, "{name}: exact delivery");
    assert_eq!(p.a.close_reason(), Some(CloseReason::Normal), "{name}");
    assert!(p.b.is_finished(), "{name}");
    p
}

const ALL: [Kind; 8] = [
    Kind::Newreno,
    Kind::Vegas,
    Kind::Westwood,
    Kind::Highspeed,
    Kind::Hybla,
    Kind::Scalable,
    Kind::Bic,
    Kind::Cubic,
];

#[test]
fn every_controller_delivers_exactly_through_losses() {
    for kind in ALL {
        let p = transfer(&cfg(kind), &[300, 301, 900], None);
        let s = p.a.stats();
        assert!(s.fast_retransmits >= 1, "{kind:?}: {s:?}");
        assert!(s.retransmitted_segments >= 3, "{kind:?}: {s:?}");
    }
    // and through a drop-tail queue of half the BDP
    for kind in ALL {
        transfer(&cfg(kind), &[], Some(60));
    }
}

/// The window of `a` just before the first loss, when recovery starts, and when it ends.
fn around_first_loss(p: &Pipe) -> (Sample, Sample, Sample) {
    let i = p.first_recovery();
    (p.trace[i - 1], p.trace[i], p.trace[p.recovery_end(i)])
}

#[test]
fn vegas_holds_the_bdp_without_loss_behind_a_queue() {
    // Drop-tail queue of 60 segments (half the BDP); timestamps give Vegas an RTT sample per
    // ACK (its default needs 3 per round).
    let c = TcpConfig {
        timestamps: true,
        ..cfg(Kind::Vegas)
    };
    let p = transfer(&c, &[], Some(60));
    let mss = p.a.segment_size() as u64; // 988 with timestamps
    assert_eq!(p.queue_drops, 0);
    assert_eq!(p.a.stats().retransmitted_segments, 0);
    // Slow start ends by diff > gamma, not by a loss: ssthresh is set without any recovery.
    let exit = p.trace.iter().position(|s| s.ssthresh != u64::MAX).unwrap();
    assert!(p.trace.iter().all(|s| !s.recovery));
    // After slow start (which Vegas leaves early, on transient queueing in its bursts) the
    // window grows by at most one segment per RTT (100 ms here) and never queues more than
    // beta segments beyond the BDP.
    let after = &p.trace[exit..];
    for w in after.windows(2) {
        assert!(w[1].cwnd <= w[0].cwnd + mss, "{:?} -> {:?}", w[0], w[1]);
        assert!(w[1].cwnd <= BDP + 16 * mss, "{:?}", w[1]);
    }
    let (first, last) = (after[0], after[after.len() - 1]);
    let rtts = (last.t - first.t) / (100 * MS);
    assert!(last.cwnd > first.cwnd, "it grows toward the BDP");
    assert!(
        last.cwnd - first.cwnd <= (rtts + 1) * mss,
        "at most one segment per RTT"
    );
    // NewReno in the same pipe fills the queue and loses.
    let n = transfer(
        &TcpConfig {
            timestamps: true,
            ..cfg(Kind::Newreno)
        },
        &[],
        Some(60),
    );
    assert!(n.queue_drops > 0 && n.a.stats().retransmitted_segments > 0);
    assert!(p.done() < n.done());
}

#[test]
fn westwood_ssthresh_is_bandwidth_times_rtt_min() {
    // With a quick filter (gain 0.5) the estimate settles within the transfer: after the loss
    // ssthresh = BWE x RTTmin = 10 Mb/s x 100.8 ms = 126 000 B, whatever the flight, where
    // NewReno takes half the flight (the receive window caps it at 300 or 200 kB here).
    let rtt_min = 100 * MS + GAP;
    let expect = 1_250_000.0 * rtt_min as f64 / SEC as f64;
    for rcv in [300_000, 200_000] {
        let mut c = cfg(Kind::Westwood);
        c.cc.westwood.filter_gain = 0.5;
        c.receive_buffer = crate::units::Bytes(rcv);
        let p = transfer(&c, &[1200], None);
        assert_eq!(p.a.rtt().min_rtt(), Some(rtt_min));
        let (_, at, _) = around_first_loss(&p);
        assert_eq!(at.flight, rcv);
        let err = (at.ssthresh as f64 - expect).abs() / expect;
        assert!(err < 0.03, "ssthresh {} vs {expect}", at.ssthresh);
        let n = transfer(
            &TcpConfig {
                receive_buffer: c.receive_buffer,
                ..cfg(Kind::Newreno)
            },
            &[1200],
            None,
        );
        assert_eq!(around_first_loss(&n).1.ssthresh, rcv / 2);
    }
}

#[test]
fn highspeed_decreases_by_b_of_w_and_grows_by_a_of_w() {
    let p = transfer(&cfg(Kind::Highspeed), &[300], None);
    let n = transfer(&cfg(Kind::Newreno), &[300], None);
    let (_, at, exit) = around_first_loss(&p);
    // RFC 3649: ssthresh = (1 - b(w)) x FlightSize, w = FlightSize in segments (162 here:
    // b = 0.4246, far less than Reno's 0.5).
    let w = at.flight as f64 / MSS as f64;
    let b = crate::cc::HighSpeedParams::default().b(w);
    assert!(w > 38.0 && b < 0.45);
    assert_eq!(at.ssthresh, ((1.0 - b) * at.flight as f64).round() as u64);
    // In avoidance a(w) > 1 segment per round trip: it outgrows NewReno after the loss.
    let (_, _, n_exit) = around_first_loss(&n);
    let gain = p.cwnd_at(exit.t + SEC) - exit.cwnd;
    let n_gain = n.cwnd_at(n_exit.t + SEC) - n_exit.cwnd;
    assert!(gain > 2 * n_gain, "{gain} vs {n_gain}");
    assert!(p.done() < n.done());
}

#[test]
fn hybla_slow_start_is_two_to_the_rho_per_ack() {
    let p = transfer(&cfg(Kind::Hybla), &[], None);
    let n = transfer(&cfg(Kind::Newreno), &[], None);
    // rho = RTT / 25 ms with RTT = the handshake's 100.8 ms: the first ACK (of two segments,
    // delayed ACK) adds 2^rho - 1 = 15.36 segments where NewReno adds one.
    let rho = (100 * MS + GAP) as f64 / (25 * MS) as f64;
    let first = p.trace.iter().find(|s| s.cwnd != 10 * MSS as u64).unwrap();
    let expect = 10_000 + ((rho.exp2() - 1.0) * 1000.0) as u64;
    assert!(
        first.cwnd.abs_diff(expect) <= 1,
        "{} vs {expect}",
        first.cwnd
    );
    assert_eq!(
        n.trace.iter().find(|s| s.cwnd != 10_000).unwrap().cwnd,
        11_000
    );
    assert!(p.done() * 10 < n.done() * 9, "{} vs {}", p.done(), n.done());
}

#[test]
fn scalable_recovers_faster_than_newreno() {
    let p = transfer(&cfg(Kind::Scalable), &[300], None);
    let n = transfer(&cfg(Kind::Newreno), &[300], None);
    let (_, at, exit) = around_first_loss(&p);
    let (_, n_at, n_exit) = around_first_loss(&n);
    // Kelly: ssthresh = 0.875 x FlightSize, NewReno 0.5 x.
    assert_eq!(at.ssthresh, (0.875 * at.flight as f64).round() as u64);
    assert_eq!(n_at.ssthresh, n_at.flight / 2);
    // Multiplicative increase: about x1.01 per round trip (~9 round trips of ~110 ms in 1 s),
    // while NewReno adds half a segment per round trip (one per two delayed ACKs).
    let ratio = p.cwnd_at(exit.t + SEC) as f64 / exit.cwnd as f64;
    assert!((1.05..1.2).contains(&ratio), "{ratio}");
    let gain = p.cwnd_at(exit.t + SEC) - exit.cwnd;
    let n_gain = n.cwnd_at(n_exit.t + SEC) - n_exit.cwnd;
    assert!(gain > 2 * n_gain, "{gain} vs {n_gain}");
    assert!(p.done() * 10 < n.done() * 9, "{} vs {}", p.done(), n.done());
}

#[test]
fn bic_binary_search_returns_to_w_max() {
    let p = transfer(&cfg(Kind::Bic), &[300], None);
    let n = transfer(&cfg(Kind::Newreno), &[300], None);
    let (before, at, exit) = around_first_loss(&p);
    // W_max = the window in use at the loss; ssthresh = 0.8 x FlightSize.
    let w_max = before.cwnd.min(at.flight);
    assert_eq!(at.ssthresh, (0.8 * at.flight as f64).round() as u64);
    // Binary search closes 1/4 of the distance each round trip: back to 95 % of W_max within
    // a second; NewReno is still near half of it.
    assert!(p.cwnd_at(exit.t + SEC) * 100 >= w_max * 95);
    let (_, _, n_exit) = around_first_loss(&n);
    assert!(n.cwnd_at(n_exit.t + SEC) * 100 < w_max * 60);
}

#[test]
fn cubic_follows_w_cubic_after_a_loss() {
    let p = transfer(&cfg(Kind::Cubic), &[300], None);
    let (before, at, exit) = around_first_loss(&p);
    // RFC 9438 4.6: ssthresh = 0.7 x FlightSize; W_max = the window before the loss.
    assert_eq!(at.ssthresh, (0.7 * at.flight as f64).round() as u64);
    let w_max = before.cwnd.min(at.flight) as f64 / MSS as f64;
    // The epoch starts at the first ACK after recovery with cwnd_epoch = the exit window:
    // K = cbrt((W_max - cwnd_epoch)/C); one second later cwnd ~ W_cubic(1 s) (eq. 1).
    let epoch = exit.cwnd as f64 / MSS as f64;
    let k = ((w_max - epoch) / 0.4).cbrt();
    let w1 = 0.4 * (1.0 - k).powi(3) + w_max;
    let got = p.cwnd_at(exit.t + SEC) as f64 / MSS as f64;
    assert!(
        (got / w1 - 1.0).abs() < 0.03,
        "cwnd {got} vs W_cubic(1 s) {w1}"
    );
    assert!(got < w_max, "still in the concave region");
}

#[test]
fn config_errors_name_the_field_path_and_tables_may_be_partial() {
    use crate::cc::{CubicParams, VegasParams, WestwoodParams};
    use serde::de::{value::MapDeserializer, Deserialize};
    let mut c = TcpConfig::default();
    c.cc.vegas = VegasParams {
        alpha: 5.0,
        ..Default::default()
    };
    assert!(c.validate().unwrap_err().path == "vegas.alpha");
    let mut c = TcpConfig::default();
    c.cc.cubic = CubicParams {
        beta: 1.5,
        ..Default::default()
    };
    assert!(c.validate().unwrap_err().path == "cubic.beta");
    let mut c = TcpConfig::default();
    c.cc.westwood = WestwoodParams {
        min_interval: crate::units::Duration(0),
        ..Default::default()
    };
    assert!(c.validate().unwrap_err().path == "westwood.min_interval");
    assert!(TcpConfig::default().validate().is_ok());
    // `[flows.tcp.scalable] beta = 0.86` alone: the other fields keep their defaults.
    type E = serde::de::value::Error;
    let d = MapDeserializer::<_, E>::new([("beta", 0.86f64)].into_iter());
    let s = crate::cc::ScalableParams::deserialize(d).unwrap();
    assert_eq!((s.alpha, s.beta, s.low_window), (1.01, 0.86, 16));
    let d = MapDeserializer::<_, E>::new([("betta", 0.86f64)].into_iter());
    let e = crate::cc::ScalableParams::deserialize(d).unwrap_err();
    assert!(e.to_string().contains("unknown field `betta`"), "{e}");
    // Every table is in the schema users see.
    let schema = serde_json_free_schema();
    for name in [
        "vegas",
        "westwood",
        "highspeed",
        "hybla",
        "scalable",
        "bic",
        "cubic",
    ] {
        assert!(schema.contains(&format!("\"{name}\"")), "{name}");
    }
}

/// The TcpConfig JSON schema as text (Debug of the schema object: no serde_json needed).
fn serde_json_free_schema() -> String {
    format!("{:?}", schemars::schema_for!(TcpConfig))
}
