//! The attack catalogue: every class of injected packet, during a real transfer.

use super::*;
use crate::gateway::GatewayReport;
use serde::Serialize;
use spacetp_wire::flags;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;

/// One class of injected packets and what it did.
#[derive(Clone, Debug, Serialize)]
pub struct AttackRow {
    pub class: String,
    /// Packets injected.
    pub sent: u64,
    /// What the gateways counted (only the counters that moved).
    pub reaction: String,
    /// What became of the transfer: "exact" (every byte, in order, then EOF), or how it
    /// ended ("reset on both sides", "short: N of M bytes" ...).
    pub transfer: String,
    /// Whether that is what must happen for this class.
    pub expected: bool,
}

/// The attack catalogue: `(class, side attacked (0: A, 1: B), what must become of the
/// transfer, the forged packets for the newest segments seen)`.
/// (newest segment to the attacked gateway, newest segment to the other one, round).
type Forge = fn(&Seen, Option<Seen>, u32) -> Vec<Vec<u8>>;

fn catalogue() -> Vec<(&'static str, usize, &'static str, Forge)> {
    fn on(s: &Seen, f: u8, seq: u32, ack: u32, payload: &[u8]) -> Vec<u8> {
        forged(
            s,
            |h| {
                h.flags = f;
                h.seq = seq;
                h.ack = ack;
            },
            payload,
        )
    }
    vec![
        (
            "SYN, mid-stream seq, to the receiving gateway",
            1,
            "exact",
            |s, _, _| vec![on(s, flags::SYN, s.hdr.seq.wrapping_add(200_000), 0, &[])],
        ),
        (
            "SYN-ACK, mid-stream seq, to the receiving gateway",
            1,
            "exact",
            |s, _, _| {
                vec![on(
                    s,
                    flags::SYN | flags::ACK,
                    s.hdr.seq.wrapping_add(200_000),
                    s.hdr.ack,
                    &[],
                )]
            },
        ),
        (
            "SYN, mid-stream seq, to the sending gateway",
            0,
            "exact",
            |s, _, _| vec![on(s, flags::SYN, s.hdr.seq.wrapping_add(100_000), 0, &[])],
        ),
        (
            "RST 5 MB beyond the window, to the receiving gateway",
            1,
            "exact",
            |s, _, _| vec![on(s, flags::RST, s.hdr.seq.wrapping_add(5_000_000), 0, &[])],
        ),
        (
            "RST 5 MB beyond the window, to the sending gateway",
            0,
            "exact",
            |s, _, _| vec![on(s, flags::RST, s.hdr.seq.wrapping_add(5_000_000), 0, &[])],
        ),
        (
            "RST inside the window, not exact, to the receiving gateway",
            1,
            "exact",
            |s, _, i| {
                vec![on(
                    s,
                    flags::RST | flags::ACK,
                    s.hdr.seq.wrapping_add(s.len + 1000 + i),
                    s.hdr.ack,
                    &[],
                )]
            },
        ),
        (
            "FIN+ACK 14 kB below what the receiving gateway has (stale or forged)",
            1,
            "exact",
            |s, _, i| {
                let back = 14_000 * (1 + i % 4);
                let seq = s.hdr.seq.wrapping_sub(back);
                vec![on(s, flags::FIN | flags::ACK, seq, s.hdr.ack, &[])]
            },
        ),
        (
            "data acknowledging bytes never sent",
            1,
            "exact",
            |s, _, _| {
                vec![on(
                    s,
                    flags::ACK,
                    s.hdr.seq.wrapping_add(s.len),
                    s.hdr.ack.wrapping_add(10_000_000),
                    &[0xEE; 1000],
                )]
            },
        ),
        ("data 50 MB beyond the window", 1, "exact", |s, _, _| {
            vec![on(
                s,
                flags::ACK,
                s.hdr.seq.wrapping_add(50_000_000),
                s.hdr.ack,
                &[0xEE; 1000],
            )]
        }),
        (
            "malformed: bad checksum, truncated header, random bytes, garbage protocol 105",
            1,
            "exact",
            |s, _, i| {
                let mut bad = on(s, flags::ACK, s.hdr.seq, s.hdr.ack, &[0xEE; 100]);
                let n = bad.len();
                bad[n - 1] ^= 0xFF;
                let mut trunc = on(s, flags::ACK, s.hdr.seq, s.hdr.ack, &[]);
                trunc.truncate(30);
                let random: Vec<u8> = (0..200u32)
                    .map(|k| (k.wrapping_mul(2_654_435_761).wrapping_add(i) >> 13) as u8)
                    .collect();
                let mut p105 = on(s, flags::ACK, s.hdr.seq, s.hdr.ack, &[1, 2, 3]);
                p105[9] = 105;
                vec![bad, trunc, random, p105]
            },
        ),
        (
            "RSTs at the receiver's next sequence numbers (an on-path attacker)",
            1,
            "reset on both sides",
            // The receiver's latest ACK is its RCV.NXT; data moves it on by whole segments.
            |s, other, _| {
                let Some(o) = other else { return vec![] };
                let seg = s.len.max(1);
                (0..64)
                    .map(|k| on(s, flags::RST, o.hdr.ack.wrapping_add(k * seg), 0, &[]))
                    .collect()
            },
        ),
    ]
}

