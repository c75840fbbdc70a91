//! What a live DTN node says while it runs: each LTP session canceled, with its cause and
//! what to change, and each bundle given up. A line per canceled session, at most
//! [`BURST`] of them in an [`INTERVAL`]; past that, one line at the interval's end counts
//! the rest by cause. A bundle given up always has its line.

use spacetp_ltp::config::segment_loss_rate;
use spacetp_ltp::{CancelReason, CanceledBy, Limit};
use spacetp_proto::time::secs;
use spacetp_proto::{Time, SEC};
use std::collections::BTreeMap;

/// The window of the rate limit on canceled-session lines.
pub const INTERVAL: Time = 10 * SEC;
/// Canceled-session lines printed in one window; the rest go into its summary line.
pub const BURST: u32 = 5;

/// A canceled LTP session, as the node saw it.
#[derive(Clone, Copy, Debug)]
pub struct Cancel {
    /// An export session (our block to `peer`), or an import session (its block to us).
    pub export: bool,
    pub peer: u64,
    pub session: u64,
    pub reason: CancelReason,
    pub by: CanceledBy,
    pub limit: Option<Limit>,
}

/// What the span's settings and counters tell about the loss the limits were derived for.
#[derive(Clone, Copy, Debug)]
pub struct SpanContext {
    pub peer: u64,
    pub max_ber: f64,
    pub segment_size: u64,
    /// What the peer's reports to first checkpoints covered and claimed (bytes): the share
    /// of first transmissions it did not get is the link's loss as it saw it.
    pub first_scope: u64,
    pub first_claimed: u64,
}

fn reason_text(r: CancelReason) -> &'static str {
    match r {
        CancelReason::UserCanceled => "the client service canceled it",
        CancelReason::Unreachable => "unreachable client service",
        CancelReason::RetransmissionLimit => "retransmission limit",
        CancelReason::Miscolored => "miscolored segment",
        CancelReason::SystemCanceled => "system error (a resource limit)",
        CancelReason::RetransmissionCycles => "retransmission-cycle limit",
        CancelReason::Reserved(_) => "reserved reason code",
    }
}

/// The cause, short (the summary's key and a given-up bundle's last cause), and the
/// line for `c`.
pub fn describe(c: &Cancel, ctx: &SpanContext) -> (String, String) {
    let (dir, what) = if c.export {
        (format!("to node {}", c.peer), ("checkpoint", "checkpoints"))
    } else {
        (format!("from node {}", c.peer), ("report", "reports"))
    };
    let reason = reason_text(c.reason);
    let who = match c.by {
        CanceledBy::Local => "here".to_string(),
        CanceledBy::Peer => format!("by node {}", c.peer),
    };
    let cause = match (c.by, c.limit) {
        (CanceledBy::Local, Some(Limit::Timeouts { max })) => {
            format!("{reason} (max_retransmissions={max})")
        }
        (CanceledBy::Local, Some(Limit::Cycles { max })) => {
            format!("{reason} (max_retransmission_cycles={max})")
        }
        (CanceledBy::Peer, _) => format!("{reason}, by node {}", c.peer),
        _ => reason.to_string(),
    };
    let detail = match (c.by, c.limit) {
        (CanceledBy::Local, Some(Limit::Timeouts { max })) => format!(
            ": a {} went unanswered through {max} timeouts (max_retransmissions={max})",
            what.0
        ),
        (CanceledBy::Local, Some(Limit::Cycles { max })) => format!(
            ": {max} {} sent and the block still not whole (max_retransmission_cycles={max})",
            what.1
        ),
        (CanceledBy::Peer, _) if c.reason == CancelReason::RetransmissionLimit => {
            if c.export {
                format!(": node {} reached its own limit on reports", c.peer)
            } else {
                format!(": node {} reached its own limit on checkpoints", c.peer)
            }
        }
        _ => String::new(),
    };
    let limits = matches!(
        c.reason,
        CancelReason::RetransmissionLimit | CancelReason::RetransmissionCycles
    );
    let hint = if limits {
        hint(ctx, c.export)
    } else {
        String::new()
    };
    let line = format!(
        "LTP session {} {dir} canceled {who}: {reason}{detail}{hint}",
        c.session
    );
    (format!("{dir}: {cause}"), line)
}

