//! quinn-proto driven on simulated time over a minimal two-way link (rate, delay, seeded
//! random loss): the handshake takes the round trips RFC 9001 says, every byte arrives,
//! losses are repaired, a run repeats itself exactly for a seed, and round trips of minutes
//! work; packets of the real sizes with nothing encrypted (`quic.crypto = "sizes"`) give
//! the same run, datagram for datagram.

use spacetp_proto::{Time, MS, SEC};
use spacetp_quic::{CryptoMode, EndConfig, QuicEnd, QuicSettings, SimClock};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;

struct Link {
    rate_bps: f64,
    delay: Time,
    loss: f64,
}

struct Outcome {
    completed: Option<Time>,
    delivered: u64,
    client_datagrams: u64,
    packets_lost: u64,
    handshake: Option<Time>,
    dropped: u64,
    zero_rtt_accepted: Option<bool>,
    /// Every datagram an end sent: (time, which end, bytes), lost ones included.
    sent: Vec<(Time, usize, usize)>,
}

/// The ends' TLS: sessions kept for 0-RTT, and the packet protection.
#[derive(Default)]
struct Tls {
    resumption: Option<spacetp_quic::tls::Resumption>,
    crypto: CryptoMode,
}

/// A datagram on its way: arrival time, sequence, destination end, bytes.
type InFlight = (Time, u64, usize, Vec<u8>);

/// A splitmix64 stream for the link's losses.
struct Rng(u64);
impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn transfer(
    bytes: u64,
    fwd: Link,
    back: Link,
    settings: &QuicSettings,
    seed: u64,
    cap: Time,
) -> Outcome {
    transfer_with(bytes, fwd, back, settings, seed, cap, Tls::default())
}

/// A transfer whose ends keep their TLS sessions in `tls.resumption` (0-RTT) and protect
/// their packets as `tls.crypto` says.
fn transfer_with(
    bytes: u64,
    fwd: Link,
    back: Link,
    settings: &QuicSettings,
    seed: u64,
    cap: Time,
    tls: Tls,
) -> Outcome {
    let a: SocketAddr = "10.0.0.1:40000".parse().unwrap();
    let b: SocketAddr = "10.0.0.2:443".parse().unwrap();
    let cfg = EndConfig {
        settings: settings.clone(),
        max_payload: 1472,
        seed,
        clock: SimClock::new(),
        out: Default::default(),
        resumption: tls.resumption,
        crypto: tls.crypto,
    };
    let mut ends = [QuicEnd::client(&cfg, a, b), QuicEnd::server(&cfg, b, a)];
    let links = [fwd, back];
    let mut free_at = [0 as Time; 2];
    let mut rng = Rng(seed);
    let mut inflight: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut now = 0;
    let mut left = bytes;
    let mut dropped = 0;
    let mut out = Vec::new();
    let mut completed = None;
    let mut sent = Vec::new();
    while now < cap {
        // The application writes what the client takes.
        if left > 0 {
            left -= ends[0].write(left);
            if left == 0 {
                ends[0].close(now);
            }
        }
        if ends[1].peer_finished() && completed.is_none() {
            completed = Some(now);
            ends[1].close(now);
        }
        for (i, end) in ends.iter_mut().enumerate() {
            while end.poll_transmit(now, &mut out) {
                sent.push((now, i, out.len()));
                let l = &links[i];
                let start = free_at[i].max(now);
                free_at[i] = start + ((out.len() + 28) as f64 * 8.0 / l.rate_bps * 1e9) as Time;
                if rng.next_f64() < l.loss {
                    dropped += 1;
                    continue;
                }
                seq += 1;
                inflight.push(Reverse((free_at[i] + l.delay, seq, 1 - i, out.clone())));
            }
        }
        if ends.iter().all(|e| e.is_closed()) && inflight.is_empty() {
            break;
        }
        let next_timer = ends.iter_mut().filter_map(|e| e.poll_timeout()).min();
        let next_packet = inflight.peek().map(|r| r.0 .0);
        let Some(t) = [next_timer, next_packet].into_iter().flatten().min() else {
            break;
        };
        now = t.max(now);
        while inflight.peek().is_some_and(|r| r.0 .0 <= now) {
            let Reverse((_, _, dst, d)) = inflight.pop().unwrap();
            ends[dst].on_datagram(now, &d);
        }
        for e in ends.iter_mut() {
            if e.poll_timeout().is_some_and(|t| t <= now) {
                e.on_timeout(now);
            }
        }
    }
    let cs = ends[0].stats();
    Outcome {
        completed,
        delivered: ends[1].delivered(),
        client_datagrams: cs.datagrams_sent,
        packets_lost: cs.packets_lost,
        handshake: cs.handshake,
        dropped,
        zero_rtt_accepted: cs.zero_rtt_accepted,
        sent,
    }
}

