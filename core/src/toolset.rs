//! Tool sets.