/// What the limits were derived for, what the link seems to lose, and the setting that
/// would plan for it.
fn hint(ctx: &SpanContext, export: bool) -> String {
    let planned = segment_loss_rate(ctx.max_ber, ctx.segment_size);
    let seen = (export && ctx.first_scope > 0)
        .then(|| 1.0 - ctx.first_claimed.min(ctx.first_scope) as f64 / ctx.first_scope as f64);
    let mut s = format!(
        "; max_ber {} plans for {:.1}% loss of {}-byte segments",
        ber(ctx.max_ber),
        planned * 100.0,
        ctx.segment_size
    );
    if let Some(r) = seen {
        s += &format!(
            " and node {} missed {:.1}% of the first transmissions",
            ctx.peer,
            r * 100.0
        );
    }
    // The first max_ber of 1, 2 or 5 times a power of ten that plans for half as much again
    // as the peer missed; without a measure, ten times this one.
    let better = match seen {
        Some(r) => (2..=9)
            .rev()
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(-e)))
            .find(|&b| {
                b > ctx.max_ber * 1.0001 && segment_loss_rate(b, ctx.segment_size) >= r * 1.5
            }),
        None => Some(ctx.max_ber * 10.0).filter(|&b| b < 1.0),
    };
    match better {
        Some(b) => {
            s += &format!(
                ": on a lossier link raise it on both nodes (--ltp max_ber={} plans for \
                 {:.1}%; ION: m maxber {})",
                ber(b),
                segment_loss_rate(b, ctx.segment_size) * 100.0,
                ber(b)
            );
        }
        None => s += ": the link loses more than any max_ber plans for",
    }
    s
}

/// A bit error rate as short as it reads: 1e-5, not 9.999999999999999e-6.
fn ber(x: f64) -> String {
    let r: f64 = format!("{x:.3e}").parse().unwrap_or(x);
    format!("{r:e}")
}

/// The lines a node has to say, rate-limited.
#[derive(Debug, Default)]
pub struct Notices {
    /// Said and not yet taken by the caller.
    pending: Vec<String>,
    /// Everything said (the report's `notices`).
    pub all: Vec<String>,
    window_start: Time,
    in_window: u32,
    /// Canceled sessions not printed in this window, by cause.
    suppressed: BTreeMap<String, u64>,
}

impl Notices {
    fn say(&mut self, now: Time, line: &str) {
        let line = format!("{:.1} s: {line}", secs(now));
        self.pending.push(line.clone());
        self.all.push(line);
    }

    /// A canceled session: its line, or a count in this window's summary.
    pub fn canceled(&mut self, now: Time, cause: &str, line: &str) {
        self.tick(now);
        if self.in_window < BURST {
            self.in_window += 1;
            self.say(now, line);
        } else {
            *self.suppressed.entry(cause.to_string()).or_default() += 1;
        }
    }

    /// A line that is always said (a bundle given up).
    pub fn always(&mut self, now: Time, line: &str) {
        self.say(now, line);
    }

    /// Ends the window once it is over (and at the stop, `flush`): the summary of the
    /// canceled sessions it did not print.
    pub fn tick(&mut self, now: Time) {
        if now >= self.window_start + INTERVAL {
            self.flush(now);
            self.window_start = now;
            self.in_window = 0;
        }
    }

    pub fn flush(&mut self, now: Time) {
        if self.suppressed.is_empty() {
            return;
        }
        let n: u64 = self.suppressed.values().sum();
        let by: Vec<String> = std::mem::take(&mut self.suppressed)
            .into_iter()
            .map(|(cause, k)| format!("{k} {cause}"))
            .collect();
        let line = format!(
            "{n} more LTP sessions canceled since {:.1} s (at most {BURST} lines each {} s): {}",
            secs(self.window_start),
            INTERVAL / SEC,
            by.join("; ")
        );
        self.say(now, &line);
    }

