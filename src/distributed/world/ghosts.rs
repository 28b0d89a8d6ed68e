//! Ghosts: copies of a rank's frames sent to the ranks whose regions their
//! swept boxes reach, kept from step to step and chosen afresh every
//! [`SYNC_EVERY`] steps.

use super::*;

impl<const D: usize, C: Comm> DistributedWorld<D, C> {
    /// Tells the other ranks what their ghosts of this rank's bodies need
    /// (new frames, a changed motion, drops), does what they tell this
    /// one, and records every local frame's swept box for the ownership of
    /// the contacts. Ghosts stay from step to step (the local world moves
    /// them as the owner's moves the body), so the local world changes its
    /// bodies only when a ghost comes or goes: every `SYNC_EVERY` steps,
    /// when the ghosts are chosen afresh with room for the steps until the
    /// next choice, or when a frame reaches a rank sooner.
    ///
    /// A rank's error (in its plan, or in taking what it was sent) is
    /// agreed; the caller then drops every ghost on every rank
    /// ([`DistributedWorld::reset_ghosts`]).
    pub(super) fn send_ghosts(&mut self, dt: f64) -> Result<(), DistributedError> {
        self.swept.clear();
        self.swept_at.clear();
        let sync = self.until_sync == 0;
        self.until_sync = if sync { SYNC_EVERY - 1 } else { self.until_sync - 1 };
        let mut out = vec![Vec::new(); self.comm.size()];
        let planned = self.injected("ghosts-send").and_then(|()| self.plan_ghosts(dt, sync, &mut out));
        self.stats.owned_bodies = self.owned.len();
        self.stats.owned_frames = self.swept.len();
        self.stats.words_sent += out.iter().map(Vec::len).sum::<usize>();
        let received = self.exchange_near(out, planned)?;
        let taken = self.injected("ghosts-receive").and_then(|()| self.take_ghosts(&received));
        self.agree(taken)?;
        for &(h, ref indices, _) in self.held.values() {
            let (body, frames) = sure(self.world.placed_ref(h));
            record(&mut self.swept_at, h.index, self.swept.len());
            let turning = self.turning;
            self.swept.extend(frames.map(|f| swept_box(body, f, dt, turning)));
            self.stats.ghost_frames += indices.len();
        }
        Ok(())
    }

    /// What the holders of this rank's ghosts need, into `out` by rank,
    /// every owned frame's swept box recorded.
    fn plan_ghosts(&mut self, dt: f64, sync: bool, out: &mut [Vec<u64>]) -> Result<(), DistributedError> {
        for (r, id) in self.orphans.drain(..) {
            parcel::encode_message::<D>(&Message::Drop(id), &mut out[r]);
        }
        // Owned bodies in slot order: deterministic, no sort.
        let owned: Vec<(u64, BodyHandle)> = (self.ids.iter().enumerate())
            .filter_map(|(i, e)| match e {
                Some((id, None)) => Some((*id, self.world.handle_of(i as u32))),
                _ => None,
            })
            .collect();
        let mut wanted: Vec<(usize, u32)> = Vec::new();
        for (id, h) in owned {
            self.wanted(h, dt, sync, &mut wanted)?;
            let held = self.sent.remove(&id).unwrap_or_default();
            let changed = self.changed.remove(&id);
            let (held, actions) = plan(&held, &wanted, sync, changed.is_some());
            for (r, action) in actions {
                let message = match action {
                    Action::Ghost(indices) => {
                        let placed = self.world.placed_subset(h, &indices)?;
                        Message::Ghost(Parcel { id, indices, placed })
                    }
                    Action::Motion => {
                        let b = self.world.body(h)?;
                        let pose = (changed == Some(true)).then_some(b.pose);
                        Message::Motion(id, MotionUpdate { velocity: b.velocity, turn: b.angular_velocity, pose })
                    }
                    Action::Drop => Message::Drop(id),
                };
                parcel::encode_message(&message, &mut out[r]);
            }
            if !held.is_empty() {
                self.sent.insert(id, held);
            }
        }
        Ok(())
    }

    /// Does what the other ranks told this one of their ghosts.
    fn take_ghosts(&mut self, received: &[Vec<u64>]) -> Result<(), DistributedError> {
        let mut inbox = Vec::new();
        for (from, words) in received.iter().enumerate() {
            inbox.extend(parcel::decode_messages::<D>(words)?.into_iter().map(|m| (from, m)));
        }
        // Drops first: a body that changed owner is dropped by the old one
        // and sent again by the new one in the same exchange.
        for (_, m) in &inbox {
            if let Message::Drop(id) = m {
                self.drop_ghost(*id);
            }
        }
        for (from, m) in inbox {
            match m {
                Message::Ghost(p) => {
                    self.drop_ghost(p.id);
                    let h = self.world.insert_placed(p.placed)?;
                    self.name_slot(h.index, Some((p.id, Some(p.indices.clone()))));
                    self.held.insert(p.id, (h, p.indices, from));
                }
                Message::Motion(id, m) => {
                    if let Some(&(h, _, _)) = self.held.get(&id) {
                        self.world.sync_motion(h, m.velocity, m.turn, m.pose)?;
                    }
                }
                Message::Drop(_) => {}
            }
        }
        Ok(())
    }

