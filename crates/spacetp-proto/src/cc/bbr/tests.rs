//! BBR's behaviours over the two-endpoint pipe, checked against what `tcp_bbr.c` and the
//! BBR paper say it does: the state sequence, a queue kept near one BDP where a loss-based
//! controller fills the buffer, indifference to random loss, ProbeRTT's dip, and the
//! window restored after recovery.

use super::{Bbr, BbrMode, BbrParams};
use crate::cc::{
    AckEvent, CongestionControl, ControlInput, ControlRequest, ControllerFactory, Window,
};
use crate::config::{CongestionControlKind, RecoveryKind, TcpConfig};
use crate::testing::Pipe;
use crate::time::{Time, MS, SEC};
use crate::units::Bytes;
use std::sync::{Arc, Mutex};

const SEG: u32 = 1000;

/// Each change of state with its time.
type Modes = Arc<Mutex<Vec<(Time, BbrMode)>>>;

/// Bbr that records its changes of state.
struct Recorded {
    bbr: Bbr,
    modes: Modes,
}

impl CongestionControl for Recorded {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn wants_delivery_rate(&self) -> bool {
        true
    }
    fn controls_window(&self) -> bool {
        true
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.bbr.pacing_rate()
    }
    fn pacing_burst(&self, rate: f64, min_rtt: Option<Time>, mss: u64) -> u64 {
        self.bbr.pacing_burst(rate, min_rtt, mss)
    }
    fn linux_tso(&self) -> bool {
        self.bbr.linux_tso()
    }
    fn on_ack(&mut self, w: &mut Window, ev: &AckEvent) {
        self.bbr.on_ack(w, ev)
    }
    fn ssthresh_after_loss(&mut self, w: &Window, flight: u64, now: Time) -> u64 {
        self.bbr.ssthresh_after_loss(w, flight, now)
    }
    fn on_timeout(&mut self, w: &mut Window, flight: u64, now: Time) {
        self.bbr.on_timeout(w, flight, now)
    }
    fn cong_control(&mut self, w: &mut Window, ev: &AckEvent, c: &ControlInput) -> ControlRequest {
        let r = self.bbr.cong_control(w, ev, c);
        let mut modes = self.modes.lock().unwrap();
        if modes.last().map(|m| m.1) != Some(self.bbr.mode()) {
            modes.push((ev.now, self.bbr.mode()));
        }
        r
    }
}

fn linux_like(cc: CongestionControlKind) -> TcpConfig {
    TcpConfig {
        congestion_control: cc,
        recovery: RecoveryKind::Sack,
        sack: true,
        timestamps: true,
        receive_buffer: Bytes(4_000_000),
        send_buffer: Bytes(4_000_000),
        min_rto: crate::units::Duration(200 * MS),
        ..TcpConfig::default()
    }
}

/// 1000-byte segments through a bottleneck of one per ms (1 MB/s), 50 ms each way: the
/// BDP is 100 segments; the bottleneck queue is unbounded unless the test bounds it.
fn pipe(cfg: &TcpConfig, bytes: u64) -> Pipe {
    let mut p = Pipe::new(cfg, SEG, bytes);
    p.gap_ab = MS;
    p
}

/// A pipe whose sender runs a recorded BBR.
fn bbr_pipe(bytes: u64) -> (Pipe, Modes) {
    let mut p = pipe(&linux_like(CongestionControlKind::Bbr), bytes);
    let modes = Arc::new(Mutex::new(vec![]));
    p.a.set_controller(Box::new(Recorded {
        bbr: Bbr::new(&BbrParams::default()),
        modes: modes.clone(),
    }));
    (p, modes)
}

fn max_flight_after(p: &Pipe, t: Time) -> u64 {
    p.trace
        .iter()
        .filter(|s| s.t >= t)
        .map(|s| s.flight)
        .max()
        .unwrap_or(0)
}

fn goodput(p: &Pipe, bytes: u64) -> f64 {
    bytes as f64 / (p.done() as f64 / SEC as f64)
}

#[test]
fn startup_fills_the_pipe_then_drain_then_probe_bw() {
    let (mut p, modes) = bbr_pipe(20_000_000);
    p.run(60 * SEC);
    let modes = modes.lock().unwrap().clone();
    let seq: Vec<BbrMode> = modes.iter().map(|m| m.1).collect();
    assert_eq!(
        &seq[..3],
        &[BbrMode::Startup, BbrMode::Drain, BbrMode::ProbeBw],
        "{modes:?}"
    );
    // Startup doubles from 10 segments to the 100-segment BDP in about 4 rounds, then needs 3
    // rounds without 25% growth; its 2.89 gain queues up to ~1.9 BDP, so those last rounds
    // take up to ~290 ms each: leaving it takes under 2 s (without the full-pipe estimate
    // it would never leave).
    let drain_at = modes[1].0;
    assert!(drain_at < 2 * SEC, "Drain began at {drain_at} ns");
    // Drain lasts about one round.
    let probe_at = modes[2].0;
    assert!(probe_at - drain_at < 300 * MS, "{modes:?}");
    // Goodput: the bottleneck (1 MB/s payload) less the startup, the 1% pacing margin and
    // one ProbeRTT (a queue-free path never lowers the minimum, so Linux probes every 10 s).
    let g = goodput(&p, 20_000_000);
    assert!(g > 0.90e6, "goodput {g} B/s");
}

