//! Pacing (`max_pacing_rate`, a controller's pacing rate) and delivery-rate samples handed
//! to a controller that asks for them (draft-cheng-iccrg-delivery-rate-estimation).

use super::*;
use crate::testing::Pipe;
use crate::time::{MS, SEC};

#[test]
fn a_max_pacing_rate_spaces_data_segments_at_that_rate_instead_of_bursting() {
    // 1 Mb/s cap, 1000-byte payloads: a segment and its 52 header bytes every 8.416 ms,
    // whatever the window allows; without the cap the initial window leaves in one burst.
    let gaps = |cfg: &TcpConfig| {
        let mut p = Pipe::new(cfg, 1000, 30_000);
        p.run(60 * SEC);
        assert!(p.done_at.is_some(), "the transfer completes");
        let times: Vec<Time> = p.log_ab.iter().filter(|l| l.2 > 0).map(|l| l.0).collect();
        times
            .windows(2)
            .map(|w| w[1] - w[0])
            .take(8)
            .collect::<Vec<_>>()
    };
    let burst = gaps(&TcpConfig::default());
    assert!(burst.iter().take(4).all(|&g| g == 0), "{burst:?}");
    let paced = gaps(&TcpConfig {
        max_pacing_rate: Some(crate::units::Rate(1e6)),
        ..TcpConfig::default()
    });
    assert!(paced.iter().all(|&g| g >= 8_416_000), "{paced:?}");
    assert_eq!(paced[0], 8_416_000, "{paced:?}");
}

/// NewReno that asks for delivery-rate samples and keeps them, optionally pacing.
struct RateProbe {
    inner: crate::cc::NewReno,
    samples: std::sync::Arc<std::sync::Mutex<Vec<crate::cc::RateSample>>>,
    pacing: Option<f64>,
}

impl crate::cc::CongestionControl for RateProbe {
    fn name(&self) -> &'static str {
        "rate-probe"
    }
    fn wants_delivery_rate(&self) -> bool {
        true
    }
    fn pacing_rate(&self) -> Option<f64> {
        self.pacing
    }
    fn on_any_ack(&mut self, ev: &crate::cc::AckEvent, _dup: bool) {
        self.samples.lock().unwrap().extend(ev.rate);
    }
    fn on_ack(&mut self, w: &mut crate::cc::Window, ev: &crate::cc::AckEvent) {
        self.inner.on_ack(w, ev)
    }
    fn ssthresh_after_loss(&mut self, w: &crate::cc::Window, flight: u64, now: Time) -> u64 {
        self.inner.ssthresh_after_loss(w, flight, now)
    }
}

#[test]
fn a_controller_that_asks_is_handed_the_bottleneck_rate_and_can_pace() {
    // 1000-byte segments through a bottleneck of one segment per 2 ms (500 kB/s payload),
    // 50 ms each way: once the window exceeds the pipe, samples read the bottleneck.
    let run = |pacing: Option<f64>| {
        let samples = std::sync::Arc::new(std::sync::Mutex::new(vec![]));
        let mut p = Pipe::new(&TcpConfig::default(), 1000, 2_000_000);
        p.gap_ab = 2 * MS;
        p.a.set_controller(Box::new(RateProbe {
            inner: crate::cc::NewReno,
            samples: samples.clone(),
            pacing,
        }));
        p.run(120 * SEC);
        assert!(p.done_at.is_some());
        let s = samples.lock().unwrap().clone();
        (p, s)
    };
    let (_, samples) = run(None);
    assert!(samples.len() > 500, "{} samples", samples.len());
    let late: Vec<f64> = samples[samples.len() / 2..]
        .iter()
        .map(|s| s.rate())
        .collect();
    let mean = late.iter().sum::<f64>() / late.len() as f64;
    assert!((mean - 500_000.0).abs() / 500_000.0 < 0.05, "mean {mean}");
    // Paced at 250 kB/s (below the bottleneck) by the controller itself: data segments leave
    // 4 ms apart, their payload at the rate (Linux's own pacing counts no headers).
    let (p, _) = run(Some(250_000.0));
    let times: Vec<Time> = p.log_ab.iter().filter(|l| l.2 > 0).map(|l| l.0).collect();
    let min_gap = times.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    assert!(min_gap >= 4_000_000, "min gap {min_gap}");
}

/// NewReno that sets cwnd itself (as BBR does) and adds up what each ACK says it delivered.
struct DeliveredCounter {
    total: std::sync::Arc<std::sync::Mutex<u64>>,
}

