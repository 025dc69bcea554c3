//! Upstream simulator.
