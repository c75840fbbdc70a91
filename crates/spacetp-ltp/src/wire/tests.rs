//! The codec against byte strings written out by hand from RFC 5326's layouts (section 3)
//! and read the way Wireshark's LTP dissector reads them, then round trips of every type.

use super::*;

fn seg(bytes: &[u8]) -> Segment<'_> {
    decode(bytes).unwrap_or_else(|e| panic!("{e}: {bytes:02x?}"))
}

fn reencode(s: &Segment<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    encode(s, &mut out).unwrap();
    out
}

#[test]
fn a_red_checkpoint_eorp_eob_is_read_field_by_field() {
    // Version 0, type 3; originator 1; session 300 (SDNV 82 2c); no extensions;
    // client service 1, offset 0, length 5, checkpoint serial 0x1234 (a4 34), report
    // serial 0; "hello".
    let b = [
        0x03, 0x01, 0x82, 0x2c, 0x00, 0x01, 0x00, 0x05, 0xa4, 0x34, 0x00, b'h', b'e', b'l', b'l',
        b'o',
    ];
    let s = seg(&b);
    assert_eq!(s.kind, SegmentType::RedCheckpointEorpEob);
    assert_eq!(
        s.session,
        SessionId {
            originator: 1,
            number: 300
        }
    );
    let Content::Data(d) = s.content else {
        panic!("not data")
    };
    assert_eq!(d.client_service_id, 1);
    assert_eq!(d.offset, 0);
    assert_eq!(d.data, b"hello");
    assert_eq!(
        d.serials,
        Some(Serials {
            checkpoint: 0x1234,
            report: 0
        })
    );
    assert_eq!(reencode(&s), b);
}

#[test]
fn plain_red_and_green_data_carry_no_serial_numbers() {
    let red = [0x00, 0x02, 0x05, 0x00, 0x01, 0x81, 0x00, 0x02, 0xaa, 0xbb];
    let s = seg(&red);
    assert_eq!(s.kind, SegmentType::RedData);
    let Content::Data(d) = s.content else {
        panic!()
    };
    assert_eq!(
        (d.offset, d.data, d.serials),
        (128, &[0xaa, 0xbb][..], None)
    );
    let green_eob = [0x07, 0x02, 0x05, 0x00, 0x01, 0x10, 0x01, 0xcc];
    let s = seg(&green_eob);
    assert_eq!(s.kind, SegmentType::GreenEob);
    assert!(s.kind.is_eob() && s.kind.is_green() && !s.kind.is_checkpoint());
    assert_eq!(reencode(&s), green_eob);
}

#[test]
fn report_claim_offsets_are_relative_to_the_lower_bound() {
    // RS serial 7, checkpoint 0x1234, upper 1000 (87 68), lower 500 (83 74), 2 claims:
    // (0, 100) and (200 = 81 48, 300 = 82 2c) relative, i.e. 500..600 and 700..1000.
    let b = [
        0x08, 0x01, 0x05, 0x00, 0x07, 0xa4, 0x34, 0x87, 0x68, 0x83, 0x74, 0x02, 0x00, 0x64, 0x81,
        0x48, 0x82, 0x2c,
    ];
    let s = seg(&b);
    let Content::Report(r) = s.content else {
        panic!()
    };
    assert_eq!(
        (
            r.report_serial,
            r.checkpoint_serial,
            r.upper_bound,
            r.lower_bound
        ),
        (7, 0x1234, 1000, 500)
    );
    let claims: Vec<Claim> = r.claims.iter().collect();
    assert_eq!(
        claims,
        [
            Claim {
                offset: 500,
                length: 100
            },
            Claim {
                offset: 700,
                length: 300
            }
        ]
    );
    assert_eq!(reencode(&s), b);
    // The same report built from absolute claims writes the same bytes.
    let built = Segment {
        content: Content::Report(ReportSegment {
            claims: Claims::List(&claims),
            ..r
        }),
        ..s
    };
    assert_eq!(reencode(&built), b);
}

