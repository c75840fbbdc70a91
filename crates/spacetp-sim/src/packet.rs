//! Packets carry header fields, and payload bytes only for transports whose packets are real
//! bytes (QUIC's encrypted datagrams). They live in a slab reused across the run, each slot
//! with its own byte buffer, so the hot path allocates nothing once the slab has grown to
//! the peak in flight.

use crate::transport::Wire;

/// A packet's slot in the slab (defined with the event queue, which links and packets share).
pub use crate::engine::PacketId;

// Packets live in a slab reused across the run; boxing the large variant would allocate per
// packet, which is what the slab avoids.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, Debug)]
pub enum Body {
    /// A packet of a transport for endpoint `ep`.
    Transport { ep: u32, wire: Wire },
    /// An ICMP-like notice from a router to endpoint `ep`: a packet it sent was corrupted on
    /// the way (SCPS-TP corruption signalling).
    CorruptionNotice { ep: u32 },
    /// A ground station tells endpoint `ep` that a link on its path went down or came back
    /// (SCPS-TP link outage signalling).
    LinkNotice { ep: u32, up: bool },
}

/// Size of a notice on the wire: IPv4 + ICMP headers + the offending IP header + 8 bytes.
pub const NOTICE_SIZE: u32 = 20 + 8 + 20 + 8;

#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub src: u16,
    pub dst: u16,
    /// IP packet size in bytes.
    pub size: u32,
    pub corrupted: bool,
    /// Served only when no normal packet waits, and dropped first (TCP-Peach+ NIL segments),
    /// where the queue's discipline is `priority`.
    pub low_priority: bool,
    pub body: Body,
}

/// The packets alive, in slots reused across the run.
#[derive(Default)]
pub struct Slab {
    items: Vec<Packet>,
    /// Each slot's payload bytes (empty for packets that carry none); a buffer is reused
    /// by the slot's next packet.
    payloads: Vec<Vec<u8>>,
    free: Vec<PacketId>,
    /// Packets alive now, and the most alive at once so far (reserved slots not counted).
    live: usize,
    peak: usize,
}

impl Slab {
    pub fn insert(&mut self, p: Packet) -> PacketId {
        let id = self.reserve(p);
        self.commit();
        id
    }

    /// A slot for a packet still being written (a transport writes its header in place);
    /// it counts as alive once `commit`ted, or goes back with `release`.
    pub fn reserve(&mut self, p: Packet) -> PacketId {
        let id = self.reserve_slot(p);
        self.items[id as usize] = p;
        id
    }

    /// A slot for a transport's next packet from `src` to endpoint `ep` at `dst`. A reused
    /// slot keeps what its last packet's transport wrote, so that the same transport can
    /// overwrite its header in place rather than have it copied in; the transport decides
    /// whether what is there is of its kind.
    pub fn reserve_transport(&mut self, src: u16, dst: u16, ep: u32) -> PacketId {
        let fresh = Packet {
            src,
            dst,
            size: 0,
            corrupted: false,
            low_priority: false,
            body: Body::Transport {
                ep,
                wire: Wire::Unfilled,
            },
        };
        let id = self.reserve_slot(fresh);
        // A slot last used by a transport with real bytes (QUIC) must not lend them to one
        // without (a datagram source's pcap record would carry them).
        self.payloads[id as usize].clear();
        let p = &mut self.items[id as usize];
        (p.src, p.dst, p.size, p.corrupted, p.low_priority) = (src, dst, 0, false, false);
        match &mut p.body {
            Body::Transport { ep: e, .. } => *e = ep,
            other => *other = fresh.body,
        }
        id
    }

    /// A free slot, or a new one holding `p`.
    fn reserve_slot(&mut self, p: Packet) -> PacketId {
        self.free.pop().unwrap_or_else(|| {
            self.items.push(p);
            self.payloads.push(Vec::new());
            (self.items.len() - 1) as PacketId
        })
    }

    /// The reserved packet is written: it is alive.
    pub fn commit(&mut self) {
        self.live += 1;
        self.peak = self.peak.max(self.live);
    }

    /// A reserved slot that was not needed.
    pub fn release(&mut self, id: PacketId) {
        self.free.push(id);
    }

    pub fn get(&self, id: PacketId) -> &Packet {
        &self.items[id as usize]
    }

    pub fn get_mut(&mut self, id: PacketId) -> &mut Packet {
        &mut self.items[id as usize]
    }

    /// A packet and its payload bytes, to write them together.
    pub fn get_with_payload_mut(&mut self, id: PacketId) -> (&mut Packet, &mut Vec<u8>) {
        (
            &mut self.items[id as usize],
            &mut self.payloads[id as usize],
        )
    }

    /// A packet's payload bytes (empty unless its transport writes real bytes).
    pub fn payload(&self, id: PacketId) -> &[u8] {
        &self.payloads[id as usize]
    }

    /// Release a slot without reading it.
    pub fn free(&mut self, id: PacketId) {
        self.free.push(id);
        self.live -= 1;
    }

    pub fn remove(&mut self, id: PacketId) -> Packet {
        self.free(id);
        self.items[id as usize]
    }

    /// Most packets alive at once so far.
    pub fn capacity_used(&self) -> usize {
        self.peak
    }
}
