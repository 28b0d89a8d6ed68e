//! A world split across ranks (processes under MPI, or threads): the same
//! contacts as one [`World`](crate::World) holding every body, bit for
//! bit, each reported by exactly one rank.
//!
//! * [`region`](Regions): the split of space, weighted recursive
//!   bisection of the bodies' reference points;
//! * `parcel`: bodies as words, with their placed frames bit for bit;
//! * [`comm`](Comm): the collectives a step needs, an all-to-all
//!   exchange, a neighbour exchange (ghosts and migration) and the
//!   reduction that agrees on errors ([`LocalComm`]
//!   between threads, `MpiComm` with the `mpi` feature between processes);
//! * `types`: global handles, frames, contacts, events, errors, stats;
//! * [`DistributedWorld`] (`world/`, with `ghosts.rs` and `wire.rs`): a step is the runaway check, migration (and
//!   a new split when loads drift), the ghost exchange, the local step,
//!   and the contacts this rank owns.

mod comm;
mod parcel;
mod region;
mod types;
mod world;

#[cfg(feature = "mpi")]
pub use comm::MpiComm;
pub use comm::{Comm, LocalComm};
pub use region::Regions;
#[doc(hidden)]
pub use world::FAULT_STAGES;
pub use world::{DistributedError, DistributedWorld, GlobalContact, GlobalEvent, GlobalFrame, GlobalHandle, StepStats};
