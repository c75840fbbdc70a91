//! Licklider Transmission Protocol (RFC 5326) for spacetp: a wire codec and a sans-IO engine.
pub mod wire;
