//! A gateway pair and the emulator in threads, joined through the tap; kernel-TCP ends.

use super::*;
use crate::gateway::{Gateway, GatewayConfig, GatewayReport, Keepalive};
use crate::{Emulator, Options};
use spacetp_proto::MS;
use std::io::{ErrorKind, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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
