//! Two CFDP entities across a link of a given one-way delay, rate and losses, on the test's
//! clock: class 1 and 2 transfers, against CFDP's rules (727.0-B-5) and the arithmetic of
//! the link.

use spacetp_cfdp::{CfdpSettings, Receiver, Sender};
use spacetp_proto::{Time, MS, SEC};
use std::collections::BTreeMap;

struct Link {
    one_way: Time,
    /// Bits per second, each PDU with 28 bytes of IPv4 and UDP headers.
    rate: f64,
    /// Which file data PDUs sent (counting from 0, retransmissions too) are lost.
    lose: fn(u64) -> bool,
    /// The first PDU (the metadata) is lost.
    lose_metadata: bool,
    /// The first PDU (the metadata) arrives this much later than it would (a carrier that
    /// reorders: an LTP block repaired while later ones completed).
    metadata_late: Time,
    /// Each PDU to the receiver arrives up to this much later than it would, pseudo-randomly
    /// (a carrier that reorders everything).
    jitter: Time,
    /// Every file data PDU arrives this much later than it would.
    file_data_late: Time,
    /// The receiver's first PDU (the NAK asking for a lost metadata PDU) is lost.
    lose_first_answer: bool,
    /// From this time on nothing crosses, either way.
    cut_at: Option<Time>,
}

struct Outcome {
    /// When the receiver's transaction ended, and the sender's.
    receiver_done: Option<Time>,
    sender_done: Option<Time>,
    receiver: spacetp_cfdp::EntityStats,
    sender: spacetp_cfdp::EntityStats,
    delivered: Option<u64>,
    lost: u64,
}

fn transfer(s: &CfdpSettings, size: u64, link: &Link) -> Outcome {
    transfer_to(s, size, link, None)
}

/// A transfer whose receiver writes into folder `dir` (as a live entity does) instead of
/// the simulator's in-memory filestore.
fn transfer_to(s: &CfdpSettings, size: u64, link: &Link, dir: Option<&std::path::Path>) -> Outcome {
    let segment = 1000;
    let mut tx = Sender::new(s, 1, 2, segment, 0);
    let mut rx = match dir {
        Some(d) => Receiver::in_dir(s, 2, 1, segment, d),
        None => Receiver::new(s, 2, 1, segment),
    };
    tx.put(0, size, 2, s).unwrap();
    // In flight: arrival time (and a sequence number to keep order) -> (to the receiver, bytes).
    let mut air: BTreeMap<(Time, u64), (bool, Vec<u8>)> = BTreeMap::new();
    let (mut seq, mut file_pdus, mut lost) = (0u64, 0u64, 0u64);
    let (mut tx_free, mut rx_free) = (0, 0);
    let mut answers = 0u64;
    let (mut receiver_done, mut sender_done) = (None, None);
    let mut now = 0;
    while now < 3600 * SEC {
        // Deliver what has arrived.
        while let Some((&(at, k), _)) = air.iter().next() {
            if at > now {
                break;
            }
            let (to_rx, pdu) = air.remove(&(at, k)).unwrap();
            if link.cut_at.is_some_and(|c| at >= c) {
                continue;
            }
            if to_rx {
                rx.on_pdu(now, &pdu);
            } else {
                tx.on_pdu(now, &pdu);
            }
        }
        if tx.next_timeout().is_some_and(|t| t <= now) {
            tx.on_timeout(now);
        }
        if rx.next_timeout().is_some_and(|t| t <= now) {
            rx.on_timeout(now);
        }
        // Send, paced at the link's rate.
        while tx_free <= now {
            let Some((pdu, file_data)) = tx.next_pdu(now) else {
                break;
            };
            tx_free = now.max(tx_free) + ((pdu.len() + 28) as f64 * 8.0 / link.rate * 1e9) as Time;
            let first = seq == 0 && file_pdus == 0 && !file_data;
            let drop = (first && link.lose_metadata)
                || file_data && {
                    file_pdus += 1;
                    (link.lose)(file_pdus - 1)
                };
            lost += drop as u64;
            if !drop {
                seq += 1;
                let mut late = if first { link.metadata_late } else { 0 };
                if file_data {
                    late += link.file_data_late;
                }
                if link.jitter > 0 {
                    late += seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) % link.jitter;
                }
                air.insert((tx_free + link.one_way + late, seq), (true, pdu));
            }
        }
        while rx_free <= now {
            let Some((pdu, _)) = rx.next_pdu() else { break };
            rx_free = now.max(rx_free) + ((pdu.len() + 28) as f64 * 8.0 / link.rate * 1e9) as Time;
            answers += 1;
            if answers == 1 && link.lose_first_answer {
                lost += 1;
                continue;
            }
            seq += 1;
            air.insert((rx_free + link.one_way, seq), (false, pdu));
        }
        if rx.is_finished() && receiver_done.is_none() {
            receiver_done = Some(now);
        }
        if tx.is_finished() && sender_done.is_none() {
            sender_done = Some(now);
        }
        if receiver_done.is_some() && sender_done.is_some() && air.is_empty() {
            break;
        }
        // The next instant anything happens.
        let mut next = [
            air.keys().next().map(|k| k.0),
            tx.next_timeout(),
            rx.next_timeout(),
            tx.has_data().then_some(tx_free.max(now + 1)),
            rx.has_data().then_some(rx_free.max(now + 1)),
        ]
        .into_iter()
        .flatten()
        .min();
        if next.is_none() {
            next = Some(now + SEC); // nothing pending: let the handlers look again
        }
        now = next.unwrap().max(now + 1);
    }
    Outcome {
        receiver_done,
        sender_done,
        delivered: rx.delivered(),
        receiver: rx.stats(),
        sender: tx.stats(),
        lost,
    }
}

