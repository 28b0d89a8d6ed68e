//! A world of one rank: every body is this rank's and there are no ghosts
//! and no other regions, so a step is the local [`World`]'s step and the
//! mapping of its answers to global ids, nothing more. No runaway check
//! of its own (the local step's is the world's), no split (one region is
//! the whole space), no migration, no swept boxes (every contact's
//! ownership point is in the one region), and the body pairs and events
//! are the local world's own, renamed (no keeper to tell).

use super::*;

impl<const D: usize, C: Comm> DistributedWorld<D, C> {
    /// [`DistributedWorld::step`] on one rank: the same answers, the same
    /// errors, as the stages of a step on several ranks give there. The
    /// fault hooks fire at the same stages, in the same order.
    pub(super) fn step_alone(&mut self, dt: f64) -> Result<(), DistributedError> {
        self.injected("runaways")?;
        let fresh = self.regions.is_none();
        if fresh {
            self.injected("split")?;
        }
        self.injected("migrate-send")?;
        self.injected("migrate-receive")?;
        if fresh {
            self.regions = Some(Regions::bisect(&[], 1));
            self.stats.rebalanced = true;
        }
        self.injected("ghosts-send")?;
        self.injected("ghosts-receive")?;
        // No holder to tell of a changed motion.
        self.changed.clear();
        self.stats.owned_bodies = self.owned.len();
        self.stats.owned_frames = self.owned_frames;
        let step = self.world.prepare_step(dt).map_err(|e| self.refused_alone(dt, e))?;
        let n = self.world.prepared_contacts();
        if let Err(e) = self.reserve_contacts(n).and_then(|()| self.injected("step")) {
            self.world.abort_step(step);
            return Err(e);
        }
        self.world.commit_step(step);
        let mut contacts = std::mem::take(&mut self.local);
        self.world.take_contacts(&mut contacts);
        // The runaways the local step parked, by id.
        let mut parked = std::mem::take(&mut self.parked);
        parked.clear();
        parked.extend(self.world.parked().iter().filter_map(|h| self.id_of(h.index)).map(GlobalHandle));
        parked.sort_unstable();
        self.parked = parked;
        self.contacts.clear();
        self.contacts.reserve(contacts.len());
        for c in &contacts {
            let (Some(a), Some(b)) =
                (self.global_named(c.a.body.index(), c.a.index), self.global_named(c.b.body.index(), c.b.index))
            else {
                continue;
            };
            let (a, b) = if a < b { (a, b) } else { (b, a) };
            self.contacts.push(GlobalContact { a, b, aabb: c.aabb, time: c.time });
        }
        self.local = contacts;
        self.sort_contacts();
        self.pairs_alone();
        // The local world's events leave out removed bodies itself.
        self.removed.clear();
        Ok(())
    }

    /// The error of a refused local step, as several ranks agree on it: a
    /// runaway under [`Runaway::Refuse`] is the runaway body of the
    /// smallest id (the world is unchanged: it can still say which).
    fn refused_alone(&self, dt: f64, e: WorldError) -> DistributedError {
        let runaway = matches!(e, WorldError::OutOfRange(_) | WorldError::BadDisplacement { .. });
        if runaway && self.config.runaway == Runaway::Refuse {
            let first = self.world.runaways(dt).iter().filter_map(|h| self.id_of(h.index)).min();
            if let Some(id) = first {
                return DistributedError::Runaway(GlobalHandle(id));
            }
        }
        e.into()
    }

    /// The local world's body pairs and events, by id: each pair `(a, b)`
    /// with `a < b`, sorted; started then ended events, each sorted.
    fn pairs_alone(&mut self) {
        let (mut pairs, mut events) = (std::mem::take(&mut self.pairs), std::mem::take(&mut self.events));
        let ids = |&(x, y): &(BodyHandle, BodyHandle)| {
            let (a, b) = (self.id_named(x.index)?, self.id_named(y.index)?);
            Some(if a < b { (GlobalHandle(a), GlobalHandle(b)) } else { (GlobalHandle(b), GlobalHandle(a)) })
        };
        pairs.clear();
        pairs.extend(self.world.body_pairs().iter().filter_map(ids));
        pairs.sort_unstable();
        events.clear();
        events.extend(self.world.events().iter().filter_map(|e| match *e {
            crate::ContactEvent::Started(x, y) => ids(&(x, y)).map(|(a, b)| GlobalEvent::Started(a, b)),
            crate::ContactEvent::Ended(x, y) => ids(&(x, y)).map(|(a, b)| GlobalEvent::Ended(a, b)),
        }));
        events.sort_unstable();
        (self.pairs, self.events) = (pairs, events);
    }
}
