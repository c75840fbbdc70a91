//! `spacetp cfdp`'s core: a live CFDP entity (`spacetp_live::cfdp`) run until its stop
//! condition or a signal.

use crate::errors::{field_error, live_error};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use spacetp_live::turns::Turns;

/// Check a live CFDP entity's settings (JSON); a FieldError names the bad setting.
#[pyfunction]
fn cfdp_check(config_json: &str) -> PyResult<()> {
    spacetp_live::cfdp::config_from_json(config_json)
        .map(|_| ())
        .map_err(field_error)
}

/// Run a live CFDP entity (settings as JSON) until its stop condition or a signal; returns
/// the report as JSON text. `on_ready`, if given, is called once the socket is bound, with
/// its address ("127.0.0.1:4556").
#[pyfunction]
#[pyo3(signature = (config_json, on_ready=None))]
fn cfdp_entity(py: Python<'_>, config_json: &str, on_ready: Option<PyObject>) -> PyResult<String> {
    use spacetp_live::cfdp::{CfdpEntity, CfdpOverBp};
    let cfg = spacetp_live::cfdp::config_from_json(config_json).map_err(field_error)?;
    let ready = |py: Python<'_>, at: Option<std::net::SocketAddr>| -> PyResult<()> {
        if let Some(f) = &on_ready {
            f.call1(py, (at.map(|a| a.to_string()).unwrap_or_default(),))?;
        }
        Ok(())
    };
    let report = if cfg.bp.is_some() {
        let now_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut e = CfdpOverBp::new(cfg, now_ms).map_err(live_error)?;
        ready(py, e.local_addr())?;
        while py.allow_threads(|| e.run_for(100_000_000)) {
            if py.check_signals().is_err() {
                e.begin_stop("signal");
            }
            for line in e.take_notices() {
                eprintln!("spacetp cfdp: {line}");
            }
        }
        e.report()
    } else {
        let mut e = CfdpEntity::new(cfg).map_err(live_error)?;
        ready(py, e.local_addr())?;
        while py.allow_threads(|| e.run_for(100_000_000)) {
            if py.check_signals().is_err() {
                e.begin_stop("signal");
            }
        }
        e.report()
    };
    serde_json::to_string(&report).map_err(|x| PyValueError::new_err(x.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(cfdp_check, m)?)?;
    m.add_function(wrap_pyfunction!(cfdp_entity, m)?)?;
    Ok(())
}