fn class(c: u8) -> CfdpSettings {
    CfdpSettings {
        class: c,
        ..Default::default()
    }
}

const CLEAN: Link = Link {
    one_way: 250 * MS,
    rate: 1e6,
    lose: |_| false,
    lose_metadata: false,
    metadata_late: 0,
    jitter: 0,
    file_data_late: 0,
    lose_first_answer: false,
    cut_at: None,
};

#[test]
fn class_1_delivers_a_file_in_one_pass_at_the_links_rate() {
    let size = 1_000_000;
    let o = transfer(&class(1), size, &CLEAN);
    assert_eq!(o.delivered, Some(size), "{:?}", o.receiver);
    // 1 000 file data PDUs of 1 000 B (+ 14 B of CFDP header, + 28 B IPv4/UDP) at 1 Mb/s,
    // plus metadata, EOF and the one-way delay: 8.3 s + 0.25 s.
    let pdus = size / 1000;
    let on_air = pdus as f64 * (1000 + 14 + 28) as f64 * 8.0 / 1e6;
    let done = o.receiver_done.unwrap() as f64 / 1e9;
    assert!(
        done > on_air + 0.25 && done < on_air + 0.35,
        "{done} s vs {on_air} s"
    );
    assert_eq!(o.sender.pdus.file_data, pdus);
    assert_eq!((o.sender.pdus.metadata, o.sender.pdus.eof), (1, 1));
    assert_eq!(
        o.receiver.pdus.total(),
        0,
        "class 1 without closure: the receiver is silent"
    );
}

