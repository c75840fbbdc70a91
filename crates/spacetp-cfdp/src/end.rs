//! The two CFDP entities of a file transfer, sans-IO: the caller hands in the PDUs that
//! arrive and the time, takes out the PDUs to send (file data one at a time, so it paces
//! them), and wakes each entity at its next timer. cfdp-rs's handlers do the protocol.

use crate::clock::{SimCountdown, TimerKind, Timers};
use crate::early::BeforeMetadata;
use crate::events::{Events, Finished};
use crate::filestore::Files;
use crate::outbox::{Outbox, PduCounts};
use crate::settings::CfdpSettings;
use cfdp::dest::DestinationHandler;
use cfdp::lost_segments::LostSegmentsList;
use cfdp::request::PutRequestOwned;
use cfdp::source::{SourceHandler, TransactionStep};
use cfdp::time::Countdown;
use cfdp::{IndicationConfig, LocalEntityConfig, PduOwnedWithInfo, RemoteEntityConfig};
use spacepackets::util::UnsignedByteFieldU16;
use spacetp_proto::Time;
use std::sync::atomic::AtomicU16;

type Source =
    SourceHandler<Outbox, Events, Files, RemoteEntityConfig, Timers, SimCountdown, AtomicU16>;
type Destination = DestinationHandler<
    Outbox,
    Events,
    Files,
    RemoteEntityConfig,
    Timers,
    SimCountdown,
    LostSegmentsList,
>;

/// The name the file has at both ends.
const SOURCE_FILE: &str = "/send/file";
const DEST_FILE: &str = "/recv/file";

/// What one entity did: PDUs it produced, timer expiries, PDUs it could not take, its
/// transaction's end and faults.
#[derive(Clone, Debug, Default)]
pub struct EntityStats {
    pub pdus: PduCounts,
    /// Check-limit, NAK, positive-ACK and inactivity timer expiries.
    pub timer_expiries: [u64; 4],
    /// PDUs the handler refused (out of place, malformed, for another transaction).
    pub refused: u64,
    /// Times its timers were suspended (link outages).
    pub suspensions: u64,
    /// Prompts (sender) or Keep Alives (receiver) it sent, and the last progress a Keep
    /// Alive reported (sender: received; receiver: sent).
    pub prompts: u64,
    pub keep_alives: u64,
    pub reported_progress: Option<u64>,
    pub finished: Option<Finished>,
    /// Faults declared, by CFDP condition code, with how many times each.
    pub faults: std::collections::BTreeMap<String, u64>,
}

/// State both entities keep alike.
struct Parts {
    outbox: Outbox,
    events: Events,
    files: Files,
    timers: Timers,
    refused: u64,
    /// The inactivity limit, and its countdown once the transaction waits for the peer
    /// (armed by each PDU that arrives).
    inactivity_period: Time,
    inactivity: Option<SimCountdown>,
}

impl Parts {
    fn new(s: &CfdpSettings, local: u16, files: Files) -> (Parts, LocalEntityConfig<Events>) {
        let p = Parts {
            outbox: Outbox::default(),
            events: Events::default(),
            files,
            timers: Timers::new(s.check_timer.0),
            refused: 0,
            inactivity_period: s.inactivity_timeout.0,
            inactivity: None,
        };
        let local = LocalEntityConfig::new(
            UnsignedByteFieldU16::new(local).into(),
            IndicationConfig::default(),
            p.events.clone(),
        );
        (p, local)
    }

    /// The peer was heard from (or is now waited for): the inactivity limit counts anew.
    fn heard(&mut self) {
        match &mut self.inactivity {
            Some(c) => c.reset(),
            None => {
                let c = self
                    .timers
                    .start(self.inactivity_period, TimerKind::Inactivity);
                self.inactivity = Some(c);
            }
        }
    }

    /// The inactivity limit ran out in a transaction still open: say so (the fault is
    /// this crate's, cfdp-rs has none) and end the transaction without the file.
    fn inactive(&mut self) -> bool {
        let expired = self.inactivity.as_ref().is_some_and(|c| c.has_expired());
        expired && self.give_up("InactivityDetected")
    }

