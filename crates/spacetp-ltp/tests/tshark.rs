//! Cross-check with Wireshark: the segments of a lossy transfer (data, checkpoints, split
//! reports with a non-zero lower bound, acknowledgments, cancels) and a segment with
//! extensions are written to a capture as UDP port 1113, the LTP port tshark dissects,
//! and every field tshark reads must equal ours. Without tshark on PATH the test fails: a
//! cross-check that did not run must not pass (.ci/run installs tshark).

mod common;

use std::process::Command;

use common::*;
use spacetp_ltp::wire::{self, Content, Extension, Extensions, SegmentType, SessionId};
use spacetp_ltp::CancelReason;
use spacetp_proto::SEC;

/// Fails the test when tshark cannot run: the cross-check is the point of this test.
fn require_tshark() {
    let runs = Command::new("tshark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        runs,
        "tshark is not on PATH: this test checks our bytes against Wireshark's dissector and \
         cannot pass without it (apt-get install tshark; .ci/run installs it)"
    );
}

/// A classic pcap (raw IPv4) of UDP datagrams 1113 -> 1113 carrying `segments`.
fn pcap(segments: &[Vec<u8>]) -> Vec<u8> {
    let mut f = Vec::new();
    for v in [
        0xA1B2_C3D4u32.to_le_bytes().to_vec(),
        vec![2, 0, 4, 0],
        vec![0; 8],
    ] {
        f.extend(v);
    }
    f.extend(65535u32.to_le_bytes());
    f.extend(101u32.to_le_bytes());
    for (i, s) in segments.iter().enumerate() {
        let total = 20 + 8 + s.len();
        let mut ip = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
            0,
            0,
        ];
        ip.extend([10, 0, 0, 1, 10, 0, 0, 2]);
        let mut sum: u32 = ip
            .chunks(2)
            .map(|c| u32::from(c[0]) << 8 | u32::from(c[1]))
            .sum();
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        let ck = !(sum as u16);
        ip[10] = (ck >> 8) as u8;
        ip[11] = ck as u8;
        let ulen = 8 + s.len();
        ip.extend([0x04, 0x59, 0x04, 0x59, (ulen >> 8) as u8, ulen as u8, 0, 0]);
        ip.extend(s);
        f.extend((i as u32).to_le_bytes());
        f.extend(0u32.to_le_bytes());
        f.extend((ip.len() as u32).to_le_bytes());
        f.extend((ip.len() as u32).to_le_bytes());
        f.extend(ip);
    }
    f
}

const FIELDS: &[&str] = &[
    "ltp.type",
    "ltp.session.orig",
    "ltp.session.number",
    "ltp.data.offset",
    "ltp.data.length",
    "ltp.data.chkp",
    "ltp.data.rpt",
    "ltp.rpt.sno",
    "ltp.rpt.chkp",
    "ltp.rpt.ub",
    "ltp.rpt.lb",
    "ltp.rpt.clm.cnt",
    "ltp.rpt.clm.off",
    "ltp.rpt.clm.len",
    "ltp.rpt.ack.sno",
    "ltp.cancel.code",
    "ltp.hdr.extn.tag",
    "ltp.hdr.extn.len",
    "ltp.trl.extn.tag",
    "ltp.trl.extn.len",
];

