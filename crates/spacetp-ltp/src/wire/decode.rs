//! Reading a segment (RFC 5326 section 3). Every length is checked against what is left;
//! nothing here indexes without a check, allocates, or panics.

use super::error::{DecodeError, ExtPart, Field, Problem};
use super::sdnv::{self, SdnvError};
use super::*;

/// A cursor over the segment's bytes.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn sdnv(&mut self, field: Field) -> Result<u64, DecodeError> {
        match sdnv::decode(self.rest) {
            Ok((v, n)) => {
                self.rest = &self.rest[n..];
                Ok(v)
            }
            Err(SdnvError::Truncated) => Err(DecodeError::new(field, Problem::Truncated)),
            Err(SdnvError::Overflow) => Err(DecodeError::new(field, Problem::Overflow)),
        }
    }

    fn byte(&mut self, field: Field) -> Result<u8, DecodeError> {
        let (&b, rest) = self
            .rest
            .split_first()
            .ok_or(DecodeError::new(field, Problem::Truncated))?;
        self.rest = rest;
        Ok(b)
    }

    fn bytes(&mut self, n: u64, field: Field) -> Result<&'a [u8], DecodeError> {
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.rest.len())
            .ok_or(DecodeError::new(field, Problem::Truncated))?;
        let (b, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(b)
    }

    /// `count` extensions: each a tag, an SDNV length and that many value bytes.
    fn extensions(
        &mut self,
        count: u8,
        field: fn(u8, ExtPart) -> Field,
    ) -> Result<Extensions<'a>, DecodeError> {
        let start = self.rest;
        for i in 0..count {
            self.byte(field(i, ExtPart::Tag))?;
            let len = self.sdnv(field(i, ExtPart::Length))?;
            self.bytes(len, field(i, ExtPart::Value))?;
        }
        let used = start.len() - self.rest.len();
        Ok(Extensions::Wire {
            count,
            raw: &start[..used],
        })
    }
}

/// Decodes one segment that fills `bytes` exactly.
pub fn decode(bytes: &[u8]) -> Result<Segment<'_>, DecodeError> {
    let mut r = Reader { rest: bytes };
    let first = r.byte(Field::Version)?;
    if first >> 4 != VERSION {
        return Err(DecodeError::invalid(
            Field::Version,
            "is not 0, the only LTP version (RFC 5326 section 3.1.1)",
        ));
    }
    let kind = SegmentType::from_code(first & 0x0f).ok_or(DecodeError::invalid(
        Field::SegmentType,
        "is 5, 6, 10 or 11, which RFC 5326 section 3.1.3 leaves undefined",
    ))?;
    let originator = r.sdnv(Field::Originator)?;
    let number = r.sdnv(Field::SessionNumber)?;
    let counts = r.byte(Field::ExtensionCounts)?;
    let header_extensions = r.extensions(counts >> 4, Field::HeaderExtension)?;
    let content = match kind {
        k if k.is_data() => Content::Data(data(&mut r, k)?),
        SegmentType::Report => Content::Report(report(&mut r)?),
        SegmentType::ReportAck => Content::ReportAck {
            report_serial: r.sdnv(Field::AckReportSerial)?,
        },
        SegmentType::CancelFromSender | SegmentType::CancelFromReceiver => Content::Cancel {
            reason: CancelReason::from_code(r.byte(Field::ReasonCode)?),
        },
        _ => Content::CancelAck,
    };
    let trailer_extensions = r.extensions(counts & 0x0f, Field::TrailerExtension)?;
    // ION 4.1.3 sizes a report segment with its claims' offsets counted from the block's
    // start but writes them from the report's lower bound (libltpP.c constructReceptionClaim
    // and serializeReportSegment), so a report whose lower bound is not 0 (the second of a
    // split report) ends with a byte or two of slack. Its fields are whole: read it, as
    // ION and Wireshark do.
    let ion_slack = kind == SegmentType::Report && counts & 0x0f == 0;
    if !r.rest.is_empty() && !ion_slack {
        return Err(DecodeError::invalid(
            Field::End,
            "bytes follow the last field of the segment",
        ));
    }
    Ok(Segment {
        kind,
        session: SessionId { originator, number },
        header_extensions,
        content,
        trailer_extensions,
    })
}

