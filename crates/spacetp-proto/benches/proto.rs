//! Micro-benchmarks of the transport's per-packet work: `cargo bench -p spacetp-proto`.
//! (Not run by `cargo test`: bench targets only build there.)

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use spacetp_proto::connection::Scoreboard;
use spacetp_proto::profiles::profile;
use spacetp_proto::{Connection, State, Time, Transmit, MS};

const MSS: u32 = 1000;

/// Deliver every segment `from` wants to send to `to` at `now`; returns how many.
fn pump(from: &mut Connection, to: &mut Connection, now: Time, buf: &mut Vec<Transmit>) -> usize {
    buf.clear();
    while let Some(t) = from.poll_transmit(now) {
        buf.push(t);
    }
    for t in buf.iter() {
        to.on_segment(now, &t.hdr, t.len);
    }
    buf.len()
}

/// A connected sender/receiver pair with D's buffers, `sack` on or off.
fn established(name: &str, sack: bool) -> (Connection, Connection) {
    let mut cfg = profile(name).unwrap();
    cfg.sack = sack;
    cfg.receive_buffer.0 = 2 << 20; // a steady window of ~2000 segments, as in scenario D
    cfg.send_buffer.0 = 4 << 20;
    let mut a = Connection::connect(&cfg, MSS, 49152, 5001, 1);
    let mut b = Connection::listen(&cfg, MSS, 5001, 49152, 7);
    let mut buf = Vec::new();
    let mut now = 0;
    while a.state() != State::Established || b.state() != State::Established {
        now += MS;
        pump(&mut a, &mut b, now, &mut buf);
        pump(&mut b, &mut a, now, &mut buf);
    }
    a.send(u64::MAX / 2);
    (a, b)
}

/// The ACK clock without a network: the receiver takes the sender's segments, its ACKs go
/// back, the sender processes them and releases new segments. Throughput is per segment
/// exchanged (data segments plus ACKs); the send buffer is topped up every round.
fn ack_processing(c: &mut Criterion) {
    let mut g = c.benchmark_group("ack_processing");
    for (name, sack) in [("newreno", false), ("scalable", true)] {
        let (mut a, mut b) = established(name, sack);
        let mut buf = Vec::new();
        let mut now: Time = MS;
        // Warm up to a steady window.
        let mut round = |a: &mut Connection, b: &mut Connection, now: Time| {
            a.send(u64::MAX / 2);
            pump(a, b, now, &mut buf) + pump(b, a, now, &mut buf)
        };
        for _ in 0..200 {
            now += MS;
            round(&mut a, &mut b, now);
        }
        now += MS;
        let per_round = round(&mut a, &mut b, now) as u64;
        assert!(per_round > 0, "the ACK clock stalled");
        g.throughput(Throughput::Elements(per_round));
        g.bench_function(format!("{name}, sack {sack}: one round"), |bench| {
            bench.iter(|| {
                now += MS;
                black_box(round(&mut a, &mut b, now))
            })
        });
    }
    g.finish();
}

/// Scoreboard update on an ACK carrying three SACK blocks above a hole, with `holes` earlier
/// holes already recorded (a window of 2000 segments with scattered losses).
fn sack_scoreboard(c: &mut Criterion) {
    let mut g = c.benchmark_group("sack_scoreboard");
    g.throughput(Throughput::Elements(1));
    for holes in [1u64, 8, 32] {
        let mss = MSS as u64;
        let una = 1;
        let max = una + 2000 * mss;
        let mut base = Scoreboard::default();
        for h in 0..holes {
            let s = una + (h * 2000 / holes + 1) * mss;
            base.add(&[(s, s + 10 * mss)], una, max);
        }
        let top = una + 1990 * mss;
        let blocks = [
            (top, top + 3 * mss),
            (top - 6 * mss, top - 4 * mss),
            (top - 9 * mss, top - 8 * mss),
        ];
        g.bench_function(format!("add 3 blocks/{holes} ranges"), |b| {
            b.iter_batched_ref(
                || base.clone(),
                |sb| black_box(sb.add(black_box(&blocks), una, max)),
                BatchSize::SmallInput,
            )
        });
        g.bench_function(format!("lost_boundary/{holes} ranges"), |b| {
            b.iter(|| black_box(base.lost_boundary(3, mss)))
        });
    }
    g.finish();
}

criterion_group!(benches, ack_processing, sack_scoreboard);
criterion_main!(benches);
