//! PyO3 bindings: thin wrappers that move JSON text and column bytes across. No logic here.

mod cfdp;
mod errors;
mod pyjson;
mod pyjson_serde;
mod pytoml;

use errors::{field_error, live_error};
use pyo3::exceptions::{PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use spacetp_live::turns::Turns;
use spacetp_sim::{run, scenario_from_json, scenario_from_toml, RunOptions, Table};
use std::cell::Cell;
use std::time::Instant;

fn table_to_dict<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let bytes: Vec<u8> = col.iter().flat_map(|v| v.to_le_bytes()).collect();
        d.set_item(*name, PyBytes::new(py, &bytes))?;
    }
    Ok(d)
}

/// A run's summary, kept in the core until Python asks for it in one of two forms: JSON
/// text in the summary's own field order (`text`, what `Result.summary` parses), or the
/// text of `json.dumps(indent=2, sort_keys=True)` (`indent2_sorted`, what
/// `Result.to_json` writes when Python never opened the summary: `spacetp run --json -q`
/// parses nothing).
#[pyclass(frozen, module = "spacetp._core")]
struct Summary(spacetp_sim::Summary);

#[pymethods]
impl Summary {
    fn text(&self) -> PyResult<String> {
        serde_json::to_string(&self.0).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn indent2_sorted(&self) -> PyResult<String> {
        pyjson_serde::to_indent2_sorted(&self.0).map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// `indent2_sorted` and a newline, written to the file at `path` from here: no Python
    /// string of the whole text, no encoding, and the outermost map written from where its
    /// values were rendered (16 MB for 10 000 flows).
    fn write_indent2_sorted(&self, path: std::path::PathBuf) -> PyResult<()> {
        use std::io::Write;
        let text = pyjson_serde::render_indent2_sorted(&self.0)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        std::fs::File::create(&path)
            .and_then(|mut f| {
                text.write_to(&mut f)?;
                f.write_all(b"\n")
            })
            .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))
    }
}

/// Run a scenario given as JSON text. Returns a dict with `summary` (a [`Summary`]),
/// `samples`, `segments` and `limits` (dicts of little-endian f64 column bytes, or None) and
/// `wall_s`.
#[pyfunction]
#[pyo3(signature = (scenario_json, pcap=Vec::new(), keylog=None, qlog=None))]
fn run_json<'py>(
    py: Python<'py>,
    scenario_json: &str,
    pcap: Vec<(String, String)>,
    keylog: Option<String>,
    qlog: Option<String>,
) -> PyResult<Bound<'py, PyDict>> {
    let sc = scenario_from_json(scenario_json).map_err(field_error)?;
    let opts = RunOptions { pcap, keylog, qlog };
    let t0 = Instant::now();
    let out = py.allow_threads(|| run(sc, &opts)).map_err(field_error)?;
    let wall = t0.elapsed().as_secs_f64();
    let d = PyDict::new(py);
    d.set_item("summary", Summary(out.summary))?;
    d.set_item(
        "samples",
        out.samples
            .as_ref()
            .map(|t| table_to_dict(py, t))
            .transpose()?,
    )?;
    d.set_item(
        "segments",
        out.segments
            .as_ref()
            .map(|t| table_to_dict(py, t))
            .transpose()?,
    )?;
    d.set_item(
        "limits",
        out.limits
            .as_ref()
            .map(|t| table_to_dict(py, t))
            .transpose()?,
    )?;
    d.set_item("wall_s", wall)?;
    Ok(d)
}

/// Check a scenario (JSON text) without running it: parse and build the world.
#[pyfunction]
fn validate_json(scenario_json: &str) -> PyResult<()> {
    let sc = scenario_from_json(scenario_json).map_err(field_error)?;
    spacetp_sim::World::new(sc, &RunOptions::default()).map_err(field_error)?;
    Ok(())
}

/// Build a scenario (JSON text) without running it and say what fitting gave each flow
/// (`fit = true`): its path's facts and the settings fitted, as JSON text.
#[pyfunction]
fn fit_settings(scenario_json: &str) -> PyResult<String> {
    let sc = scenario_from_json(scenario_json).map_err(field_error)?;
    let w = spacetp_sim::World::new(sc, &RunOptions::default()).map_err(field_error)?;
    Ok(w.fitted_settings().to_string())
}

/// The limit analysis's states in the order of their indices in a run's `limits` table.
#[pyfunction]
fn limit_states() -> Vec<&'static str> {
    spacetp_sim::limits::ALL.iter().map(|l| l.key()).collect()
}

/// Every link direction's schedules (rate, delay, down intervals) as JSON text, as the
/// world will read them.
#[pyfunction]
fn link_schedules(scenario_json: &str) -> PyResult<String> {
    let sc = scenario_from_json(scenario_json).map_err(field_error)?;
    let v = spacetp_sim::export::link_schedules(sc).map_err(field_error)?;
    Ok(v.to_string())
}

