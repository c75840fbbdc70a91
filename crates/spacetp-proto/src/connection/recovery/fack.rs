//! Forward acknowledgment (Mathis & Mahdavi, SIGCOMM 1996): snd.fack is the highest byte the
//! receiver holds; everything unSACKed below it is lost; the data in the network is
//! awnd = snd.nxt - snd.fack + retran_data. Recovery starts on DupThresh duplicate ACKs or
//! when snd.fack - snd.una exceeds DupThresh segments. Shares the scoreboard machinery of
//! `sack.rs`. (The paper's optional "rampdown" is not modelled.)

use super::sack::LossPolicy;
use super::Ctx;

#[derive(Default)]
pub(crate) struct Fack;

impl LossPolicy for Fack {
    fn lost_boundary(c: &Ctx) -> u64 {
        c.board.highest(c.snd_una)
    }

    fn should_enter(c: &Ctx, dupacks: u32) -> bool {
        let fack = c.board.highest(c.snd_una);
        dupacks >= c.dupthresh || fack - c.snd_una > c.dupthresh as u64 * c.win.mss
    }

    /// awnd = snd.nxt - snd.fack + retran_data (retransmitted bytes not yet SACKed or ACKed).
    fn pipe(c: &Ctx, high_rxt: u64) -> u64 {
        let fack = c.board.highest(c.snd_una);
        let retran = c.board.unsacked_in(c.snd_una, high_rxt.min(fack));
        c.snd_max.saturating_sub(fack) + retran
    }
}
