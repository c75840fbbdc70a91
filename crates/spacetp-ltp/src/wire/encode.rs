//! Writing segments (RFC 5326 section 3). The `write_*` functions append one part each to a
//! buffer the caller reuses, so the engine writes a segment without building it first; the
//! data of a data segment is appended by the caller after [`write_data_fields`].

use super::error::{EncodeError, Field};
use super::sdnv;
use super::*;

/// Appends the header: version and type, session ID, extension counts and header
/// extensions (RFC 5326 section 3.1). The trailer extensions are only counted here; the
/// caller writes them last with [`write_extensions`].
pub fn write_header(
    kind: SegmentType,
    session: SessionId,
    header_ext: &Extensions<'_>,
    trailer_count: usize,
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    for (n, field) in [
        (header_ext.count(), Field::HeaderExtension(15, ExtPart::Tag)),
        (trailer_count, Field::TrailerExtension(15, ExtPart::Tag)),
    ] {
        if n > 15 {
            return Err(EncodeError {
                field,
                why: "more than 15 extensions; the count is 4 bits",
            });
        }
    }
    out.push((VERSION << 4) | kind.code());
    sdnv::encode(session.originator, out);
    sdnv::encode(session.number, out);
    out.push(((header_ext.count() as u8) << 4) | trailer_count as u8);
    write_extensions(header_ext, out);
    Ok(())
}

/// Appends extensions (tag, SDNV length, value).
pub fn write_extensions(ext: &Extensions<'_>, out: &mut Vec<u8>) {
    for e in ext.iter() {
        out.push(e.tag);
        sdnv::encode(e.value.len() as u64, out);
        out.extend_from_slice(e.value);
    }
}

/// Appends a data segment's fields up to its data: client service ID, offset, length and,
/// on a checkpoint, its serial numbers (RFC 5326 section 3.2.1).
pub fn write_data_fields(
    client_service_id: u64,
    offset: u64,
    length: u64,
    serials: Option<Serials>,
    out: &mut Vec<u8>,
) {
    sdnv::encode(client_service_id, out);
    sdnv::encode(offset, out);
    sdnv::encode(length, out);
    if let Some(s) = serials {
        sdnv::encode(s.checkpoint, out);
        sdnv::encode(s.report, out);
    }
}

/// The bytes of a data segment other than its data, without extensions.
pub fn data_overhead(
    session: SessionId,
    client_service_id: u64,
    offset: u64,
    length: u64,
    serials: Option<Serials>,
) -> usize {
    2 + sdnv::len(session.originator)
        + sdnv::len(session.number)
        + sdnv::len(client_service_id)
        + sdnv::len(offset)
        + sdnv::len(length)
        + serials.map_or(0, |s| sdnv::len(s.checkpoint) + sdnv::len(s.report))
}

/// Appends a report segment's fields (RFC 5326 section 3.2.2); claim offsets are written
/// relative to the lower bound. Every claim must lie within the bounds.
pub fn write_report(r: &ReportSegment<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    if r.lower_bound > r.upper_bound {
        return Err(EncodeError {
            field: Field::LowerBound,
            why: "is above the upper bound",
        });
    }
    for (i, c) in r.claims.iter().enumerate() {
        if c.offset < r.lower_bound
            || c.length == 0
            || c.offset
                .checked_add(c.length)
                .map_or(true, |e| e > r.upper_bound)
        {
            return Err(EncodeError {
                field: Field::ClaimOffset(i as u64),
                why: "the claim is empty or lies outside the report's bounds",
            });
        }
    }
    sdnv::encode(r.report_serial, out);
    sdnv::encode(r.checkpoint_serial, out);
    sdnv::encode(r.upper_bound, out);
    sdnv::encode(r.lower_bound, out);
    sdnv::encode(r.claims.len(), out);
    for c in r.claims.iter() {
        sdnv::encode(c.offset - r.lower_bound, out);
        sdnv::encode(c.length, out);
    }
    Ok(())
}

/// Appends a report acknowledgment's field (RFC 5326 section 3.2.3).
pub fn write_report_ack(report_serial: u64, out: &mut Vec<u8>) {
    sdnv::encode(report_serial, out);
}

/// Appends a cancel segment's reason code (RFC 5326 section 3.2.4).
pub fn write_cancel(reason: CancelReason, out: &mut Vec<u8>) {
    out.push(reason.code());
}

/// A cancel acknowledgment has no content (RFC 5326 section 3.2.4).
pub fn write_cancel_ack(_out: &mut Vec<u8>) {}

/// Appends a whole segment. Fails only on what cannot be written: more than 15 extensions,
/// content that does not go with the type, claims outside their report's bounds.
pub fn encode(seg: &Segment<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let start = out.len();
    let r = encode_inner(seg, out);
    if r.is_err() {
        out.truncate(start);
    }
    r
}

fn encode_inner(seg: &Segment<'_>, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let mismatch = |field| EncodeError {
        field,
        why: "the content does not go with the segment type",
    };
    write_header(
        seg.kind,
        seg.session,
        &seg.header_extensions,
        seg.trailer_extensions.count(),
        out,
    )?;
    match (seg.kind, &seg.content) {
        (k, Content::Data(d)) if k.is_data() => {
            if d.serials.is_some() != k.is_checkpoint() {
                return Err(EncodeError {
                    field: Field::CheckpointSerial,
                    why: "serial numbers are carried by checkpoints (types 1 to 3) only",
                });
            }
            if d.data.is_empty() {
                return Err(EncodeError {
                    field: Field::Length,
                    why: "is 0; a data segment carries at least 1 byte",
                });
            }
            write_data_fields(
                d.client_service_id,
                d.offset,
                d.data.len() as u64,
                d.serials,
                out,
            );
            out.extend_from_slice(d.data);
        }
        (SegmentType::Report, Content::Report(r)) => write_report(r, out)?,
        (SegmentType::ReportAck, Content::ReportAck { report_serial }) => {
            write_report_ack(*report_serial, out)
        }
        (
            SegmentType::CancelFromSender | SegmentType::CancelFromReceiver,
            Content::Cancel { reason },
        ) => write_cancel(*reason, out),
        (SegmentType::CancelAckToSender | SegmentType::CancelAckToReceiver, Content::CancelAck) => {
            write_cancel_ack(out)
        }
        _ => return Err(mismatch(Field::SegmentType)),
    }
    write_extensions(&seg.trailer_extensions, out);
    Ok(())
}
