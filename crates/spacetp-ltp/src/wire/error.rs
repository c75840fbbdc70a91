//! What a decoder or encoder could not do: the field (as a path through the segment, e.g.
//! `report.claims[3].length`) and what was wrong with it.

use std::fmt;

/// The part of an extension (RFC 5326 section 3.1.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtPart {
    Tag,
    Length,
    Value,
}

/// A field of a segment, named as RFC 5326 section 3 names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Version,
    SegmentType,
    Originator,
    SessionNumber,
    ExtensionCounts,
    HeaderExtension(u8, ExtPart),
    TrailerExtension(u8, ExtPart),
    ClientServiceId,
    Offset,
    Length,
    CheckpointSerial,
    ReportSerialInData,
    ClientServiceData,
    ReportSerial,
    ReportCheckpointSerial,
    UpperBound,
    LowerBound,
    ClaimCount,
    ClaimOffset(u64),
    ClaimLength(u64),
    AckReportSerial,
    ReasonCode,
    /// Bytes after the last trailer extension.
    End,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |p: &ExtPart| match p {
            ExtPart::Tag => "tag",
            ExtPart::Length => "length",
            ExtPart::Value => "value",
        };
        match self {
            Field::Version => f.write_str("header.version"),
            Field::SegmentType => f.write_str("header.type"),
            Field::Originator => f.write_str("header.session.originator"),
            Field::SessionNumber => f.write_str("header.session.number"),
            Field::ExtensionCounts => f.write_str("header.extension_counts"),
            Field::HeaderExtension(i, p) => write!(f, "header.extensions[{i}].{}", part(p)),
            Field::TrailerExtension(i, p) => write!(f, "trailer.extensions[{i}].{}", part(p)),
            Field::ClientServiceId => f.write_str("data.client_service_id"),
            Field::Offset => f.write_str("data.offset"),
            Field::Length => f.write_str("data.length"),
            Field::CheckpointSerial => f.write_str("data.checkpoint_serial"),
            Field::ReportSerialInData => f.write_str("data.report_serial"),
            Field::ClientServiceData => f.write_str("data.client_service_data"),
            Field::ReportSerial => f.write_str("report.report_serial"),
            Field::ReportCheckpointSerial => f.write_str("report.checkpoint_serial"),
            Field::UpperBound => f.write_str("report.upper_bound"),
            Field::LowerBound => f.write_str("report.lower_bound"),
            Field::ClaimCount => f.write_str("report.claim_count"),
            Field::ClaimOffset(i) => write!(f, "report.claims[{i}].offset"),
            Field::ClaimLength(i) => write!(f, "report.claims[{i}].length"),
            Field::AckReportSerial => f.write_str("report_ack.report_serial"),
            Field::ReasonCode => f.write_str("cancel.reason_code"),
            Field::End => f.write_str("end"),
        }
    }
}

/// What was wrong with the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The segment ended inside the field (or before it).
    Truncated,
    /// An SDNV whose value needs more than 64 bits.
    Overflow,
    /// The value is one RFC 5326 does not allow here; the text says why.
    Invalid(&'static str),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Truncated => f.write_str("the segment ends inside this field"),
            Problem::Overflow => f.write_str("SDNV value needs more than 64 bits"),
            Problem::Invalid(why) => f.write_str(why),
        }
    }
}

/// A segment that could not be decoded: which field, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeError {
    pub field: Field,
    pub problem: Problem,
}

impl DecodeError {
    pub(crate) fn new(field: Field, problem: Problem) -> Self {
        DecodeError { field, problem }
    }
    pub(crate) fn invalid(field: Field, why: &'static str) -> Self {
        DecodeError::new(field, Problem::Invalid(why))
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

impl std::error::Error for DecodeError {}

/// A segment that cannot be written as asked: which field, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeError {
    pub field: Field,
    pub why: &'static str,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.why)
    }
}

impl std::error::Error for EncodeError {}