/// The scenario's links over [0, horizon_s) as an ION contact plan (text).
#[pyfunction]
#[pyo3(signature = (scenario_json, numbers, horizon_s, epoch=None))]
fn contact_plan(
    scenario_json: &str,
    numbers: Vec<(String, u64)>,
    horizon_s: f64,
    epoch: Option<i64>,
) -> PyResult<String> {
    let sc = scenario_from_json(scenario_json).map_err(field_error)?;
    let horizon = (horizon_s * 1e9).round() as spacetp_proto::Time;
    spacetp_sim::export::contact_plan(sc, &numbers, horizon, epoch).map_err(field_error)
}

/// Parse TOML text with the Rust schema (used to report TOML paths exactly as Rust sees them).
#[pyfunction]
fn check_toml(text: &str) -> PyResult<()> {
    scenario_from_toml(text).map(|_| ()).map_err(field_error)
}

/// JSON Schema of the scenario.
#[pyfunction]
fn schema() -> String {
    spacetp_sim::config::json_schema()
}

/// `[(name, description, settings as JSON, family)]` for every protocol of every transport
/// in the registry (TCP's profiles, QUIC's, LTP, bp).
#[pyfunction]
fn protocols() -> Vec<(String, String, String, String)> {
    spacetp_sim::transport::registry::TRANSPORTS
        .iter()
        .flat_map(|t| t.profiles())
        .map(|p| {
            (
                p.name.to_string(),
                p.description.to_string(),
                p.settings.to_string(),
                p.family.to_string(),
            )
        })
        .collect()
}

/// The transport registry as JSON: for each transport its title, the key of its settings
/// table (`[flows.KEY]`), its protocols, whether it carries workloads, and whether a
/// flow's packets follow the route end to end.
#[pyfunction]
fn transports() -> String {
    let list: Vec<serde_json::Value> = spacetp_sim::transport::registry::TRANSPORTS
        .iter()
        .map(|t| {
            serde_json::json!({
                "title": t.title(),
                "settings_key": t.settings_key(),
                "protocols": t.protocols(),
                "workloads": t.carries_workloads(),
                "routed": t.routed(),
            })
        })
        .collect();
    serde_json::Value::from(list).to_string()
}

/// JSON Schema of one transport's settings table (`[flows.KEY]`); a ValueError lists the
/// keys there are.
#[pyfunction]
fn transport_schema(key: &str) -> PyResult<String> {
    let all = spacetp_sim::transport::registry::TRANSPORTS;
    match all.iter().find(|t| t.settings_key() == key) {
        Some(t) => Ok(serde_json::to_string_pretty(&t.settings_schema()).unwrap_or_default()),
        None => {
            let keys: Vec<&str> = all.iter().map(|t| t.settings_key()).collect();
            Err(PyValueError::new_err(format!(
                "no transport has settings \"{key}\"; there are: {}",
                keys.join(", ")
            )))
        }
    }
}

