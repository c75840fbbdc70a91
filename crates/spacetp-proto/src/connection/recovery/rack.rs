//! SACK recovery with RACK-TLP loss detection (RFC 8985, as Linux since 4.18): what is lost
//! is what RACK marked lost by time (`connection/rack.rs`), not what DupThresh SACKed
//! segments above a hole imply; recovery starts when RACK marks a loss, resends each lost
//! segment (again, if RACK marks its retransmission lost too), and counts in flight as Linux
//! does: unSACKed bytes less those marked lost and not yet resent. The scoreboard machinery,
//! cwnd handling and PRR are `sack.rs`'s.

use super::sack::LossPolicy;
use super::Ctx;

#[derive(Default)]
pub(crate) struct Rack;

impl LossPolicy for Rack {
    /// Unused: `next_lost` asks RACK instead.
    fn lost_boundary(c: &Ctx) -> u64 {
        c.snd_una
    }

    /// Linux `tcp_time_to_recover` with RACK: a loss marked, nothing else.
    fn should_enter(c: &Ctx, _dupacks: u32) -> bool {
        c.rack_lost.is_some_and(|r| r.lost_bytes() > 0)
    }

    /// `tcp_packets_in_flight`: packets_out - (sacked_out + lost_out) + retrans_out.
    fn pipe(c: &Ctx, _high_rxt: u64) -> u64 {
        let lost = c.rack_lost.map_or(0, |r| r.lost_bytes());
        c.board
            .unsacked_in(c.snd_una, c.snd_max)
            .saturating_sub(lost)
    }

    /// Any segment RACK marks lost, below the last retransmission too: a lost
    /// retransmission is resent.
    fn next_lost(c: &Ctx, _hole: u64) -> Option<u64> {
        c.rack_lost.and_then(|r| r.first_lost(c.snd_una))
    }

    fn fast_retransmit(c: &Ctx) -> u64 {
        Self::next_lost(c, c.snd_una).unwrap_or(c.snd_una)
    }

    /// Linux resends only what is marked lost; a tail is the loss probe's to repair.
    const RESCUE: bool = false;
}