fn data<'a>(r: &mut Reader<'a>, kind: SegmentType) -> Result<DataSegment<'a>, DecodeError> {
    let client_service_id = r.sdnv(Field::ClientServiceId)?;
    let offset = r.sdnv(Field::Offset)?;
    let length = r.sdnv(Field::Length)?;
    if length == 0 {
        // ION's decoder (handleDataSegment) has no use for an empty segment either, and a
        // checkpoint must carry data (constructDataSegment keeps one byte for it).
        return Err(DecodeError::invalid(
            Field::Length,
            "is 0; a data segment carries at least 1 byte",
        ));
    }
    if offset.checked_add(length).is_none() {
        return Err(DecodeError::invalid(
            Field::Length,
            "offset + length exceeds 2^64 - 1",
        ));
    }
    let serials = if kind.is_checkpoint() {
        Some(Serials {
            checkpoint: r.sdnv(Field::CheckpointSerial)?,
            report: r.sdnv(Field::ReportSerialInData)?,
        })
    } else {
        None
    };
    if serials.is_some_and(|s| s.checkpoint == 0) {
        return Err(DecodeError::invalid(
            Field::CheckpointSerial,
            "is 0; checkpoint serial numbers start at a random non-zero value (RFC 5326 section 3.2.1)",
        ));
    }
    let data = r.bytes(length, Field::ClientServiceData)?;
    Ok(DataSegment {
        client_service_id,
        offset,
        data,
        serials,
    })
}

fn report<'a>(r: &mut Reader<'a>) -> Result<ReportSegment<'a>, DecodeError> {
    let report_serial = r.sdnv(Field::ReportSerial)?;
    if report_serial == 0 {
        return Err(DecodeError::invalid(
            Field::ReportSerial,
            "is 0; a checkpoint's report serial 0 means \"no report\" (RFC 5326 section 3.2.1)",
        ));
    }
    let checkpoint_serial = r.sdnv(Field::ReportCheckpointSerial)?;
    let upper_bound = r.sdnv(Field::UpperBound)?;
    let lower_bound = r.sdnv(Field::LowerBound)?;
    if lower_bound > upper_bound {
        return Err(DecodeError::invalid(
            Field::LowerBound,
            "is above the upper bound",
        ));
    }
    let count = r.sdnv(Field::ClaimCount)?;
    // Each claim takes at least two bytes: a count beyond that cannot be honest (Wireshark's
    // dissector makes the same check before walking the claims).
    if count > (r.rest.len() / 2) as u64 {
        return Err(DecodeError::new(Field::ClaimCount, Problem::Truncated));
    }
    let start = r.rest;
    for i in 0..count {
        let off = r.sdnv(Field::ClaimOffset(i))?;
        let len = r.sdnv(Field::ClaimLength(i))?;
        let abs = lower_bound.checked_add(off).ok_or(DecodeError::invalid(
            Field::ClaimOffset(i),
            "lower bound + offset exceeds 2^64 - 1",
        ))?;
        if len == 0 {
            // ION's loadClaimsArray discards such a report.
            return Err(DecodeError::invalid(
                Field::ClaimLength(i),
                "is 0; a reception claim covers at least 1 byte",
            ));
        }
        // Claims in any order are read (ION merges them whatever their order).
        match abs.checked_add(len) {
            Some(end) if end <= upper_bound => {}
            _ => {
                return Err(DecodeError::invalid(
                    Field::ClaimLength(i),
                    "the claim ends beyond the report's upper bound (RFC 5326 section 3.2.2)",
                ))
            }
        }
    }
    let used = start.len() - r.rest.len();
    Ok(ReportSegment {
        report_serial,
        checkpoint_serial,
        upper_bound,
        lower_bound,
        claims: Claims::Wire {
            count,
            raw: &start[..used],
            lower: lower_bound,
        },
    })
}
