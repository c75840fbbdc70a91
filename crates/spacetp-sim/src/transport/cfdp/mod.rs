//! CFDP through the transport interface: `spacetp-cfdp`'s sending and receiving entity at
//! the two ends of a flow, their PDUs real bytes in UDP datagrams (CFDP over UDP, as ION's
//! and cfdp-py's UDP entities carry them), so the links count their true sizes and pcaps
//! hold them. The flow's bytes are one file: the sender's Put.request once the application
//! has written all of it; the receiver delivers it when its transaction completes, whole
//! and its checksum verified (CFDP hands over files, not a stream). CFDP has no congestion
//! control: the sender's PDUs leave at `cfdp.rate` (the path's bottleneck by default).
//!
//! With `cfdp.carrier = "ltp"` (protocol `cfdp-ltp`) the PDUs travel as red client data of
//! an LTP span between the two ends instead (`spacetp-ltp`'s engine, as a Bundle Protocol
//! hop carries bundles): CFDP hands them to the span at its rate, LTP's segments are what
//! the links carry, and the blocks that arrive are split back into PDUs. With
//! `carrier = "bp"` (protocol `cfdp-bp`) each PDU this end yields is a bundle's payload:
//! the world hands it to the node's bundle agent instead of a link (world/dtn.rs), and a
//! bundle delivered to the other end's node comes back here as a packet.

pub mod entry;
pub mod fit;

use super::capabilities::ConvergenceLayer;
use super::ltp::{LtpSpec, LtpTransport};
use super::{DataSent, Ends, Outgoing, SendLimit, SenderState, Transport, Wire};
use crate::limits::{text, Limit};
use crate::result::{CfdpSummary, FlowSummary};
use spacetp_cfdp::{CfdpSettings, EntityStats, Receiver, Sender};
use spacetp_proto::Time;

/// The UDP port the PDUs travel on (IANA has none for CFDP; ION's and cfdp-py's UDP
/// examples pick their own).
pub const CFDP_PORT: u16 = 4556;
/// IPv4 and UDP headers around a PDU.
const IP_UDP_HEADERS: u32 = 28;

/// What a CFDP flow runs: its settings, file data bytes per PDU and the sender's rate.
#[derive(Clone, Debug)]
pub struct CfdpSpec {
    pub settings: CfdpSettings,
    pub segment: usize,
    /// Bits per second, IPv4 and UDP headers counted.
    pub rate_bps: f64,
    /// The LTP span that carries the PDUs (`carrier = "ltp"`); None: UDP.
    pub ltp: Option<LtpSpec>,
    /// The bundles' lifetime when bundles carry the PDUs (`carrier = "bp"`: the world
    /// hands each PDU to the node's bundle agent, world/dtn.rs).
    pub bundle_lifetime: Option<Time>,
}

enum Role {
    Sending(Box<Sender>),
    Receiving(Box<Receiver>),
}

/// One end of a CFDP flow.
pub struct CfdpTransport {
    role: Role,
    settings: CfdpSettings,
    rate_bps: f64,
    file_size: u64,
    peer: u16,
    /// Application bytes written so far, and whether the application is done writing.
    written: u64,
    closed: bool,
    put: bool,
    /// When the sender may send its next PDU (pacing).
    next_send: Time,
    link_down: bool,
    now: Time,
    first_sent: Option<Time>,
    file_data_sent: u64,
    segment: usize,
    /// The Put.request the sending entity refused, and why.
    put_refused: Option<String>,
    /// This end of the LTP span that carries the PDUs, if LTP does.
    ltp: Option<Box<LtpTransport>>,
}