#[test]
fn bbr_keeps_in_flight_near_two_bdp_where_a_loss_based_sender_fills_the_buffer() {
    // An unbounded bottleneck queue (a bufferbloated path) and a 4 MB receive window.
    let (mut p, _) = bbr_pipe(20_000_000);
    p.run(60 * SEC);
    let bdp = 100 * SEG as u64;
    // cwnd_gain 2 x BDP plus the quantization budget (a few segments) bounds ProbeBW.
    let bbr_max = max_flight_after(&p, 3 * SEC);
    assert!(
        bbr_max <= 2 * bdp + 12 * SEG as u64,
        "BBR in flight {bbr_max}"
    );
    let mut cubic = pipe(&linux_like(CongestionControlKind::Cubic), 20_000_000);
    cubic.run(60 * SEC);
    let cubic_max = max_flight_after(&cubic, 3 * SEC);
    assert!(
        cubic_max > 5 * bdp,
        "CUBIC fills the buffer: in flight {cubic_max}"
    );
}

#[test]
fn one_percent_random_loss_slows_bbr_far_less_than_a_loss_based_sender() {
    let bytes = 10_000_000;
    // Every 100th data segment lost (from the 50th on), whatever it carries.
    let drops: Vec<u64> = (0..200).map(|k| 50 + 100 * k).collect();
    let (mut b, _) = bbr_pipe(bytes);
    b.drop_ab = drops.clone();
    b.run(300 * SEC);
    let mut c = pipe(&linux_like(CongestionControlKind::Cubic), bytes);
    c.drop_ab = drops;
    c.run(300 * SEC);
    let (gb, gc) = (goodput(&b, bytes), goodput(&c, bytes));
    // BBR does not read random loss as congestion; a loss per round keeps it in recovery
    // (packet conservation for a round each time), which costs it about a quarter here.
    assert!(gb > 0.7e6, "BBR goodput {gb} B/s");
    assert!(gc < 0.5 * gb, "CUBIC goodput {gc} B/s against BBR's {gb}");
}

#[test]
fn probe_rtt_dips_to_four_segments_for_200_ms_when_min_rtt_is_not_seen_for_10_s() {
    // The path lengthens by 20 ms each way after 2 s: the 100 ms minimum is never seen
    // again, so 10 s after it was last measured BBR enters ProbeRTT to measure anew.
    let (mut p, modes) = bbr_pipe(40_000_000);
    p.run(2 * SEC);
    p.delay += 20 * MS;
    p.run(30 * SEC);
    let modes = modes.lock().unwrap().clone();
    let (enter, _) = *modes
        .iter()
        .find(|m| m.1 == BbrMode::ProbeRtt)
        .unwrap_or_else(|| panic!("no ProbeRTT: {modes:?}"));
    assert!(
        (10 * SEC..13 * SEC).contains(&enter),
        "ProbeRTT at {enter} ns: {modes:?}"
    );
    let leave = modes
        .iter()
        .find(|m| m.0 > enter && m.1 != BbrMode::ProbeRtt)
        .expect("ProbeRTT ends")
        .0;
    // At least 200 ms with 4 segments in flight, plus the time to drain to them.
    assert!(
        (200 * MS..600 * MS).contains(&(leave - enter)),
        "ProbeRTT lasted {} ms",
        (leave - enter) / MS
    );
    let dip = p.trace.iter().filter(|s| s.t > enter && s.t < leave);
    assert!(
        dip.clone().all(|s| s.cwnd <= 4 * SEG as u64),
        "cwnd capped at 4 segments"
    );
    // The next ProbeRTT comes 10 s after this one ended (`bbr_check_probe_rtt_done` stamps
    // the minimum then), not sooner, and not later: samples equal to the minimum do not
    // renew it (Linux compares strictly).
    let next = modes
        .iter()
        .find(|m| m.0 > leave && m.1 == BbrMode::ProbeRtt)
        .expect("a second ProbeRTT")
        .0;
    assert!(
        (10 * SEC..10 * SEC + 500 * MS).contains(&(next - leave)),
        "next ProbeRTT {} ms after the first ended: {modes:?}",
        (next - leave) / MS
    );
}