fn geo(loss: f64) -> (Link, Link) {
    (
        Link {
            rate_bps: 10e6,
            delay: 300 * MS,
            loss,
        },
        Link {
            rate_bps: 1e6,
            delay: 300 * MS,
            loss: 0.0,
        },
    )
}

#[test]
fn a_bulk_transfer_over_a_geo_link_arrives_whole_after_a_one_rtt_tls_handshake() {
    let (f, b) = geo(0.0);
    let o = transfer(2_000_000, f, b, &QuicSettings::default(), 1, 120 * SEC);
    assert_eq!(o.delivered, 2_000_000);
    // RFC 9001: the client has its 1-RTT keys after one round trip (plus the time the
    // server's certificate flight takes to serialize at 1 Mb/s... it travels forward here).
    let hs = o.handshake.expect("connected");
    assert!((600 * MS..700 * MS).contains(&hs), "handshake {hs} ns");
    let done = o.completed.expect("completed");
    // 2 MB at 10 Mb/s is 1.6 s; slow start from 14.7 kB over 600 ms rounds adds several.
    assert!(done > 2 * SEC && done < 12 * SEC, "completed at {done} ns");
    assert_eq!(o.packets_lost, 0);
}

#[test]
fn losses_on_the_link_are_repaired() {
    let (f, b) = geo(0.01);
    let o = transfer(1_000_000, f, b, &QuicSettings::default(), 3, 300 * SEC);
    assert_eq!(o.delivered, 1_000_000);
    assert!(
        o.dropped > 0 && o.packets_lost > 0,
        "dropped {} lost {}",
        o.dropped,
        o.packets_lost
    );
}

#[test]
fn a_seed_gives_the_same_run_whatever_the_tls_keys() {
    let run = || {
        let (f, b) = geo(0.01);
        let o = transfer(500_000, f, b, &QuicSettings::default(), 7, 300 * SEC);
        (o.completed, o.client_datagrams, o.packets_lost, o.dropped)
    };
    assert_eq!(run(), run());
}

#[test]
fn a_round_trip_of_eight_minutes_completes() {
    // Mars at its closest is about 3 light-minutes away; 4 min each way here.
    let s = QuicSettings {
        initial_rtt: spacetp_proto::units::Duration(480 * SEC),
        max_idle_timeout: None,
        ..QuicSettings::default()
    };
    let f = Link {
        rate_bps: 1e6,
        delay: 240 * SEC,
        loss: 0.0,
    };
    let b = Link {
        rate_bps: 1e6,
        delay: 240 * SEC,
        loss: 0.0,
    };
    let o = transfer(100_000, f, b, &s, 1, 4 * 3600 * SEC);
    assert_eq!(
        o.delivered, 100_000,
        "handshake {:?} completed {:?} datagrams {}",
        o.handshake, o.completed, o.client_datagrams
    );
    // The handshake's round trip, then slow start from 14.7 kB: 100 kB takes three more
    // flights (14.7 + 29.4 + 58.9 kB), the last arriving half a round trip after it left.
    let rtt = 480 * SEC;
    let done = o.completed.unwrap();
    assert!(
        done > 3 * rtt && done < 5 * rtt,
        "completed after {} RTTs",
        done as f64 / rtt as f64
    );
}

