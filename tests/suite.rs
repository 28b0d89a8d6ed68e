//! fmbgrid's test suite: one test binary (parry's layout), so that the
//! crate's generic code is compiled into one test crate rather than one per
//! area. Each area is a folder of files, one concern each:
//!
//! - `narrow/`: the narrow phase against independent oracles;
//! - `grid_and_queries/`: the grid, the step's contacts and the queries;
//! - `world/`: the world's API and guarantees, the distributed world;
//! - `scenes_and_io/`: scenes, mesh files, the runner, the manifest.
//!
//! `cargo test --release --test suite` runs it all; a filter runs an area
//! or a file, e.g. `cargo test --release --test suite world::pair_set::`.
//! Apart from it: `world_allocations.rs` and `world_low_memory.rs` (each
//! installs a global allocator) and `mpi.rs` (the `mpi` feature).

mod support;

mod grid_and_queries;
mod narrow;
mod scenes_and_io;
mod world;