/// Our reading of a segment, as tshark prints the same fields.
fn ours(b: &[u8]) -> Vec<String> {
    let s = wire::decode(b).unwrap();
    let mut v = vec![String::new(); FIELDS.len()];
    v[0] = s.kind.code().to_string();
    v[1] = s.session.originator.to_string();
    v[2] = s.session.number.to_string();
    let join = |it: Vec<u64>| {
        it.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match s.content {
        Content::Data(d) => {
            v[3] = d.offset.to_string();
            v[4] = d.data.len().to_string();
            if let Some(sr) = d.serials {
                v[5] = sr.checkpoint.to_string();
                v[6] = sr.report.to_string();
            }
        }
        Content::Report(r) => {
            v[7] = r.report_serial.to_string();
            v[8] = r.checkpoint_serial.to_string();
            v[9] = r.upper_bound.to_string();
            v[10] = r.lower_bound.to_string();
            v[11] = r.claims.len().to_string();
            // On the wire (and in tshark) claim offsets are from the lower bound.
            v[12] = join(r.claims.iter().map(|c| c.offset - r.lower_bound).collect());
            v[13] = join(r.claims.iter().map(|c| c.length).collect());
        }
        Content::ReportAck { report_serial } => v[14] = report_serial.to_string(),
        Content::Cancel { reason } => v[15] = reason.code().to_string(),
        Content::CancelAck => {}
    }
    let ext = |e: &Extensions| {
        (
            join(e.iter().map(|x| u64::from(x.tag)).collect()),
            join(e.iter().map(|x| x.value.len() as u64).collect()),
        )
    };
    (v[16], v[17]) = ext(&s.header_extensions);
    (v[18], v[19]) = ext(&s.trailer_extensions);
    v
}

/// tshark prints hex-based fields as 0x..; ours are decimal.
fn decimal(t: &str) -> String {
    t.split(',')
        .map(|x| match x.strip_prefix("0x") {
            Some(h) => u64::from_str_radix(h, 16).unwrap().to_string(),
            None => x.to_string(),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn tshark_reads_every_field_as_we_wrote_it() {
    require_tshark();
    // A transfer whose first report is split (over 20 gaps), then hand-built cancels and a
    // segment with extensions.
    let mut cfg = span(B, SEC, Some(8e7));
    cfg.max_retransmission_cycles = Some(10);
    let mut sim = Sim::new(cfg, 51);
    sim.drop = Box::new(|s, log| {
        let n = log
            .iter()
            .filter(|x| x.from == A && x.kind.is_data())
            .count();
        s.kind == SegmentType::RedData && s.t < SEC && n % 2 == 1
    });
    sim.send(A, 3, pattern(60 * 1_300, 1), 50 * 1_300);
    sim.run();
    let mut segs: Vec<Vec<u8>> = sim.log.iter().map(|s| s.bytes.clone()).collect();
    assert!(sim.reports().iter().any(|r| r.report().unwrap().2 > 0));
    let sid = SessionId {
        originator: 1,
        number: 4_000_000_000,
    };
    let ext = [Extension {
        tag: 1,
        value: b"\x01\x02\x03",
    }];
    for (kind, content, e) in [
        (
            SegmentType::CancelFromSender,
            Content::Cancel {
                reason: CancelReason::RetransmissionLimit,
            },
            &[][..],
        ),
        (SegmentType::CancelAckToSender, Content::CancelAck, &[][..]),
        (
            SegmentType::CancelFromReceiver,
            Content::Cancel {
                reason: CancelReason::Miscolored,
            },
            &[][..],
        ),
        (
            SegmentType::CancelAckToReceiver,
            Content::CancelAck,
            &[][..],
        ),
        (
            SegmentType::ReportAck,
            Content::ReportAck { report_serial: 99 },
            &ext[..],
        ),
    ] {
        let mut b = Vec::new();
        wire::encode(
            &wire::Segment {
                kind,
                session: sid,
                header_extensions: Extensions::List(e),
                content,
                // Wireshark 4.0 reads header extensions as RFC 5326 section 3.1.5 lays
                // them out, but not the trailer extensions after an RA (it takes them for
                // a second segment): those are checked by our own tests only.
                trailer_extensions: Extensions::List(&[]),
            },
            &mut b,
        )
        .unwrap();
        segs.push(b);
    }

    let dir = std::env::temp_dir().join(format!("spacetp-ltp-tshark-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ltp.pcap");
    std::fs::write(&path, pcap(&segs)).unwrap();
    let mut cmd = Command::new("tshark");
    cmd.args(["-r", path.to_str().unwrap(), "-n", "-T", "fields"])
        .args([
            "-E",
            "separator=/t",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=,",
        ]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    if std::env::var_os("KEEP_PCAP").is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let frames: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect();
    assert_eq!(frames.len(), segs.len(), "tshark saw every segment");
    let mut kinds = std::collections::BTreeSet::new();
    for (i, (seg, theirs)) in segs.iter().zip(&frames).enumerate() {
        let mine = ours(seg);
        kinds.insert(mine[0].clone());
        // Wireshark 4.0 throws on a cancel acknowledgment that is a header alone (it reads
        // past the extension counts), though RFC 5326 section 3.2.4 gives CAS and CAR no
        // content and ION's serializeCancelAckSegment writes none: only their type is read.
        let header_only = matches!(mine[0].as_str(), "13" | "15");
        for (j, f) in FIELDS.iter().enumerate() {
            if header_only && j > 0 {
                continue;
            }
            let t = theirs.get(j).map_or("", String::as_str);
            assert_eq!(decimal(t), mine[j], "frame {i}, {f}");
        }
    }
    // Red data, checkpoints (plain and EORP), green data and EOB, RS, RA, CS, CAS, CR, CAR.
    assert!(kinds.len() >= 11, "{kinds:?}");
}
