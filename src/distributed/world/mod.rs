//! [`DistributedWorld`]: one [`World`] per rank holding the bodies whose
//! reference point lies in the rank's region, plus ghost copies of the
//! frames of other ranks that may meet them within the step.

use hashbrown::HashMap;

use super::comm::Comm;
use super::parcel::{self, Message, MotionUpdate, Parcel};
use super::region::Regions;
use crate::aabb::Aabb;
use crate::error::WorldError;
use crate::fallible::room;
use crate::frame::Frame;
use crate::world::{Body, BodyHandle, Motion, Pose, Runaway, World, WorldConfig};

mod agree;
mod alone;
mod ghosts;
mod load;
mod pairs;
mod wire;

#[doc(hidden)]
pub use agree::FAULT_STAGES;
use agree::sure;

pub use super::types::{DistributedError, GlobalContact, GlobalEvent, GlobalFrame, GlobalHandle, StepStats};
use ghosts::Holders;
use wire::{contact_from_words, text_from_words, text_words};

/// A world split across the ranks of a [`Comm`], with the contract of
/// [`World`]: every rank makes the same calls with the same arguments, in
/// the same order (bodies inserted on every rank, kept by one); each
/// contact is reported by exactly one rank, and the contacts of all ranks
/// are the contacts of one [`World`] holding every body, bit for bit.
///
/// How (the guide's chapter `docs/src/distributed.md`): space is split by weighted
/// recursive bisection of the bodies' reference points ([`Regions`]); a
/// rank owns the bodies whose reference point is in its region and steps
/// them in an ordinary [`World`]; before each step, every frame whose
/// swept box reaches another rank's region is copied there as a ghost;
/// a rank keeps the contacts whose ownership point (the lowest corner of
/// the contact's box, clamped into both frames' swept boxes) lies in its
/// region. After a step, bodies whose reference point left the region
/// migrate; when the heaviest rank holds more than `1 + imbalance` times
/// the mean, space is split anew.
///
/// ```
/// use fmbgrid::distributed::{DistributedWorld, LocalComm};
/// use fmbgrid::{Body, Frame2, WorldConfig};
/// let contacts: usize = std::thread::scope(|s| {
///     let ranks = LocalComm::group(2).into_iter().map(|comm| {
///         s.spawn(move || {
///             let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
///             for i in 0..10 {
///                 let f = Frame2::from_aabb([i as f64, 0.0], [i as f64 + 1.5, 1.0]).unwrap();
///                 world.insert(Body::moving(vec![f]).with_velocity([0.1, 0.0])).unwrap();
///             }
///             world.step(0.1).unwrap();
///             world.contacts().len()
///         })
///     });
///     ranks.collect::<Vec<_>>().into_iter().map(|h| h.join().unwrap()).sum()
/// });
/// assert_eq!(contacts, 9); // each overlapping neighbour pair, once
/// ```
pub struct DistributedWorld<const D: usize, C: Comm> {
    comm: C,
    world: World<D>,
    config: WorldConfig,
    regions: Option<Regions<D>>,
    /// The ranks whose regions touch this one's (sorted; symmetric: from
    /// the regions every rank holds alike), for the neighbour exchanges.
    peers: Vec<usize>,
    /// How far the heaviest rank may exceed the mean before a new split.
    imbalance: f64,
    /// A digest of the configuration and the imbalance, which every rank
    /// must share: part of every call's digest (`agree.rs`).
    setup: u64,
    /// The next global id, and the bodies of the whole world: counters
    /// every rank advances alike (every rank makes every insert and
    /// remove). Which ids live is each owner's to say (`owned`).
    next_id: u64,
    bodies: usize,
    /// Ids removed since the last step, sorted when it reads them: no
    /// `Ended` event for their pairs (every rank hears every removal).
    removed: Vec<u64>,
    /// Owned bodies: global id to local handle.
    owned: HashMap<u64, BodyHandle>,
    /// Frames of the owned bodies.
    owned_frames: usize,
    /// By local body slot: the global id, and for a ghost the indices of
    /// its frames in the owner's body.
    ids: Vec<Option<(u64, Option<Vec<u32>>)>>,
    /// Entries of `ids` that are not "the owned body of id = its slot"
    /// (a ghost, or a body whose id is not its slot): while there are
    /// none (one rank, bodies inserted in order, none removed), a local
    /// frame's global name needs no look-up.
    renamed: usize,
    /// Ghosts held here, by global id: the local body, the indices of its
    /// frames in the owner's body, and the owner (the rank that sent it).
    /// They stay from step to step, moved by the local world as the
    /// owner's world moves the body.
    held: HashMap<u64, (BodyHandle, Vec<u32>, usize)>,
    /// For each owned body, the ranks holding a ghost of it, and which
    /// frames.
    sent: HashMap<u64, Holders>,
    /// Owned bodies whose motion changed since their ghosts were told,
    /// and whether they were placed anew ([`DistributedWorld::set_pose`]).
    changed: HashMap<u64, bool>,
    /// Ghosts of bodies that left this rank, to drop: (holder, id).
    orphans: Vec<(usize, u64)>,
    /// Steps until the ghosts are chosen afresh.
    until_sync: u32,
    /// The heaviest rank against the mean just after the last split.
    split_ratio: f64,
    /// The step's swept boxes of every local frame (owned and ghost):
    /// those of the body of slot `i` from `swept_at[i]` on.
    swept: Vec<Aabb<D>>,
    swept_at: Vec<u32>,
    contacts: Vec<GlobalContact<D>>,
    /// The local world's contacts of the step (a reused buffer).
    local: Vec<crate::Contact<D>>,
    /// Buffers of the contacts' sort: packed keys with positions, and
    /// the sorted contacts.
    order: Vec<(u128, u32)>,
    order_spare: Vec<(u128, u32)>,
    spare: Vec<GlobalContact<D>>,
    /// The body pairs this rank keeps (sorted): those whose first body
    /// (the lower id) it owns, found in the last step by some rank.
    pairs: Vec<(GlobalHandle, GlobalHandle)>,
    /// Other ranks' claims on the pairs this rank keeps, sorted: (pair,
    /// rank) when that rank found the pair among its own contacts in the
    /// last step (this rank's own finds are `found`).
    claims: Vec<((u64, u64), u32)>,
    /// The body pairs of this rank's own contacts in the last step, sorted.
    found: Vec<(u64, u64)>,
    /// Of the step's own contacts, the body pairs whose first body is a
    /// ghost here (kept elsewhere); and a spare for `found`.
    ghost_first: Vec<(u64, u64)>,
    found_spare: Vec<(u64, u64)>,
    /// The last step's body pairs, kept as the next step's buffer.
    pairs_spare: Vec<(GlobalHandle, GlobalHandle)>,
    events: Vec<GlobalEvent>,
    parked: Vec<GlobalHandle>,
    stats: StepStats,
    /// A fault to inject on this rank: the stage, and how many times to
    /// pass it first ([`DistributedWorld::inject_fault`]).
    fault: Option<(String, usize)>,
    /// Whether a body of any rank turns this step (agreed with the
    /// loads): the swept boxes then get a margin for round-off.
    turning: bool,
}

