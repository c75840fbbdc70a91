//! Cross-check with Wireshark: a capture written by our encoder and pcap writer is read by
//! tshark (a dissector nobody here wrote), and every field tshark decodes must equal ours,
//! with good checksums. Without tshark on PATH these tests fail: a cross-check that did not
//! run must not pass (.ci/run installs tshark).

#[path = "../common/mod.rs"]
mod common;
mod scenario;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use scenario::scenario;
use spacetp_wire::*;

const C: [u8; 4] = [10, 0, 0, 1];
const S: [u8; 4] = [10, 0, 0, 2];
const C_ISN: u32 = 1_000_000;
const S_ISN: u32 = 3_000_000_000;

fn write_capture(path: &Path, protocol: u8, res: TsResolution) -> Vec<Vec<u8>> {
    let mut w = PcapWriter::with_options(Vec::new(), 65535, res).unwrap();
    let mut packets = Vec::new();
    for (i, p) in scenario().iter().enumerate() {
        let (src, dst) = if p.from_client { (C, S) } else { (S, C) };
        let ip = Ipv4Params {
            src,
            dst,
            protocol,
            id: i as u16 + 1,
        };
        let mut out = Vec::new();
        // Real bytes for some, zeros (headers only + zero fill) for the others.
        if i % 2 == 0 {
            let payload: Vec<u8> = (0..p.len).map(|k| (k % 251) as u8).collect();
            encode_ipv4_tcp(&ip, &p.h, Payload::Bytes(&payload), &mut out).unwrap();
            w.write_packet(1_000_000_000 + i as u64 * 1_234_567, &out)
                .unwrap();
        } else {
            encode_ipv4_tcp_headers(&ip, &p.h, p.len, &mut out).unwrap();
            let total = out.len() as u32 + p.len;
            w.write_zero_filled(1_000_000_000 + i as u64 * 1_234_567, &out, total)
                .unwrap();
            out.resize(total as usize, 0);
        }
        packets.push(out);
    }
    std::fs::write(path, w.into_inner()).unwrap();
    packets
}

const FIELDS: &[&str] = &[
    "frame.number",
    "frame.time_epoch",
    "ip.src",
    "ip.dst",
    "ip.proto",
    "ip.id",
    "ip.ttl",
    "ip.checksum.status",
    "tcp.srcport",
    "tcp.dstport",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.flags",
    "tcp.window_size_value",
    "tcp.len",
    "tcp.hdr_len",
    "tcp.checksum.status",
    "tcp.options",
    "tcp.option_kind",
    "tcp.options.mss_val",
    "tcp.options.wscale.shift",
    "tcp.options.sack_perm",
    "tcp.options.timestamp.tsval",
    "tcp.options.timestamp.tsecr",
    "tcp.options.sack_le",
    "tcp.options.sack_re",
    "tcp.options.scps.vector",
    "tcp.options.scps.binding",
    "tcp.options.snack.offset",
    "tcp.options.snack.size",
    "_ws.malformed",
    "_ws.expert.message",
];

/// tshark's view: one map field -> values (tshark's `|`-joined occurrences) per frame.
fn tshark_fields(
    pcap: &Path,
    extra: &[&str],
) -> Vec<std::collections::HashMap<String, Vec<String>>> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(pcap);
    cmd.args(extra);
    cmd.args([
        "-o",
        "tcp.relative_sequence_numbers:FALSE",
        "-o",
        "tcp.check_checksum:TRUE",
        "-o",
        "ip.check_checksum:TRUE",
        "-T",
        "fields",
        "-E",
        "separator=/t",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=|",
    ]);
    for f in FIELDS {
        cmd.args(["-e", f]);
    }
    let out = cmd.output().expect("run tshark");
    assert!(
        out.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            FIELDS
                .iter()
                .zip(line.split('\t').chain(std::iter::repeat("")))
                .map(|(f, v)| {
                    let vals = if v.is_empty() {
                        vec![]
                    } else {
                        v.split('|').map(String::from).collect()
                    };
                    (f.to_string(), vals)
                })
                .collect()
        })
        .collect()
}

/// Fails the test when tshark cannot run: the cross-check is the point of these tests.
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

