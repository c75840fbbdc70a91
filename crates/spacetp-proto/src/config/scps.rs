//! SCPS-TP's settings (`[flows.tcp.scps]`).

use crate::units::{Bytes, Duration, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// SCPS-TP's default source of data loss (CCSDS 714.0-B-2; Edwards et al.: DSDL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LossSource {
    /// Losses mean congestion: the controller reduces the window (TCP's assumption).
    #[default]
    Congestion,
    /// Losses mean corruption: retransmit without reducing cwnd or ssthresh and without
    /// backing off the retransmission timer.
    Corruption,
}

/// SCPS-TP (CCSDS 714.0-B-2) settings (`[flows.tcp.scps]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ScpsConfig {
    /// Offer the SCPS capabilities option (kind 20) on SYN / SYN-ACK. The features below are
    /// used only when both ends offer them; with a plain TCP peer the connection is plain TCP.
    pub enabled: bool,
    /// Offer SNACK (SNACK1: one option per hole, kind 21).
    pub snack: bool,
    /// Offer the long form of SNACK (SNACK2): a bit vector after the first hole.
    pub snack_bitvector: bool,
    /// Offer SCPS header compression (COMP).
    pub compression: bool,
    /// Default source of data loss.
    pub loss_source: LossSource,
    /// Fixed ACK frequency: the receiver ACKs on this timer, out-of-order data included,
    /// instead of every other segment (absent: TCP's delayed ACK).
    pub ack_period: Option<Duration>,
    /// Token-bucket rate control: data leaves no faster than this (absent: no rate control).
    pub rate: Option<Rate>,
    /// Token-bucket depth: the burst allowed at `rate`.
    pub bucket: Bytes,
    /// Best-effort transport service (BETS bit): when both ends offer it, the receiver gives
    /// up a hole that has waited this long, moves past it and reports its bytes lost, instead
    /// of waiting for retransmissions forever (absent: fully reliable).
    pub bets: Option<Duration>,
}

impl Default for ScpsConfig {
    fn default() -> Self {
        ScpsConfig {
            enabled: false,
            snack: false,
            snack_bitvector: false,
            compression: false,
            loss_source: LossSource::Congestion,
            ack_period: None,
            rate: None,
            bucket: Bytes(3000),
            bets: None,
        }
    }
}