impl crate::cc::CongestionControl for DeliveredCounter {
    fn name(&self) -> &'static str {
        "delivered-counter"
    }
    fn wants_delivery_rate(&self) -> bool {
        true
    }
    fn controls_window(&self) -> bool {
        true
    }
    fn on_ack(&mut self, _w: &mut crate::cc::Window, _ev: &crate::cc::AckEvent) {}
    fn cong_control(
        &mut self,
        w: &mut crate::cc::Window,
        _ev: &crate::cc::AckEvent,
        c: &crate::cc::ControlInput,
    ) -> crate::cc::ControlRequest {
        *self.total.lock().unwrap() += c.acked_sacked;
        w.cwnd = 20 * w.mss;
        crate::cc::ControlRequest::default()
    }
}

#[test]
fn each_byte_is_counted_delivered_once_though_sacked_before_the_cumulative_ack_covers_it() {
    // RFC 6937 DeliveredData: a hole filled by a retransmission makes the cumulative ACK
    // jump over bytes SACKed earlier; they were delivered then, not again now.
    let total = std::sync::Arc::new(std::sync::Mutex::new(0));
    let cfg = TcpConfig {
        sack: true,
        recovery: crate::config::RecoveryKind::Sack,
        ..TcpConfig::default()
    };
    let bytes = 100_000;
    let mut p = Pipe::new(&cfg, 1000, bytes);
    p.gap_ab = MS;
    p.drop_ab = vec![5, 30];
    p.a.set_controller(Box::new(DeliveredCounter {
        total: total.clone(),
    }));
    p.run(60 * SEC);
    assert!(p.done_at.is_some());
    let counted = *total.lock().unwrap();
    // The data and the FIN: every position once.
    assert_eq!(counted, bytes + 1, "delivered counted {counted}");
}

/// NewReno paced at a fixed rate, `burst` segments at each departure (as Linux's TSO/GSO
/// packets, or the BBR draft's send quanta, leave).
struct BurstPacer {
    rate: f64,
    burst: u64,
    /// Its departures are Linux TSO packets (Linux's deferral applies).
    linux: bool,
}

impl crate::cc::CongestionControl for BurstPacer {
    fn name(&self) -> &'static str {
        "burst-pacer"
    }
    fn pacing_rate(&self) -> Option<f64> {
        Some(self.rate)
    }
    fn pacing_burst(&self, rate: f64, _min_rtt: Option<Time>, mss: u64) -> u64 {
        assert_eq!(
            (rate, mss),
            (self.rate, 1000),
            "the connection's rate and segment size"
        );
        self.burst
    }
    fn linux_tso(&self) -> bool {
        self.linux
    }
    fn on_ack(&mut self, w: &mut crate::cc::Window, ev: &crate::cc::AckEvent) {
        crate::cc::NewReno.on_ack(w, ev)
    }
}

/// `bytes` in 1000-byte segments from a sender paced at 1 MB/s, `burst` segments a departure.
fn burst_pipe(burst: u64, bytes: u64) -> Pipe {
    let mut p = Pipe::new(&TcpConfig::default(), 1000, bytes);
    p.a.set_controller(Box::new(BurstPacer {
        rate: 1e6,
        burst,
        linux: false,
    }));
    p
}

/// The data segments' departure times in groups of one instant: (time, segments).
fn departures(p: &Pipe) -> Vec<(Time, u64)> {
    let mut groups: Vec<(Time, u64)> = vec![];
    for &(t, _, len, _, _) in &p.log_ab {
        match groups.last_mut() {
            Some(g) if len > 0 && g.0 == t => g.1 += 1,
            _ if len > 0 => groups.push((t, 1)),
            _ => {}
        }
    }
    groups
}

#[test]
fn a_paced_burst_leaves_at_one_instant_and_the_next_waits_until_all_of_it_has_at_the_rate() {
    // 1 MB/s, 1000-byte payloads: three segments leave together, and the next three 3 ms
    // later (their payload at the rate: the controller paces, as Linux's TCP does, by the
    // headerless length); the initial window of 10 is 3 + 3 + 3 + 1.
    let mut p = burst_pipe(3, 200_000);
    p.run(60 * SEC);
    assert!(p.done_at.is_some(), "the transfer completes");
    let d = departures(&p);
    let first: Vec<u64> = d.iter().take(4).map(|g| g.1).collect();
    assert_eq!(first, [3, 3, 3, 1], "{d:?}");
    assert_eq!(d[1].0 - d[0].0, 3_000_000, "{d:?}");
    for w in d.windows(2) {
        assert!(w[0].1 <= 3, "a departure of {} segments: {d:?}", w[0].1);
        let gap = w[1].0 - w[0].0;
        assert!(
            gap >= w[0].1 * 1_000_000,
            "{gap} ns after {} segments",
            w[0].1
        );
    }
    assert!(d.iter().filter(|g| g.1 == 3).count() > 50, "{d:?}");
}

