//! The discrete-event world of spacetp: nodes, links with per-direction rate, delay, queue and
//! error model, applications, and the event loop that drives transports (`transport/`: TCP and SCPS-TP
//! from `spacetp-proto` first).
//!
//! Entry points: [`config::scenario_from_toml`] / [`config::scenario_from_json`] to read a
//! scenario, [`run`] to simulate it.

pub mod attack;
pub mod build;
pub mod channel;
pub mod config;
pub mod constellation_schema;
pub mod contacts;
pub mod dist;
pub mod dtn_plan;
pub mod dtn_schema;
pub mod engine;
pub mod export;
pub mod fit;
pub mod forwarding;
pub mod limits;
pub mod link;
pub mod link_config;
pub mod link_sched;
pub mod packet;
pub mod pcap;
pub mod result;
pub mod rng;
pub mod routes;
pub mod schedule;
pub mod sources;
pub mod transport;
pub mod world;

pub use config::{scenario_from_json, scenario_from_toml, Scenario};
pub use result::{RunOutput, Summary, Table};
pub use spacetp_proto::FieldError;
pub use world::{RunOptions, World};

/// Simulate `scenario`; errors are user errors that name the offending field.
pub fn run(scenario: Scenario, opts: &RunOptions) -> Result<RunOutput, FieldError> {
    Ok(World::new(scenario, opts)?.run())
}
