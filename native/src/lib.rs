//! The Dou Dizhu rules of dizhu in Rust: a second implementation of the Python rules core
//! (`dizhu.rules`), held exact to it play for play, built as the Python extension
//! `dizhu._engine` with the `python` feature (docs/engine.md).

pub mod deal;
pub mod douzero;
pub mod moves;
pub mod round;
pub mod rules;
pub mod seen;
pub mod tables;

#[cfg(feature = "python")]
mod python;
#[cfg(feature = "python")]
mod python_module;
#[cfg(feature = "python")]
mod python_tables;
