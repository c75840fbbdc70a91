//! Packets carry header fields, never payload bytes. They live in a slab reused across the
//! run, so the hot path allocates nothing once the slab has grown to the peak in flight.

use crate::transport::Wire;

pub type PacketId = u32;

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
        if let Some(id) = self.free.pop() {
            self.items[id as usize] = p;
            id
        } else {
            self.items.push(p);
            (self.items.len() - 1) as PacketId
        }
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
