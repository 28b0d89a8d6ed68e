//! The world's API and guarantees: the model (insert, remove, repose,
//! filters, events), bad and hostile input, validation, determinism,
//! snapshots, turning bodies, runaway bodies, and the distributed world over
//! in-process ranks (`LocalComm`).
//!
//! In the one test binary (`tests/suite.rs`); one file's tests with a
//! filter, e.g. `cargo test --release --test suite world::model::`.

mod bad_input;
mod determinism;
mod distributed;
mod hostile;
mod kept_pairs;
mod model;
mod pair_set;
mod pose_rows;
mod resting;
mod runaway;
mod snapshot;
mod spinning;
mod validate;