#[test]
fn a_resumed_session_sends_its_first_bytes_in_0_rtt_and_arrives_a_round_trip_sooner() {
    // 5 kB fits the first flight's congestion window (12 kB, the Initial included).
    let s = QuicSettings::default();
    let run = |r: Option<spacetp_quic::tls::Resumption>| {
        let (f, b) = geo(0.0);
        let tls = Tls {
            resumption: r,
            ..Tls::default()
        };
        transfer_with(5_000, f, b, &s, 1, 60 * SEC, tls)
    };
    let shared = spacetp_quic::tls::Resumption::default();
    let first = run(Some(shared.clone()));
    let second = run(Some(shared.clone()));
    let fresh = run(Some(Default::default()));
    // RFC 9001 4.6: the first connection has no session to resume; the second resumes the
    // first's and its data arrives with its first flight, half a round trip after the
    // start instead of one and a half; a connection without the first's session cannot.
    assert_eq!(first.zero_rtt_accepted, None);
    assert_eq!(second.zero_rtt_accepted, Some(true));
    assert_eq!(fresh.zero_rtt_accepted, None);
    let (t1, t2) = (first.completed.unwrap(), second.completed.unwrap());
    assert!((900 * MS..1000 * MS).contains(&t1), "first: {t1} ns");
    assert!((300 * MS..400 * MS).contains(&t2), "second: {t2} ns");
    assert_eq!(fresh.completed, first.completed);
    assert_eq!(second.delivered, 5_000);
}

/// The same transfer with real packet protection and with sizes only.
fn both_ways(bytes: u64, loss: f64, settings: &QuicSettings, seed: u64) -> [Outcome; 2] {
    [CryptoMode::Real, CryptoMode::Sizes].map(|crypto| {
        let (f, b) = geo(loss);
        let tls = Tls {
            crypto,
            ..Tls::default()
        };
        transfer_with(bytes, f, b, settings, seed, 600 * SEC, tls)
    })
}

fn assert_same_run(real: &Outcome, sizes: &Outcome) {
    assert_eq!(real.sent.len(), sizes.sent.len(), "datagrams sent");
    let first_difference = real.sent.iter().zip(&sizes.sent).position(|(a, b)| a != b);
    assert_eq!(
        first_difference, None,
        "(time, end, bytes) of the datagrams differ"
    );
    assert_eq!(
        (
            real.completed,
            real.delivered,
            real.handshake,
            real.packets_lost,
            real.dropped
        ),
        (
            sizes.completed,
            sizes.delivered,
            sizes.handshake,
            sizes.packets_lost,
            sizes.dropped
        )
    );
}

#[test]
fn sizes_only_crypto_sends_every_datagram_at_the_same_time_and_size_as_real_crypto() {
    // Clean and lossy GEO links, one stream and a hundred, CUBIC and BBR: handshake,
    // slow start, loss recovery, MTU probes, stream and connection closes.
    let cubic = QuicSettings::default();
    let streams = QuicSettings {
        streams: 100,
        ..QuicSettings::default()
    };
    let bbr = QuicSettings {
        congestion_control: spacetp_quic::QuicCongestion::Bbr,
        ..QuicSettings::default()
    };
    for (bytes, loss, settings, seed) in [
        (2_000_000, 0.0, &cubic, 1),
        (1_000_000, 0.02, &cubic, 5),
        (1_000_000, 0.01, &streams, 6),
        (1_000_000, 0.01, &bbr, 7),
    ] {
        let [real, sizes] = both_ways(bytes, loss, settings, seed);
        assert_eq!(real.delivered, bytes);
        assert!(loss == 0.0 || real.packets_lost > 0);
        assert_same_run(&real, &sizes);
    }
}

#[test]
fn a_resumed_session_in_0_rtt_is_the_same_run_with_sizes_only_crypto() {
    let s = QuicSettings::default();
    let [real, sizes] = [CryptoMode::Real, CryptoMode::Sizes].map(|crypto| {
        let shared = spacetp_quic::tls::Resumption::default();
        let run = |tls: Tls| {
            let (f, b) = geo(0.0);
            transfer_with(5_000, f, b, &s, 1, 60 * SEC, tls)
        };
        let first = Tls {
            resumption: Some(shared.clone()),
            crypto,
        };
        run(first);
        run(Tls {
            resumption: Some(shared),
            crypto,
        })
    });
    assert_eq!(sizes.zero_rtt_accepted, Some(true));
    assert_same_run(&real, &sizes);
}
