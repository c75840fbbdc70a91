//! The sending entity of one file: cfdp-rs's source handler, with NAKs answered here
//! (`retransmit.rs`), Prompts for Keep Alives (`keep_alive.rs`) and a Finished PDU sent
//! again after the end acknowledged again (`late.rs`).

use crate::clock::{SimCountdown, Timers};
use crate::entity::{EntityStats, Parts, DEST_FILE, SOURCE_FILE};
use crate::events::Events;
use crate::filestore::Files;
use crate::outbox::Outbox;
use crate::settings::CfdpSettings;
use cfdp::request::PutRequestOwned;
use cfdp::source::{SourceHandler, TransactionStep};
use cfdp::{PduOwnedWithInfo, RemoteEntityConfig};
use spacepackets::util::UnsignedByteFieldU16;
use spacetp_proto::Time;
use std::sync::atomic::AtomicU16;

type Source =
    SourceHandler<Outbox, Events, Files, RemoteEntityConfig, Timers, SimCountdown, AtomicU16>;

/// The sending entity of one file.
pub struct Sender {
    handler: Source,
    parts: Parts,
    started: bool,
    segment: u64,
    file_size: u64,
    /// The transaction's PDU configuration (from the first PDU the handler wrote): the
    /// header of the repairs sent here.
    conf: Option<spacepackets::cfdp::pdu::CommonPduConfig>,
    /// Repairs waiting to go, before anything else the handler writes, and Prompts before
    /// them.
    repairs: std::collections::VecDeque<Vec<u8>>,
    control: std::collections::VecDeque<Vec<u8>>,
    repairs_sent: u64,
    /// Prompts for a Keep Alive: how often, the lag allowed, when the next one is due (the
    /// caller's time), how many went, and what the last Keep Alive said.
    keep_alive: Option<(Time, Option<u64>)>,
    next_prompt: Option<Time>,
    prompts: u64,
    reported_progress: Option<u64>,
    /// How far the first pass has sent the file.
    progress_sent: u64,
    /// The file's name in the filestore.
    source: String,
    /// ACKs of Finished PDUs sent again after the transaction ended.
    late_acks: u64,
}

impl Sender {
    /// Entity `local` sending to `remote`, file data in PDUs of `segment` bytes; its
    /// transaction's sequence number is `seq`.
    pub fn new(s: &CfdpSettings, local: u16, remote: u16, segment: usize, seq: u16) -> Sender {
        let (parts, cfg) = Parts::new(s, local, Files::default());
        let handler = SourceHandler::new(
            cfg,
            parts.outbox.clone(),
            parts.files.clone(),
            s.remote(remote, segment),
            parts.timers.clone(),
            AtomicU16::new(seq),
        );
        Sender {
            handler,
            parts,
            started: false,
            segment: segment as u64,
            file_size: 0,
            conf: None,
            repairs: Default::default(),
            control: Default::default(),
            repairs_sent: 0,
            keep_alive: s
                .keep_alive_interval
                .filter(|_| s.class == 2)
                .map(|d| (d.0, s.keep_alive_limit.map(|b| b.0))),
            next_prompt: None,
            prompts: 0,
            reported_progress: None,
            progress_sent: 0,
            source: SOURCE_FILE.into(),
            late_acks: 0,
        }
    }

    /// Begin sending a file of `size` bytes (CFDP's Put.request).
    pub fn put(
        &mut self,
        now: Time,
        size: u64,
        remote: u16,
        s: &CfdpSettings,
    ) -> Result<(), String> {
        self.parts.files.add_source(SOURCE_FILE, size);
        self.request(now, DEST_FILE, size, remote, s)
    }

    /// Begin sending the file on disk at `real`, to be named `dest` at the receiver;
    /// returns its size.
    pub fn put_file(
        &mut self,
        now: Time,
        real: &std::path::Path,
        dest: &str,
        remote: u16,
        s: &CfdpSettings,
    ) -> Result<u64, String> {
        self.source = real.to_string_lossy().into_owned();
        let size = self
            .parts
            .files
            .add_disk_source(&self.source, real)
            .map_err(|e| format!("{}: {e}", real.display()))?;
        self.request(now, dest, size, remote, s)?;
        Ok(size)
    }

