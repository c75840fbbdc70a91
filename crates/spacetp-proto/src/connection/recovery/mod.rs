//! Loss recovery, one algorithm per file behind one trait (ns-3 splits `TcpRecoveryOps` from
//! `TcpCongestionOps` the same way): the congestion controller chooses ssthresh and grows the
//! window outside recovery; the recovery algorithm decides what to retransmit and drives cwnd
//! while it repairs.
//!
//! - `tahoe`: fast retransmit, then slow start from one segment (no fast recovery).
//! - `reno`: RFC 5681 fast recovery, left on the first new ACK.
//! - `newreno`: RFC 6582 fast recovery with partial ACKs.
//! - with `prr`, NewReno, SACK and FACK size cwnd during recovery by RFC 6937 (proportional
//!   rate reduction), as ns-3 and Linux do.
//! - `sack`: RFC 6675 scoreboard, pipe and NextSeg; `fack`: Mathis & Mahdavi 1996 forward
//!   acknowledgment on the same scoreboard.
//! - `peach`: TCP-Peach+ Quick Recovery (halve, repair like NewReno, let NIL ACKs rebuild).
//! - `rack`: the SACK scoreboard with RACK-TLP (RFC 8985) deciding what is lost.

mod fack;
mod newreno;
mod peach;
mod policy;
mod rack;
mod reno;
mod sack;
mod scoreboard;
mod tahoe;

pub(crate) use policy::Policy;
pub use scoreboard::Scoreboard;

use crate::cc::{AckEvent, CongestionControl, Window};
use crate::time::Time;

/// What a recovery algorithm may read and change of the sender.
pub(crate) struct Ctx<'a> {
    pub win: &'a mut Window,
    pub cc: &'a mut dyn CongestionControl,
    pub board: &'a Scoreboard,
    pub snd_una: u64,
    pub snd_nxt: &'a mut u64,
    pub snd_max: u64,
    /// Whether the application has unsent data (RFC 6675 NextSeg rule 3 needs it).
    pub new_data: bool,
    pub now: Time,
    pub dupthresh: u32,
    /// RFC 6937 DeliveredData of this ACK: bytes newly acknowledged or SACKed.
    pub delivered: u64,
    /// This loss was already answered (an SCPS-TP SNACK reduced the window for it): keep
    /// ssthresh, and do not tell the controller of a second loss.
    pub keep_ssthresh: bool,
    /// What RACK marked lost, when RACK-TLP detects losses.
    pub rack_lost: Option<&'a super::rack::Rack>,
}

impl Ctx<'_> {
    /// RFC 5681 FlightSize: data sent and not yet cumulatively acknowledged.
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Ask the controller for ssthresh after a loss and store it.
    pub fn reduce_ssthresh(&mut self) -> u64 {
        if self.keep_ssthresh {
            return self.win.ssthresh;
        }
        let flight = self.flight_size();
        self.win.ssthresh = self.cc.ssthresh_after_loss(self.win, flight, self.now);
        self.win.ssthresh
    }
}

pub(crate) trait LossRecovery: Send {
    fn in_recovery(&self) -> bool;

    /// The `dupacks`-th duplicate ACK in a row (`new_sack`: it SACKed new data). Returns true
    /// when it starts a fast retransmit.
    fn on_dupack(&mut self, c: &mut Ctx, dupacks: u32, new_sack: bool) -> bool;

    /// The cumulative ACK advanced (snd_una and the scoreboard already moved). Returns whether
    /// to restart the retransmission timer.
    fn on_new_ack(&mut self, c: &mut Ctx, ev: &AckEvent) -> bool;

    /// The retransmission timer expired (the sender goes back to snd_una).
    fn on_timeout(&mut self, snd_max: u64);

    /// The timeout was spurious and undone: recovery may start again at once for a loss
    /// (Linux returns to Open).
    fn on_timeout_undone(&mut self) {}

    /// A retransmission to send now: the position it starts at.
    fn next_retransmission(&mut self, c: &Ctx) -> Option<u64>;

    /// Whether `next_retransmission` may give a position; when false it would give none and
    /// change nothing, so the output path, which asks on every poll, need not build its view.
    fn may_retransmit(&self) -> bool {
        true
    }

    /// A retransmission of `[pos, end)` was sent.
    fn on_retransmit(&mut self, _pos: u64, _end: u64) {}

    /// `len` bytes of data (new or retransmitted) were sent (PRR counts them).
    fn on_data_sent(&mut self, _len: u64) {}

    /// Bytes counted against cwnd when deciding to send new data. Outside a recovery it
    /// must be snd_nxt - snd_una: the connection then skips asking (`recovery_flight`).
    fn flight(&self, c: &Ctx) -> u64 {
        *c.snd_nxt - c.snd_una
    }
}

/// RFC 6937 section 3: how much may be sent on this ACK. While pipe > ssthresh, sending
/// follows delivery scaled by ssthresh / RecoverFS (proportional rate reduction); below it,
/// slow start bounded by what was delivered (PRR-SSRB).
pub(crate) fn prr_sndcnt(
    delivered_total: u64,
    out: u64,
    recover_fs: u64,
    pipe: u64,
    ssthresh: u64,
    delivered_now: u64,
    mss: u64,
) -> u64 {
    if pipe > ssthresh {
        (delivered_total * ssthresh)
            .div_ceil(recover_fs.max(1))
            .saturating_sub(out)
    } else {
        let limit = delivered_total.saturating_sub(out).max(delivered_now) + mss;
        (ssthresh - pipe).min(limit)
    }
}
