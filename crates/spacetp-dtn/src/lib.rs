//! Delay-tolerant networking for spacetp: contact plans in NASA ION's `ionrc` syntax and
//! Contact Graph Routing as ION 4.1.3 computes it. Pure, deterministic and sans-IO: no
//! clock, no file, no socket; the caller gives the time.
//!
//! Modules, one concept each:
//! - [`contact_plan`]: contacts and ranges; the `ionrc` reader and writer; queries
//!   (contacts of a node, light time, up intervals); a plan from link descriptions.
//! - [`bundle`]: BPv7 bundles (RFC 9171) through the `bp7` crate: ipn endpoints, age and
//!   hop count blocks, fragments, several bundles in one LTP block.
//! - [`cgr`]: Contact Graph Routing (ION's libcgr.c): Dijkstra over the contact graph,
//!   Yen's alternative routes, the projected arrival of one bundle, volume booking.
//! - [`error`]: `PlanError`, the line (or field) of a plan and the rule it breaks.

pub mod agent;
pub mod bundle;
pub mod cgr;
pub mod contact_plan;
pub mod error;

pub use cgr::{Alternatives, Bundle, Cgr, CgrSettings, Conditions, Forwarding, Priority, Route};
pub use contact_plan::{
    from_links, Contact, ContactId, ContactPlan, LinkWindows, ParseOptions, Range, RangeEntry,
};
pub use error::PlanError;