#[test]
fn after_a_single_loss_the_window_is_restored_not_halved() {
    let (mut p, _) = bbr_pipe(10_000_000);
    p.drop_ab = vec![3000];
    p.run(60 * SEC);
    let i = p.first_recovery();
    let before = p.trace[i - 1].cwnd;
    let end = p.recovery_end(i);
    let after = p.trace[end].cwnd;
    assert!(
        after >= before,
        "cwnd {before} before recovery, {after} after"
    );
    // A loss-based sender halves (CUBIC: x0.7).
    let mut c = pipe(&linux_like(CongestionControlKind::Cubic), 10_000_000);
    c.drop_ab = vec![3000];
    c.run(60 * SEC);
    let i = c.first_recovery();
    let (before, after) = (c.trace[i - 1].cwnd, c.trace[c.recovery_end(i)].cwnd);
    assert!(after < before * 3 / 4, "CUBIC: {before} -> {after}");
}

#[test]
fn data_leaves_paced_in_departures_of_two_segments_as_linux_sizes_them_at_this_rate() {
    // In ProbeBW the sender paces at ~0.99 x 1 MB/s: about 1 kB per ms, so Linux's TSO
    // autosizing gives BBR's minimum of 2 segments per departure; the next departure waits
    // until both have left at the pacing rate (2 x 1000 bytes: Linux's TCP paces the
    // headerless length).
    let (mut p, modes) = bbr_pipe(20_000_000);
    p.run(60 * SEC);
    let probe_at = modes.lock().unwrap()[2].0;
    let mut departures: Vec<(Time, u64)> = vec![];
    for l in p
        .log_ab
        .iter()
        .filter(|l| l.0 > probe_at + SEC && l.2 > 0 && !l.3)
    {
        match departures.last_mut() {
            Some(d) if d.0 == l.0 => d.1 += 1,
            _ => departures.push((l.0, 1)),
        }
    }
    assert!(departures.iter().all(|d| d.1 <= 2), "{departures:?}");
    let pairs = departures.iter().filter(|d| d.1 == 2).count();
    assert!(
        pairs * 10 > departures.len() * 9,
        "{pairs} of {}",
        departures.len()
    );
    // The fastest phase paces at 1.25 x 0.99 x bw, 1.2375 MB/s: 808 ns a byte.
    for w in departures.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(
            gap >= w[0].1 * 1000 * 808,
            "{gap} ns after {} segments",
            w[0].1
        );
    }
}

#[test]
fn settings_out_of_range_name_the_field() {
    let bad = BbrParams {
        cwnd_gain: 0.5,
        ..BbrParams::default()
    };
    assert_eq!(bad.validate().unwrap_err().path, "cwnd_gain");
    let bad = BbrParams {
        probe_rtt_time: crate::units::Duration(20 * SEC),
        ..BbrParams::default()
    };
    assert_eq!(bad.validate().unwrap_err().path, "probe_rtt_time");
}

#[test]
fn a_paced_departure_carries_what_linux_sizes_a_tso_packet_to() {
    // tcp_tso_segs with bbr_min_tso_segs, 1448-byte segments. The kernel here (6.18, bbr
    // across `spacetp emulate` at 50 Mb/s and 40 ms, its departures seen on the TUN device)
    // sent 4 segments at a time about every 0.97 ms, 5 while probing (gain 1.25) and 3 while
    // draining (0.75); at 10 Mb/s and 600 ms, 1 while the pacing rate was below 1.2 Mb/s,
    // then 2.
    let segs = |mbps: f64, gain: f64, rtt: Time| {
        Bbr::tso_segs(mbps * 1e6 / 8.0 * gain * 0.99, Some(rtt), 1448)
    };
    assert_eq!(segs(50.0, 1.0, 40 * MS), 4);
    assert_eq!(segs(50.0, 1.25, 40 * MS), 5);
    assert_eq!(segs(50.0, 0.75, 40 * MS), 3);
    assert_eq!(segs(10.0, 1.0, 600 * MS), 2);
    assert_eq!(segs(1.0, 1.0, 600 * MS), 1);
    // A short min RTT adds a GSO packet halved per 512 us: 1 ms -> 32 607 bytes more.
    // rate >> 10, not / 1000: 4.4 MB/s gives 4 296 bytes, 2 segments (4 400 would be 3).
    assert_eq!(Bbr::tso_segs(4.4e6, Some(40 * MS), 1448), 2);
    assert_eq!(segs(10.0, 1.0, MS), (1208 + 32_607) / 1448);
    assert_eq!(
        segs(10.0, 1.0, 9 * MS),
        2,
        "nothing added from 8.2 ms: 65 215 >> 16 = 0"
    );
    assert_eq!(
        Bbr::tso_segs(1.2375e6, None, 1448),
        2,
        "nothing added without an RTT"
    );
    // At most one GSO packet (65 215 bytes of payload).
    assert_eq!(segs(10_000.0, 1.0, 600 * MS), 45);
    assert_eq!(Bbr::tso_segs(f64::INFINITY, None, 1448), 45);
}
