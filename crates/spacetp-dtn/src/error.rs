//! The error of a contact plan that cannot be used: where the problem sits (a line of an
//! `ionrc` file, or the field of a plan built in code) and the rule it breaks.

use spacetp_proto::FieldError;

/// Why a contact plan was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A line of an `ionrc` text: `line 7: contact 2 -> 3 from +600 to +300: its end is
    /// before its start`. Lines count from 1.
    #[error("line {line}: {message}")]
    Line { line: usize, message: String },
    /// A plan built from values (`ContactPlan::from_parts`, `from_links`): the path of the
    /// offending field, e.g. `links[2].outages[0]: ...`.
    #[error(transparent)]
    Field(#[from] FieldError),
}

impl PlanError {
    pub(crate) fn line(line: usize, message: impl Into<String>) -> Self {
        PlanError::Line {
            line,
            message: message.into(),
        }
    }

    /// The line number, for an error of an `ionrc` text.
    pub fn line_number(&self) -> Option<usize> {
        match self {
            PlanError::Line { line, .. } => Some(*line),
            PlanError::Field(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_error_reads_line_colon_rule_and_a_field_error_its_path() {
        let e = PlanError::line(
            7,
            "contact 2 -> 3 from +600 to +300: its end is before its start",
        );
        assert_eq!(
            e.to_string(),
            "line 7: contact 2 -> 3 from +600 to +300: its end is before its start"
        );
        assert_eq!(e.line_number(), Some(7));
        let f: PlanError = FieldError::new("links[2].owlt", "bad").into();
        assert_eq!(f.to_string(), "links[2].owlt: bad");
        assert_eq!(f.line_number(), None);
    }
}