    /// A fault this crate declares (`condition`, a 727.0-B-5 condition code) ends a
    /// transaction still open without the file; false if it had ended.
    fn give_up(&mut self, condition: &str) -> bool {
        let mut log = self.events.log();
        if log.finished.is_some() {
            return false;
        }
        *log.faults.entry(condition.into()).or_default() += 1;
        log.finished = Some(Finished {
            condition: condition.into(),
            complete: false,
            file_status: "Unreported".into(),
        });
        drop(log);
        self.inactivity = None;
        true
    }

    fn stats(&self) -> EntityStats {
        let log = self.events.log();
        EntityStats {
            pdus: self.outbox.counts(),
            timer_expiries: self.timers.expired(),
            refused: self.refused,
            suspensions: self.timers.suspended().1,
            prompts: 0,
            keep_alives: 0,
            reported_progress: None,
            finished: log.finished.clone(),
            faults: log.faults.clone(),
        }
    }
}

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
        let ok = PduOwnedWithInfo::new_from_raw_packet(&raw)
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let mut user = self.parts.events.clone();
                self.handler
                    .state_machine(&mut user, Some(&p))
                    .map_err(|e| e.to_string())
            });
        self.parts.refused += ok.is_err() as u64;
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

/// The receiving entity of one file (PDUs before the Metadata PDU: `early.rs`).
pub struct Receiver {
    handler: Destination,
    parts: Parts,
    early: BeforeMetadata,
    /// Keep Alives waiting to go, how many went, the last progress they said.
    control: std::collections::VecDeque<Vec<u8>>,
    keep_alives: u64,
    reported_progress: Option<u64>,
}

impl Receiver {
    pub fn new(s: &CfdpSettings, local: u16, remote: u16, segment: usize) -> Receiver {
        Receiver::with_files(s, local, remote, segment, Files::default())
    }

    /// A receiver that writes the file it receives into `dir` (as `NAME.part` until the
    /// caller renames it, once `delivered`).
    pub fn in_dir(
        s: &CfdpSettings,
        local: u16,
        remote: u16,
        segment: usize,
        dir: &std::path::Path,
    ) -> Receiver {
        Receiver::with_files(s, local, remote, segment, Files::in_dir(dir))
    }

    fn with_files(
        s: &CfdpSettings,
        local: u16,
        remote: u16,
        segment: usize,
        files: Files,
    ) -> Receiver {
        let (parts, cfg) = Parts::new(s, local, files);
        let handler = DestinationHandler::new(
            cfg,
            parts.outbox.clone(),
            parts.files.clone(),
            s.remote(remote, segment),
            parts.timers.clone(),
            LostSegmentsList::default(),
        );
        Receiver {
            handler,
            parts,
            early: BeforeMetadata::new(s.class == 2, s.nak_timer.0, s.nak_limit),
            control: Default::default(),
            keep_alives: 0,
            reported_progress: None,
        }
    }

    /// A PDU from the sender. A Prompt is answered here (cfdp-rs has none): a Keep Alive
    /// with how far the file has arrived without a gap.
    pub fn on_pdu(&mut self, now: Time, raw: &[u8]) {
        self.parts.timers.set_now(now);
        self.parts.heard();
        if let Some((crate::keep_alive::Probe::Prompt { keep_alive }, conf)) =
            crate::keep_alive::read(raw)
        {
            let progress = self.parts.files.prefix(&self.dest_name());
            if let Some(k) = keep_alive.then(|| crate::keep_alive::keep_alive(&conf, progress)) {
                self.control.extend(k);
                self.keep_alives += 1;
                self.reported_progress = Some(progress);
            }
            return;
        }
        let before = !self.metadata_received();
        if before && self.early.seen(now, raw) {
            return; // held until the Metadata PDU
        }
        // Refused before the Metadata PDU: kept to hand again after it.
        if self.take(raw).is_err() && !(before && self.early.keep(raw)) {
            self.parts.refused += 1;
        }
        if before && self.metadata_received() {
            for pdu in self.early.take_all() {
                self.parts.refused += self.take(&pdu).is_err() as u64;
            }
        }
    }