/// `[(settings, where the SCPS Reference Implementation sets them)]` of the `scps-ri*`
/// profiles.
#[pyfunction]
fn scps_ri_base() -> Vec<(String, String)> {
    spacetp_proto::profiles_ri::SCPS_RI
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// `[(settings, where Linux sets them)]` that the `linux-*` profiles share.
#[pyfunction]
fn linux_base() -> Vec<(String, String)> {
    spacetp_proto::profiles::LINUX_BASE
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The two directions of the one-link scenario `scenario_json` as JSON, or a ValueError naming
/// the bad field (checked before `spacetp emulate` creates anything).
#[pyfunction]
fn emulate_check(scenario_json: &str) -> PyResult<String> {
    spacetp_live::describe(scenario_json).map_err(field_error)
}

/// Emulate the link of `scenario_json` between packet fds `fd_a` (end `between[0]`) and
/// `fd_b` until `duration_s` has passed or a signal arrives (Ctrl-C stops the run and still
/// returns). Link-state notices (`link down`, `link up`) go to the datagram fds `notify`,
/// and with `notify_udp = (port, address_a, address_b)` also as UDP datagrams on the link to
/// that port of each end. Returns the report as JSON text.
#[pyfunction]
#[pyo3(signature = (scenario_json, fd_a, fd_b, duration_s=None, realtime=false, notify=vec![], notify_udp=None))]
#[allow(clippy::too_many_arguments)]
fn emulate(
    py: Python<'_>,
    scenario_json: &str,
    fd_a: i32,
    fd_b: i32,
    duration_s: Option<f64>,
    realtime: bool,
    notify: Vec<i32>,
    notify_udp: Option<(u16, String, String)>,
) -> PyResult<String> {
    let addr = |s: &str| {
        s.parse::<std::net::Ipv4Addr>()
            .map(|a| a.octets())
            .map_err(|_| PyValueError::new_err(format!("notify_udp: {s} is not an IPv4 address")))
    };
    let notify_udp = match notify_udp {
        Some((port, a, b)) => Some((port, addr(&a)?, addr(&b)?)),
        None => None,
    };
    let opts = spacetp_live::Options {
        duration: duration_s.map(|s| (s.max(0.0) * 1e9) as u64),
        realtime,
        notify,
        notify_udp,
    };
    let mut em =
        spacetp_live::Emulator::new(scenario_json, fd_a, fd_b, &opts).map_err(live_error)?;
    loop {
        // Give Python a chance to run its signal handlers every 100 ms.
        if !py.allow_threads(|| em.run_for(100_000_000)) {
            break;
        }
        if py.check_signals().is_err() {
            em.stop("signal");
            break;
        }
    }
    let report = em.report();
    drop(em);
    serde_json::to_string(&report).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Check a gateway configuration (JSON); a ValueError names the bad setting.
#[pyfunction]
fn gateway_check(config_json: &str) -> PyResult<()> {
    spacetp_live::carrier::any_config_from_json(config_json)
        .map(|_| ())
        .map_err(field_error)
}

/// Run a gateway (configuration as JSON) until its duration is over or a signal arrives;
/// returns the report as JSON text. An SCPS-TP gateway's link is packet fd `link_fd`; a QUIC
/// gateway's is that fd if given (IPv4 packets), else a UDP socket bound to its tunnel
/// address. Link-state notices arrive on datagram fd `link_state_fd`.
///
/// `on_tick`, if given, is called about once a second with the report so far (JSON text):
/// what a metrics endpoint serves; an SCPS-TP gateway's has the log events since the last
/// call under `events` (with `log_connections`).
///
/// `stop_requested`, if given, is asked (a call returning a bool) between the core's steps
/// whether a stop signal came: a handler that only records the signal never cuts a tick
/// short while it writes the events handed to it (a KeyboardInterrupt raised there lost
/// them: a connection's open and close missing from the log).
#[pyfunction]
#[pyo3(signature = (config_json, link_fd=None, link_state_fd=None, on_tick=None, stop_requested=None))]
fn gateway(
    py: Python<'_>,
    config_json: &str,
    link_fd: Option<i32>,
    link_state_fd: Option<i32>,
    on_tick: Option<PyObject>,
    stop_requested: Option<PyObject>,
) -> PyResult<String> {
    let mut ticks = 0u32;
    let interrupted = Cell::new(false);
    // The callback may answer with a new configuration (JSON): a SIGHUP reload.
    let mut tick =
        |py: Python<'_>, report: &mut dyn FnMut() -> String| -> PyResult<Option<String>> {
            ticks += 1;
            match on_tick.as_ref().filter(|_| ticks % 10 == 1) {
                Some(f) => {
                    let r = f.call1(py, (report(),));
                    stop_if_interrupted(py, r, &interrupted)?.map_or(Ok(None), |v| v.extract(py))
                }
                None => Ok(None),
            }
        };
    let cfg = spacetp_live::carrier::any_config_from_json(config_json).map_err(field_error)?;
    let mut g =
        spacetp_live::carrier::start_gateway(cfg, link_fd, link_state_fd).map_err(live_error)?;
    // A signal begins an orderly stop (every relayed connection reset on both sides, or
    // drained for drain_s); a second one while draining resets at once. The loop ends when
    // the gateway has finished stopping.
    // A KeyboardInterrupt raised while asking is a stop too, as one inside the tick is.
    let asked = |py: Python<'_>| -> PyResult<bool> {
        match &stop_requested {
            Some(f) => match f.call0(py) {
                Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => Ok(true),
                r => r?.extract(py),
            },
            None => Ok(false),
        }
    };
    while py.allow_threads(|| g.run_for(100_000_000)) {
        if py.check_signals().is_err() | asked(py)? {
            g.begin_stop("signal");
        }
        let new = tick(py, &mut || g.report_value().to_string())?;
        if interrupted.take() | asked(py)? {
            g.begin_stop("signal");
        }
        if let Some(text) = new {
            g.reload(&text);
        }
    }
    let report = serde_json::to_string(&g.report_value());
    report.map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Check a live DTN node's settings (JSON); a ValueError names the bad setting.
#[pyfunction]
fn dtn_check(config_json: &str) -> PyResult<()> {
    spacetp_live::dtn::config_from_json(config_json, unix_now_ms() as i64 / 1000)
        .map(|_| ())
        .map_err(field_error)
}

/// Run a live DTN node (settings as JSON) until its stop condition or a signal; returns the
/// report as JSON text. A signal stops it at once: open LTP blocks are canceled and every
/// bundle still held is written to the store directory. `on_notice`, if given, is called
/// with each line the node says while it runs (canceled LTP sessions, bundles given up),
/// within 100 ms of the event.
#[pyfunction]
#[pyo3(signature = (config_json, on_notice=None))]
fn dtn_node(py: Python<'_>, config_json: &str, on_notice: Option<PyObject>) -> PyResult<String> {
    let now_ms = unix_now_ms();
    let cfg = spacetp_live::dtn::config_from_json(config_json, now_ms as i64 / 1000)
        .map_err(field_error)?;
    let mut node = spacetp_live::dtn::DtnNode::new(cfg, now_ms).map_err(live_error)?;
    let interrupted = Cell::new(false);
    let say = |py: Python<'_>, node: &mut spacetp_live::dtn::DtnNode| -> PyResult<()> {
        for line in node.take_notices() {
            if let Some(f) = &on_notice {
                stop_if_interrupted(py, f.call1(py, (line,)), &interrupted)?;
            }
        }
        Ok(())
    };
    while py.allow_threads(|| node.run_for(100_000_000)) {
        if py.check_signals().is_err() {
            node.begin_stop("signal");
        }
        say(py, &mut node)?;
        if interrupted.take() {
            node.begin_stop("signal");
        }
    }
    say(py, &mut node)?;
    serde_json::to_string(&node.report()).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A Python callback's result, where a KeyboardInterrupt raised inside it (the SIGTERM or
/// SIGINT handler ran while the callback did) becomes `interrupted` and no value: the loop
/// then stops in order, as when `check_signals` sees the signal, instead of unwinding past
/// the orderly stop.
fn stop_if_interrupted(
    py: Python<'_>,
    r: PyResult<PyObject>,
    interrupted: &Cell<bool>,
) -> PyResult<Option<PyObject>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_instance_of::<PyKeyboardInterrupt>(py) => {
            interrupted.set(true);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A certificate and private key (PEM text) for a QUIC gateway pair: (certificate, key).
#[pyfunction]
fn gateway_make_cert() -> (String, String) {
    spacetp_quic::tls::make_pem_pair(spacetp_quic::tls::GATEWAY_NAME)
}

/// The JSON Schema of a gateway's settings (the keys `spacetp gateway` builds from its flags).
#[pyfunction]
fn gateway_schema() -> String {
    spacetp_live::gateway::schema()
}

/// The gateway's self-test (no root): every class of forged packet injected into a gateway
/// pair during a transfer over `link` (the fields of a `[[links]]` entry as JSON text);
/// the rows as JSON text.
#[pyfunction]
#[pyo3(signature = (link, nbytes=2_000_000, rounds=4))]
fn gateway_selftest(py: Python<'_>, link: &str, nbytes: usize, rounds: u32) -> PyResult<String> {
    spacetp_live::describe(&spacetp_live::scenario_json(1, link)).map_err(field_error)?;
    let rows = py.allow_threads(|| spacetp_live::selftest::selftest(link, nbytes, rounds));
    serde_json::to_string(&rows).map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_json, m)?)?;
    m.add_function(wrap_pyfunction!(pyjson::dumps_indent2_sorted, m)?)?;
    m.add_class::<Summary>()?;
    m.add_function(wrap_pyfunction!(pytoml::toml_loads, m)?)?;
    m.add_function(wrap_pyfunction!(validate_json, m)?)?;
    m.add_function(wrap_pyfunction!(check_toml, m)?)?;
    m.add_function(wrap_pyfunction!(link_schedules, m)?)?;
    m.add_function(wrap_pyfunction!(limit_states, m)?)?;
    m.add_function(wrap_pyfunction!(fit_settings, m)?)?;
    m.add_function(wrap_pyfunction!(contact_plan, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(protocols, m)?)?;
    m.add_function(wrap_pyfunction!(transports, m)?)?;
    m.add_function(wrap_pyfunction!(transport_schema, m)?)?;
    m.add_function(wrap_pyfunction!(linux_base, m)?)?;
    m.add_function(wrap_pyfunction!(scps_ri_base, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_check, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(gateway_check, m)?)?;
    m.add_function(wrap_pyfunction!(gateway, m)?)?;
    m.add_function(wrap_pyfunction!(gateway_selftest, m)?)?;
    m.add_function(wrap_pyfunction!(gateway_schema, m)?)?;
    m.add_function(wrap_pyfunction!(gateway_make_cert, m)?)?;
    m.add_function(wrap_pyfunction!(dtn_check, m)?)?;
    m.add_function(wrap_pyfunction!(dtn_node, m)?)?;
    errors::register(m)?;
    cfdp::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
