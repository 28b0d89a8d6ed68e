//! The distributed world's public types: global handles and frames, the
//! contacts and events a rank reports, its errors and its step statistics.

use crate::aabb::Aabb;
use crate::error::WorldError;

/// A body of a [`DistributedWorld`](crate::distributed::DistributedWorld): the same on every rank, and valid
/// whichever rank the body lives on (ids are never reused: the `n`th
/// body inserted is `GlobalHandle(n)`).
///
/// ```
/// use fmbgrid::distributed::{DistributedWorld, GlobalHandle, LocalComm};
/// use fmbgrid::{Body, Frame3, WorldConfig};
/// let mut world = DistributedWorld::<3, _>::new(LocalComm::group(1).pop().unwrap(), WorldConfig::default());
/// let unit = || Frame3::from_aabb([0.0; 3], [1.0; 3]).unwrap();
/// assert_eq!(world.insert(Body::fixed(vec![unit()]))?, GlobalHandle(0));
/// assert_eq!(world.insert(Body::fixed(vec![unit()]))?, GlobalHandle(1));
/// # Ok::<(), fmbgrid::distributed::DistributedError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlobalHandle(pub u64);

/// A frame of a [`DistributedWorld`](crate::distributed::DistributedWorld): its body and its index in the body.
/// Ordered by body, then index (contacts are sorted by their frames).
///
/// ```
/// use fmbgrid::distributed::{GlobalFrame, GlobalHandle};
/// let f = |b, i| GlobalFrame { body: GlobalHandle(b), index: i };
/// assert!(f(0, 5) < f(1, 0) && f(1, 0) < f(1, 1));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GlobalFrame {
    /// The body.
    pub body: GlobalHandle,
    /// The frame's index in the body.
    pub index: u32,
}

/// A contact of a [`DistributedWorld`](crate::distributed::DistributedWorld), reported by exactly one rank: the
/// pair (`a < b`), the exact box and the interval, as [`World::step`](crate::World::step)
/// computes them. See [`DistributedWorld::contacts`](crate::distributed::DistributedWorld::contacts) for an example.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlobalContact<const D: usize> {
    /// The smaller frame of the pair.
    pub a: GlobalFrame,
    /// The larger frame of the pair.
    pub b: GlobalFrame,
    /// As [`Contact::aabb`](crate::Contact).
    pub aabb: Aabb<D>,
    /// As [`Contact::time`](crate::Contact).
    pub time: [f64; 2],
}

/// A change in which bodies touch between two steps, reported by the rank
/// that keeps the pair. See [`DistributedWorld::events`](crate::distributed::DistributedWorld::events) for an example.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum GlobalEvent {
    /// The bodies touch in this step and did not in the previous one.
    Started(GlobalHandle, GlobalHandle),
    /// The bodies touched in the previous step and no longer do.
    Ended(GlobalHandle, GlobalHandle),
}

/// Why a [`DistributedWorld`](crate::distributed::DistributedWorld) refused an operation: the same error on
/// every rank, and nothing changed anywhere.
///
/// Every call that can fail on some ranks only ends with an agreement (a
/// reduction of an error flag over the ranks, then, on an error, a gather
/// of the causes): an error every rank met alike is returned as it is
/// ([`DistributedError::World`] for a body every rank refuses); an error
/// some ranks met alone becomes the lowest such rank's
/// [`DistributedError::OnRank`] (or [`DistributedError::Refused`] when it
/// is the owner refusing a change), on every rank. No rank is left waiting
/// in a later collective.
///
/// ```
/// use fmbgrid::distributed::{DistributedError, DistributedWorld, GlobalHandle, LocalComm};
/// let mut world = DistributedWorld::<2, _>::new(LocalComm::group(1).pop().unwrap(), fmbgrid::WorldConfig::default());
/// assert_eq!(world.remove(GlobalHandle(3)), Err(DistributedError::StaleHandle(GlobalHandle(3))));
/// ```
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DistributedError {
    /// The world refused it (the rank owning the body, or every rank for
    /// bad numbers).
    #[error(transparent)]
    World(#[from] WorldError),
    /// The rank owning the body refused the change (a fixed body's
    /// velocity, a pose that puts a frame out of range): its reason.
    #[error("body {body:?}: {message}")]
    Refused {
        /// The body.
        body: GlobalHandle,
        /// The owner's error, as it reads.
        message: String,
    },
    /// No such body (removed, or never inserted).
    #[error("no body {0:?}")]
    StaleHandle(GlobalHandle),
    /// A step refused under [`Runaway::Refuse`](crate::Runaway::Refuse): this body's displacement
    /// is not a number within range, or carries a frame beyond its reach.
    #[error("body {0:?} would leave the supported range this step")]
    Runaway(GlobalHandle),
    /// An error that rank `rank` met and the others did not (its own
    /// limit on frames, memory, a corrupt message, a fault injected by a
    /// test), the lowest such rank's: returned on every rank, and the
    /// world is as it was before the call on every rank.
    #[error("rank {rank}: {cause}")]
    OnRank {
        /// The failing rank (the lowest, when several failed).
        rank: usize,
        /// Its error, as it reads.
        cause: String,
    },
    /// The ranks were not all in the same call with the same arguments on
    /// worlds of the same configuration (a step of a `dt` computed from
    /// rank-local state, a removal made on the owner alone while the others
    /// step, a batch one body short on one rank): every rank returns it,
    /// from the call it was in, and nothing changed.
    #[error("the ranks called {call} differently: {what}")]
    Diverged {
        /// The call (`"step"`).
        call: &'static str,
        /// What differed.
        what: String,
    },
}

/// What a step cost in communication, on this rank. See
/// [`DistributedWorld::stats`](crate::distributed::DistributedWorld::stats) for an example.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Bodies this rank owns.
    pub owned_bodies: usize,
    /// Frames this rank owns.
    pub owned_frames: usize,
    /// Ghost frames this rank received.
    pub ghost_frames: usize,
    /// Bodies that arrived here (migration and rebalancing).
    pub migrated_in: usize,
    /// Words (8 bytes each) this rank sent.
    pub words_sent: usize,
    /// Whether this step split space anew.
    pub rebalanced: bool,
}