#[test]
fn a_burst_of_one_paces_each_segment_on_its_own() {
    // The default: every departure is one segment, 1 ms apart at 1 MB/s.
    let mut p = burst_pipe(1, 50_000);
    p.run(60 * SEC);
    let d = departures(&p);
    assert!(d.iter().all(|g| g.1 == 1), "{d:?}");
    assert!(d.windows(2).all(|w| w[1].0 - w[0].0 >= 1_000_000), "{d:?}");
}

#[test]
fn a_segment_sent_before_its_departure_time_leaves_alone_and_what_follows_waits() {
    // A loss probe is not held by pacing. If it opened a departure of 3, two more segments
    // could follow it at once, before their time.
    let mut p = burst_pipe(3, 10_000);
    let c = &mut p.a;
    for i in 0..3 {
        assert!(c.pacing_allows(0), "a departure of three at 0");
        c.pace(0, i * 1000, 1000, false);
    }
    assert!(!c.pacing_allows(0), "the fourth waits");
    // A probe at 1 ms, early: the next departure still waits, now until 4 ms.
    c.pace(MS, 3000, 1000, false);
    assert!(!c.pacing_allows(MS), "nothing follows the early probe");
    assert!(!c.pacing_allows(4 * MS - 1));
    assert!(c.pacing_allows(4 * MS), "on time again at 4 ms");
    c.pace(4 * MS, 4000, 1000, false);
    assert!(c.pacing_allows(4 * MS), "and a full departure then");
}

