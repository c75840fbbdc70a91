//! Settings fitted to the link: what a deployment configures per link, derived from the
//! flow's path by a documented rule. A flow with `fit = true` gets, for every such setting
//! the scenario leaves unset, the value its rule gives; the rules are written beside each
//! transport (`transport/tcp/fit.rs`, `transport/quic/fit.rs`, `transport/ltp/fit.rs`, and
//! the bundle size in `dtn_plan.rs`), each citing where it comes from. Settings the deployed
//! stack does not size per link (Linux's `tcp_rmem` limits, Windows' fixed windows) stay as
//! deployed: the limit analysis names them when they bind.

use crate::build::Built;
use serde::Serialize;
use spacetp_proto::Time;

/// The facts of a path the rules read.
#[derive(Clone, Copy, Debug, Default)]
pub struct FitPath {
    /// The slowest direction of the path each way, bits/s.
    pub rate_bps: f64,
    pub back_rate_bps: f64,
    /// The empty path's round trip (propagation both ways at time 0), ns.
    pub rtt: Time,
    /// `rate_bps` x `rtt`, bytes.
    pub bdp: u64,
    /// The smallest MTU on the way, bytes.
    pub mtu: u32,
    /// The chance that a full-size packet is lost on the way (every link's error model
    /// combined, planned at time 0).
    pub loss: f64,
    /// Links on the way there (1: no relay between the ends).
    pub hops: usize,
}

impl FitPath {
    /// The path from node `from` to `to` (both ways) of `b`, for packets of `mtu` bytes.
    pub fn new(b: &Built, from: u16, to: u16, mtu: u32) -> Self {
        let walk = |a: u16, z: u16| -> Vec<usize> {
            let path = b.routes.setup_path(a, z, |ld| b.links[ld as usize].to);
            path.unwrap_or_default()
                .into_iter()
                .map(|ld| ld as usize)
                .collect()
        };
        let (fwd, back) = (walk(from, to), walk(to, from));
        let slowest = |d: &[usize]| {
            d.iter()
                .map(|&ld| b.links[ld].nominal_rate())
                .fold(f64::INFINITY, f64::min)
        };
        let delay = |d: &[usize]| d.iter().map(|&ld| b.links[ld].delay.at(0)).sum::<Time>();
        let rate = slowest(&fwd);
        let rtt = delay(&fwd) + delay(&back);
        let mtu = fwd.iter().map(|&ld| b.links[ld].mtu).fold(mtu, u32::min);
        let keep: f64 = fwd
            .iter()
            .map(|&ld| 1.0 - b.links[ld].channel.mean_loss(mtu as u64 * 8))
            .product();
        let rate = if rate.is_finite() { rate } else { 0.0 };
        FitPath {
            rate_bps: rate,
            back_rate_bps: if back.is_empty() { 0.0 } else { slowest(&back) },
            rtt,
            bdp: (rate * rtt as f64 / 8e9) as u64,
            mtu,
            loss: 1.0 - keep,
            hops: fwd.len(),
        }
    }

    /// The path's bit-error rate that loses a full-size packet as often as it is lost.
    pub fn ber(&self) -> f64 {
        -(-self.loss).ln_1p() / (self.mtu as f64 * 8.0)
    }
}

/// One setting a rule fitted: its path under the flow (`tcp.scps.rate`, `receive_buffer`),
/// the value it took, the one the profile had, and the rule (with its source).
#[derive(Clone, Debug, Serialize)]
pub struct Fitted {
    pub setting: String,
    pub value: String,
    pub was: String,
    pub rule: &'static str,
}

impl Fitted {
    pub fn new(setting: &str, value: String, was: String, rule: &'static str) -> Self {
        Fitted {
            setting: setting.into(),
            value,
            was,
            rule,
        }
    }
}

/// Whether the scenario sets `path` (dotted, e.g. "scps.rate") in a flow's settings table.
pub fn user_set(table: Option<&serde_json::Map<String, serde_json::Value>>, path: &str) -> bool {
    let mut cur = table;
    let mut parts = path.split('.').peekable();
    while let Some(k) = parts.next() {
        let Some(v) = cur.and_then(|m| m.get(k)) else {
            return false;
        };
        if parts.peek().is_none() {
            return true;
        }
        cur = v.as_object();
    }
    false
}