    /// CFDP's Put.request of the source file to `dest`.
    fn request(
        &mut self,
        now: Time,
        dest: &str,
        size: u64,
        remote: u16,
        s: &CfdpSettings,
    ) -> Result<(), String> {
        self.parts.timers.set_now(now);
        let req = PutRequestOwned::new_regular_request(
            UnsignedByteFieldU16::new(remote).into(),
            &self.source,
            dest,
            Some(s.mode()),
            Some(s.closure || s.class == 2),
        )
        .map_err(|e| format!("a file name of {} bytes is too long (at most 255)", e.0))?;
        self.handler.put_request(&req).map_err(|e| e.to_string())?;
        self.started = true;
        self.file_size = size;
        self.next_prompt = self.keep_alive.map(|(every, _)| now + every);
        Ok(())
    }

    /// A PDU from the receiver. A NAK is answered here (`retransmit.rs`); the handler
    /// sees only a request for the metadata.
    pub fn on_pdu(&mut self, now: Time, raw: &[u8]) {
        self.parts.timers.set_now(now);
        if self.is_finished() && self.handler.state() == cfdp::State::Idle {
            // Only a Finished PDU sent again can still come: its ACK was lost.
            match crate::late::ack_of_finished(raw) {
                Some(ack) => {
                    self.control.push_back(ack);
                    self.late_acks += 1;
                }
                None => self.parts.refused += 1,
            }
            return;
        }
        if self.waits() {
            self.parts.heard();
        }
        if let Some((crate::keep_alive::Probe::KeepAlive { progress }, _)) =
            crate::keep_alive::read(raw)
        {
            self.reported_progress = Some(progress);
            let lag = self.progress_sent.saturating_sub(progress);
            if self
                .keep_alive
                .and_then(|k| k.1)
                .is_some_and(|limit| lag > limit)
                && self.parts.give_up("KeepAliveLimitReached")
            {
                self.cancel();
            }
            return;
        }
        let mut raw = raw.to_vec();
        if let Some(conf) = self.conf {
            let files = &self.parts.files;
            let (size, seg) = (self.file_size, self.segment);
            let src = &self.source;
            if let Some(a) = crate::retransmit::answer(&raw, &conf, files, src, size, seg) {
                self.repairs.extend(a.repairs);
                match a.metadata_nak {
                    Some(m) => raw = m,
                    None => return,
                }
            }
        }
        if self.handler.step() == TransactionStep::WaitingForEofAck {
            if let Some(ack) = crate::late::ack_of_eof_implied_by(&raw) {
                let _ = self.hand_to_handler(&ack);
            }
        }
        let ok = self.hand_to_handler(&raw);
        self.parts.refused += ok.is_err() as u64;
    }