impl<const D: usize, C: Comm> DistributedWorld<D, C> {
    /// An empty world over the ranks of `comm`.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// assert!(world.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(comm: C, config: WorldConfig) -> Self {
        DistributedWorld {
            comm,
            world: World::new(config),
            config,
            regions: None,
            peers: Vec::new(),
            imbalance: 0.25,
            setup: setup_digest(&config, 0.25),
            next_id: 0,
            bodies: 0,
            removed: Vec::new(),
            owned: HashMap::new(),
            owned_frames: 0,
            ids: Vec::new(),
            renamed: 0,
            held: HashMap::new(),
            sent: HashMap::new(),
            changed: HashMap::new(),
            orphans: Vec::new(),
            until_sync: 0,
            split_ratio: 1.0,
            swept: Vec::new(),
            swept_at: Vec::new(),
            contacts: Vec::new(),
            local: Vec::new(),
            order: Vec::new(),
            order_spare: Vec::new(),
            spare: Vec::new(),
            pairs: Vec::new(),
            claims: Vec::new(),
            found: Vec::new(),
            ghost_first: Vec::new(),
            found_spare: Vec::new(),
            pairs_spare: Vec::new(),
            events: Vec::new(),
            parked: Vec::new(),
            stats: StepStats::default(),
            fault: None,
            turning: false,
        }
    }

    /// Splits space anew when the heaviest rank holds more than `1 +
    /// imbalance` times the mean number of frames (0.25 by default).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let world = world.with_imbalance(0.5); // a new split past 1.5x the mean
    /// assert_eq!(world.rank(), (0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_imbalance(mut self, imbalance: f64) -> Self {
        if imbalance.is_finite() && imbalance >= 0.0 {
            self.imbalance = imbalance;
            self.setup = setup_digest(&self.config, imbalance);
        }
        self
    }

    /// This rank and the number of ranks.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// assert_eq!(world.rank(), (0, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rank(&self) -> (usize, usize) {
        (self.comm.rank(), self.comm.size())
    }

    /// The ranks' communicator, for collectives of the caller's own (every
    /// rank must make them, in the same order).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// use fmbgrid::distributed::Comm;
    /// assert_eq!(world.comm().all_gather(vec![7]), vec![vec![7]]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn comm(&self) -> &C {
        &self.comm
    }

    /// Inserts `body` (every rank calls it with the same body; the rank
    /// that owns its reference point keeps it, or before the first step,
    /// ranks in turn).
    ///
    /// # Errors
    /// As [`World::insert`], on every rank; [`DistributedError::OnRank`]
    /// when a rank alone refuses (the owner past its own limit on frames):
    /// the body is then in no rank's world.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!((h.0, world.len()), (0, 1));
    /// assert!(world.insert(Body::moving(vec![])).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert(&mut self, body: Body<D>) -> Result<GlobalHandle, DistributedError> {
        let digest = self.call_digest("insert", [body.frames.len() as u64]);
        let id = self.next_id;
        let owner = match &self.regions {
            Some(r) => r.owner(&body.pose.translation()),
            None => (id % self.comm.size() as u64) as usize,
        };
        let mut local = self.injected("insert");
        let mut kept = None;
        if local.is_ok() {
            if owner != self.comm.rank() {
                // The others check the body as the owner's world does, so
                // that all give the same answer to the same bad body.
                local = self.world.admit(&mut body.clone()).map(|_| ()).map_err(Into::into);
            } else {
                let frames = body.frames.len();
                match self.world.insert(body) {
                    Ok(h) => kept = Some((h, frames)),
                    Err(e) => local = Err(e.into()),
                }
            }
        }
        if let Err(e) = self.agree_call("insert", digest, local) {
            if let Some((h, _)) = kept {
                sure(self.world.remove(h));
            }
            return Err(e);
        }
        if let Some((h, frames)) = kept {
            self.owned.insert(id, h);
            self.owned_frames += frames;
            self.name_slot(h.index, Some((id, None)));
        }
        self.next_id += 1;
        self.bodies += 1;
        Ok(GlobalHandle(id))
    }

    /// Inserts `bodies` in order, as many [`DistributedWorld::insert`]s
    /// would, with one agreement for all of them instead of one a body (a
    /// loader's call: every rank calls it with the same bodies).
    ///
    /// # Errors
    /// As [`DistributedWorld::insert`] for the first body refused (every
    /// rank's first refusal alike: that error; else
    /// [`DistributedError::OnRank`]); then none of the bodies is inserted,
    /// on any rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, GlobalHandle, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let unit = Frame2::from_aabb([0.0; 2], [1.0; 2])?;
    /// let handles = world.insert_many((0..3).map(|_| Body::fixed(vec![unit])))?;
    /// assert_eq!(handles, [GlobalHandle(0), GlobalHandle(1), GlobalHandle(2)]);
    /// assert!(world.insert_many([Body::fixed(vec![unit]), Body::moving(vec![])]).is_err());
    /// assert_eq!(world.len(), 3); // all or nothing
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn insert_many(
        &mut self,
        bodies: impl IntoIterator<Item = Body<D>>,
    ) -> Result<Vec<GlobalHandle>, DistributedError> {
        let (first, me) = (self.next_id, self.comm.rank());
        let mut local = Ok(());
        let mut kept = Vec::new();
        let mut count = 0u64;
        for body in bodies {
            let id = first + count;
            count += 1;
            if local.is_err() {
                continue;
            }
            let owner = match &self.regions {
                Some(r) => r.owner(&body.pose.translation()),
                None => (id % self.comm.size() as u64) as usize,
            };
            local = self.injected("insert");
            if local.is_err() {
                continue;
            }
            if owner != me {
                local = self.world.admit(&mut body.clone()).map(|_| ()).map_err(Into::into);
            } else {
                let frames = body.frames.len();
                match self.world.insert(body) {
                    Ok(h) => kept.push((id, h, frames)),
                    Err(e) => local = Err(e.into()),
                }
            }
        }
        let agreed = self.agree_call("insert_many", self.call_digest("insert_many", [count]), local);
        self.keep_or_undo(agreed, kept, first, count)
    }

    /// The end of a batch insertion (`insert_many`, `insert_from`): the
    /// bodies this rank inserted to keep (`kept`: id, handle, frames) are
    /// owned from now on when every rank `agreed`, else removed again; ids
    /// `first..first + count` are live on every rank.
    pub(super) fn keep_or_undo(
        &mut self,
        agreed: Result<(), DistributedError>,
        kept: Vec<(u64, BodyHandle, usize)>,
        first: u64,
        count: u64,
    ) -> Result<Vec<GlobalHandle>, DistributedError> {
        if let Err(e) = agreed {
            for (_, h, _) in kept {
                sure(self.world.remove(h));
            }
            return Err(e);
        }
        for (id, h, frames) in kept {
            self.owned.insert(id, h);
            self.owned_frames += frames;
            self.name_slot(h.index, Some((id, None)));
        }
        self.next_id = first + count;
        self.bodies += count as usize;
        Ok((first..first + count).map(GlobalHandle).collect())
    }

    /// Removes a body.
    ///
    /// # Errors
    /// [`DistributedError::StaleHandle`] on every rank;
    /// [`DistributedError::OnRank`] for a rank's own failure (nothing
    /// removed).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.remove(h)?;
    /// assert!(world.remove(h).is_err()); // gone everywhere
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove(&mut self, h: GlobalHandle) -> Result<(), DistributedError> {
        self.issued(h)?;
        let local = self.injected("remove");
        self.agree_on("remove", self.call_digest("remove", [h.0]), h, local)?;
        self.bodies -= 1;
        self.removed.push(h.0);
        if let Some(local) = self.owned.remove(&h.0) {
            self.name_slot(local.index, None);
            self.owned_frames -= sure(self.world.remove(local)).frames.len();
            self.sent.remove(&h.0);
            self.changed.remove(&h.0);
        }
        // Every rank hears of it: a ghost of the body goes too.
        self.drop_ghost(h.0);
        Ok(())
    }

    /// Sets a moving body's velocity.
    ///
    /// # Errors
    /// Stale handles and bad numbers on every rank;
    /// [`DistributedError::Refused`] for a fixed body, from the owner,
    /// shared with every rank; [`DistributedError::OnRank`] for a rank's
    /// own failure. Nothing changes on an error.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let h = world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.set_velocity(h, [1.0, 0.0])?;
    /// assert!(world.set_velocity(h, [f64::NAN, 0.0]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_velocity(&mut self, h: GlobalHandle, velocity: [f64; D]) -> Result<(), DistributedError> {
        self.issued(h)?;
        let numbers = crate::world::check_vector("velocity", &velocity);
        let fixed = |w: &World<D>, local| match w.body(local)?.motion {
            Motion::Fixed => Err(WorldError::FixedBody(local)),
            Motion::Moving => Ok(()),
        };
        let digest = self.call_digest("set_velocity", std::iter::once(h.0).chain(velocity.map(f64::to_bits)));
        self.on_owner(("set_velocity", digest), h, numbers, fixed, |w, local| w.set_velocity(local, velocity))?;
        if self.owned.contains_key(&h.0) {
            self.changed.entry(h.0).or_insert(false);
        }
        Ok(())
    }

    /// Places a body at a new pose.
    ///
    /// # Errors
    /// A stale handle on every rank; [`DistributedError::OnRank`] for a
    /// rank's own failure; [`DistributedError::Refused`] with
    /// [`World::set_pose`]'s reason, from the owner, shared with every
    /// rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// use fmbgrid::Pose;
    /// let h = world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.set_pose(h, Pose::from_translation([5.0, 0.0])?)?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_pose(&mut self, h: GlobalHandle, pose: Pose<D>) -> Result<(), DistributedError> {
        self.issued(h)?;
        // `World::set_pose`'s one check: every frame placed at the pose.
        let placed = |w: &World<D>, local| {
            let body = w.body(local)?;
            body.frames.iter().enumerate().try_for_each(|(index, f)| match pose.transform_frame(f) {
                Err(WorldError::Frame { source, .. }) => Err(WorldError::Frame { index, source }),
                other => other.map(|_| ()),
            })
        };
        let (linear, translation) = (pose.linear(), pose.translation());
        let numbers = linear.iter().flatten().chain(&translation).map(|x| x.to_bits());
        let digest = self.call_digest("set_pose", std::iter::once(h.0).chain(numbers));
        self.on_owner(("set_pose", digest), h, Ok(()), placed, |w, local| w.set_pose(local, pose))?;
        if self.owned.contains_key(&h.0) {
            self.changed.insert(h.0, true);
        }
        Ok(())
    }

    /// The bodies of this rank (owned, not ghosts).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!(world.owned_len(), 1); // the only rank owns everything
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn owned_len(&self) -> usize {
        self.owned.len()
    }

    /// Body `h` as this rank holds it, when this rank owns it (not a
    /// ghost); `None` on the other ranks, and for a removed body. Not
    /// collective: each rank answers for its own bodies.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let h = world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_velocity([2.0, 0.0]))?;
    /// world.step(0.5)?;
    /// assert_eq!(world.body(h).map(|b| b.pose().translation()), Some([1.0, 0.0]));
    /// world.remove(h)?;
    /// assert!(world.body(h).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn body(&self, h: GlobalHandle) -> Option<&Body<D>> {
        self.owned.get(&h.0).and_then(|&local| self.world.body(local).ok())
    }

    /// The bodies of the whole world.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!(world.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.bodies
    }

    /// True when the whole world has no body.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// assert!(world.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The contacts this rank owns from the last step, sorted by pair.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.contacts().len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contacts(&self) -> &[GlobalContact<D>] {
        &self.contacts
    }

    /// Every rank's contacts of the last step, sorted by pair, on every
    /// rank (collective: every rank calls it).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.gather_contacts(), world.contacts()); // one rank holds them all
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather_contacts(&self) -> Vec<GlobalContact<D>> {
        let mut mine = Vec::with_capacity(self.contacts.len() * (4 + 2 * D + 2));
        for c in &self.contacts {
            mine.extend([c.a.body.0, u64::from(c.a.index), c.b.body.0, u64::from(c.b.index)]);
            mine.extend(c.aabb.min.iter().chain(&c.aabb.max).chain(&c.time).map(|x| x.to_bits()));
        }
        let width = 4 + 2 * D + 2;
        let mut all: Vec<GlobalContact<D>> = self
            .comm
            .all_gather(mine)
            .iter()
            .flat_map(|words| words.chunks_exact(width).map(contact_from_words::<D>).collect::<Vec<_>>())
            .collect();
        all.sort_by_key(|c| (c.a, c.b));
        all
    }

    /// The body pairs in contact in the last step that this rank keeps,
    /// sorted: each pair `(a, b)` is kept by the rank that owns body `a`
    /// (the lower id), whichever ranks found its contacts (a neighbour
    /// tells it; the pair's state moves with `a`); every rank's together
    /// are one [`World`]'s body pairs ([`DistributedWorld::gather_body_pairs`]).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let a = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
    /// let b = world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.body_pairs(), &[(a, b)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn body_pairs(&self) -> &[(GlobalHandle, GlobalHandle)] {
        &self.pairs
    }

    /// Every rank's [`DistributedWorld::body_pairs`], sorted, on every rank
    /// (collective: every rank calls it; O(world), for when it is asked).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let a = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
    /// let b = world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.gather_body_pairs(), [(a, b)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather_body_pairs(&self) -> Vec<(GlobalHandle, GlobalHandle)> {
        let mine: Vec<u64> = self.pairs.iter().flat_map(|&(a, b)| [a.0, b.0]).collect();
        let mut all: Vec<(GlobalHandle, GlobalHandle)> = self
            .comm
            .all_gather(mine)
            .iter()
            .flat_map(|w| w.chunks_exact(2).map(|p| (GlobalHandle(p[0]), GlobalHandle(p[1]))).collect::<Vec<_>>())
            .collect();
        all.sort_unstable();
        all
    }

    /// Every rank's [`DistributedWorld::events`] on every rank: started
    /// then ended, each sorted (collective; O(world), for when it is
    /// asked).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// use fmbgrid::distributed::GlobalEvent;
    /// let a = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
    /// let b = world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.gather_events(), [GlobalEvent::Started(a, b)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn gather_events(&self) -> Vec<GlobalEvent> {
        let mine: Vec<u64> = self
            .events
            .iter()
            .flat_map(|e| match *e {
                GlobalEvent::Started(a, b) => [0, a.0, b.0],
                GlobalEvent::Ended(a, b) => [1, a.0, b.0],
            })
            .collect();
        let mut all: Vec<GlobalEvent> = self
            .comm
            .all_gather(mine)
            .iter()
            .flat_map(|w| {
                w.chunks_exact(3)
                    .map(|e| match e[0] {
                        0 => GlobalEvent::Started(GlobalHandle(e[1]), GlobalHandle(e[2])),
                        _ => GlobalEvent::Ended(GlobalHandle(e[1]), GlobalHandle(e[2])),
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        // Started before ended (the enum's order), each sorted.
        all.sort_unstable();
        all
    }

    /// The last step's events of the body pairs this rank keeps (see
    /// [`DistributedWorld::body_pairs`]): started then ended, each sorted;
    /// every rank's together are one [`World`]'s events
    /// ([`DistributedWorld::gather_events`]).
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// use fmbgrid::distributed::GlobalEvent;
    /// let a = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [2.0; 2])?]))?;
    /// let b = world.insert(Body::moving(vec![Frame2::from_aabb([1.0; 2], [3.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!(world.events(), &[GlobalEvent::Started(a, b)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn events(&self) -> &[GlobalEvent] {
        &self.events
    }

    /// Bodies the last step parked (as [`World::parked`]), on every rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// let h = world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]).with_velocity([1e14, 0.0]))?;
    /// world.step(1.0)?; // 1e14 in one step: past a unit frame's reach
    /// assert_eq!(world.parked(), &[h]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn parked(&self) -> &[GlobalHandle] {
        &self.parked
    }

    /// What the last step cost on this rank.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// world.step(0.1)?;
    /// assert_eq!((world.stats().owned_frames, world.stats().ghost_frames), (1, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> StepStats {
        self.stats
    }

    /// The split of space, once the first step has made one.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::moving(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert!(world.regions().is_none());
    /// world.step(0.1)?;
    /// assert_eq!(world.regions().map(|r| r.len()), Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn regions(&self) -> Option<&Regions<D>> {
        self.regions.as_ref()
    }

    /// One step of `dt` on every rank (collective): the contacts this rank
    /// owns, sorted by pair.
    ///
    /// # Errors
    /// As [`World::step`], the same on every rank, nothing changed
    /// anywhere: [`WorldError::BadTimeStep`], or under [`Runaway::Refuse`]
    /// [`DistributedError::Runaway`] for the runaway body of the smallest
    /// id; [`DistributedError::OnRank`] for an error a rank met alone (a
    /// split, a migration, the ghosts, its local step: memory exhausted
    /// while collecting contacts). The bodies then stay as they were on
    /// every rank (a local step is prepared, agreed, then made or called
    /// off everywhere), and the ghosts are chosen afresh at the next step:
    /// the world goes on as if the call had not been made.
    ///
    /// ```
    /// use fmbgrid::distributed::{DistributedWorld, LocalComm};
    /// use fmbgrid::{Body, Frame2, WorldConfig};
    /// let comm = LocalComm::group(1).pop().unwrap(); // one rank: no threads needed
    /// let mut world = DistributedWorld::<2, _>::new(comm, WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, -1.0], [9.0, 0.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([1.0, 0.5], [2.0, 1.5])?]).with_velocity([0.0, -10.0]))?;
    /// assert_eq!(world.step(0.1)?.len(), 1); // falls 1 unit: into the floor
    /// assert!(world.step(f64::NAN).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step(&mut self, dt: f64) -> Result<&[GlobalContact<D>], DistributedError> {
        if !(dt.is_finite() && dt >= 0.0) {
            return Err(WorldError::BadTimeStep { dt }.into());
        }
        self.stats = StepStats::default();
        if self.comm.size() == 1 {
            self.step_alone(dt)?;
            return Ok(&self.contacts);
        }
        // Each stage agrees on its errors before the next changes
        // anything: the runaways, then the migration (undone on an error),
        // then the ghosts (dropped everywhere on an error: they are copies).
        let runaways = self.check_runaways(dt)?;
        self.balance()?;
        let stopped = self.park(&runaways);
        if let Err(e) = self.send_ghosts(dt) {
            self.unpark(stopped);
            self.reset_ghosts();
            return Err(e);
        }
        // The local step is prepared (its contacts found, nothing moved),
        // agreed, then made on every rank or called off on every rank.
        let prepared = self.world.prepare_step(dt).map_err(DistributedError::from);
        let local = prepared
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
            .and_then(|()| self.reserve_contacts(self.world.prepared_contacts()))
            .and_then(|()| self.injected("step"));
        let agreed = self.agree(local);
        let step = match (agreed, prepared) {
            (Ok(()), Ok(step)) => step,
            (Err(e), Ok(step)) => {
                self.world.abort_step(step);
                return Err(self.called_off(stopped, e));
            }
            // This rank's own error: `agree` returned the agreed one.
            (agreed, Err(mine)) => return Err(self.called_off(stopped, agreed.err().unwrap_or(mine))),
        };
        self.world.commit_step(step);
        self.parked = runaways.into_iter().map(GlobalHandle).collect();
        self.keep_contacts();
        self.update_pairs();
        Ok(&self.contacts)
    }

    /// A step called off on every rank after its ghosts were sent (the
    /// local step's preparation failed somewhere, and every rank's local
    /// world has called its own off): the runaway bodies it parked move
    /// again and every rank drops its ghosts, as after a failed exchange
    /// of ghosts. Returns the agreed error `e`.
    fn called_off(&mut self, stopped: Vec<(BodyHandle, [f64; D], [f64; 3])>, e: DistributedError) -> DistributedError {
        self.unpark(stopped);
        self.reset_ghosts();
        e
    }

    /// [`DistributedError::StaleHandle`] for an id never issued (every
    /// rank knows the counter alike: no collective); whether an issued one
    /// lives, only its owner knows ([`DistributedWorld::agree_on`]).
    fn issued(&self, h: GlobalHandle) -> Result<(), DistributedError> {
        if h.0 < self.next_id { Ok(()) } else { Err(DistributedError::StaleHandle(h)) }
    }

    /// Checks a change of `h` on its owner (`numbers`: every rank's check
    /// of the arguments; `check`, as the owner's world would refuse it),
    /// agrees on the answer and on whether `h` lives with every rank, then
    /// makes it (`apply`) when all agree.
    fn on_owner(
        &mut self,
        (call, digest): (&'static str, u64),
        h: GlobalHandle,
        numbers: Result<(), WorldError>,
        check: impl FnOnce(&World<D>, BodyHandle) -> Result<(), WorldError>,
        apply: impl FnOnce(&mut World<D>, BodyHandle) -> Result<(), WorldError>,
    ) -> Result<(), DistributedError> {
        let owned = self.owned.get(&h.0).copied();
        let local =
            numbers.map_err(DistributedError::from).and_then(|()| self.injected("set")).and_then(|()| match owned {
                Some(local) => {
                    check(&self.world, local).map_err(|e| DistributedError::Refused { body: h, message: e.to_string() })
                }
                None => Ok(()),
            });
        self.agree_on(call, digest, h, local)?;
        if let Some(local) = owned {
            sure(apply(&mut self.world, local));
        }
        Ok(())
    }

    /// The step's own runaway check, before anything changes: the ids of
    /// the runaway bodies, sorted, the same on every rank (to park after
    /// the migration), or every rank refuses.
    fn check_runaways(&mut self, dt: f64) -> Result<Vec<u64>, DistributedError> {
        let found = self.world.runaways(dt);
        let ids: Vec<u64> = found.iter().filter_map(|h| self.id_of(h.index)).collect();
        let local = self.injected("runaways").map(|()| ids);
        // One reduction when no rank found any (the usual step); the
        // gather (and the agreement on an error) only when some did.
        let found = match &local {
            Ok(ids) => u64::from(!ids.is_empty()),
            Err(_) => 1,
        };
        // The step's first reduction, as every public call's (`agree.rs`),
        // finds ranks in other calls or with other worlds; it also carries
        // `dt`, whose range it gives: ranks stepping by different `dt`s
        // would part ways from here on, silently.
        let (found, [lo, hi]) = self.open_call("step", self.call_digest("step", []), found, dt.to_bits())?;
        if lo != hi {
            let (lo, hi) = (f64::from_bits(lo), f64::from_bits(hi));
            let what = format!("dt differs between ranks (from {lo:e} to {hi:e})");
            return Err(DistributedError::Diverged { call: "step", what });
        }
        if found == 0 {
            return Ok(Vec::new());
        }
        let mut all: Vec<u64> = self.gather_checked(local)?.concat();
        // The owner and the holders of a ghost may all find it.
        all.sort_unstable();
        all.dedup();
        if !all.is_empty() && self.config.runaway == Runaway::Refuse {
            return Err(DistributedError::Runaway(GlobalHandle(all[0])));
        }
        Ok(all)
    }

    /// Stops the runaway bodies `ids` wherever this rank holds them (owned
    /// or a ghost; the ghosts' holders are told too, as a ghost may hold
    /// too few frames to find it): the owned ones' motion before, to undo.
    fn park(&mut self, ids: &[u64]) -> Vec<(BodyHandle, [f64; D], [f64; 3])> {
        let mut stopped = Vec::new();
        for &id in ids {
            let h = if let Some(&h) = self.owned.get(&id) {
                let b = sure(self.world.body(h));
                stopped.push((h, b.velocity, b.angular_velocity));
                self.changed.entry(id).or_insert(false);
                h
            } else if let Some(&(h, _, _)) = self.held.get(&id) {
                h
            } else {
                continue;
            };
            self.world.park(h);
        }
        stopped
    }

    /// Gives the owned bodies `park` stopped their motion back.
    fn unpark(&mut self, stopped: Vec<(BodyHandle, [f64; D], [f64; 3])>) {
        for (h, velocity, turn) in stopped {
            sure(self.world.set_velocity(h, velocity));
            sure(self.world.set_turn(h, turn));
        }
    }

    /// Splits space anew when needed, then sends every body whose
    /// reference point is in another rank's region there. Undone on every
    /// rank when any rank fails: the split is kept only when the bodies
    /// have moved, and they leave a rank only once every rank has taken
    /// its arrivals.
    fn balance(&mut self) -> Result<(), DistributedError> {
        let turns = |b: &Body<D>| b.motion == Motion::Moving && b.angular_velocity != [0.0; 3];
        let turning = self.owned.values().filter_map(|&h| self.world.body(h).ok()).any(turns);
        // Reductions, not a gather: O(log ranks) under MPI.
        let frames = self.owned_frames as u64;
        let (heaviest, total) = (self.comm.all_max(frames), self.comm.all_sum(frames));
        self.turning = self.comm.all_max(u64::from(turning)) > 0;
        let mean = total as f64 / self.comm.size() as f64;
        let heaviest = heaviest as f64;
        // Past the threshold, and past what the last split achieved (a
        // split cannot cut one heavy body, or bodies at one point).
        let ratio = heaviest / mean.max(1.0);
        let fresh = if self.regions.is_none() || ratio > (1.0 + self.imbalance) * self.split_ratio.max(1.0) {
            Some(self.split()?)
        } else {
            None
        };
        let Some(regions) = fresh.as_ref().or(self.regions.as_ref()).cloned() else { return Ok(()) };
        let mut out = vec![Vec::new(); self.comm.size()];
        let mut leaving: Vec<(u64, BodyHandle)> = Vec::new();
        let prepared = self.injected("migrate-send").and_then(|()| self.parcels(&regions, &mut out, &mut leaving));
        self.stats.words_sent += out.iter().map(Vec::len).sum::<usize>();
        // Under a new split bodies may go anywhere; else mostly next door.
        let received = match fresh {
            Some(_) => self.exchange_checked(out, prepared)?,
            None => self.exchange_near(out, prepared)?,
        };
        let (mut arrived, mut state) = (Vec::new(), Vec::new());
        let taken = self.injected("migrate-receive").and_then(|()| self.take(&received, &mut arrived, &mut state));
        if let Err(e) = self.agree(taken) {
            for (_, h) in arrived {
                sure(self.world.remove(h));
            }
            return Err(e);
        }
        for (id, h) in arrived {
            self.drop_ghost(id);
            self.owned.insert(id, h);
            self.owned_frames += sure(self.world.body(h)).frames.len();
            self.name_slot(h.index, Some((id, None)));
            self.stats.migrated_in += 1;
        }
        self.move_pairs(&leaving, &state);
        for (id, h) in leaving {
            self.owned.remove(&id);
            self.name_slot(h.index, None);
            self.owned_frames -= sure(self.world.remove(h)).frames.len();
            self.changed.remove(&id);
            // Its new owner sends ghosts of its own; these go.
            let holders = self.sent.remove(&id).unwrap_or_default();
            self.orphans.extend(holders.into_iter().map(|(r, _)| (r, id)));
        }
        if let Some(regions) = fresh {
            let me = self.comm.rank();
            self.peers.clear();
            if let Some(mine) = regions.region(me) {
                self.peers.extend(regions.touching(mine).filter(|&r| r != me));
            }
            self.regions = Some(regions);
            self.stats.rebalanced = true;
            self.split_ratio = f64::INFINITY; // measured at the next step
        } else if self.split_ratio.is_infinite() {
            self.split_ratio = ratio;
        }
        Ok(())
    }

    /// The parcels of the owned bodies whose reference point is in another
    /// rank's region under `regions`, by rank, each with the state of the
    /// body pairs it keeps ([`DistributedWorld::pair_state`]), and those
    /// bodies.
    fn parcels(
        &self,
        regions: &Regions<D>,
        out: &mut [Vec<u64>],
        leaving: &mut Vec<(u64, BodyHandle)>,
    ) -> Result<(), DistributedError> {
        let me = self.comm.rank();
        let mut states = vec![Vec::new(); out.len()];
        for (&id, &h) in &self.owned {
            let to = regions.owner(&self.world.body(h)?.pose.translation());
            if to != me {
                leaving.push((id, h));
                let placed = self.world.placed(h)?;
                let indices = (0..placed.frames.len() as u32).collect();
                parcel::encode(&Parcel { id, indices, placed }, &mut out[to]);
                self.pair_state(id, &mut states[to]);
            }
        }
        for (words, state) in out.iter_mut().zip(&states) {
            parcel::frame_migration(words, state);
        }
        Ok(())
    }

    /// Inserts the bodies that arrived (into `arrived`, to undo or keep),
    /// and reads the state of their body pairs (into `state`, to take once
    /// every rank has taken its arrivals).
    fn take(
        &mut self,
        received: &[Vec<u64>],
        arrived: &mut Vec<(u64, BodyHandle)>,
        state: &mut Vec<[u64; 3]>,
    ) -> Result<(), DistributedError> {
        for words in received {
            let (bodies, pairs) = parcel::unframe_migration(words)?;
            for p in parcel::decode::<D>(bodies)? {
                let h = self.world.insert_placed(p.placed)?;
                arrived.push((p.id, h));
            }
            state.extend(pairs.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
        }
        Ok(())
    }

    /// A new split from the owned bodies' reference points and frame
    /// counts, by reductions of histograms ([`Regions::bisect_among`]:
    /// no rank gathers the points), each cut within an eighth of the
    /// imbalance allowed of the mean (made the world's once the bodies
    /// have moved).
    fn split(&mut self) -> Result<Regions<D>, DistributedError> {
        let mine = self.injected("split").and_then(|()| self.split_points());
        let failed = mine.as_ref().map(|_| ()).map_err(Clone::clone);
        self.agree(failed)?;
        let points = mine?;
        Ok(Regions::bisect_among(&self.comm, &points, self.imbalance / 8.0))
    }

    /// This rank's share of a split: the reference point and frame count
    /// of every owned body.
    fn split_points(&self) -> Result<Vec<([f64; D], u64)>, DistributedError> {
        let mut mine = Vec::new();
        room(&mut mine, self.owned.len()).map_err(WorldError::from)?;
        for &h in self.owned.values() {
            let b = self.world.body(h)?;
            mine.push((b.pose.translation(), b.frames.len() as u64));
        }
        Ok(mine)
    }

    /// Room for [`DistributedWorld::keep_contacts`] and its sort with `n`
    /// local contacts, made before the ranks agree to commit the step:
    /// low memory there is an agreed error, never an abort after it.
    pub(super) fn reserve_contacts(&mut self, n: usize) -> Result<(), DistributedError> {
        let fits = room(&mut self.contacts, n)
            .and_then(|()| room(&mut self.spare, n))
            .and_then(|()| room(&mut self.order, n))
            .and_then(|()| room(&mut self.order_spare, n))
            .and_then(|()| room(&mut self.ghost_first, n))
            .and_then(|()| room(&mut self.found_spare, n));
        Ok(fits.map_err(WorldError::from)?)
    }

    /// Of the local world's step (made), keeps the contacts this rank
    /// owns.
    fn keep_contacts(&mut self) {
        let mut contacts = std::mem::take(&mut self.local);
        self.world.take_contacts(&mut contacts);
        let me = self.comm.rank();
        self.contacts.clear();
        self.ghost_first.clear();
        for c in &contacts {
            let (Some(a), Some(b)) =
                (self.global(c.a.body.index(), c.a.index), self.global(c.b.body.index(), c.b.index))
            else {
                continue;
            };
            let (Some(sa), Some(sb)) =
                (self.swept_of(c.a.body.index(), c.a.index), self.swept_of(c.b.body.index(), c.b.index))
            else {
                continue;
            };
            // The low corner of the two swept boxes' overlap: from each
            // frame's own data (whichever order the local world took the
            // pair in), the same on every rank, and where both frames are.
            let point: [f64; D] = std::array::from_fn(|k| sa.min[k].max(sb.min[k]).min(sa.max[k].min(sb.max[k])));
            if self.regions.as_ref().is_some_and(|r| r.owner(&point) != me) {
                continue;
            }
            let (a, b, first) = if a < b { (a, b, c.a.body.index()) } else { (b, a, c.b.body.index()) };
            // A ghost's pair is kept by its body's owner (`update_pairs`).
            if matches!(self.ids.get(first as usize), Some(Some((_, Some(_))))) {
                self.ghost_first.push((a.body.0, b.body.0));
            }
            self.contacts.push(GlobalContact { a, b, aabb: c.aabb, time: c.time });
        }
        self.local = contacts;
        self.sort_contacts();
    }

    /// Sorts the step's contacts by pair: by packed keys (ids and frame
    /// indices below 2³², as in any world that fits in memory), radix
    /// sorted by the first body's id, then each run of one first body
    /// sorted by the rest of the key, each contact then moved once: a few
    /// dozen instructions a contact where sorting the contacts themselves
    /// took several hundred. Else by the pairs. Buffers reused: nothing
    /// allocated once warm.
    pub(super) fn sort_contacts(&mut self) {
        let key = |c: &GlobalContact<D>| (c.a, c.b);
        if self.contacts.is_sorted_by_key(key) {
            return;
        }
        let small = |f: &GlobalFrame| f.body.0 <= u64::from(u32::MAX);
        if !self.contacts.iter().all(|c| small(&c.a) && small(&c.b)) || self.contacts.len() > u32::MAX as usize {
            self.contacts.sort_unstable_by_key(key);
            return;
        }
        let pack = |f: &GlobalFrame| u128::from(f.body.0 << 32 | u64::from(f.index));
        self.order.clear();
        self.order.extend(self.contacts.iter().enumerate().map(|(i, c)| (pack(&c.a) << 64 | pack(&c.b), i as u32)));
        let top = self.contacts.iter().map(|c| c.a.body.0).max().unwrap_or(0);
        radix_sort_by_first_body(&mut self.order, &mut self.order_spare, top);
        self.spare.clear();
        self.spare.extend(self.order.iter().map(|&(_, i)| self.contacts[i as usize]));
        std::mem::swap(&mut self.contacts, &mut self.spare);
    }

    fn swept_of(&self, body: u32, frame: u32) -> Option<&Aabb<D>> {
        let at = *self.swept_at.get(body as usize)?;
        self.swept.get(at as usize + frame as usize)
    }

    /// Sets the global name of local body slot `index` (see `renamed`).
    pub(super) fn name_slot(&mut self, index: u32, entry: Option<(u64, Option<Vec<u32>>)>) {
        let renamed = |e: &Option<(u64, Option<Vec<u32>>)>| match e {
            Some((id, ghost)) => *id != u64::from(index) || ghost.is_some(),
            None => false,
        };
        let was = self.ids.get(index as usize).is_some_and(renamed);
        self.renamed = self.renamed + usize::from(renamed(&entry)) - usize::from(was);
        set(&mut self.ids, index, entry);
    }

    /// As `global`, without a look-up while no slot is renamed.
    #[inline]
    pub(super) fn global_named(&self, index: u32, frame: u32) -> Option<GlobalFrame> {
        if self.renamed == 0 {
            return Some(GlobalFrame { body: GlobalHandle(u64::from(index)), index: frame });
        }
        self.global(index, frame)
    }

    /// As `id_of`, without a look-up while no slot is renamed.
    #[inline]
    pub(super) fn id_named(&self, index: u32) -> Option<u64> {
        if self.renamed == 0 {
            return Some(u64::from(index));
        }
        self.id_of(index)
    }

    fn id_of(&self, index: u32) -> Option<u64> {
        self.ids.get(index as usize)?.as_ref().map(|(id, _)| *id)
    }

    fn global(&self, index: u32, frame: u32) -> Option<GlobalFrame> {
        let (id, indices) = self.ids.get(index as usize)?.as_ref()?;
        let index = match indices {
            Some(ks) => *ks.get(frame as usize)?,
            None => frame,
        };
        Some(GlobalFrame { body: GlobalHandle(*id), index })
    }
}

/// The digest of what every rank's configuration must be alike in (the
/// world's configuration and the imbalance): a part of every call's.
fn setup_digest(config: &WorldConfig, imbalance: f64) -> u64 {
    let words = format!("{config:?}").into_bytes().into_iter().map(u64::from);
    words.chain([imbalance.to_bits()]).fold(0, agree::mix)
}

/// Sorts packed contact keys (the first frame's body id in bits 96..128,
/// below `top` + 1): least significant digit first, 11 bits a pass, over
/// the bits of the id only, then each run of one first body by the whole
/// key (keys are distinct: one per pair). `spare` is scratch.
fn radix_sort_by_first_body(keys: &mut Vec<(u128, u32)>, spare: &mut Vec<(u128, u32)>, top: u64) {
    const BITS: u32 = 11;
    let end = 96 + (64 - top.leading_zeros());
    let mut shift = 96;
    while shift < end {
        let digit = |k: u128| ((k >> shift) as usize) & ((1 << BITS) - 1);
        let mut at = [0usize; 1 << BITS];
        for e in keys.iter() {
            at[digit(e.0)] += 1;
        }
        let mut sum = 0;
        for a in &mut at {
            (*a, sum) = (sum, sum + *a);
        }
        spare.clear();
        spare.resize(keys.len(), (0, 0));
        for e in keys.iter() {
            let d = digit(e.0);
            spare[at[d]] = *e;
            at[d] += 1;
        }
        std::mem::swap(keys, spare);
        shift += BITS;
    }
    let mut i = 0;
    while i < keys.len() {
        let first = keys[i].0 >> 96;
        let run = keys[i..].iter().take_while(|e| e.0 >> 96 == first).count();
        if run > 1 {
            keys[i..i + run].sort_unstable();
        }
        i += run;
    }
}

/// Sets entry `index` of a table by local body slot.
fn set<T: Default + Clone>(table: &mut Vec<T>, index: u32, value: T) {
    let i = index as usize;
    if table.len() <= i {
        table.resize(i + 1, T::default());
    }
    table[i] = value;
}

/// Notes that the swept boxes of the body in slot `index` start at `at`.
fn record(swept_at: &mut Vec<u32>, index: u32, at: usize) {
    let i = index as usize;
    if swept_at.len() <= i {
        swept_at.resize(i + 1, u32::MAX);
    }
    swept_at[i] = at as u32;
}

/// The box frame `f` (placed, of `body`) sweeps over a step of `dt`, as
/// the world's broad phase computes it; with `turning` (a body of the world
/// turns this step), grown by [`round_off`].
///
/// Why that is enough for a turning pair (`docs/src/distributed.md`): the
/// box [`intersect_spinning`](crate::intersect_spinning) reports is
/// clipped to both frames' exact swept boxes over the contact (their
/// vertices' arcs, each with an outward margin of its round-off), which
/// lie in the frames' swept boxes over the step up to that margin: a
/// reported pair's grown boxes overlap, and the rank owning the low corner
/// of their overlap holds both frames.
fn swept_box<const D: usize>(body: &Body<D>, f: &Frame<D>, dt: f64, turning: bool) -> Aabb<D> {
    let d: [f64; D] = std::array::from_fn(|k| body.velocity[k] * dt);
    let spin = crate::world::body_spin(body, dt);
    let b = match &spin {
        Some(spin) => crate::narrow::swept_aabb(&f.moved(d), spin),
        None => f.aabb().swept(&d),
    };
    if !turning {
        return b;
    }
    let m = round_off(body, f, &d, spin.map_or(0.0, |s| s.angle()));
    Aabb { min: std::array::from_fn(|k| b.min[k] - m), max: std::array::from_fn(|k| b.max[k] + m) }
}

/// A bound, a thousand times over, on the round-off margins of a turning
/// pair's exact swept boxes (`slack + 1e-12·ρ`, `slack = 1e-12·size +
/// 16ε·scale` in `narrow/spin/`): `1e-9` of the frame's size, the
/// largest coordinate of its pivot, origin and displacement, and its
/// reach times the turn.
fn round_off<const D: usize>(body: &Body<D>, f: &Frame<D>, d: &[f64; D], angle: f64) -> f64 {
    let big = |v: &[f64; D]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let b = f.aabb();
    let reach: f64 = b.extent().iter().sum();
    let scale = reach * (1.0 + angle) + big(&body.pose.translation()) + big(&b.min) + big(&b.max) + big(d);
    1e-9 * scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Frame;

    /// The radix sort of packed contact keys gives the order of a
    /// comparison sort: ids of one to four digits, long runs of one first
    /// body (a body of many frames), keys differing only past the first
    /// body.
    #[test]
    fn radix_sort_of_contact_keys_equals_a_sort() {
        let mut seed = 7u64;
        let mut rnd = move |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below.max(1)
        };
        for top in [0u64, 1, 5, 2047, 2048, 100_000, 1 << 22, u64::from(u32::MAX)] {
            for n in [0usize, 1, 2, 17, 3000] {
                let mut keys: Vec<(u128, u32)> = (0..n)
                    .map(|i| {
                        let a = if rnd(4) == 0 { top } else { rnd(top + 1) };
                        let (ai, b, bi) = (rnd(3), rnd(top + 1), rnd(1 << 20));
                        (u128::from(a << 32 | ai) << 64 | u128::from(b << 32 | bi), i as u32)
                    })
                    .collect();
                keys.sort_unstable();
                keys.dedup_by_key(|k| k.0);
                let mut want = keys.clone();
                want.sort_unstable();
                // Shuffled, then sorted back.
                for i in (1..keys.len()).rev() {
                    keys.swap(i, rnd(i as u64 + 1) as usize);
                }
                radix_sort_by_first_body(&mut keys, &mut Vec::new(), top);
                assert_eq!(keys, want, "top {top}, {n} keys");
            }
        }
    }

    /// What the ownership of a turning pair rests on: every contact one
    /// `World` reports between turning bars (within a coarse spin
    /// tolerance or the default one: pairs that come within it without
    /// touching included) has its box inside both frames' swept boxes over
    /// the step, as the distributed world computes them, so their overlap
    /// is not empty; the margin for round-off is not even needed here.
    #[test]
    fn turning_contacts_lie_in_both_swept_boxes() {
        let mut seed = 1u64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        for tolerance in [None, Some(0.05), Some(0.5)] {
            let config = tolerance.map_or(WorldConfig::default(), |t| WorldConfig::default().with_spin_tolerance(t));
            let mut contacts = 0;
            for _ in 0..40 {
                let mut world = World::<2>::new(config);
                let mut boxes = HashMap::new();
                let dt = 0.5;
                for _ in 0..50 {
                    let f = Frame::<2>::from_aabb([0.0, -0.1], [0.5 + rnd() * 3.0, 0.1]).unwrap();
                    let pose = Pose::from_angle(rnd() * std::f64::consts::TAU, [rnd() * 12.0, rnd() * 12.0]).unwrap();
                    let body = Body::moving(vec![f])
                        .with_pose(pose)
                        .with_velocity([rnd() * 2.0 - 1.0, rnd() * 2.0 - 1.0])
                        .with_angular_velocity(rnd() * 16.0 - 8.0);
                    let h = world.insert(body).unwrap();
                    let (body, mut frames) = world.placed_ref(h).unwrap();
                    boxes.insert(h, swept_box(body, frames.next().unwrap(), dt, false));
                }
                for c in world.step(dt).unwrap() {
                    contacts += 1;
                    for s in [boxes[&c.a.body], boxes[&c.b.body]] {
                        let inside = (0..2).all(|k| s.min[k] <= c.aabb.min[k] && c.aabb.max[k] <= s.max[k]);
                        assert!(inside, "{:?} beyond {s:?}", c.aabb);
                    }
                }
            }
            assert!(contacts > 1000, "{contacts} contacts");
        }
    }
}