#[test]
fn acknowledgments_and_cancels_have_the_rfc_layouts() {
    let ra = [0x09, 0x01, 0x05, 0x00, 0x07];
    assert_eq!(seg(&ra).content, Content::ReportAck { report_serial: 7 });
    for (code, kind) in [
        (0x0c, SegmentType::CancelFromSender),
        (0x0e, SegmentType::CancelFromReceiver),
    ] {
        let b = [code, 0x01, 0x05, 0x00, 0x02];
        let s = seg(&b);
        assert_eq!(s.kind, kind);
        assert_eq!(
            s.content,
            Content::Cancel {
                reason: CancelReason::RetransmissionLimit
            }
        );
        assert_eq!(reencode(&s), b);
    }
    for (code, kind) in [
        (0x0d, SegmentType::CancelAckToSender),
        (0x0f, SegmentType::CancelAckToReceiver),
    ] {
        let b = [code, 0x01, 0x05, 0x00];
        let s = seg(&b);
        assert_eq!((s.kind, s.content), (kind, Content::CancelAck));
        assert_eq!(reencode(&s), b);
    }
}

#[test]
fn every_reason_code_is_kept_reserved_ones_included() {
    let names: Vec<&str> = (0..=6u8)
        .map(|c| CancelReason::from_code(c).mnemonic())
        .collect();
    assert_eq!(
        names,
        [
            "USR_CNCLD",
            "UNREACH",
            "RLEXC",
            "MISCOLORED",
            "SYS_CNCLD",
            "RXMTCYCEXC",
            "reserved"
        ]
    );
    for c in 0..=255u8 {
        assert_eq!(CancelReason::from_code(c).code(), c);
        let b = [0x0c, 0x01, 0x01, 0x00, c];
        assert_eq!(reencode(&seg(&b)), b);
    }
}

#[test]
fn header_and_trailer_extensions_are_kept_and_written_back() {
    // One header extension (cookie, tag 0x01, 4 bytes) and one trailer extension
    // (authentication, tag 0x00, 2 bytes) on a report acknowledgment.
    let b = [
        0x09, 0x01, 0x05, 0x11, 0x01, 0x04, 0xde, 0xad, 0xbe, 0xef, 0x07, 0x00, 0x02, 0x12, 0x34,
    ];
    let s = seg(&b);
    let h: Vec<Extension> = s.header_extensions.iter().collect();
    let t: Vec<Extension> = s.trailer_extensions.iter().collect();
    assert_eq!(
        h,
        [Extension {
            tag: 1,
            value: &[0xde, 0xad, 0xbe, 0xef]
        }]
    );
    assert_eq!(
        t,
        [Extension {
            tag: 0,
            value: &[0x12, 0x34]
        }]
    );
    assert_eq!(s.content, Content::ReportAck { report_serial: 7 });
    assert_eq!(reencode(&s), b);
}

#[test]
fn every_type_code_reads_as_rfc_5326_section_3_1_3_defines_it() {
    for code in 0..16u8 {
        let t = SegmentType::from_code(code);
        assert_eq!(t.is_none(), matches!(code, 5 | 6 | 10 | 11), "code {code}");
        if let Some(t) = t {
            assert_eq!(t.code(), code);
            assert_eq!(t.is_data(), code & 0x08 == 0);
            assert_eq!(t.is_green(), code & 0x0c == 0x04);
            assert_eq!(t.is_checkpoint(), (1..=3).contains(&code));
            assert_eq!(t.is_eob(), code == 3 || code == 7);
        }
    }
}

fn err(bytes: &[u8]) -> DecodeError {
    decode(bytes).expect_err("decoded what must fail")
}

