//! Narrow-phase tests: the exact box and contact interval of a pair of
//! frames against independent oracles (the FMB paper's cases, a brute-force
//! vertex enumeration, parry, an exact rational separating-axis test),
//! distance, penetration, first contact, ray casts, spinning pairs, thin
//! frames, bad input and property tests.
//!
//! One test binary: `cargo test --release --test narrow`; one file's tests
//! with a filter, e.g. `cargo test --release --test narrow exact_box::`.

#[path = "../support/mod.rs"]
mod support;

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