impl CfdpSpec {
    /// The two ends of a flow: entity IDs are the nodes' numbers (index + 1).
    /// `seq` is the transaction's sequence number (two files between the same entities are
    /// two transactions).
    /// `seed` seeds the LTP engines' session numbers, if LTP carries the PDUs.
    pub(crate) fn open(&self, ends: Ends, seq: u16, seed: u64) -> (CfdpTransport, CfdpTransport) {
        let (a, b) = (ends.client_node + 1, ends.server_node + 1);
        let s = &self.settings;
        let (mut ltp_a, mut ltp_b) = match &self.ltp {
            Some(spec) => {
                let (x, y) = spec.open_hop(a as u64, b as u64, seed);
                (Some(Box::new(x)), Some(Box::new(y)))
            }
            None => (None, None),
        };
        let end = |role, peer, ltp: &mut Option<Box<LtpTransport>>| CfdpTransport {
            role,
            settings: s.clone(),
            rate_bps: self.rate_bps,
            file_size: 0,
            peer,
            written: 0,
            closed: false,
            put: false,
            next_send: 0,
            link_down: false,
            now: 0,
            first_sent: None,
            file_data_sent: 0,
            segment: self.segment,
            put_refused: None,
            ltp: ltp.take(),
        };
        let tx = Role::Sending(Box::new(Sender::new(s, a, b, self.segment, seq)));
        let rx = Role::Receiving(Box::new(Receiver::new(s, b, a, self.segment)));
        (end(tx, b, &mut ltp_a), end(rx, a, &mut ltp_b))
    }
}

impl CfdpTransport {
    /// The application wrote the whole file: CFDP's Put.request.
    fn maybe_put(&mut self, now: Time) {
        if self.put || !self.closed {
            return;
        }
        if let Role::Sending(tx) = &mut self.role {
            self.put = true;
            self.file_size = self.written;
            if let Err(e) = tx.put(now, self.written, self.peer, &self.settings) {
                self.put_refused = Some(format!("the CFDP Put.request was refused: {e}"));
            }
        }
    }

    fn stats(&self) -> EntityStats {
        match &self.role {
            Role::Sending(tx) => tx.stats(),
            Role::Receiving(rx) => rx.stats(),
        }
    }

    fn has_data(&self) -> bool {
        match &self.role {
            Role::Sending(tx) => tx.has_data(),
            Role::Receiving(rx) => rx.has_data(),
        }
    }

    /// The next PDU the entity has, if pacing lets it go now: counted as sent.
    fn take_pdu(&mut self, now: Time) -> Option<Vec<u8>> {
        if now < self.next_send || self.link_down {
            return None;
        }
        let (pdu, file_data) = match &mut self.role {
            Role::Sending(tx) => tx.next_pdu(now)?,
            Role::Receiving(rx) => rx.next_pdu()?,
        };
        self.first_sent.get_or_insert(now);
        self.next_send = now.max(self.next_send) + self.gap(pdu.len());
        self.file_data_sent += file_data as u64;
        Some(pdu)
    }

    /// PDUs in the blocks LTP delivered go to the entity; units of canceled sessions are
    /// handed to the span again (as a bundle agent does).
    fn take_blocks(&mut self, now: Time) {
        let Some(ltp) = self.ltp.as_mut() else { return };
        let (blocks, back) = ltp.take_hop_io();
        for u in back {
            ltp.send_sdu(now, u.to_vec());
        }
        for b in blocks {
            for pdu in spacetp_cfdp::outbox::split_pdus(&b) {
                match &mut self.role {
                    Role::Sending(tx) => tx.on_pdu(now, pdu),
                    Role::Receiving(rx) => rx.on_pdu(now, pdu),
                }
            }
        }
    }

    fn entity_timeout(&self) -> Option<Time> {
        match &self.role {
            Role::Sending(tx) => tx.next_timeout(),
            Role::Receiving(rx) => rx.next_timeout(),
        }
    }

    fn gap(&self, bytes: usize) -> Time {
        ((bytes as u32 + IP_UDP_HEADERS) as f64 * 8.0 / self.rate_bps * 1e9).ceil() as Time
    }
}

impl Transport for CfdpTransport {
    fn on_packet(&mut self, now: Time, wire: &Wire, payload: &[u8]) {
        self.now = now;
        if let Some(ltp) = self.ltp.as_mut() {
            ltp.on_packet(now, wire, payload);
            self.take_blocks(now);
            return;
        }
        let Wire::Udp { len, .. } = wire else { return };
        let pdu = &payload[..*len as usize];
        match &mut self.role {
            Role::Sending(tx) => tx.on_pdu(now, pdu),
            Role::Receiving(rx) => rx.on_pdu(now, pdu),
        }
    }

