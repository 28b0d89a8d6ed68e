//! Scenes, files and the command line: the bundled scenes, mesh loading,
//! the `fmbgrid` runner's output and its refusals, mint conversions, and the
//! manifest's promises (the README's test command needs only the toolchain).
//!
//! In the one test binary (`tests/suite.rs`); one file's tests with a
//! filter, e.g. `cargo test --release --test suite scenes_and_io::scenes::`.

mod interop;
mod manifest;
mod mesh_loading;
mod runner_bad_input;
mod runner_output;
mod scenes;