#[test]
fn malformed_segments_name_the_field_and_the_reason() {
    assert_eq!(err(&[]).field, Field::Version);
    assert_eq!(err(&[0x13, 0x01, 0x01, 0x00]).field, Field::Version);
    let e = err(&[0x05, 0x01, 0x01, 0x00]);
    assert_eq!(e.field, Field::SegmentType);
    assert!(
        e.to_string().starts_with("header.type: is 5, 6, 10 or 11"),
        "{e}"
    );
    assert_eq!(err(&[0x0a, 0x01, 0x01, 0x00]).field, Field::SegmentType);
    assert_eq!(err(&[0x00, 0x81]).field, Field::Originator);
    let mut overflow = vec![0x00, 0x01];
    overflow.extend([0xff; 10]);
    overflow.push(0x7f);
    assert_eq!(
        err(&overflow),
        DecodeError::new(Field::SessionNumber, Problem::Overflow)
    );
    assert_eq!(err(&[0x00, 0x01, 0x01]).field, Field::ExtensionCounts);
    // Data length says 5, 2 bytes follow.
    let e = err(&[0x00, 0x01, 0x01, 0x00, 0x01, 0x00, 0x05, 0xaa, 0xbb]);
    assert_eq!(
        e,
        DecodeError::new(Field::ClientServiceData, Problem::Truncated)
    );
    assert_eq!(
        e.to_string(),
        "data.client_service_data: the segment ends inside this field"
    );
    // Zero-length data.
    assert_eq!(
        err(&[0x00, 0x01, 0x01, 0x00, 0x01, 0x00, 0x00]).field,
        Field::Length
    );
    // A checkpoint with serial 0.
    assert_eq!(
        err(&[0x01, 0x01, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0xaa]).field,
        Field::CheckpointSerial
    );
    // A report whose second claim runs past its upper bound (upper 10, lower 0, claims
    // (0,4) and (6,5)).
    let e = err(&[
        0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x0a, 0x00, 0x02, 0x00, 0x04, 0x06, 0x05,
    ]);
    assert_eq!(e.field, Field::ClaimLength(1));
    assert!(e.to_string().starts_with("report.claims[1].length:"), "{e}");
    // A claim of length 0, a lower bound above the upper bound.
    assert_eq!(
        err(&[0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x0a, 0x00, 0x01, 0x00, 0x00]).field,
        Field::ClaimLength(0)
    );
    assert_eq!(
        err(&[0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x0a, 0x0b, 0x00]).field,
        Field::LowerBound
    );
    // A claim count that cannot fit in what is left.
    assert_eq!(
        err(&[0x08, 0x01, 0x01, 0x00, 0x01, 0x01, 0x0a, 0x00, 0x7f, 0x00, 0x01]).field,
        Field::ClaimCount
    );
    // A header extension whose value is cut; bytes after a cancel's reason code.
    assert_eq!(
        err(&[0x09, 0x01, 0x01, 0x10, 0x01, 0x05, 0xaa]).field,
        Field::HeaderExtension(0, ExtPart::Value)
    );
    assert_eq!(err(&[0x0c, 0x01, 0x01, 0x00, 0x00, 0x00]).field, Field::End);
    assert_eq!(err(&[0x0c, 0x01, 0x01, 0x00]).field, Field::ReasonCode);
    assert_eq!(
        err(&[0x0c, 0x01, 0x01, 0x01, 0x00]).field,
        Field::TrailerExtension(0, ExtPart::Tag)
    );
    assert_eq!(
        err(&[0x0c, 0x01, 0x01, 0x01, 0x00, 0x00]).field,
        Field::TrailerExtension(0, ExtPart::Length)
    );
}

#[test]
fn built_segments_of_every_type_round_trip() {
    let session = SessionId {
        originator: u64::MAX,
        number: 1 << 40,
    };
    let claims = [
        Claim {
            offset: 10,
            length: 5,
        },
        Claim {
            offset: 20,
            length: 30,
        },
    ];
    let ext = [
        Extension {
            tag: 0xb0,
            value: b"x",
        },
        Extension {
            tag: 0xff,
            value: &[0; 200],
        },
    ];
    let data = |serials| {
        Content::Data(DataSegment {
            client_service_id: 2,
            offset: 1 << 33,
            data: b"payload",
            serials,
        })
    };
    let cp = Some(Serials {
        checkpoint: 9,
        report: 4,
    });
    let cases = [
        (SegmentType::RedData, data(None)),
        (SegmentType::RedCheckpoint, data(cp)),
        (SegmentType::RedCheckpointEorp, data(cp)),
        (SegmentType::RedCheckpointEorpEob, data(cp)),
        (SegmentType::GreenData, data(None)),
        (SegmentType::GreenEob, data(None)),
        (
            SegmentType::Report,
            Content::Report(ReportSegment {
                report_serial: 3,
                checkpoint_serial: 0,
                upper_bound: 50,
                lower_bound: 10,
                claims: Claims::List(&claims),
            }),
        ),
        (
            SegmentType::ReportAck,
            Content::ReportAck { report_serial: 3 },
        ),
        (
            SegmentType::CancelFromSender,
            Content::Cancel {
                reason: CancelReason::UserCanceled,
            },
        ),
        (SegmentType::CancelAckToSender, Content::CancelAck),
        (
            SegmentType::CancelFromReceiver,
            Content::Cancel {
                reason: CancelReason::Reserved(200),
            },
        ),
        (SegmentType::CancelAckToReceiver, Content::CancelAck),
    ];
    for (kind, content) in cases {
        for (h, t) in [(&[][..], &[][..]), (&ext[..], &ext[..1])] {
            let s = Segment {
                kind,
                session,
                header_extensions: Extensions::List(h),
                content,
                trailer_extensions: Extensions::List(t),
            };
            let bytes = reencode(&s);
            let back = seg(&bytes);
            assert_eq!(back, s, "{}", kind.name());
            assert_eq!(reencode(&back), bytes);
        }
    }
}

