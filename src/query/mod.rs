//! Queries on two frames beyond the narrow phase's yes or no: how far
//! apart they are, with a closest point on each ([`distance()`]), and how
//! deep they interpenetrate and along which direction to push them apart
//! ([`penetration()`]), and when, where and along which normal two moving
//! frames first touch, and the set where they meet ([`first_contact()`],
//! [`ContactSet`]); and where a ray meets a frame
//! ([`ray_cast`]).
//!
//! Like the narrow phase, each query answers both argument orders with
//! the very same arithmetic (mirrored), and touching is not overlapping.

mod axes;
mod contact_set;
mod distance;
mod first_contact;
mod penetration;
pub(crate) mod ray;

pub(crate) use axes::{each_edge_axis, each_face_normal, range};
pub use contact_set::{ContactSet, FEATURE_TOL};
pub use distance::{Distance, distance};
pub use first_contact::{FirstContact, first_contact};
pub use penetration::{Penetration, penetration};
pub use ray::{RayHit, ray_cast};
