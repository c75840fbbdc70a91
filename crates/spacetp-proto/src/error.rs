//! The one error type of a value that cannot be used: where it sits (the path of the field,
//! as the user wrote it) and what is wrong with it, including what is allowed. It grows its
//! path as it travels up: `min_rto` becomes `tcp.min_rto`, then `flows[0].tcp.min_rto`.

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{path}{sep}{message}", sep = separator(.path))]
pub struct FieldError {
    /// The field, e.g. `flows[0].tcp.min_rto`; empty when the error concerns the whole
    /// document (a syntax error).
    pub path: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl FieldError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        FieldError {
            path: path.into(),
            message: message.into(),
        }
    }

    /// An error about the whole document rather than one field.
    pub fn document(message: impl Into<String>) -> Self {
        FieldError::new("", message)
    }

    /// The same error seen from the field that contains this one: `parent` + `.` + path
    /// (or `parent` + `[i]...` for an index).
    pub fn within(mut self, parent: &str) -> Self {
        self.path = match (parent.is_empty(), self.path.is_empty()) {
            (true, _) => self.path,
            (false, true) => parent.to_string(),
            (false, false) if self.path.starts_with('[') => format!("{parent}{}", self.path),
            (false, false) => format!("{parent}.{}", self.path),
        };
        self
    }
}

/// `path: message`, or the message alone for the whole document.
fn separator(path: &str) -> &'static str {
    if path.is_empty() {
        ""
    } else {
        ": "
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_grows_as_the_error_travels_up() {
        let e = FieldError::new("min_rto", "must be > 0")
            .within("tcp")
            .within("flows[0]");
        assert_eq!(e.path, "flows[0].tcp.min_rto");
        assert_eq!(e.to_string(), "flows[0].tcp.min_rto: must be > 0");
        let e = FieldError::new("[2]", "end must be after start").within("links[0].outages");
        assert_eq!(e.path, "links[0].outages[2]");
        assert_eq!(
            FieldError::document("line 3: bad").to_string(),
            "line 3: bad"
        );
    }
}
