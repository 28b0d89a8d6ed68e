//! The grid and the step's contacts against references (brute force in
//! each contact mode, exact boxes, parry), and the world's queries:
//! proximity, region and point queries, rays, and debug drawing.
//!
//! One test binary: `cargo test --release --test grid_and_queries`; one
//! file's tests with a filter, e.g.
//! `cargo test --release --test grid_and_queries brute_force::`.

#[path = "../support/mod.rs"]
mod support;

mod brute_force;
mod debug_draw;
mod exact_boxes;
mod parry;
mod proximity;
mod queries;
mod rays;