    fn poll_transmit(
        &mut self,
        now: Time,
        wire: &mut Wire,
        payload: &mut Vec<u8>,
    ) -> Option<Outgoing> {
        self.now = now;
        self.maybe_put(now);
        if self.ltp.is_some() {
            // CFDP's PDUs go to the span at CFDP's pace; LTP's segments leave.
            while let Some(pdu) = self.take_pdu(now) {
                self.ltp.as_mut()?.send_sdu(now, pdu);
            }
            return self.ltp.as_mut()?.poll_transmit(now, wire, payload);
        }
        let pdu = self.take_pdu(now)?;
        payload.clear();
        payload.extend_from_slice(&pdu);
        let len = pdu.len() as u32;
        *wire = Wire::Udp {
            src_port: CFDP_PORT,
            dst_port: CFDP_PORT,
            len,
        };
        Some(Outgoing {
            size: IP_UDP_HEADERS + len,
            low_priority: false,
            data: None::<DataSent>,
        })
    }

    /// The next timer, or the instant pacing lets the next PDU go.
    fn poll_timeout(&self) -> Option<Time> {
        let timer = self.entity_timeout();
        let send = (self.has_data() && !self.link_down && self.next_send > self.now)
            .then_some(self.next_send);
        let ltp = self.ltp.as_ref().and_then(|l| l.poll_timeout());
        timer.into_iter().chain(send).chain(ltp).min()
    }

    fn on_timeout(&mut self, now: Time) {
        self.now = now;
        if let Some(ltp) = self.ltp.as_mut() {
            if ltp.poll_timeout().is_some_and(|t| t <= now) {
                ltp.on_timeout(now);
                self.take_blocks(now);
            }
            if self.entity_timeout().is_none_or(|t| t > now) {
                return;
            }
        }
        match &mut self.role {
            Role::Sending(tx) => tx.on_timeout(now),
            Role::Receiving(rx) => rx.on_timeout(now),
        }
    }

    fn write(&mut self, n: u64) -> u64 {
        if self.closed {
            return 0;
        }
        self.written += n;
        n
    }

    fn close(&mut self) {
        self.closed = true;
    }

    /// The file, once the receiving entity's transaction completed with it whole.
    fn delivered(&self) -> u64 {
        match &self.role {
            Role::Receiving(rx) => rx.delivered().unwrap_or(0),
            Role::Sending(_) => 0,
        }
    }

    fn is_finished(&self) -> bool {
        match &self.role {
            Role::Sending(tx) => tx.is_finished(),
            Role::Receiving(rx) => rx.is_finished(),
        }
    }

    /// A transaction that ended without the file: its condition (727.0-B-5 condition
    /// codes), file status and the faults declared. The receiver's transaction can end
    /// "NoError" without the file (cfdp-rs 0.3.0 when the metadata PDU was lost: it refuses
    /// the file data that came first): that is a failure too, never a silent success.
    fn failure(&self) -> Option<String> {
        if let Some(why) = &self.put_refused {
            return Some(why.clone());
        }
        let st = self.stats();
        let f = st.finished.as_ref()?;
        let delivered = match &self.role {
            Role::Receiving(rx) => rx.delivered().is_some(),
            Role::Sending(_) => f.complete && f.condition == "NoError",
        };
        if delivered {
            return None;
        }
        let faults: Vec<String> = st.faults.iter().map(|(c, n)| format!("{c} x{n}")).collect();
        let held = match &self.role {
            Role::Receiving(rx) => format!(", {} B of the file held", rx.received().0),
            Role::Sending(_) => String::new(),
        };
        Some(format!(
            "the CFDP transaction ended without the file: condition {}, file {}{held}{}",
            f.condition,
            f.file_status,
            if faults.is_empty() {
                String::new()
            } else {
                format!(" (faults: {})", faults.join(", "))
            }
        ))
    }

    /// CFDP entities listen to ground stations: while the link is down an entity holds its
    /// PDUs and, with `suspend_on_outage` (the default), its timers.
    fn listens_for_link_state(&self) -> bool {
        true
    }