/// Run every class of the catalogue against a fresh gateway pair on `link` (the fields of
/// a `[[links]]` entry as JSON, e.g. `"rate": "10 Mb/s", "delay": "50 ms"`), each during
/// a transfer of `bytes` from a client through the pair to a server, `rounds` injections
/// 150 ms apart.
pub fn selftest(link: &str, bytes: usize, rounds: u32) -> Vec<AttackRow> {
    catalogue()
        .into_iter()
        .map(|(class, side, expect, forge)| attack(link, bytes, rounds, class, side, expect, forge))
        .collect()
}

fn attack(
    link: &str,
    bytes: usize,
    rounds: u32,
    class: &str,
    side: usize,
    expect: &str,
    forge: Forge,
) -> AttackRow {
    let (run, server, aport) = pair(link, |_| {});
    let srv = serve_one(server);
    let data = pattern(bytes, 5);
    let sent_data = data.clone();
    let client = std::thread::spawn(move || {
        let mut s = connect(aport);
        s.write_all(&sent_data)?;
        s.shutdown(Shutdown::Write)?;
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).map(|_| ())
    });
    let tap = run.tap.clone();
    // Forge from the newest data segment to the receiver, or the newest segment to the sender.
    let seen = |tap: &Tap| {
        if side == 1 {
            tap.seen(1).1
        } else {
            tap.seen(0).0
        }
    };
    wait_for(std::time::Duration::from_secs(20), || seen(&tap).is_some());
    let mut sent = 0;
    for i in 0..rounds {
        let Some(s) = seen(&tap) else { break };
        let other = if side == 1 {
            tap.seen(0).0
        } else {
            tap.seen(1).0
        };
        for p in forge(&s, other, i) {
            tap.inject(side, p);
            sent += 1;
        }
        std::thread::sleep(std::time::Duration::from_millis(150));
    }
    let (got, err) = srv.join().unwrap_or_default();
    let client = client
        .join()
        .map_err(|_| ())
        .and_then(|r| r.map_err(|_| ()));
    std::thread::sleep(std::time::Duration::from_millis(300));
    let reps = run.finish();
    let transfer = match (err, client) {
        (None, Ok(())) if got == data => "exact".to_string(),
        (Some(ErrorKind::ConnectionReset), Err(())) if got[..] == data[..got.len()] => {
            "reset on both sides".to_string()
        }
        (e, c) => format!(
            "short: {} of {bytes} bytes (server {}, client {})",
            got.len(),
            e.map_or("EOF".into(), |k| format!("{k:?}")),
            if c.is_ok() { "complete" } else { "error" },
        ),
    };
    AttackRow {
        class: class.to_string(),
        sent,
        reaction: reaction(&reps),
        expected: transfer == expect,
        transfer,
    }
}

/// The counters of both reports that say what the gateways did with forged packets.
fn reaction(reps: &[GatewayReport]) -> String {
    let mut out = Vec::new();
    for (name, r) in ["A", "B"].iter().zip(reps) {
        for (what, n) in [
            ("SYN rejected", r.syn_rejected),
            ("RST rejected", r.rst_rejected),
            ("ACK rejected", r.ack_rejected),
            ("out of window", r.out_of_window),
            ("challenge ACKs", r.challenge_acks),
            ("old FIN rejected", r.fin_rejected),
            ("bad checksum", r.bad_checksum),
            ("undecodable", r.undecodable),
            ("compressed bad", r.compressed_bad),
            ("RST replies", r.rst_replies),
            ("flows reset", r.reset),
            ("integrity resets", r.integrity_resets),
        ] {
            if n > 0 {
                out.push(format!("{name}: {what} {n}"));
            }
        }
    }
    out.join(", ")
}