    /// Drops every ghost on this rank and forgets which were sent (every
    /// rank does, after an agreed error in a step): the next step sends
    /// them afresh. Ghosts are copies, so the world is as it was.
    pub(super) fn reset_ghosts(&mut self) {
        let held: Vec<u64> = self.held.keys().copied().collect();
        for id in held {
            self.drop_ghost(id);
        }
        self.sent.clear();
        self.orphans.clear();
        self.until_sync = 0;
    }

    /// The (rank, frame) pairs, sorted, of the owned body `h`'s frames
    /// whose swept box reaches another rank's region (on a sync step, the
    /// box grown by its displacement over `SYNC_EVERY` steps), its swept
    /// boxes recorded.
    fn wanted(
        &mut self,
        h: BodyHandle,
        dt: f64,
        sync: bool,
        out: &mut Vec<(usize, u32)>,
    ) -> Result<(), DistributedError> {
        out.clear();
        let me = self.comm.rank();
        let (body, frames) = self.world.placed_ref(h)?;
        record(&mut self.swept_at, h.index, self.swept.len());
        let room: [f64; D] = std::array::from_fn(|k| (body.velocity[k] * dt).abs() * f64::from(SYNC_EVERY));
        for (k, f) in frames.enumerate() {
            let b = swept_box(body, f, dt, self.turning);
            self.swept.push(b);
            let Some(regions) = &self.regions else { continue };
            let reach = if sync {
                Aabb {
                    min: std::array::from_fn(|i| b.min[i] - room[i]),
                    max: std::array::from_fn(|i| b.max[i] + room[i]),
                }
            } else {
                b
            };
            out.extend(regions.touching(&reach).filter(|&r| r != me).map(|r| (r, k as u32)));
        }
        out.sort_unstable();
        Ok(())
    }

    /// Drops the ghost of body `id`, if this rank holds one.
    pub(super) fn drop_ghost(&mut self, id: u64) {
        if let Some((h, _, _)) = self.held.remove(&id) {
            self.name_slot(h.index, None);
            sure(self.world.remove(h));
        }
    }
}

/// The ranks holding a ghost of a body, each with the indices of its
/// frames.
pub(super) type Holders = Vec<(usize, Vec<u32>)>;

/// Steps between two fresh choices of the ghosts.
pub(super) const SYNC_EVERY: u32 = 8;

/// What one holder of a body's ghost needs this step.
#[derive(Clone, Debug, PartialEq)]
enum Action {
    /// A ghost with these frames, new or replacing the one held.
    Ghost(Vec<u32>),
    /// The body's motion, changed.
    Motion,
    /// Nothing any more.
    Drop,
}

/// The ghosts of one body after this step, and what each holder needs:
/// `held` are the ranks holding a ghost and its frames, `wanted` the
/// (rank, frame) pairs the frames reach (sorted). On a sync step the held
/// ghosts become the wanted ones (new, replaced or dropped); between, a
/// ghost only grows when a frame reaches a rank it was not sent to. A
/// changed motion goes to every holder not sent a whole ghost.
fn plan(
    held: &[(usize, Vec<u32>)],
    wanted: &[(usize, u32)],
    sync: bool,
    changed: bool,
) -> (Holders, Vec<(usize, Action)>) {
    let mut want: Vec<(usize, Vec<u32>)> = Vec::new();
    for &(r, k) in wanted {
        match want.last_mut() {
            Some((last, ks)) if *last == r => ks.push(k),
            _ => want.push((r, vec![k])),
        }
    }
    let find = |list: &[(usize, Vec<u32>)], r: usize| list.iter().find(|(x, _)| *x == r).map(|(_, ks)| ks.clone());
    let mut actions = Vec::new();
    let next = if sync {
        for (r, ks) in &want {
            if find(held, *r).as_ref() != Some(ks) {
                actions.push((*r, Action::Ghost(ks.clone())));
            }
        }
        actions.extend(held.iter().filter(|(r, _)| find(&want, *r).is_none()).map(|(r, _)| (*r, Action::Drop)));
        want
    } else {
        let mut next = held.to_vec();
        for (r, ks) in want {
            match next.iter_mut().find(|(x, _)| *x == r) {
                Some((_, old)) if ks.iter().all(|k| old.contains(k)) => {}
                Some((_, old)) => {
                    old.extend(ks);
                    old.sort_unstable();
                    old.dedup();
                    actions.push((r, Action::Ghost(old.clone())));
                }
                None => {
                    actions.push((r, Action::Ghost(ks.clone())));
                    next.push((r, ks));
                }
            }
        }
        next
    };
    if changed {
        let sent: Vec<usize> = actions.iter().map(|(r, _)| *r).collect();
        actions.extend(next.iter().filter(|(r, _)| !sent.contains(r)).map(|(r, _)| (*r, Action::Motion)));
    }
    (next, actions)
}