#[test]
fn segments_that_cannot_be_written_are_refused_and_nothing_is_appended() {
    let mut out = vec![0xee];
    let bad = Segment {
        kind: SegmentType::RedData,
        session: SessionId {
            originator: 1,
            number: 1,
        },
        header_extensions: Extensions::List(&[]),
        content: Content::CancelAck,
        trailer_extensions: Extensions::List(&[]),
    };
    assert!(encode(&bad, &mut out).is_err());
    let claims = [Claim {
        offset: 5,
        length: 10,
    }];
    let report = Segment {
        kind: SegmentType::Report,
        content: Content::Report(ReportSegment {
            report_serial: 1,
            checkpoint_serial: 1,
            upper_bound: 10,
            lower_bound: 0,
            claims: Claims::List(&claims),
        }),
        ..bad
    };
    assert!(encode(&report, &mut out).is_err());
    let many = [Extension { tag: 1, value: &[] }; 16];
    let ext = Segment {
        kind: SegmentType::CancelAckToSender,
        header_extensions: Extensions::List(&many),
        ..bad
    };
    assert!(encode(&ext, &mut out).is_err());
    assert_eq!(out, [0xee]);
}

#[test]
fn data_overhead_is_the_length_written_before_the_data() {
    let session = SessionId {
        originator: 70000,
        number: 1 << 31,
    };
    for serials in [
        None,
        Some(Serials {
            checkpoint: 16383,
            report: 1 << 32,
        }),
    ] {
        let mut out = Vec::new();
        write_header(
            SegmentType::RedCheckpoint,
            session,
            &Extensions::default(),
            0,
            &mut out,
        )
        .unwrap();
        write_data_fields(7, 123_456_789, 1400, serials, &mut out);
        assert_eq!(
            out.len(),
            data_overhead(session, 7, 123_456_789, 1400, serials)
        );
    }
}

/// The second report segment of a split report, as ION 4.1.3 sent it to a spacetp node
/// (captured over `spacetp emulate`, 2% PER, 10 s light time): nine claims from lower bound
/// 1427236, then two bytes of slack (ION sizes the segment with absolute claim offsets).
const ION_SPLIT_REPORT: &str = "0802c889b94200b769b05cfa894ed78e24090088e67888f16382da608bd72ef7\
                                198cd93284b33c91975981c30692e54a83fd2596ed5a82995e99922389c83ba2\
                                e549956143b5";

#[test]
fn ions_split_report_with_slack_after_its_claims_is_read() {
    let hex: String = ION_SPLIT_REPORT.split_whitespace().collect();
    let b: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let seg = decode(&b).expect("ION's report is read");
    let Content::Report(rs) = seg.content else {
        panic!("not a report: {seg:?}");
    };
    assert_eq!((rs.report_serial, rs.checkpoint_serial), (7145, 6236));
    assert_eq!((rs.lower_bound, rs.upper_bound), (1_427_236, 2_000_078));
    let claims: Vec<_> = rs.claims.iter().collect();
    assert_eq!(claims.len(), 9);
    assert_eq!(claims[0].offset, 1_427_236);
    assert_eq!(claims[8].end(), 2_000_078);
    // Slack is only forgiven where ION leaves it: after a report, not after other segments.
    let mut ack = vec![0x09, 0x02, 0x01, 0x00, 0x05];
    assert!(decode(&ack).is_ok());
    ack.push(0x00);
    assert!(decode(&ack).is_err());
}
