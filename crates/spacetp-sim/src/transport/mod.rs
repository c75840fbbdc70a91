//! The one interface through which the world drives a transport. A transport is a sans-IO
//! state machine: the world hands it what arrives for it, asks it what to send and when to
//! wake it, and lets the application write and read through it. Links, queues, error
//! models, traces and pcap taps see only [`Outgoing`] packets and their [`Wire`] contents.
//!
//! TCP and SCPS-TP (`spacetp-proto`'s `Connection`, `tcp/`), datagrams (`datagram.rs`),
//! QUIC (`quic/`) and LTP (`ltp/`) implement it. What only some of them have (a BP hop's
//! blocks, forged segments, datagram counters) is a capability (`capabilities.rs`) the
//! world asks for, never a downcast. Adding a transport is a folder here that implements
//! [`Transport`] and a registry entry (`registry.rs`: its protocols, settings table and
//! schema, the flow fields it takes, how its ends are built), one line in
//! `registry::TRANSPORTS`, and a [`Wire`] variant if its packets differ from those already
//! here.

pub mod bp;
pub mod capabilities;
pub mod cfdp;
pub mod datagram;
pub mod ltp;
pub mod quic;
pub mod registry;
pub mod tcp;

pub use registry::{EndsSpec, TransportSpec};

use crate::limits::Limit;
use crate::result::FlowSummary;
use capabilities::{ConvergenceLayer, DatagramCounts, ForgedSegments};
use spacetp_proto::Time;
use spacetp_wire::{CompressedHeader, TcpHeader};

/// The address of node `i`: 10.x.y.z counting from 10.0.0.1.
pub fn node_addr(i: u16) -> [u8; 4] {
    let n = i as u32 + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// What a transport's packet carries across the links.
// Packets live in a slab reused across the run; boxing the large variant would allocate per
// packet, which is what the slab avoids.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum Wire {
    /// A TCP or SCPS-TP segment: its header fields and `len` payload bytes (the simulator
    /// carries no payload bytes); `comp` is the SCPS compressed header it travels with when
    /// the connection negotiated compression (the receiver decodes that, not `hdr`, which is
    /// what the sender meant).
    Tcp {
        hdr: TcpHeader,
        len: u32,
        comp: Option<CompressedHeader>,
    },
    /// A datagram of `size` bytes (IP size, headers included).
    Datagram {
        src_port: u16,
        dst_port: u16,
        size: u32,
    },
    /// A UDP datagram whose `len` payload bytes are real and travel in the packet's
    /// payload buffer: QUIC's encrypted packets, LTP's segments.
    Udp {
        src_port: u16,
        dst_port: u16,
        len: u32,
    },
    /// A packet slot the transport has not written yet: the world reserves the slot and the
    /// transport writes its packet into it, which spares copying every header twice.
    Unfilled,
}

impl Wire {
    /// Source and destination ports, for pcap output.
    pub fn ports(&self) -> (u16, u16) {
        match self {
            Wire::Tcp { hdr, .. } => (hdr.src_port, hdr.dst_port),
            Wire::Datagram {
                src_port, dst_port, ..
            }
            | Wire::Udp {
                src_port, dst_port, ..
            } => (*src_port, *dst_port),
            Wire::Unfilled => (0, 0),
        }
    }
}

/// What the world needs to know of a packet a transport wrote.
#[derive(Clone, Copy, Debug)]
pub struct Outgoing {
    /// IP packet size on the link, in bytes.
    pub size: u32,
    /// Served only with spare capacity and dropped first (TCP-Peach+ NIL segments).
    pub low_priority: bool,
    /// The application data it carries, for the `segments` trace.
    pub data: Option<DataSent>,
}

/// Application data in a packet: stream offset of its first byte, length, and whether the
/// transport sends it again.
#[derive(Clone, Copy, Debug)]
pub struct DataSent {
    pub offset: u64,
    pub len: u32,
    pub retransmission: bool,
}

/// A sender's congestion state, for the `samples` trace.
#[derive(Clone, Copy, Debug)]
pub struct SenderState {
    pub cwnd: u64,
    /// `u64::MAX` before the first loss.
    pub ssthresh: u64,
    pub srtt: Option<Time>,
    pub in_flight: u64,
    /// Application bytes sent (highest offset) and acknowledged so far.
    pub sent: u64,
    pub acked: u64,
}

/// Why a sending end is not sending now: its answer to the limit analysis (`limits/`),
/// which the world refines with what only it sees (links down, the application, the path).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SendLimit {
    Handshake,
    /// Waiting out an announced link outage.
    Outage,
    /// Loss recovery, or a retransmission timeout's wait.
    Recovery,
    /// Everything the application wrote has been sent.
    AllSent,
    /// The send buffer is full (`buffer` bytes), everything in it sent.
    SendBuffer {
        buffer: u64,
    },
    /// The receiver's window or flow-control credit (`window` bytes) is used up.
    ReceiveWindow {
        window: u64,
    },
    /// The congestion window (`window` bytes) is full.
    CongestionWindow {
        window: u64,
    },
    RateControl,
    Pacing,
    /// Every export session (LTP) is busy while data waits for one.
    Sessions,
    Closed,
    /// Nothing holds it.
    Ready,
}

impl From<spacetp_proto::SendLimit> for SendLimit {
    fn from(l: spacetp_proto::SendLimit) -> Self {
        use spacetp_proto::SendLimit as P;
        match l {
            P::Handshake => SendLimit::Handshake,
            P::Outage => SendLimit::Outage,
            P::Recovery => SendLimit::Recovery,
            P::AllSent => SendLimit::AllSent,
            P::SendBuffer { buffer } => SendLimit::SendBuffer { buffer },
            P::ReceiveWindow { window } => SendLimit::ReceiveWindow { window },
            P::CongestionWindow { window } => SendLimit::CongestionWindow { window },
            P::RateControl => SendLimit::RateControl,
            P::Pacing => SendLimit::Pacing,
            P::Closed => SendLimit::Closed,
            P::Ready => SendLimit::Ready,
        }
    }
}

