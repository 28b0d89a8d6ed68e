//! Narrow-phase tests: the exact box and contact interval of a pair of
//! frames against independent oracles (the FMB paper's cases, a brute-force
//! vertex enumeration, parry, an exact rational separating-axis test),
//! distance, penetration, first contact, ray casts, spinning pairs, thin
//! frames, bad input and property tests.
//!
//! In the one test binary (`tests/suite.rs`); one file's tests with a
//! filter, e.g. `cargo test --release --test suite narrow::exact_box::`.

mod bad_input;
mod distance;
mod exact_box;
mod first_contact;
mod known_defects;
mod paper_cases;
mod parry_validation;
mod penetration;
mod properties;
mod ray_cast;
mod spin;
mod thin_frames;
mod witness;
