//! # fmbgrid
//!
//! Collision detection for 2D and 3D *frames* — parallelepipeds and simplices
//! given as an origin plus `D` component vectors, static or translating over
//! a time step — with the FMB algorithm (Fourier–Motzkin elimination,
//! Baillehache 2020) as the narrow phase.
//!
//! Data flows frame → box → grid → candidate pairs → FMB → contacts:
//! * [`frame`]: the primitives, validated once at construction;
//! * [`aabb`]: their boxes;
//! * `grid/`: cell lists, one insertion per box in a hierarchical uniform
//!   hashed grid (levels of doubling cell size, Morton-coherent buckets,
//!   counting-sort builds);
//! * `pairs.rs`: candidate pairs from the cell lists, each pair once;
//! * [`narrow`]: FMB — [`overlaps`] (the predicate), [`intersect`] (the
//!   exact box of the intersection and the contact interval) and
//!   [`overlap_interval`] (the interval alone); for frames that also turn
//!   within the step, [`intersect_spinning`] (FMB on translating frames
//!   that enclose the spinning ones, refined to a tolerance: conservative);
//! * [`Contact`] and [`ContactEvent`]: what a step reports;
//! * [`query`]: more about two frames than whether they meet: their
//!   distance and closest points, the penetration depth and normal, the
//!   first contact of moving frames, rays;
//! * [`world`]: bodies of frames and [`World::step`], which runs all of the
//!   above each tick of a simulation loop, and [`World::debug_draw`],
//!   which hands a renderer the lines of the frames and boxes;
//! * [`distributed`]: one world split across ranks (threads, or MPI
//!   processes with the `mpi` feature), with the contacts of one
//!   [`World`], bit for bit;
//! * [`sat`]: a separating-axis test for the same frames, used for
//!   validation and as the benchmark peer.
//!
//! # Features
//! `parallel`, `mesh` and `cli` are on by default (so that `cargo run`
//! runs the scene runner); a library user who needs neither files nor the
//! runner writes `fmbgrid = { version = "0.1", default-features = false,
//! features = ["parallel"] }`. Without any feature, the library is the
//! frames, the narrow phase, the queries and the world, single-threaded,
//! with `hashbrown`, `smallvec`, `arrayvec` and `thiserror` as its only
//! dependencies.
//! * `parallel`: the step's passes, the narrow phase and
//!   [`World::exact_boxes`] on rayon's thread pool;
//! * `mesh`: the `mesh` module (OBJ, STL, PLY, TetGen and Gmsh loaders) and
//!   the `scene` module (scene files and `scene::run`);
//! * `cli`: the `fmbgrid` runner and the `export` module (SVG, PNG and PLY
//!   pictures); needs `mesh`;
//! * `serde` (off by default): `Serialize` and `Deserialize` for frames,
//!   poses, bodies, configs, contacts, events, and [`WorldSnapshot`]
//!   ([`World::snapshot`] and [`World::restore`] need no feature);
//! * `mint` (off by default): the `interop` module, poses from and to
//!   mint's quaternions and homogeneous matrices (glam, nalgebra and
//!   cgmath convert through mint);
//! * `mpi` (off by default): `distributed::MpiComm`, the distributed world
//!   across MPI processes (needs an MPI implementation and libclang to
//!   build), and with `cli` the `fmbgrid-mpi` runner.
//!
//! On docs.rs every item says which feature it needs.
//!
//! ```
//! use fmbgrid::{Frame3, intersect, overlaps};
//! let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
//! let a = Frame3::cuboid([0.0; 3], unit)?;
//! let b = Frame3::tetrahedron([0.5; 3], unit)?.with_velocity([-4.0, 0.0, 0.0])?;
//! assert!(overlaps(&a, &b));
//! let hit = intersect(&a, &b).unwrap();
//! assert_eq!(hit.time[0], 0.0);
//! assert!(hit.aabb.min[0] >= 0.0 && hit.aabb.max[0] <= 1.0);
//! # Ok::<(), fmbgrid::FrameError>(())
//! ```
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
// Fixed-dimension loops index several arrays with one index, like the math
// they transcribe; iterator zips would hide that.
#![allow(clippy::needless_range_loop)]

pub mod aabb;
mod collide;
mod contact;
pub mod distributed;
pub mod error;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod export;
mod fallible;
pub mod frame;
mod grid;
mod ids;
#[cfg(feature = "mint")]
#[cfg_attr(docsrs, doc(cfg(feature = "mint")))]
pub mod interop;
mod limits;
mod math;
#[cfg(feature = "mesh")]
#[cfg_attr(docsrs, doc(cfg(feature = "mesh")))]
pub mod mesh;
pub mod narrow;
mod pairs;
pub mod query;
pub mod range;
pub mod sat;
#[cfg(feature = "mesh")]
#[cfg_attr(docsrs, doc(cfg(feature = "mesh")))]
pub mod scene;
#[cfg(feature = "serde")]
mod serde_impls;
pub mod world;

/// The README's examples, compiled and run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

pub use aabb::Aabb;
pub use collide::{IndexPair, collide, collide_between};
pub use contact::{Contact, ContactDetail, ContactEvent};
pub use error::{FrameError, WorldError};
pub use frame::{Frame, Frame2, Frame3, FrameKind, THIN_RATIO};
pub use narrow::{Intersection, Spin, SpinContact, intersect, intersect_spinning, overlap_interval, overlaps};
pub use world::{
    Body, BodyHandle, DebugKind, DebugLine, FrameId, Motion, Pose, Pose2, Pose3, Proximity, ROTATION_TOLERANCE,
    Runaway, SPIN_TOLERANCE, StepProfile, StepRoom, World, World2, World3, WorldConfig, WorldSnapshot,
};