/// One end of a flow, driven by the world.
pub trait Transport {
    /// A packet for this end arrived; `payload` holds its bytes when its transport writes
    /// real ones (QUIC), and is empty otherwise.
    fn on_packet(&mut self, now: Time, wire: &Wire, payload: &[u8]);
    /// Write the next packet to send at `now` into `wire` (and its bytes into `payload`,
    /// for a transport whose packets are real bytes) and describe it; `None` when there is
    /// nothing to send. The world calls until `None`.
    fn poll_transmit(
        &mut self,
        now: Time,
        wire: &mut Wire,
        payload: &mut Vec<u8>,
    ) -> Option<Outgoing>;
    /// When `on_timeout` next has work to do.
    fn poll_timeout(&self) -> Option<Time>;
    fn on_timeout(&mut self, now: Time);
    /// The endpoint's timer event at `now` (a deadline `poll_timeout` gave): handle what is
    /// due, if anything still is. A transport whose `on_timeout` finds its due timers itself
    /// (TCP: one per paced departure) answers without being asked `poll_timeout` first.
    fn on_timer(&mut self, now: Time) {
        if self.poll_timeout().is_some_and(|d| d <= now) {
            self.on_timeout(now);
        }
    }

    /// The application offers `n` more bytes; returns how many the transport took.
    fn write(&mut self, n: u64) -> u64;
    /// Nothing more will be written.
    fn close(&mut self);
    /// Bytes delivered in order to the application so far.
    fn delivered(&self) -> u64;

    // The byte stream an application reads at its own pace (TCP). The defaults are those of
    // a transport that hands over messages, blocks or files as they complete (LTP, CFDP,
    // QUIC here, datagrams): nothing to read by hand, no record marks, no receive window.
    /// The bytes written so far end a record.
    fn end_record(&mut self) {}
    /// From now on the application reads only through `read`.
    fn set_manual_read(&mut self) {}
    fn read(&mut self, _n: u64) -> u64 {
        0
    }
    /// In-order bytes waiting to be read.
    fn readable(&self) -> u64 {
        0
    }
    /// The receive buffer (a reading application earns at most this much credit).
    fn receive_buffer(&self) -> u64 {
        u64::MAX
    }
    /// The peer has finished sending and this end has not closed yet.
    fn peer_closed(&self) -> bool {
        false
    }
    /// Both directions are done (or the connection ended otherwise).
    fn is_finished(&self) -> bool;
    /// Why the connection ended abnormally (reset, timed out, aborted, or the transport
    /// refused to go on), if it did.
    fn failure(&self) -> Option<String>;
    fn failed(&self) -> bool {
        self.failure().is_some()
    }

    /// Whether routers and ground stations send this end their signals (SCPS-TP corruption
    /// and link-outage notices): they do to every TCP endpoint, which may ignore them.
    fn takes_signals(&self) -> bool {
        true
    }
    /// Whether a ground station tells this end of link outages now: while it runs. A
    /// connectionless transport (LTP) keeps listening between its sessions: a notice it
    /// missed would leave it believing a link down that came back.
    fn listens_for_link_state(&self) -> bool {
        self.takes_signals() && !self.is_finished()
    }
    /// Our link layer discarded a corrupted packet addressed to this end.
    fn on_corruption_detected(&mut self) {}
    /// A router reports that a packet this end sent was corrupted on the way.
    fn on_corruption_notice(&mut self, _now: Time) {}
    /// A ground station on the path reports its link down, or back up.
    fn on_link_outage(&mut self, _now: Time) {}
    fn on_link_restored(&mut self, _now: Time) {}

    /// The congestion state of a sending end.
    fn sender_state(&self) -> SenderState;
    /// Why this sending end is not sending at `now`, asked right after the world polled it
    /// dry. `peer` is the flow's other end: a simulator sees both (QUIC's flow-control
    /// credit is judged by what the receiver has taken).
    fn send_limit(&self, now: Time, peer: &dyn Transport) -> SendLimit;
    /// This transport's setting that lifts `limit`: (its path under the flow, its value).
    fn limit_setting(&self, _limit: Limit) -> Option<(String, String)> {
        None
    }
    /// Fill in the sender's share of the flow summary.
    fn report_sender(&self, s: &mut FlowSummary);
    /// Fill in the receiver's share of the flow summary.
    fn report_receiver(&self, s: &mut FlowSummary);

    // Capabilities (`capabilities.rs`): what a transport has beyond the core, None where
    // it has not.
    /// A Bundle Protocol hop's blocks (LTP).
    fn convergence_layer(&mut self) -> Option<&mut dyn ConvergenceLayer> {
        None
    }
    fn convergence_layer_ref(&self) -> Option<&dyn ConvergenceLayer> {
        None
    }
    /// A byte stream an attacker can inject forged segments into (TCP).
    fn forged_segments(&mut self) -> Option<&mut dyn ForgedSegments> {
        None
    }
    /// What a traffic source's datagrams did at this end (UDP, QUIC DATAGRAM frames).
    fn datagram_counts(&self) -> Option<DatagramCounts> {
        None
    }
}

/// Where the two ends of a flow are: node indices and ports.
#[derive(Clone, Copy, Debug)]
pub struct Ends {
    pub client_node: u16,
    pub server_node: u16,
    pub client_port: u16,
    pub server_port: u16,
}