    /// The lines said since the last call.
    pub fn take(&mut self) -> Vec<String> {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CTX: SpanContext = SpanContext {
        peer: 2,
        max_ber: 1e-6,
        segment_size: 1400,
        first_scope: 1_000_000,
        first_claimed: 949_000,
    };

    fn cancel(export: bool, by: CanceledBy, limit: Option<Limit>) -> Cancel {
        Cancel {
            export,
            peer: 2,
            session: 12,
            reason: CancelReason::RetransmissionLimit,
            by,
            limit,
        }
    }

    #[test]
    fn a_retransmission_limit_names_the_limit_the_loss_and_the_setting_to_raise() {
        let (cause, line) = describe(
            &cancel(true, CanceledBy::Local, Some(Limit::Cycles { max: 3 })),
            &CTX,
        );
        assert_eq!(
            cause,
            "to node 2: retransmission limit (max_retransmission_cycles=3)"
        );
        assert_eq!(
            line,
            "LTP session 12 to node 2 canceled here: retransmission limit: 3 checkpoints sent \
             and the block still not whole (max_retransmission_cycles=3); max_ber 1e-6 plans \
             for 1.1% loss of 1400-byte segments and node 2 missed 5.1% of the first \
             transmissions: on a lossier link raise it on both nodes (--ltp max_ber=1e-5 plans \
             for 10.6%; ION: m maxber 1e-5)"
        );
        let (cause, line) = describe(
            &cancel(false, CanceledBy::Local, Some(Limit::Timeouts { max: 4 })),
            &CTX,
        );
        assert_eq!(
            cause,
            "from node 2: retransmission limit (max_retransmissions=4)"
        );
        assert!(
            line.contains("a report went unanswered through 4 timeouts"),
            "{line}"
        );
        // A receiver has no measure of the loss to go by: ten times max_ber.
        assert!(line.contains("--ltp max_ber=1e-5"), "{line}");
        let (cause, line) = describe(&cancel(false, CanceledBy::Peer, None), &CTX);
        assert_eq!(cause, "from node 2: retransmission limit, by node 2");
        assert!(
            line.starts_with(
                "LTP session 12 from node 2 canceled by node 2: retransmission limit: node 2 \
                 reached its own limit on checkpoints; max_ber"
            ),
            "{line}"
        );
        // Not a limit: no hint.
        let mut c = cancel(true, CanceledBy::Peer, None);
        c.reason = CancelReason::SystemCanceled;
        let (_, line) = describe(&c, &CTX);
        assert_eq!(
            line,
            "LTP session 12 to node 2 canceled by node 2: system error (a resource limit)"
        );
        // 10% missed: 2e-5 plans for 20%.
        let lossy = SpanContext {
            first_claimed: 900_000,
            ..CTX
        };
        let (_, line) = describe(
            &cancel(true, CanceledBy::Local, Some(Limit::Cycles { max: 3 })),
            &lossy,
        );
        assert!(
            line.contains("--ltp max_ber=2e-5 plans for 20.1%"),
            "{line}"
        );
        // More than any max_ber plans for.
        let hopeless = SpanContext {
            first_claimed: 0,
            ..CTX
        };
        let (_, line) = describe(
            &cancel(true, CanceledBy::Local, Some(Limit::Cycles { max: 3 })),
            &hopeless,
        );
        assert!(
            line.ends_with("the link loses more than any max_ber plans for"),
            "{line}"
        );
    }

    #[test]
    fn cancel_lines_are_limited_per_interval_and_the_rest_summed_by_cause() {
        let mut n = Notices::default();
        for i in 0..12u64 {
            n.canceled(
                i * SEC / 2,
                "to node 2: retransmission limit",
                &format!("s{i}"),
            );
        }
        n.canceled(6 * SEC, "from node 2: miscolored segment", "m");
        n.always(6 * SEC, "gave up");
        let first = n.take();
        assert_eq!(first.len(), BURST as usize + 1, "{first:?}");
        assert_eq!(first[0], "0.0 s: s0");
        assert_eq!(first[BURST as usize], "6.0 s: gave up");
        // The window ends at 10 s: its summary comes with the next event or tick.
        n.tick(10 * SEC);
        let summary = n.take();
        assert_eq!(
            summary,
            [
                "10.0 s: 8 more LTP sessions canceled since 0.0 s (at most 5 lines each 10 s): \
              1 from node 2: miscolored segment; 7 to node 2: retransmission limit"
            ]
        );
        n.canceled(11 * SEC, "x", "s12");
        assert_eq!(n.take(), ["11.0 s: s12"]);
        n.flush(12 * SEC);
        assert!(n.take().is_empty());
        assert_eq!(n.all.len(), BURST as usize + 3);
    }
}
