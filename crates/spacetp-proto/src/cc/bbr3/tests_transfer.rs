//! BBRv3 through the connection's own hooks over the two-endpoint pipe, as
//! `cc/tests_transfer.rs` runs every controller: whole transfers, the profiles as users get
//! them.

use crate::config::TcpConfig;
use crate::connection::CloseReason;
use crate::profiles::profile;
use crate::testing::Pipe;
use crate::time::{MS, SEC, US};

const SEG: u32 = 1000;

/// 1000-byte segments at 10 Mb/s, 300 ms each way (GEO): a BDP of 750 segments; the
/// bottleneck holds `queue` segments; each a->b transmission is lost with probability `per`
/// (a fixed pseudo-random pattern from `seed`).
fn geo(cfg: &TcpConfig, bytes: u64, queue: u64, per: f64, seed: u64) -> Pipe {
    let mut p = Pipe::new(cfg, SEG, bytes);
    p.gap_ab = 800 * US;
    p.delay = 300 * MS;
    p.queue_limit = Some(queue);
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let threshold = (per * u32::MAX as f64) as u64;
    p.drop_ab = (0..200_000u64)
        .filter(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) < threshold
        })
        .collect();
    p.run(3600 * SEC);
    assert_eq!(p.b.delivered(), bytes, "every byte delivered");
    assert_eq!(p.a.close_reason(), Some(CloseReason::Normal));
    p
}

fn cfg(name: &str) -> TcpConfig {
    TcpConfig {
        receive_buffer: crate::units::Bytes(4_000_000),
        send_buffer: crate::units::Bytes(4_000_000),
        ..profile(name).expect("profile")
    }
}

/// (retransmitted segments, segments the bottleneck queue dropped) over four seeds.
fn losses(name: &str) -> (u64, u64) {
    (1..=4).fold((0, 0), |(retx, drops), seed| {
        let p = geo(&cfg(name), 5_000_000, 375, 1e-3, seed);
        (
            retx + p.a.stats().retransmitted_segments,
            drops + p.queue_drops,
        )
    })
}

#[test]
fn a_lossy_geo_transfer_completes_and_bbr3_loses_and_resends_less_than_bbr() {
    // 5 MB, 10 Mb/s, 300 ms each way, half a BDP of buffer, 1e-3 random loss. BBRv3's
    // Startup exits on loss and its bounds keep inflight near what the path holds (draft
    // sections 5.3.1.3, 5.5.10), where BBR v1 only reacts to bandwidth: it overflows the
    // buffer far less. Measured (seeds 1-4): bbr 3,660 resent / 3,641 dropped in the queue,
    // bbr3 3,058 / 2,024. Part of bbr3's retransmissions are spurious (the receiver gets
    // them twice; why loss detection deems them lost is not established), so the margin on
    // retransmissions is smaller than on drops.
    let (bbr_retx, bbr_drops) = losses("bbr");
    let (bbr3_retx, bbr3_drops) = losses("bbr3");
    assert!(
        (bbr3_drops as f64) < 0.7 * bbr_drops as f64,
        "queue drops: bbr3 {bbr3_drops}, bbr {bbr_drops}"
    );
    assert!(
        (bbr3_retx as f64) < 0.9 * bbr_retx as f64,
        "retransmissions: bbr3 {bbr3_retx}, bbr {bbr_retx}"
    );
}
