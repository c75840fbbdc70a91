//! What the emulator and the gateway fail with: a setting that cannot be used (with its
//! field path), or something the operating system refused (with what was being done).

use spacetp_proto::FieldError;

#[derive(Debug, thiserror::Error)]
pub enum LiveError {
    /// A setting of the link or the gateway.
    #[error(transparent)]
    Field(#[from] FieldError),
    /// The operating system refused: `what` says what was being done.
    #[error("{what}: {source}")]
    Os {
        what: String,
        #[source]
        source: std::io::Error,
    },
}

impl LiveError {
    /// The operating system refused `what` (the error is the last one it reported, or `e`).
    pub fn os(what: impl Into<String>, source: std::io::Error) -> Self {
        LiveError::Os {
            what: what.into(),
            source,
        }
    }

    /// The last OS error, for a libc call that just failed.
    pub fn last_os(what: impl Into<String>) -> Self {
        LiveError::os(what, std::io::Error::last_os_error())
    }

    /// The field path, for a setting's error.
    pub fn path(&self) -> Option<&str> {
        match self {
            LiveError::Field(e) => Some(&e.path),
            LiveError::Os { .. } => None,
        }
    }
}

/// Settings of type `T` from their JSON text; an error names the field under `root`
/// (`dtn.peers[0]`), without serde's line and column.
pub fn from_json<T: serde::de::DeserializeOwned>(text: &str, root: &str) -> Result<T, FieldError> {
    let de = &mut serde_json::Deserializer::from_str(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        let inner = inner
            .split(" at line ")
            .next()
            .unwrap_or_default()
            .to_string();
        let at = if path == "." {
            root.to_string()
        } else {
            format!("{root}.{path}")
        };
        FieldError::new(at, inner)
    })
}
