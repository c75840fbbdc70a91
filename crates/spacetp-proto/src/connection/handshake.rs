//! The three-way handshake: the SYN and SYN-ACK we send, what the peer's offers negotiate
//! (MSS, window scaling, timestamps, SACK, SCPS-TP capabilities), and the first RTT sample.

use super::output::ts_clock;
use super::recovery::Policy;
use super::timer::Timer;
use super::{scps, Connection, Sent, State, MIN_PEER_MSS};
use crate::cc::nucc;
use crate::config::CongestionControlKind;
use crate::seq::from_wire;
use crate::time::Time;
use spacetp_wire::{flags, TcpHeader, TcpOptions, Timestamps};

/// The TCP options both ends offered (RFC 7323, RFC 2018), and the window scales.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Agreed {
    pub window_scaling: bool,
    pub timestamps: bool,
    pub sack: bool,
    /// The shift our windows are sent with (0 unless window scaling was agreed).
    pub rcv_wscale: u8,
    /// The shift the peer's windows are sent with.
    pub snd_wscale: u8,
}

impl Agreed {
    /// Before the handshake: nothing agreed, our SYN offering `rcv_wscale`.
    pub fn offering(rcv_wscale: u8) -> Self {
        Agreed {
            rcv_wscale,
            ..Default::default()
        }
    }
}

impl Connection {
    pub(super) fn on_segment_listen(&mut self, hdr: &TcpHeader) {
        if !hdr.has(flags::SYN) || hdr.has(flags::ACK) || hdr.has(flags::RST) {
            return;
        }
        self.negotiate(&hdr.options);
        self.rx.on_syn(hdr.seq);
        self.state = State::SynReceived;
        self.syn_pending = true;
        self.snd_wnd = hdr.window as u64;
        self.rx.ts_recent_from(&hdr.options, 0, 0);
    }

    pub(super) fn on_segment_syn_sent(&mut self, now: Time, hdr: &TcpHeader) {
        if !hdr.has(flags::ACK) {
            return; // simultaneous open is not supported; ignore a bare SYN
        }
        let ack = from_wire(self.iss, hdr.ack, self.snd_una);
        if ack != 1 {
            return;
        }
        if hdr.has(flags::RST) {
            self.state = State::Closed;
            self.close_reason = Some(super::CloseReason::Reset);
            return;
        }
        if !hdr.has(flags::SYN) {
            return;
        }
        self.negotiate(&hdr.options);
        self.rx.on_syn(hdr.seq);
        self.rx.ts_recent_from(&hdr.options, 0, 0);
        self.snd_una = 1;
        self.snd_nxt = self.snd_nxt.max(1);
        self.snd_wnd = hdr.window as u64; // windows in SYNs are never scaled
        self.take_handshake_rtt(now, &hdr.options);
        self.retries = 0;
        self.state = State::Established;
        self.restart_rto(now);
        self.rx.request_ack();
        self.jump_start(now);
    }

    /// The handshake's RTT sample: from the timestamp echo, else from the SYN's send time
    /// unless it was sent twice (Karn).
    pub(super) fn take_handshake_rtt(&mut self, now: Time, opts: &TcpOptions) {
        if let (true, Some(ts)) = (self.options.timestamps, opts.timestamps) {
            self.rtt_sample(now, super::ack::ts_elapsed(now, ts.ecr));
        } else if let Some(sent) = self.sent.take_timed() {
            if !self.syn_retransmitted {
                self.rtt_sample(now, now - sent);
            }
        }
    }

    /// Record what the peer offered in its SYN / SYN-ACK.
    fn negotiate(&mut self, o: &TcpOptions) {
        // An MSS offer below 48 bytes is raised to 48, as Linux's tcp_min_snd_mss does: a
        // tiny MSS would make every count in segments (SNACK, windows) overflow.
        let peer_mss = o.mss.map_or(536, |m| m as u32).max(MIN_PEER_MSS);
        self.peer_mss = peer_mss;
        self.options.window_scaling = self.cfg.window_scaling && o.window_scale.is_some();
        if self.options.window_scaling {
            self.options.snd_wscale = o.window_scale.unwrap_or(0).min(14);
        } else {
            self.options.rcv_wscale = 0;
        }
        self.options.timestamps = self.cfg.timestamps && o.timestamps.is_some();
        self.options.sack = self.cfg.sack && o.sack_permitted;
        // SCPS-TP features need both ends; a plain TCP peer makes this a plain TCP connection.
        self.scps.agreed = scps::Negotiated::from(&self.cfg.scps, o.scps_capabilities);
        if self.scps.agreed.scps {
            self.rx
                .set_ack_period(self.cfg.scps.ack_period.map(|d| d.0));
            if self.scps.agreed.bets {
                self.rx.set_bets(self.cfg.scps.bets.map(|d| d.0));
            }
        }
        self.recovery = Policy::new(self.cfg.recovery, self.options.sack, self.cfg.prr);
        let mss = self.own_mss.min(peer_mss);
        // RFC 6691: the MSS excludes options, so data segments carry less when timestamps ride
        // on every segment.
        self.seg_size = self.payload_of(mss) as u32;
        self.win.mss = self.seg_size as u64;
        self.win.cwnd = self.cfg.initial_window.bytes(self.win.mss);
        if self.cfg.congestion_control == CongestionControlKind::None {
            self.win.cwnd = nucc::OPEN;
            self.win.ssthresh = nucc::OPEN;
        }
        if self.win.ssthresh != u64::MAX {
            self.win.ssthresh = self.win.ssthresh.max(2 * self.win.mss);
        }
    }

    /// Our SYN (active open) or SYN-ACK (passive): a passive end offers only what the
    /// peer's SYN offered.
    pub(super) fn transmit_syn(&mut self, now: Time, h: &mut TcpHeader) -> Sent {
        self.syn_pending = false;
        let passive = self.state == State::SynReceived;
        let fl = if passive {
            flags::SYN | flags::ACK
        } else {
            flags::SYN
        };
        self.header(h, fl, 0, now);
        h.window = self.cfg.receive_buffer.0.min(65535) as u16;
        let o = &mut h.options;
        o.mss = Some(self.own_mss.min(65535) as u16);
        if self.cfg.window_scaling && (!passive || self.options.window_scaling) {
            o.window_scale = Some(self.options.rcv_wscale);
        }
        o.sack_permitted = self.cfg.sack && (!passive || self.options.sack);
        if self.cfg.scps.enabled && (!passive || self.scps.agreed.scps) {
            o.scps_capabilities = Some(spacetp_wire::ScpsCapabilities {
                vector: scps::offer(&self.cfg.scps),
                connection_id: self.conn_id,
            });
        }
        if self.cfg.timestamps && (!passive || self.options.timestamps) {
            o.timestamps = Some(Timestamps {
                val: ts_clock(now),
                ecr: self.rx.ts_recent(),
            });
        } else if !passive {
            o.timestamps = None;
        }
        let retx = self.snd_max > 0;
        if retx {
            self.syn_retransmitted = true;
            self.sent.stop_timing();
        } else {
            self.sent.time(1, now);
        }
        self.snd_nxt = self.snd_nxt.max(1);
        self.snd_max = self.snd_max.max(1);
        let at = now + self.handshake_rto();
        self.timers.set_if_idle(Timer::Rto, at);
        self.emit(h, 0, 0, retx)
    }
}

/// Smallest window-scale shift that lets `buf` be advertised (RFC 7323, at most 14).
pub(super) fn wscale_for(buf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (buf >> s) > 65535 {
        s += 1;
    }
    s
}