    fn on_link_outage(&mut self, now: Time) {
        self.link_down = true;
        if let Some(ltp) = self.ltp.as_mut() {
            ltp.on_link_outage(now);
        }
        if self.settings.suspend_on_outage {
            match &mut self.role {
                Role::Sending(tx) => tx.suspend(now),
                Role::Receiving(rx) => rx.suspend(now),
            }
        }
    }

    fn on_link_restored(&mut self, now: Time) {
        self.link_down = false;
        if let Some(ltp) = self.ltp.as_mut() {
            ltp.on_link_restored(now);
        }
        match &mut self.role {
            Role::Sending(tx) => tx.resume(now),
            Role::Receiving(rx) => rx.resume(now),
        }
    }

    fn sender_state(&self) -> SenderState {
        SenderState {
            cwnd: 0,
            ssthresh: u64::MAX,
            srtt: None,
            in_flight: 0,
            sent: self.file_data_sent,
            acked: 0,
        }
    }

    /// CFDP's limit states: no handshake, no window; PDUs wait only for the pacing rate,
    /// and after EOF for the receiver's answer (its NAKs, its Finished).
    fn send_limit(&self, _now: Time, _peer: &dyn Transport) -> SendLimit {
        if self.is_finished() {
            return SendLimit::Closed;
        }
        if self.link_down {
            return SendLimit::Outage;
        }
        if self.has_data() {
            return SendLimit::RateControl;
        }
        SendLimit::AllSent
    }

    fn limit_setting(&self, limit: Limit) -> Option<(String, String)> {
        match limit {
            Limit::RateControl => Some(("cfdp.rate".into(), text::rate(self.rate_bps))),
            _ => None,
        }
    }

    fn report_sender(&self, s: &mut FlowSummary) {
        let st = self.stats();
        s.segments_sent = st.pdus.total();
        s.data_segments_sent = st.pdus.file_data;
        let original = self.file_size.div_ceil(self.segment as u64).max(1);
        s.retransmitted_segments = st.pdus.file_data.saturating_sub(original);
        s.timeouts = st.timer_expiries.iter().sum();
        s.state = if self.is_finished() { "closed" } else { "open" }.into();
        let c = s.cfdp.get_or_insert_with(CfdpSummary::default);
        c.class = self.settings.class;
        c.sender_pdus = st.pdus;
        c.sender_timer_expiries = st.timer_expiries;
        c.sender_pdus_refused = st.refused;
        c.sender_suspensions = st.suspensions;
        c.prompts_sent = st.prompts;
        c.sender_faults = st.faults;
        c.sender_condition = st.finished.map(|f| f.condition);
        // Over LTP, the segments on the wire are LTP's (its block in the summary too).
        if let Some(ltp) = &self.ltp {
            ltp.report_sender(s);
            s.state = if self.is_finished() { "closed" } else { "open" }.into();
        }
    }

    fn report_receiver(&self, s: &mut FlowSummary) {
        let st = self.stats();
        s.acks_sent = st.pdus.ack;
        s.receiver_state = if self.is_finished() { "closed" } else { "open" }.into();
        let c = s.cfdp.get_or_insert_with(CfdpSummary::default);
        c.receiver_pdus = st.pdus;
        c.naks_sent = st.pdus.nak;
        c.receiver_timer_expiries = st.timer_expiries;
        c.receiver_pdus_refused = st.refused;
        c.receiver_suspensions = st.suspensions;
        c.keep_alives_sent = st.keep_alives;
        c.reported_progress = st.reported_progress;
        c.receiver_faults = st.faults;
        if let Some(f) = st.finished {
            c.receiver_condition = Some(f.condition);
            c.file_status = Some(f.file_status);
        }
        if let Role::Receiving(rx) = &self.role {
            let (held, intact) = rx.received();
            c.file_bytes_received = held;
            c.file_intact = intact;
        }
        if let Some(ltp) = &self.ltp {
            ltp.report_receiver(s);
            s.acks_sent = st.pdus.ack;
            s.receiver_state = if self.is_finished() { "closed" } else { "open" }.into();
        }
    }
}
