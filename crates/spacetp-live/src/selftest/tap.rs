//! The tap on the link: every packet both ways, the newest segments seen, packets injected.

use crate::gateway::PROTO;
use spacetp_wire::{decode_ipv4_tcp, encode_ipv4_tcp, flags, Ipv4Params, Payload, TcpHeader};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixDatagram;
use std::sync::atomic::{AtomicBool, Ordering};

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

    pub(super) fn run(&self, gw: [UnixDatagram; 2], em: [UnixDatagram; 2], stop: &AtomicBool) {
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
