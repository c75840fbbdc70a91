//! The gateway's self-test: a gateway pair and the emulator in threads of this process,
//! joined by datagram socket pairs through a tap that sees every packet and can inject
//! forged ones, with kernel-TCP ends on loopback. Needs no root. The attack catalogue
//! ([`selftest`]) replays every class of injected packet a user has tried against a live
//! pair, during a real transfer, and reports what the gateways did and whether the
//! transfer was affected (`benches/gateway_attacks.py` prints it as a table). The gateway's
//! tests use the same harness.

use crate::gateway::{Gateway, GatewayConfig, GatewayReport, Keepalive, PROTO};
use crate::{Emulator, Options};
use serde::Serialize;
use spacetp_proto::MS;
use spacetp_wire::{decode_ipv4_tcp, encode_ipv4_tcp, flags, Ipv4Params, Payload, TcpHeader};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What a test makes a running gateway do.
pub(crate) const RUN: u8 = 0;
/// `begin_stop`, as a signal does.
pub(crate) const STOP: u8 = 1;
/// Vanish without a word (the gateway is dropped), as with SIGKILL.
pub(crate) const CRASH: u8 = 2;

/// The newest segment that went to a gateway across the link, as an on-path attacker sees it.
#[derive(Clone, Copy)]
pub(crate) struct Seen {
    pub(crate) src: [u8; 4],
    pub(crate) dst: [u8; 4],
    pub(crate) hdr: TcpHeader,
    pub(crate) len: u32,
}

/// Sits between each gateway and the emulator: forwards every packet both ways, remembers
/// the newest segment (and the newest data segment) to each gateway, and injects packets.
#[derive(Default)]
pub(crate) struct Tap {
    seen: std::sync::Mutex<[(Option<Seen>, Option<Seen>); 2]>,
    inject: std::sync::Mutex<Vec<(usize, Vec<u8>)>>,
    /// Drop every packet both ways: an outage the test controls.
    pub(crate) cut: AtomicBool,
    /// Begin the cut right after a FIN is delivered to gateway `side` (value side + 1; 0:
    /// never), so that gateway's answer to it is lost.
    pub(crate) cut_after_fin_to: std::sync::atomic::AtomicUsize,
}

impl Tap {
    /// (newest segment, newest data segment) that went to gateway `side` (0: A, 1: B).
    pub(crate) fn seen(&self, side: usize) -> (Option<Seen>, Option<Seen>) {
        self.seen.lock().unwrap()[side]
    }

    /// Forget what went to gateway `side`, so the next `seen` is only what comes after.
    #[cfg(test)]
    pub(crate) fn forget(&self, side: usize) {
        self.seen.lock().unwrap()[side] = (None, None);
    }

    pub(crate) fn inject(&self, side: usize, pkt: Vec<u8>) {
        self.inject.lock().unwrap().push((side, pkt));
    }

