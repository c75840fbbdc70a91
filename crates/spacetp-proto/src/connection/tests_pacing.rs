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
    // Paced at 250 kB/s (below the bottleneck): data segments leave 4.208 ms apart.
    let (p, _) = run(Some(250_000.0));
    let times: Vec<Time> = p.log_ab.iter().filter(|l| l.2 > 0).map(|l| l.0).collect();
    let min_gap = times.windows(2).map(|w| w[1] - w[0]).min().unwrap();
    assert!(min_gap >= 4_208_000, "min gap {min_gap}");
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