#[test]
fn class_1_keeps_what_comes_before_a_late_metadata_pdu_and_delivers_the_file() {
    // The Metadata PDU comes after file data, or after the EOF too (a carrier that
    // reorders, as LTP over BP does when the metadata's block is repaired while later
    // blocks complete): what came before waits for it, and the file arrives with no fault.
    // (cfdp-rs 0.3 starts a class 1 transaction on an EOF that comes first, then refuses
    // it, and writes the file data that follows to no file: a FilestoreRejection each.)
    let cases = [
        ("metadata after 9 file data PDUs", 100 * MS, 0),
        ("metadata after all file data and the EOF", 5 * SEC, 0),
        (
            "the EOF first, then the metadata, then the file data",
            SEC,
            3 * SEC,
        ),
        (
            "the EOF first, then the file data, then the metadata",
            5 * SEC,
            SEC,
        ),
    ];
    let dir = std::env::temp_dir().join(format!("spacetp-cfdp-late-{}", std::process::id()));
    for (name, metadata_late, file_data_late) in cases {
        let reordered = Link {
            metadata_late,
            file_data_late,
            ..CLEAN
        };
        for into in [None, Some(dir.as_path())] {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let o = transfer_to(&class(1), 300_000, &reordered, into);
            assert_eq!(o.delivered, Some(300_000), "{name}: {:?}", o.receiver);
            // The EOF before file data that come after the metadata: its checksum fails
            // until they come (727.0-B-5 4.6.3.2, the check limit), then the file is whole.
            let faults = &o.receiver.faults;
            let eof_alone = file_data_late > metadata_late;
            assert!(
                faults.is_empty() || eof_alone && faults.keys().eq(["FileChecksumFailure"]),
                "{name} {into:?}: {faults:?}"
            );
            assert!(o.receiver.finished.is_some_and(|f| f.complete), "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Everything shuffled: the file still arrives whole and nothing is written to no file
    // (an EOF before the last file data may fail the checksum once, as 727.0-B-5 4.6.3.2
    // allows while the check limit runs).
    let shuffled = Link {
        metadata_late: 300 * MS,
        jitter: 400 * MS,
        ..CLEAN
    };
    let o = transfer(&class(1), 300_000, &shuffled);
    assert_eq!(o.delivered, Some(300_000), "{:?}", o.receiver);
    assert!(
        !o.receiver.faults.contains_key("FilestoreRejection"),
        "{:?}",
        o.receiver.faults
    );
}

#[test]
fn class_1_cannot_repair_a_loss_and_says_so() {
    let lossy = Link {
        lose: |i| i == 10,
        ..CLEAN
    };
    let o = transfer(&class(1), 100_000, &lossy);
    assert_eq!(o.lost, 1);
    assert_eq!(o.delivered, None);
    let f = o
        .receiver
        .finished
        .expect("the receiver ends the transaction");
    assert!(!f.complete, "{f:?}");
    assert_eq!(
        o.receiver.timer_expiries[0], 2,
        "check limit 2: the check timer runs out twice"
    );
}

#[test]
fn class_2_repairs_every_loss_with_naks_and_ends_with_finished_acknowledged() {
    let lossy = Link {
        lose: |i| i % 7 == 3,
        ..CLEAN
    };
    let size = 200_000;
    let o = transfer(&class(2), size, &lossy);
    assert_eq!(o.delivered, Some(size), "{:?}", o.receiver);
    assert!(o.lost >= 28, "{}", o.lost);
    assert!(o.receiver.pdus.nak >= 1, "{:?}", o.receiver.pdus);
    // Every lost PDU sent again; immediate NAKs may ask for a gap twice (a later gap's NAK
    // lists the earlier ones still open), never for more than the losses again.
    let again = o.sender.pdus.file_data - size / 1000;
    assert!(
        again >= o.lost && again <= 2 * o.lost,
        "{again} sent again for {} lost",
        o.lost
    );
    // EOF acknowledged, Finished sent and acknowledged.
    assert_eq!(o.receiver.pdus.finished, 1);
    assert!(o.receiver.pdus.ack >= 1 && o.sender.pdus.ack >= 1);
    assert!(o.sender_done.is_some() && o.receiver_done.is_some());
    assert!(o.sender.faults.is_empty() && o.receiver.faults.is_empty());
}

#[test]
fn class_2_deferred_naks_wait_for_eof() {
    let lossy = Link {
        lose: |i| i == 5 || i == 50,
        ..CLEAN
    };
    let s = CfdpSettings {
        nak_mode: spacetp_cfdp::settings::NakMode::Deferred,
        ..class(2)
    };
    let o = transfer(&s, 100_000, &lossy);
    assert_eq!(o.delivered, Some(100_000));
    assert_eq!(
        o.receiver.pdus.nak, 1,
        "one NAK for the whole file, after EOF"
    );
}

#[test]
fn an_unanswered_eof_is_sent_again_at_the_positive_ack_timer_until_its_limit() {
    // Nothing comes back: the link drops every PDU to the sender... modelled by a receiver
    // too far away to answer before the limit.
    let far = Link {
        one_way: 100 * SEC,
        ..CLEAN
    };
    let s = CfdpSettings {
        positive_ack_timer: spacetp_proto::units::Duration(10 * SEC),
        positive_ack_limit: 2,
        ..class(2)
    };
    let o = transfer(&s, 10_000, &far);
    assert!(
        o.sender.pdus.eof >= 2,
        "EOF sent again: {:?}",
        o.sender.pdus
    );
    assert!(
        o.sender.timer_expiries[2] >= 2,
        "{:?}",
        o.sender.timer_expiries
    );
    assert!(
        o.sender.faults.contains_key("PositiveAckLimitReached"),
        "{:?}",
        o.sender.faults
    );
}

#[test]
fn class_2_resends_every_segment_of_a_gap_longer_than_one() {
    // Three PDUs in a row lost: the receiver's NAK asks for one range of three segments
    // (cfdp-rs 0.3.0's source alone would resend only the first: retransmit.rs).
    let lossy = Link {
        lose: |i| (20..23).contains(&i),
        ..CLEAN
    };
    for nak_mode in [
        spacetp_cfdp::settings::NakMode::Immediate,
        spacetp_cfdp::settings::NakMode::Deferred,
    ] {
        let s = CfdpSettings {
            nak_mode,
            ..class(2)
        };
        let o = transfer(&s, 100_000, &lossy);
        assert_eq!(o.lost, 3);
        assert_eq!(o.delivered, Some(100_000), "{nak_mode:?}: {:?}", o.receiver);
        // Deferred: one NAK after EOF for the whole gap, each of its segments sent once
        // more. Immediate: cfdp-rs may ask for an open gap again before its repair arrives.
        let again = o.sender.pdus.file_data - 100;
        match nak_mode {
            spacetp_cfdp::settings::NakMode::Deferred => assert_eq!(again, 3),
            spacetp_cfdp::settings::NakMode::Immediate => assert!((3..=6).contains(&again)),
        }
        assert_eq!(
            o.receiver.timer_expiries[1], 0,
            "{nak_mode:?}: no NAK had to be repeated"
        );
    }
}

#[test]
fn class_2_on_a_lossy_geo_link_repairs_each_loss_about_once_and_ends_a_round_trip_after_the_pass() {
    // 5 MB over 2 Mb/s, 270 ms one way, 1 file data PDU in 64 lost (each time it is sent).
    let lossy = Link {
        one_way: 270 * MS,
        rate: 2e6,
        lose: |i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) == 0,
        ..CLEAN
    };
    let s = CfdpSettings {
        positive_ack_timer: spacetp_proto::units::Duration(2 * SEC),
        nak_timer: spacetp_proto::units::Duration(2 * SEC),
        ..class(2)
    };
    let o = transfer(&s, 5_000_000, &lossy);
    assert_eq!(o.delivered, Some(5_000_000), "{:?}", o.receiver);
    assert!(o.sender.faults.is_empty() && o.receiver.faults.is_empty());
    let again = o.sender.pdus.file_data - 5000;
    assert!(
        o.lost > 50 && again >= o.lost && again <= o.lost + o.lost / 10 + 2,
        "{again} for {}",
        o.lost
    );
    // Every PDU on air once (the pass and its repairs, each 1 000 + 14 + 28 B at 2 Mb/s),
    // then at most a round trip for the last repair's NAK and the repair itself.
    let on_air = (5000 + again) as f64 * 1042.0 * 8.0 / 2e6;
    let done = o.receiver_done.unwrap() as f64 / 1e9;
    assert!(
        done > on_air + 0.27 && done < on_air + 2.0 * 0.54 + 0.1,
        "{done} s, {on_air} s on air"
    );
}

#[test]
fn class_2_repairs_a_lost_tail_that_only_eofs_file_size_reveals() {
    // The last two PDUs lost: no later PDU shows the gap; EOF's file size does (4.6.4.3.1).
    let lossy = Link {
        lose: |i| i == 99 || i == 98,
        ..CLEAN
    };
    let o = transfer(&class(2), 100_000, &lossy);
    assert_eq!(o.delivered, Some(100_000), "{:?}", o.receiver);
    assert_eq!((o.receiver.pdus.nak, o.sender.pdus.file_data), (1, 102));
}

#[test]
fn a_lost_metadata_pdu_is_asked_for_again_with_the_file_data_that_came_before_it() {
    // The file data that arrives before the metadata has no file to go to yet (cfdp-rs's
    // receiver would refuse it: FilestoreRejection); it waits for the metadata here, which
    // the receiver asks for (the segment request 0-0), and the file arrives whole with the
    // first segment (which cfdp-rs counted lost) asked for again.
    let lossy = Link {
        lose_metadata: true,
        ..CLEAN
    };
    let o = transfer(&class(2), 100_000, &lossy);
    assert_eq!(o.delivered, Some(100_000), "{:?}", o.receiver);
    assert_eq!(o.sender.pdus.metadata, 2, "the metadata sent again");
    assert!(o.receiver.faults.is_empty(), "{:?}", o.receiver.faults);
}

#[test]
fn the_metadata_is_asked_for_again_at_the_nak_timer_and_an_early_eof_waits_for_it() {
    // The metadata PDU and the NAK asking for it are both lost. cfdp-rs asks only once,
    // and an EOF that comes before the metadata ends its transaction "NoError" without the
    // file; the receiver here holds the EOF, asks again at the NAK timer (10 s), and hands
    // the EOF and the data that came before once the metadata is in: the file arrives.
    let lossy = Link {
        lose_metadata: true,
        lose_first_answer: true,
        ..CLEAN
    };
    let o = transfer(&class(2), 100_000, &lossy);
    assert_eq!(o.delivered, Some(100_000), "{:?}", o.receiver);
    assert_eq!(o.sender.pdus.metadata, 2, "the metadata sent again");
    assert!(o.receiver.pdus.nak >= 2, "asked twice: {:?}", o.receiver);
    let done = o.receiver_done.unwrap();
    assert!(done > 10 * SEC, "not before the NAK timer: {done}");
    assert_eq!(o.receiver.finished.as_ref().unwrap().condition, "NoError");
}

#[test]
fn a_metadata_pdu_never_answered_ends_at_the_nak_limit() {
    // The metadata PDU and the first NAK for it are lost, and the link dies after the
    // pass: the receiver asks again at each NAK timer expiry up to the limit (2), then
    // ends the transaction with the fault.
    let dead = Link {
        lose_metadata: true,
        lose_first_answer: true,
        cut_at: Some(2 * SEC),
        ..CLEAN
    };
    let mut s = class(2);
    s.inactivity_timeout = spacetp_proto::units::Duration(3600 * SEC);
    let o = transfer(&s, 100_000, &dead);
    assert_eq!(o.delivered, None);
    assert_eq!(
        o.receiver.faults.get("NakLimitReached"),
        Some(&1),
        "{:?}",
        o.receiver
    );
}

#[test]
fn a_receiver_that_hears_nothing_for_its_inactivity_limit_ends_the_transaction() {
    // The link dies in the middle of the pass and nobody is told: the sender finishes its
    // pass and waits for EOF's ACK (its positive-ACK limit ends it); the receiver, silent
    // since the cut, ends its transaction at the inactivity limit (30 s by default).
    let dead = Link {
        cut_at: Some(500 * MS),
        ..CLEAN
    };
    let o = transfer(&class(2), 100_000, &dead);
    assert_eq!(o.delivered, None);
    assert_eq!(
        o.receiver.faults.get("InactivityDetected"),
        Some(&1),
        "{:?}",
        o.receiver
    );
    assert_eq!(o.receiver.timer_expiries[3], 1);
    let done = o.receiver_done.unwrap() as f64 / 1e9;
    assert!(
        (30.4..31.0).contains(&done),
        "the last PDU before 0.5 s, then 30 s: {done}"
    );
    assert!(
        o.sender.faults.contains_key("PositiveAckLimitReached"),
        "{:?}",
        o.sender.faults
    );
}

#[test]
fn prompts_draw_keep_alives_that_report_the_receivers_progress() {
    let s = CfdpSettings {
        keep_alive_interval: Some(spacetp_proto::units::Duration(SEC)),
        ..class(2)
    };
    let o = transfer(&s, 1_000_000, &CLEAN);
    assert_eq!(o.delivered, Some(1_000_000));
    // One Prompt a second of the 8.3 s pass and the wait for Finished; each answered.
    assert!((8..=10).contains(&o.sender.prompts), "{}", o.sender.prompts);
    assert_eq!(o.receiver.keep_alives, o.sender.prompts);
    // The receiver's progress trails the sender's by what is in flight (0.25 s at 1 Mb/s).
    let reported = o.sender.reported_progress.unwrap();
    assert!(reported > 900_000, "{reported}");
    assert!(o.sender.faults.is_empty() && o.receiver.faults.is_empty());
}

#[test]
fn a_receiver_too_far_behind_reaches_the_keep_alive_limit() {
    // From the 200th file data PDU on, nothing of the file arrives (the directives do): the
    // receiver's progress stops at 200 kB while the sender's runs on.
    let starved = Link {
        lose: |i| i >= 200,
        ..CLEAN
    };
    let s = CfdpSettings {
        keep_alive_interval: Some(spacetp_proto::units::Duration(SEC)),
        keep_alive_limit: Some(spacetp_proto::units::Bytes(100_000)),
        ..class(2)
    };
    let o = transfer(&s, 1_000_000, &starved);
    assert_eq!(o.delivered, None);
    assert_eq!(
        o.sender.faults.get("KeepAliveLimitReached"),
        Some(&1),
        "{:?}",
        o.sender
    );
    assert_eq!(o.sender.reported_progress, Some(200_000));
}

#[test]
fn a_finished_after_a_lost_ack_of_eof_ends_the_senders_transaction_at_once() {
    // Clean but for the receiver's first answer, the ACK of EOF. Its Finished follows (the
    // EOF was received): the sender takes it as the lost ACK and completes, acknowledging
    // the Finished, instead of refusing it until an EOF sent again at the positive-ACK
    // timer (10 s) draws a new ACK; a receiver that does not acknowledge EOFs sent again
    // (cfdp-py 0.5, waiting for its Finished's ACK) would leave both ends waiting.
    let lost_ack = Link {
        lose_first_answer: true,
        ..CLEAN
    };
    let o = transfer(&class(2), 100_000, &lost_ack);
    assert_eq!(o.delivered, Some(100_000));
    assert_eq!(o.lost, 1);
    let (tx, rx) = (o.sender_done.unwrap(), o.receiver_done.unwrap());
    assert!(tx < 2 * SEC, "the sender done when the Finished came: {tx}");
    assert!(
        rx < 2 * SEC,
        "the receiver done when its Finished was acknowledged: {rx}"
    );
    assert_eq!(o.sender.pdus.eof, 1, "no EOF sent again");
    assert!(o.sender.faults.is_empty() && o.receiver.faults.is_empty());
    assert_eq!(o.sender.finished.as_ref().unwrap().condition, "NoError");
}
