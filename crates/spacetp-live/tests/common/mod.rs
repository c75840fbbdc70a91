//! What the live tests share: free loopback ports, random files, a lossy UDP relay, SHA-256.

#![allow(dead_code)] // each test file takes what it needs

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A file of `n` bytes no two runs share (xorshift from the clock).
pub fn random_file(path: &Path, n: usize) {
    let mut x = Instant::now().elapsed().as_nanos() as u64 | 1;
    x ^= std::process::id() as u64 * 0x9E37_79B9;
    let data: Vec<u8> = (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    std::fs::write(path, data).unwrap();
}

/// A UDP relay between `a` and `b`: what `a` sends to `port_b` leaves from `port_a` to `b`,
/// what `b` sends to `port_a` leaves from `port_b` to `a`; `drop(n, since start)` says
/// whether the n-th datagram (either way) is lost.
pub fn relay(
    port_a: u16,
    a: SocketAddr,
    port_b: u16,
    b: SocketAddr,
    mut drop: impl FnMut(u64, Duration, &[u8]) -> bool + Send + 'static,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<(u64, u64)> {
    let sa = UdpSocket::bind(("127.0.0.1", port_a)).unwrap();
    let sb = UdpSocket::bind(("127.0.0.1", port_b)).unwrap();
    for s in [&sa, &sb] {
        s.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
    }
    std::thread::spawn(move || {
        let (mut n, mut dropped, t0, mut buf) = (0u64, 0u64, Instant::now(), vec![0u8; 65536]);
        while !stop.load(Ordering::Relaxed) {
            for (from, to, addr) in [(&sb, &sa, b), (&sa, &sb, a)] {
                while let Ok(k) = from.recv(&mut buf) {
                    n += 1;
                    if drop(n, t0.elapsed(), &buf[..k]) {
                        dropped += 1;
                    } else {
                        to.send_to(&buf[..k], addr).ok();
                    }
                }
            }
        }
        (n, dropped)
    })
}

pub fn sha256(path: &Path) -> String {
    let d = ring::digest::digest(&ring::digest::SHA256, &std::fs::read(path).unwrap());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}