    fn run(&self, gw: [UnixDatagram; 2], em: [UnixDatagram; 2], stop: &AtomicBool) {
        let mut buf = vec![0u8; 65_536];
        for s in gw.iter().chain(&em) {
            s.set_nonblocking(true).unwrap();
        }
        while !stop.load(Ordering::Relaxed) {
            let mut fds: Vec<libc::pollfd> = gw
                .iter()
                .chain(&em)
                .map(|s| libc::pollfd {
                    fd: s.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect();
            // SAFETY: poll over our own pollfds.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 2) };
            for side in 0..2 {
                while let Ok(n) = gw[side].recv(&mut buf) {
                    if !self.cut.load(Ordering::Relaxed) {
                        em[side].send(&buf[..n]).ok();
                    }
                }
                while let Ok(n) = em[side].recv(&mut buf) {
                    if self.cut.load(Ordering::Relaxed) {
                        continue;
                    }
                    if let Ok(d) = decode_ipv4_tcp(&buf[..n]) {
                        let fin_to = self.cut_after_fin_to.load(Ordering::Relaxed);
                        if fin_to == side + 1 && d.tcp.has(flags::FIN) {
                            // Once: the test ends the cut, and later FINs pass.
                            self.cut_after_fin_to.store(0, Ordering::Relaxed);
                            self.cut.store(true, Ordering::Relaxed);
                            gw[side].send(&buf[..n]).ok();
                            continue;
                        }
                        let s = Seen {
                            src: d.ip.src,
                            dst: d.ip.dst,
                            hdr: d.tcp,
                            len: d.payload(&buf[..n]).len() as u32,
                        };
                        let mut seen = self.seen.lock().unwrap();
                        seen[side].0 = Some(s);
                        if s.len > 0 {
                            seen[side].1 = Some(s);
                        }
                    }
                    gw[side].send(&buf[..n]).ok();
                }
            }
            for (side, pkt) in self.inject.lock().unwrap().drain(..) {
                gw[side].send(&pkt).ok();
            }
        }
    }
}

/// A forged packet on the flow `s` belongs to, changed by `edit`, carrying `payload`.
pub(crate) fn forged(s: &Seen, edit: impl FnOnce(&mut TcpHeader), payload: &[u8]) -> Vec<u8> {
    let mut h = s.hdr;
    h.options.snacks = Default::default();
    h.options.sack = Default::default();
    edit(&mut h);
    let ip = Ipv4Params {
        src: s.src,
        dst: s.dst,
        protocol: PROTO,
        id: 7,
    };
    let mut out = Vec::new();
    encode_ipv4_tcp(&ip, &h, Payload::Bytes(payload), &mut out).unwrap();
    out
}

/// The emulator and two gateways, each in a thread, joined by datagram socket pairs through
/// a tap.
// `ctl` and `tell` drive the stop and crash tests.
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Running {
    pub(crate) stop: Arc<AtomicBool>,
    ctl: [Arc<std::sync::atomic::AtomicU8>; 2],
    pub(crate) tap: Arc<Tap>,
    em: std::thread::JoinHandle<crate::Report>,
    tap_thread: std::thread::JoinHandle<()>,
    gws: Vec<std::thread::JoinHandle<GatewayReport>>,
    /// The gateways' log events so far (A, B).
    pub(crate) events: [Arc<std::sync::Mutex<Vec<serde_json::Value>>>; 2],
    /// Where link-state notices to each gateway are written (as `spacetp emulate` does).
    notices: [UnixDatagram; 2],
}

#[cfg_attr(not(test), allow(dead_code))]
impl Running {
    pub(crate) fn start(link: &str, a: GatewayConfig, b: GatewayConfig) -> Self {
        let (ga, ta) = UnixDatagram::pair().unwrap();
        let (gb, tb) = UnixDatagram::pair().unwrap();
        let (ea, xa) = UnixDatagram::pair().unwrap();
        let (eb, xb) = UnixDatagram::pair().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let sc = crate::scenario_json(7, link);
        let st = stop.clone();
        // The emulator announces its outages to both gateways, as `spacetp emulate` does; a
        // test may also announce one the link does not have (`notify`).
        let (na, heard_a) = UnixDatagram::pair().unwrap();
        let (nb, heard_b) = UnixDatagram::pair().unwrap();
        let opts = Options {
            notify: vec![na.as_raw_fd(), nb.as_raw_fd()],
            ..Default::default()
        };
        let em = std::thread::spawn(move || {
            let mut e = Emulator::new(&sc, ea.as_raw_fd(), eb.as_raw_fd(), &opts).unwrap();
            while !st.load(Ordering::Relaxed) && e.run_for(20 * MS) {}
            e.report()
        });
        let tap = Arc::new(Tap::default());
        let (t, st) = (tap.clone(), stop.clone());
        let tap_thread = std::thread::spawn(move || t.run([ta, tb], [xa, xb], &st));
        let ctl: [Arc<std::sync::atomic::AtomicU8>; 2] = Default::default();
        let events: [Arc<std::sync::Mutex<Vec<serde_json::Value>>>; 2] = Default::default();
        let gws = [(a, ga, heard_a), (b, gb, heard_b)]
            .into_iter()
            .zip(ctl.clone().into_iter().zip(events.clone()))
            .map(|((cfg, fd, heard), (ctl, log))| {
                let st = stop.clone();
                std::thread::spawn(move || {
                    let mut g = Gateway::new(cfg, fd.as_raw_fd()).unwrap();
                    g.set_link_state_fd(heard.as_raw_fd()).unwrap();
                    let mut stopping = false;
                    while !st.load(Ordering::Relaxed) {
                        match ctl.load(Ordering::Relaxed) {
                            STOP if !stopping => {
                                g.begin_stop("test");
                                stopping = true;
                            }
                            CRASH => break,
                            RUN | STOP => {}
                            _ => unreachable!(),
                        }
                        let more = g.run_for(20 * MS);
                        log.lock().unwrap().extend(g.take_events());
                        if !more {
                            break;
                        }
                    }
                    g.report()
                })
            })
            .collect();
        Running {
            stop,
            ctl,
            tap,
            em,
            tap_thread,
            gws,
            events,
            notices: [na, nb],
        }
    }

    /// Tell gateway `side` the link is down or up (`crate::LINK_DOWN`, `crate::LINK_UP`),
    /// without changing the link itself.
    pub(crate) fn notify(&self, side: usize, notice: &[u8]) {
        self.notices[side].send(notice).unwrap();
    }

    /// Make gateway `side` (0: A, 1: B) do `what` (`STOP`, `CRASH`).
    pub(crate) fn tell(&self, side: usize, what: u8) {
        self.ctl[side].store(what, Ordering::Relaxed);
    }

    /// Stop everything; the gateways' reports (A, B).
    pub(crate) fn finish(self) -> Vec<GatewayReport> {
        self.stop.store(true, Ordering::Relaxed);
        let reps = self.gws.into_iter().map(|g| g.join().unwrap()).collect();
        self.em.join().unwrap();
        self.tap_thread.join().unwrap();
        reps
    }
}

/// A free local port (bound, then released).
pub(crate) fn free_port() -> u16 {
    let probe = TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

pub(crate) fn config(profile: &str, local: [u8; 4], peer: [u8; 4]) -> GatewayConfig {
    let mut tcp = spacetp_proto::profiles::profile(profile).unwrap();
    tcp.scps.rate = Some(spacetp_proto::units::Rate(20e6));
    GatewayConfig {
        tcp,
        mss: 1400,
        local_ip: local.into(),
        peer_ip: peer.into(),
        listen: vec![],
        forward: vec![],
        intercept: None,
        forward_original: false,
        duration: None,
        drain: None,
        keepalive: Keepalive::default(),
        idle_timeout: None,
        log_events: true,
        max_half_open: crate::gateway::DEFAULT_MAX_HALF_OPEN,
    }
}

/// Connect once the gateway thread listens.
pub(crate) fn connect(port: u16) -> TcpStream {
    for _ in 0..200 {
        if let Ok(s) = TcpStream::connect(("127.0.0.1", port)) {
            return s;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    panic!("nothing listens on port {port}");
}

pub(crate) fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| ((i * 31 + i / 977) as u8) ^ seed).collect()
}

/// Gateways A (client side, listening on the returned port) and B (relaying to a loopback
/// server), running over `link`; `tune` adjusts both configurations.
pub(crate) fn pair(link: &str, tune: impl Fn(&mut GatewayConfig)) -> (Running, TcpListener, u16) {
    let server = TcpListener::bind("127.0.0.1:0").unwrap();
    let sport = server.local_addr().unwrap().port();
    let aport = free_port();
    let mut a = config("scps-tp", [10, 77, 0, 1], [10, 77, 0, 2]);
    let mut b = config("scps-tp", [10, 77, 0, 2], [10, 77, 0, 1]);
    a.listen = vec![(SocketAddr::from(([127, 0, 0, 1], aport)), 7000)];
    b.forward = vec![(7000, SocketAddr::from(([127, 0, 0, 1], sport)))];
    tune(&mut a);
    tune(&mut b);
    (Running::start(link, a, b), server, aport)
}

/// What the server read before EOF or an error, and the error (None: a clean EOF).
pub(crate) fn serve_one(
    server: TcpListener,
) -> std::thread::JoinHandle<(Vec<u8>, Option<ErrorKind>)> {
    std::thread::spawn(move || {
        let (mut s, _) = server.accept().unwrap();
        let mut got = Vec::new();
        let mut b = vec![0u8; 65_536];
        loop {
            match s.read(&mut b) {
                Ok(0) => return (got, None),
                Ok(n) => got.extend_from_slice(&b[..n]),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return (got, Some(e.kind())),
            }
        }
    })
}

/// Wait until `f` holds (polling), at most `limit`.
pub(crate) fn wait_for(limit: std::time::Duration, f: impl Fn() -> bool) -> bool {
    let t0 = std::time::Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    false
}

/// One class of injected packets and what it did.
#[derive(Clone, Debug, Serialize)]
pub struct AttackRow {
    pub class: String,
    /// Packets injected.
    pub sent: u64,
    /// What the gateways counted (only the counters that moved).
    pub reaction: String,
    /// What became of the transfer: "exact" (every byte, in order, then EOF), or how it
    /// ended ("reset on both sides", "short: N of M bytes" ...).
    pub transfer: String,
    /// Whether that is what must happen for this class.
    pub expected: bool,
}

/// The attack catalogue: `(class, side attacked (0: A, 1: B), what must become of the
/// transfer, the forged packets for the newest segments seen)`.
/// (newest segment to the attacked gateway, newest segment to the other one, round).
type Forge = fn(&Seen, Option<Seen>, u32) -> Vec<Vec<u8>>;

fn catalogue() -> Vec<(&'static str, usize, &'static str, Forge)> {
    fn on(s: &Seen, f: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
        forged(
            s,
            |h| {
                h.flags = f;
                h.seq = seq;
                h.ack = ack;
            },
            payload,
        )
    }
    vec![
        (
            "SYN, mid-stream seq, to the receiving gateway",
            1,
            "exact",
            |s, _, _| vec![on(s, flags::SYN, s.hdr.seq.wrapping_add(200_000), 0, &[])],
        ),
        (
            "SYN-ACK, mid-stream seq, to the receiving gateway",
            1,
            "exact",
            |s, _, _| {
                vec![on(
                    s,
                    flags::SYN | flags::ACK,
                    s.hdr.seq.wrapping_add(200_000),
                    s.hdr.ack,
                    &[],
                )]
            },
        ),
        (
            "SYN, mid-stream seq, to the sending gateway",
            0,
            "exact",
            |s, _, _| vec![on(s, flags::SYN, s.hdr.seq.wrapping_add(100_000), 0, &[])],
        ),
        (
            "RST 5 MB beyond the window, to the receiving gateway",
            1,
            "exact",
            |s, _, _| vec![on(s, flags::RST, s.hdr.seq.wrapping_add(5_000_000), 0, &[])],
        ),
        (
            "RST 5 MB beyond the window, to the sending gateway",
            0,
            "exact",
            |s, _, _| vec![on(s, flags::RST, s.hdr.seq.wrapping_add(5_000_000), 0, &[])],
        ),
        (
            "RST inside the window, not exact, to the receiving gateway",
            1,
            "exact",
            |s, _, i| {
                vec![on(
                    s,
                    flags::RST | flags::ACK,
                    s.hdr.seq.wrapping_add(s.len + 1000 + i),
                    s.hdr.ack,
                    &[],
                )]
            },
        ),
        (
            "FIN+ACK 14 kB below what the receiving gateway has (stale or forged)",
            1,
            "exact",
            |s, _, i| {
                let back = 14_000 * (1 + i % 4);
                let seq = s.hdr.seq.wrapping_sub(back);
                vec![on(s, flags::FIN | flags::ACK, seq, s.hdr.ack, &[])]
            },
        ),
        (
            "data acknowledging bytes never sent",
            1,
            "exact",
            |s, _, _| {
                vec![on(
                    s,
                    flags::ACK,
                    s.hdr.seq.wrapping_add(s.len),
                    s.hdr.ack.wrapping_add(10_000_000),
                    &[0xEE; 1000],
                )]
            },
        ),
        ("data 50 MB beyond the window", 1, "exact", |s, _, _| {
            vec![on(
                s,
                flags::ACK,
                s.hdr.seq.wrapping_add(50_000_000),
                s.hdr.ack,
                &[0xEE; 1000],
            )]
        }),
        (
            "malformed: bad checksum, truncated header, random bytes, garbage protocol 105",
            1,
            "exact",
            |s, _, i| {
                let mut bad = on(s, flags::ACK, s.hdr.seq, s.hdr.ack, &[0xEE; 100]);
                let n = bad.len();
                bad[n - 1] ^= 0xFF;
                let mut trunc = on(s, flags::ACK, s.hdr.seq, s.hdr.ack, &[]);
                trunc.truncate(30);
                let random: Vec<u8> = (0..200u32)
                    .map(|k| (k.wrapping_mul(2_654_435_761).wrapping_add(i) >> 13) as u8)
                    .collect();
                let mut p105 = on(s, flags::ACK, s.hdr.seq, s.hdr.ack, &[1, 2, 3]);
                p105[9] = 105;
                vec![bad, trunc, random, p105]
            },
        ),
        (
            "RSTs at the receiver's next sequence numbers (an on-path attacker)",
            1,
            "reset on both sides",
            // The receiver's latest ACK is its RCV.NXT; data moves it on by whole segments.
            |s, other, _| {
                let Some(o) = other else { return vec![] };
                let seg = s.len.max(1);
                (0..64)
                    .map(|k| on(s, flags::RST, o.hdr.ack.wrapping_add(k * seg), 0, &[]))
                    .collect()
            },
        ),
    ]
}

/// Run every class of the catalogue against a fresh gateway pair on `link` (the fields of
/// a `[[links]]` entry as JSON, e.g. `"rate": "10 Mb/s", "delay": "50 ms"`), each during
/// a transfer of `bytes` from a client through the pair to a server, `rounds` injections
/// 150 ms apart.
pub fn selftest(link: &str, bytes: usize, rounds: u32) -> Vec<AttackRow> {
    catalogue()
        .into_iter()
        .map(|(class, side, expect, forge)| attack(link, bytes, rounds, class, side, expect, forge))
        .collect()
}

fn attack(
    link: &str,
    bytes: usize,
    rounds: u32,
    class: &str,
    side: usize,
    expect: &str,
    forge: Forge,
) -> AttackRow {
    let (run, server, aport) = pair(link, |_| {});
    let srv = serve_one(server);
    let data = pattern(bytes, 5);
    let sent_data = data.clone();
    let client = std::thread::spawn(move || {
        let mut s = connect(aport);
        s.write_all(&sent_data)?;
        s.shutdown(Shutdown::Write)?;
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).map(|_| ())
    });
    let tap = run.tap.clone();
    // Forge from the newest data segment to the receiver, or the newest segment to the sender.
    let seen = |tap: &Tap| {
        if side == 1 {
            tap.seen(1).1
        } else {
            tap.seen(0).0
        }
    };
    wait_for(std::time::Duration::from_secs(20), || seen(&tap).is_some());
    let mut sent = 0;
    for i in 0..rounds {
        let Some(s) = seen(&tap) else { break };
        let other = if side == 1 {
            tap.seen(0).0
        } else {
            tap.seen(1).0
        };
        for p in forge(&s, other, i) {
            tap.inject(side, p);
            sent += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let (got, err) = srv.join().unwrap_or_default();
    let client = client
        .join()
        .map_err(|_| ())
        .and_then(|r| r.map_err(|_| ()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reps = run.finish();
    let transfer = match (err, client) {
        (None, Ok(())) if got == data => "exact".to_string(),
        (Some(ErrorKind::ConnectionReset), Err(())) if got[..] == data[..got.len()] => {
            "reset on both sides".to_string()
        }
        (e, c) => format!(
            "short: {} of {bytes} bytes (server {}, client {})",
            got.len(),
            e.map_or("EOF".into(), |k| format!("{k:?}")),
            if c.is_ok() { "complete" } else { "error" },
        ),
    };
    AttackRow {
        class: class.to_string(),
        sent,
        reaction: reaction(&reps),
        expected: transfer == expect,
        transfer,
    }
}

/// The counters of both reports that say what the gateways did with forged packets.
fn reaction(reps: &[GatewayReport]) -> String {
    let mut out = Vec::new();
    for (name, r) in ["A", "B"].iter().zip(reps) {
        for (what, n) in [
            ("SYN rejected", r.syn_rejected),
            ("RST rejected", r.rst_rejected),
            ("ACK rejected", r.ack_rejected),
            ("out of window", r.out_of_window),
            ("challenge ACKs", r.challenge_acks),
            ("old FIN rejected", r.fin_rejected),
            ("bad checksum", r.bad_checksum),
            ("undecodable", r.undecodable),
            ("compressed bad", r.compressed_bad),
            ("RST replies", r.rst_replies),
            ("flows reset", r.reset),
            ("integrity resets", r.integrity_resets),
        ] {
            if n > 0 {
                out.push(format!("{name}: {what} {n}"));
            }
        }
    }
    out.join(", ")
}
