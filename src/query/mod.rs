//! Queries on two frames beyond the narrow phase's yes or no: how deep
//! they interpenetrate and along which direction to push them apart
//! ([`penetration`]).
//!
//! Like the narrow phase, each query answers both argument orders with
//! the very same arithmetic (mirrored), and touching is not overlapping.

mod penetration;

pub use penetration::{Penetration, penetration};