    fn metadata_received(&self) -> bool {
        self.parts.events.log().metadata_received
    }

    /// Hands PDU `raw` to the handler.
    fn take(&mut self, raw: &[u8]) -> Result<(), String> {
        PduOwnedWithInfo::new_from_raw_packet(raw)
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let mut user = self.parts.events.clone();
                self.handler
                    .state_machine(&mut user, Some(&p))
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
    }

    pub fn next_pdu(&mut self) -> Option<(Vec<u8>, bool)> {
        match self.control.pop_front() {
            Some(p) => Some((p, false)),
            None => self.parts.outbox.pop(),
        }
    }

    pub fn has_data(&self) -> bool {
        !self.control.is_empty() || !self.parts.outbox.is_empty()
    }

    pub fn next_timeout(&self) -> Option<Time> {
        let ask = self
            .early
            .ask_at()
            .filter(|_| !self.parts.timers.suspended().0);
        self.parts.timers.next_expiry().into_iter().chain(ask).min()
    }

    /// The link is down: hold its timers (727.0-B-5 4.6.7); the caller holds its PDUs.
    pub fn suspend(&mut self, now: Time) {
        self.parts.timers.suspend(now);
    }

    /// The link is back: its timers run on from where they stopped.
    pub fn resume(&mut self, now: Time) {
        self.parts.timers.resume(now);
    }

    pub fn on_timeout(&mut self, now: Time) {
        self.parts.timers.set_now(now);
        let mut user = self.parts.events.clone();
        if self.handler.state_machine_no_packet(&mut user).is_err() {
            self.parts.refused += 1;
        }
        let mut fault = self.parts.inactive();
        match self.early.due(now) {
            Ok(Some(nak)) => self.control.push_back(nak),
            Ok(None) => {}
            Err(()) => fault |= self.parts.give_up("NakLimitReached"),
        }
        if fault {
            if let Some(id) = self.handler.transaction_id() {
                self.handler.cancel_request(&id);
            }
        }
    }

    /// The file's name, as the Metadata PDU gave it (before it arrived: the simulator's).
    pub fn dest_name(&self) -> String {
        let log = self.parts.events.log();
        log.dest_file.clone().unwrap_or_else(|| DEST_FILE.into())
    }

    /// Where the file is on disk (a receiver `in_dir`, once the Metadata PDU arrived).
    pub fn file_on_disk(&self) -> Option<std::path::PathBuf> {
        self.parts.files.disk_path(&self.dest_name())
    }

    /// The file's size, as the Metadata PDU said.
    pub fn file_size(&self) -> Option<u64> {
        self.parts.events.log().file_size
    }

    /// Bytes of the file held, and whether every one matched what was sent (a file on
    /// disk has no reference: only its checksum is checked).
    pub fn received(&self) -> (u64, bool) {
        let name = self.dest_name();
        self.parts.files.received(&name).unwrap_or((0, true))
    }

    /// The file, once the transaction completed with it whole, retained and its checksum
    /// verified.
    pub fn delivered(&self) -> Option<u64> {
        let held = self.received().0;
        (self.completed() && held > 0).then_some(held)
    }

    /// The transaction completed with the file retained, its checksum verified (and, in
    /// memory, every byte as sent).
    pub fn completed(&self) -> bool {
        let whole =
            self.parts.events.log().finished.as_ref().is_some_and(|f| {
                f.complete && f.condition == "NoError" && f.file_status == "Retained"
            });
        whole && self.received().1
    }

    pub fn is_finished(&self) -> bool {
        self.parts.events.log().finished.is_some()
    }

    /// Its transaction still has work after its end was said: a Finished PDU waiting for
    /// its ACK (sent again at the positive-ACK timer).
    pub fn is_closing(&self) -> bool {
        self.is_finished() && self.handler.state() != cfdp::State::Idle
    }

    pub fn stats(&self) -> EntityStats {
        let mut st = self.parts.stats();
        st.pdus.nak += self.early.asked() as u64;
        st.keep_alives = self.keep_alives;
        st.reported_progress = self.reported_progress;
        st
    }
}
