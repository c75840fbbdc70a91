//! Micro-benchmarks of the simulator's hot paths: `cargo bench -p spacetp-sim`.
//! (Not run by `cargo test`: bench targets only build there.)

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use spacetp_sim::channel::Channel;
use spacetp_sim::config::ErrorCfg;
use spacetp_sim::engine::{Event, EventQueue};
use spacetp_sim::rng::Rng;

/// Steady state of a run: pop the earliest event, schedule one a little later. `pending` is the
/// queue length (about 8 in scenario D, thousands with many flows).
fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(1));
    for pending in [8u64, 1024, 65536] {
        let mut q = EventQueue::default();
        let mut x: u64 = 1;
        for i in 0..pending {
            q.schedule(i * 1000, Event::TxDone(i as u32));
        }
        g.bench_function(format!("pop+schedule/{pending} pending"), |b| {
            b.iter(|| {
                let (t, ev) = q.pop().unwrap();
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                q.schedule(t + 1 + (x >> 40) % (pending * 1000), ev);
            })
        });
    }
    g.finish();
}

/// One per-packet loss draw of each error model.
fn channel_draw(c: &mut Criterion) {
    let mut g = c.benchmark_group("channel_draw");
    g.throughput(Throughput::Elements(1));
    let models = [
        (
            "per 1e-5",
            ErrorCfg {
                per: Some(1e-5.into()),
                ..Default::default()
            },
        ),
        (
            "ber 1e-5",
            ErrorCfg {
                ber: Some(1e-5.into()),
                ..Default::default()
            },
        ),
    ];
    for (name, cfg) in models {
        let mut ch = Channel::from_cfg(&cfg, "bench", Rng::for_component(1, 1, 0)).unwrap();
        let mut now = 0;
        g.bench_function(name, |b| {
            b.iter(|| {
                now += 55_000;
                black_box(ch.hit(black_box(now), 8336))
            })
        });
    }
    g.finish();
}

/// A whole run: scenario D (150 Mb/s, 120 ms RTT, NewReno, PER 1e-5) for 10 simulated seconds.
fn scenario_d(c: &mut Criterion) {
    let text = include_str!("../../../benches/scenarios/D.toml").replace("\"100 s\"", "\"10 s\"");
    let mut g = c.benchmark_group("run");
    g.sample_size(10);
    g.bench_function("scenario D, 10 s", |b| {
        b.iter(|| {
            let sc = spacetp_sim::scenario_from_toml(&text).unwrap();
            spacetp_sim::run(sc, &Default::default()).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, event_queue, channel_draw, scenario_d);
criterion_main!(benches);
