//! Discrete-event simulator.