    /// Hand a PDU to cfdp-rs's source handler.
    fn hand_to_handler(&mut self, raw: &[u8]) -> Result<u32, String> {
        PduOwnedWithInfo::new_from_raw_packet(raw)
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let mut user = self.parts.events.clone();
                self.handler
                    .state_machine(&mut user, Some(&p))
                    .map_err(|e| e.to_string())
            })
    }

    /// The next PDU to send now, if any: what the handler produced, else the next file
    /// data (one per call: the caller paces them). With whether it is file data.
    pub fn next_pdu(&mut self, now: Time) -> Option<(Vec<u8>, bool)> {
        if let Some(p) = self.control.pop_front() {
            return Some((p, false));
        }
        if let Some(p) = self.repairs.pop_front() {
            self.repairs_sent += 1;
            return Some((p, true));
        }
        if let Some(p) = self.take() {
            return Some(p);
        }
        if !self.started {
            return None;
        }
        self.parts.timers.set_now(now);
        let mut user = self.parts.events.clone();
        if self.handler.state_machine_no_packet(&mut user).is_err() {
            self.parts.refused += 1;
        }
        self.take()
    }

    /// The next PDU the handler wrote, noting the transaction's header from the first.
    fn take(&mut self) -> Option<(Vec<u8>, bool)> {
        let p = self.parts.outbox.pop()?;
        if self.conf.is_none() {
            self.conf = crate::retransmit::conf_of(&p.0);
        }
        if p.1 {
            if let Ok(fd) = spacepackets::cfdp::pdu::file_data::FileDataPdu::from_bytes(&p.0) {
                let end = fd.offset() + fd.file_data().len() as u64;
                self.progress_sent = self.progress_sent.max(end);
            }
        }
        Some(p)
    }

    /// End the handler's transaction (a fault declared here).
    fn cancel(&mut self) {
        self.repairs.clear();
        let mut user = self.parts.events.clone();
        if let Some(id) = self.handler.transaction_id() {
            self.handler.cancel_request(&mut user, &id).ok();
        }
    }

    /// Whether it has PDUs to send (or file data still to read out).
    pub fn has_data(&self) -> bool {
        !self.control.is_empty()
            || !self.repairs.is_empty()
            || !self.parts.outbox.is_empty()
            || (self.started
                && matches!(
                    self.handler.step(),
                    TransactionStep::TransactionStart
                        | TransactionStep::SendingMetadata
                        | TransactionStep::SendingFileData
                        | TransactionStep::SendingEof
                ))
    }

    /// When a timer of it next expires (or the next Prompt is due).
    pub fn next_timeout(&self) -> Option<Time> {
        let prompt = self
            .next_prompt
            .filter(|_| !self.is_finished() && !self.parts.timers.suspended().0);
        self.parts
            .timers
            .next_expiry()
            .into_iter()
            .chain(prompt)
            .min()
    }

    /// The link is down: hold its timers (727.0-B-5 4.6.7); the caller holds its PDUs.
    pub fn suspend(&mut self, now: Time) {
        self.parts.timers.suspend(now);
    }

    /// The link is back: its timers run on from where they stopped.
    pub fn resume(&mut self, now: Time) {
        self.parts.timers.resume(now);
    }

    /// Its timers' time is `now`: expired ones act (PDUs to send again, faults).
    pub fn on_timeout(&mut self, now: Time) {
        self.parts.timers.set_now(now);
        let mut user = self.parts.events.clone();
        if self.handler.state_machine_no_packet(&mut user).is_err() {
            self.parts.refused += 1;
        }
        if self.waits() && self.parts.inactivity.is_none() {
            self.parts.heard();
        }
        if self.parts.inactive() {
            self.cancel();
        }
        self.prompt_if_due(now);
    }

    /// Class 2 with prompts: a Prompt for a Keep Alive when one is due, while the
    /// transaction runs and is not suspended.
    fn prompt_if_due(&mut self, now: Time) {
        let (Some((every, _)), Some(due)) = (self.keep_alive, self.next_prompt) else {
            return;
        };
        if now < due || self.is_finished() || self.parts.timers.suspended().0 {
            return;
        }
        self.next_prompt = Some(now + every);
        if let Some(p) = self.conf.and_then(|c| crate::keep_alive::prompt(&c)) {
            self.control.push_back(p);
            self.prompts += 1;
        }
    }

    /// Whether it waits for the receiver (EOF sent in a transaction that expects an
    /// answer): only then must the receiver be heard within the inactivity limit (during
    /// the pass a receiver with nothing to repair is rightly silent).
    fn waits(&self) -> bool {
        matches!(
            self.handler.step(),
            TransactionStep::WaitingForEofAck | TransactionStep::WaitingForFinished
        )
    }

    /// Its transaction ended (completed, or abandoned on a fault).
    pub fn is_finished(&self) -> bool {
        self.parts.events.log().finished.is_some()
    }

    pub fn stats(&self) -> EntityStats {
        let mut st = self.parts.stats();
        st.pdus.file_data += self.repairs_sent;
        st.pdus.ack += self.late_acks;
        st.prompts = self.prompts;
        st.reported_progress = self.reported_progress;
        st
    }
}
