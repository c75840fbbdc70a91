//! Fuzz bodies: placeholder until written.