/// A path for capture `name` in a directory of its own: the tests run in parallel, and one
/// removing a shared directory it found empty raced another about to write into it.
fn tmp(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("spacetp-wire-tshark-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Removes a capture we wrote (kept when KEEP_PCAP is set, to look at it) and its directory
/// once empty.
fn cleanup(path: &Path) {
    if std::env::var_os("KEEP_PCAP").is_some() {
        eprintln!("kept {}", path.display());
        return;
    }
    let _ = std::fs::remove_file(path);
    if let Some(dir) = path.parent() {
        let _ = std::fs::remove_dir(dir);
    }
}

fn num(v: &[String]) -> Vec<u64> {
    v.iter()
        .map(|s| {
            if let Some(h) = s.strip_prefix("0x") {
                u64::from_str_radix(h, 16).unwrap()
            } else {
                s.parse().unwrap_or_else(|_| panic!("not a number: {s}"))
            }
        })
        .collect()
}

/// Option kinds in wire order up to and including the first 6-byte SNACK (tshark throws
/// there; a SNACK with a bit vector fails tshark's length check instead and it goes on).
fn kinds_until_snack(opts: &[u8]) -> Vec<u64> {
    let mut v = Vec::new();
    let mut i = 0;
    while i < opts.len() {
        let k = opts[i];
        v.push(k as u64);
        if k == 21 && opts.get(i + 1) == Some(&6) {
            break;
        }
        i += if k <= 1 { 1 } else { opts[i + 1] as usize };
    }
    v
}

fn check_against_ours(
    frames: &[std::collections::HashMap<String, Vec<String>>],
    packets: &[Vec<u8>],
    checksums_good: bool,
) {
    assert_eq!(frames.len(), packets.len(), "tshark saw every packet");
    for (f, p) in frames.iter().zip(packets) {
        let d = decode_ipv4_tcp(p).unwrap();
        let h = d.tcp;
        let o = h.options;
        let n = &f["frame.number"][0];
        let get = |k: &str| num(&f[k]);
        assert_eq!(get("ip.id"), [d.ip.id as u64], "frame {n}");
        assert_eq!(get("ip.ttl"), [64], "frame {n}");
        assert_eq!(get("ip.checksum.status"), [1], "frame {n}: IPv4 checksum");
        let tcp_ck = if checksums_good { 1 } else { 0 };
        assert_eq!(
            get("tcp.checksum.status"),
            [tcp_ck],
            "frame {n}: TCP checksum"
        );
        assert_eq!(get("tcp.srcport"), [h.src_port as u64], "frame {n}");
        assert_eq!(get("tcp.dstport"), [h.dst_port as u64], "frame {n}");
        assert_eq!(get("tcp.seq_raw"), [h.seq as u64], "frame {n}");
        assert_eq!(get("tcp.ack_raw"), [h.ack as u64], "frame {n}");
        assert_eq!(get("tcp.flags"), [h.flags as u64], "frame {n}");
        assert_eq!(get("tcp.window_size_value"), [h.window as u64], "frame {n}");
        assert_eq!(get("tcp.len"), [d.payload_len as u64], "frame {n}");
        assert_eq!(get("tcp.hdr_len"), [d.tcp_header_len as u64], "frame {n}");
        let opt_bytes = &p[40..d.payload_offset];
        let hex: String = opt_bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            f["tcp.options"].first().cloned().unwrap_or_default(),
            hex,
            "frame {n}"
        );
        assert_eq!(
            get("tcp.option_kind"),
            kinds_until_snack(opt_bytes),
            "frame {n}"
        );
        assert_eq!(
            get("tcp.options.mss_val"),
            o.mss.map(|m| m as u64).into_iter().collect::<Vec<_>>(),
            "frame {n}"
        );
        assert_eq!(
            get("tcp.options.wscale.shift"),
            o.window_scale
                .map(|m| m as u64)
                .into_iter()
                .collect::<Vec<_>>(),
            "frame {n}"
        );
        assert_eq!(
            !f["tcp.options.sack_perm"].is_empty(),
            o.sack_permitted,
            "frame {n}"
        );
        let t = o.timestamps;
        assert_eq!(
            get("tcp.options.timestamp.tsval"),
            t.map(|t| t.val as u64).into_iter().collect::<Vec<_>>(),
            "frame {n}"
        );
        assert_eq!(
            get("tcp.options.timestamp.tsecr"),
            t.map(|t| t.ecr as u64).into_iter().collect::<Vec<_>>(),
            "frame {n}"
        );
        let le: Vec<u64> = o.sack.as_slice().iter().map(|b| b.0 as u64).collect();
        let re: Vec<u64> = o.sack.as_slice().iter().map(|b| b.1 as u64).collect();
        assert_eq!(
            (get("tcp.options.sack_le"), get("tcp.options.sack_re")),
            (le, re),
            "frame {n}"
        );
        let c = o.scps_capabilities;
        assert_eq!(
            get("tcp.options.scps.vector"),
            c.map(|c| c.vector as u64).into_iter().collect::<Vec<_>>(),
            "frame {n}"
        );
        assert_eq!(
            get("tcp.options.scps.binding"),
            c.map(|c| c.connection_id as u64)
                .into_iter()
                .collect::<Vec<_>>(),
            "frame {n}"
        );
        // tshark decodes only the first SNACK (it throws right after), and only the 6-byte
        // form: a bit vector makes it report "option length should be 6".
        let first = o.snacks.as_slice().first();
        let plain = first.filter(|s| s.bitvec_len == 0);
        assert_eq!(
            get("tcp.options.snack.offset"),
            plain
                .map(|s| s.offset as u64)
                .into_iter()
                .collect::<Vec<_>>(),
            "frame {n}"
        );
        assert_eq!(
            get("tcp.options.snack.size"),
            plain.map(|s| s.size as u64).into_iter().collect::<Vec<_>>(),
            "frame {n}"
        );
        // Malformed: exactly the frames whose first SNACK is the 6-byte form (the known
        // Wireshark 4.0 SNACK bug); no other frame.
        assert_eq!(
            !f["_ws.malformed"].is_empty(),
            plain.is_some(),
            "frame {n}: malformed {:?}",
            f["_ws.expert.message"]
        );
        if first.is_some_and(|s| s.bitvec_len > 0) {
            assert!(
                f["_ws.expert.message"]
                    .iter()
                    .any(|m| m.contains("length should be 6")),
                "frame {n}"
            );
        }
    }
}

#[test]
fn tshark_decodes_what_we_encode() {
    require_tshark();
    // Protocol 6, nanosecond and microsecond files.
    for res in [TsResolution::Nano, TsResolution::Micro] {
        let path = tmp(&format!("ours_{res:?}.pcap"));
        let packets = write_capture(&path, PROTO_TCP, res);
        let frames = tshark_fields(&path, &[]);
        check_against_ours(&frames, &packets, true);
        // Timestamps: tshark reads the resolution we wrote.
        let t2: f64 = frames[2]["frame.time_epoch"][0].parse().unwrap();
        let want = 1.0 + 2.0 * 0.001_234_567;
        let tol = if res == TsResolution::Nano {
            1e-9
        } else {
            1e-6
        };
        assert!((t2 - want).abs() <= tol + 1e-12, "{res:?}: {t2} vs {want}");
        // Our reader reads our file.
        let back = read_pcap(&path);
        assert_eq!(back.len(), packets.len());
        for (b, p) in back.iter().zip(&packets) {
            assert_eq!(b.ipv4().unwrap(), &p[..]);
        }
        cleanup(&path);
    }
    // Protocol 106 decoded as TCP: same fields; tshark's checksum (pseudo-header 6) is "bad",
    // as it is for the RI's own packets.
    let path = tmp("ours_106.pcap");
    let packets = write_capture(&path, PROTO_SCPS_TP, TsResolution::Nano);
    let frames = tshark_fields(&path, &["-d", "ip.proto==106,tcp"]);
    check_against_ours(&frames, &packets, false);
    cleanup(&path);
}

#[test]
fn scps_fields_script_agrees() {
    require_tshark();
    let script = anchor("tshark", "scps_fields.sh");
    let path = tmp("ours_script.pcap");
    let packets = write_capture(&path, PROTO_TCP, TsResolution::Nano);
    let out = Command::new("bash")
        .arg(&script)
        .arg(&path)
        .output()
        .expect("run scps_fields.sh");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), packets.len());
    for (line, p) in lines.iter().zip(&packets) {
        let o = decode_ipv4_tcp(p).unwrap().tcp.options;
        assert!(line.contains("\"tcp_checksum\":\"good\""), "{line}");
        let has = |k: &str, v: bool| line.contains(&format!("\"{k}\":{v}"));
        assert!(has("record_boundary", o.record_boundary), "{line}");
        assert!(
            has("corruption_experienced", o.corruption_experienced),
            "{line}"
        );
        let snack6 = o
            .snacks
            .as_slice()
            .first()
            .is_some_and(|s| s.bitvec_len == 0);
        assert!(has("malformed", snack6), "{line}");
    }
    // The plain SNACK (frame 11): hole = ACK + offset * MSS(1000) = relative [1001, 2001).
    assert!(
        lines[10].contains("\"snack_hole_start\":1001,\"snack_hole_end\":2001"),
        "{}",
        lines[10]
    );
    cleanup(&path);
}
