//! The grid and the step's contacts against references (brute force in
//! each contact mode, exact boxes, parry), and the world's queries:
//! proximity, region and point queries, rays, and debug drawing.
//!
//! In the one test binary (`tests/suite.rs`); one file's tests with a
//! filter, e.g. `cargo test --release --test suite grid_and_queries::brute_force::`.

mod brute_force;
mod debug_draw;
mod exact_boxes;
mod parry;
mod proximity;
mod queries;
mod rays;
