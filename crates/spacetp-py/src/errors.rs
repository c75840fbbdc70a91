//! The core's errors as Python exceptions: `FieldError` (a `ValueError` whose `path`
//! attribute names the field) and `SystemRefused` (an `OSError`: the machine would not do
//! it). The Python package maps them into its own hierarchy (`spacetp.errors`).

use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use spacetp_live::LiveError;

pyo3::create_exception!(
    _core,
    FieldError,
    PyValueError,
    "A value that cannot be used; `path` names the field that holds it."
);
pyo3::create_exception!(
    _core,
    SystemRefused,
    PyOSError,
    "The operating system refused what the emulator or the gateway needed."
);

/// A field's error, its path kept as the exception's `path` attribute.
pub fn field_error(e: spacetp_proto::FieldError) -> PyErr {
    Python::with_gil(|py| {
        let err = FieldError::new_err(e.to_string());
        // Setting an attribute on a fresh exception object cannot fail in practice; if it
        // did, the message still names the field.
        let _ = err.value(py).setattr("path", e.path);
        err
    })
}

pub fn live_error(e: LiveError) -> PyErr {
    match e {
        LiveError::Field(f) => field_error(f),
        os @ LiveError::Os { .. } => SystemRefused::new_err(os.to_string()),
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FieldError", m.py().get_type::<FieldError>())?;
    m.add("SystemRefused", m.py().get_type::<SystemRefused>())?;
    Ok(())
}