#[test]
fn max_pacing_rate_alone_counts_each_segments_headers_as_the_fq_qdisc_does() {
    // NewReno does not pace itself: the cap paces each 1000-byte segment with its 52 header
    // bytes, 1.052 ms at 1 MB/s.
    let cfg = TcpConfig {
        max_pacing_rate: Some(crate::units::Rate(8e6)),
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(&cfg, 1000, 50_000);
    p.run(60 * SEC);
    let d = departures(&p);
    assert!(d.iter().all(|g| g.1 == 1), "{d:?}");
    assert_eq!(d[1].0 - d[0].0, 1_052_000, "{d:?}");
}

/// Run `p` to completion, with at least `resent` retransmissions, and check that its
/// departures held one contiguous range of one kind: segments sent at one instant follow one
/// another and are all new data or all retransmissions.
fn assert_one_range_of_one_kind(mut p: Pipe, resent: usize) {
    p.run(300 * SEC);
    assert!(p.done_at.is_some(), "the transfer completes");
    let retransmissions = p.log_ab.iter().filter(|l| l.2 > 0 && l.3).count();
    assert!(
        retransmissions >= resent,
        "{retransmissions} retransmissions"
    );
    let data: Vec<_> = p.log_ab.iter().filter(|l| l.2 > 0).collect();
    for w in data.windows(2) {
        let (a, b) = (w[0], w[1]);
        if a.0 == b.0 {
            assert_eq!(
                b.3, a.3,
                "one kind per departure at {} ns: {a:?} then {b:?}",
                a.0
            );
            assert_eq!(b.1, a.1 + a.2 as u64, "one contiguous range at {} ns", a.0);
        }
    }
}

#[test]
fn a_departure_carries_one_contiguous_range_of_new_data_or_of_retransmissions() {
    // Linux paces skbs, and an skb holds one range of its write queue: new data, or a
    // retransmission. Losses make recovery resend while new data waits to go; neither may
    // ride in the other's departure, nor a range that is not the next one's continuation.
    let mut p = burst_pipe(3, 400_000);
    p.drop_ab = vec![40, 41, 90, 150, 152, 154];
    assert_one_range_of_one_kind(p, 6);
}

#[test]
fn with_sack_a_held_retransmission_leads_the_next_departure_and_new_data_waits() {
    // SACK recovery may choose a hole that does not continue the departure under way while
    // the window still has room for new data: the hole waits for the next departure, and
    // new data may not leave before it at the same instant.
    let cfg = TcpConfig {
        recovery: crate::config::RecoveryKind::Rack,
        sack: true,
        ..TcpConfig::default()
    };
    let mut p = Pipe::new(&cfg, 1000, 600_000);
    p.a.set_controller(Box::new(BurstPacer {
        rate: 1e6,
        burst: 3,
        linux: false,
    }));
    p.drop_ab = (40..400).step_by(7).collect();
    assert_one_range_of_one_kind(p, 40);
}

#[test]
fn linux_defers_a_departure_its_window_would_cut_short_until_an_ack_opens_more() {
    // tcp_tso_should_defer (Linux 6.18): with room for 2 of a 4-segment TSO packet, less
    // than a third of the window, the last departure recent and the oldest data in flight
    // due to be acknowledged within min(srtt / 2, 1 ms), Linux waits for that ACK instead of
    // sending 2.
    let linux = |linux| {
        Box::new(BurstPacer {
            rate: 1e6,
            burst: 4,
            linux,
        })
    };
    let mut p = burst_pipe(4, 1_000_000);
    p.a.set_controller(linux(true));
    p.run(400 * MS);
    let c = &mut p.a;
    let srtt = c.rtt.srtt().expect("a round trip measured");
    let head = c.sent.oldest_sent_at().expect("data in flight");
    c.win.cwnd = 30_000;
    c.snd_wnd = 1 << 20;
    let now = head + srtt - MS; // the head's ACK is due in 1 ms
    c.pacing.as_mut().unwrap().next_departure = now;
    assert!(c.tso_defers(now, 2000), "room for half a TSO packet: wait");
    assert!(!c.tso_defers(now, 4000), "room for a whole one: send");
    assert!(
        !c.tso_defers(now - 1, 2000),
        "the head's ACK is over 1 ms away"
    );
    assert!(
        !c.tso_defers(now + MS + 1, 2000),
        "the last departure is over 1 ms past"
    );
    c.win.cwnd = 6000;
    assert!(
        !c.tso_defers(now, 2000),
        "a third of the window is room enough"
    );
    c.win.cwnd = 30_000;
    let saved = c.pacing;
    c.pace(now, c.snd_nxt, 1000, false);
    assert!(
        !c.tso_defers(now, 2000),
        "a departure under way is not a new packet"
    );
    c.pacing = saved;
    let (snd_nxt, data_end) = (c.snd_nxt, c.data_end);
    c.snd_nxt = c.snd_max - 1000;
    assert!(!c.tso_defers(now, 2000), "resending after a timeout");
    c.snd_nxt = snd_nxt;
    c.data_end = snd_nxt + 1000;
    assert!(!c.tso_defers(now, 2000), "one segment left");
    c.data_end = snd_nxt + 1500;
    c.app_closed = true;
    assert!(
        !c.tso_defers(now, 2000),
        "the last of the data, and room for all of it"
    );
    assert!(
        c.tso_defers(now, 1200),
        "the last of the data, the room short of it"
    );
    (c.data_end, c.app_closed) = (data_end, false);
    assert!(c.tso_defers(now, 2000), "as at first");
    c.set_controller(linux(false));
    c.pacing.as_mut().unwrap().next_departure = now;
    assert!(!c.tso_defers(now, 2000), "not a Linux TSO sender");
}

#[test]
fn a_window_limited_linux_sender_sends_fewer_fuller_departures() {
    // Behind a 0.25 ms/segment bottleneck an ACK comes every 0.5 ms (one for two
    // segments), and each opens room for two or three segments of NewReno's window: paced
    // at 10 MB/s in departures of 8, the sender sends what each ACK allows. Deferring until a third of the window or a TSO packet is
    // free turns those into departures of several segments, as the kernel's are.
    let sizes = |linux: bool| {
        let mut p = burst_pipe(8, 300_000);
        p.gap_ab = MS / 4;
        p.a.set_controller(Box::new(BurstPacer {
            rate: 1e7,
            burst: 8,
            linux,
        }));
        p.run(60 * SEC);
        assert!(p.done_at.is_some(), "the transfer completes");
        departures(&p).iter().map(|g| g.1).collect::<Vec<u64>>()
    };
    let (each_ack, linux) = (sizes(false), sizes(true));
    let full = |d: &[u64]| d.iter().filter(|&&n| n == 8).count();
    assert!(each_ack[2..].iter().all(|&n| n <= 3), "{each_ack:?}");
    assert!(2 * linux.len() < each_ack.len() + 10, "{linux:?}");
    assert!(3 * full(&linux) > linux.len(), "{linux:?}");
}
