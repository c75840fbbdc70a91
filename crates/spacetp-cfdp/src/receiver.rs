//! The receiving entity of one file: cfdp-rs's destination handler, with Prompts answered
//! here (`keep_alive.rs`) and the PDUs that come before the Metadata PDU kept (`early.rs`).

use crate::clock::{SimCountdown, Timers};
use crate::early::BeforeMetadata;
use crate::entity::{EntityStats, Parts, DEST_FILE};
use crate::events::Events;
use crate::filestore::Files;
use crate::outbox::Outbox;
use crate::settings::CfdpSettings;
use cfdp::dest::DestinationHandler;
use cfdp::lost_segments::LostSegmentsList;
use cfdp::{PduOwnedWithInfo, RemoteEntityConfig};
use spacetp_proto::Time;

type Destination = DestinationHandler<
    Outbox,
    Events,
    Files,
    RemoteEntityConfig,
    Timers,
    SimCountdown,
    LostSegmentsList,
>;

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
