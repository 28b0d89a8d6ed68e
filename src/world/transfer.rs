//! Moving a body from one world to another exactly: its placed frames as
//! the world holds them (moved step by step, so not what a fresh placement
//! from the pose would give, bit for bit). What a world split across
//! processes sends when a body migrates or is copied as a ghost
//! ([`crate::distributed`]).

use super::{Body, BodyHandle, World};
use crate::error::WorldError;
use crate::frame::Frame;

/// A body and its frames placed as a world holds them (at rest, each with
/// its box), frame `k` of the body being `frames[k]`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Placed<const D: usize> {
    pub body: Body<D>,
    pub frames: Vec<Frame<D>>,
}

impl<const D: usize> World<D> {
    /// The body of `handle` with its frames as placed now.
    pub(crate) fn placed(&self, handle: BodyHandle) -> Result<Placed<D>, WorldError> {
        let stored = self.stored(handle)?;
        let store = self.broad.store(stored.body.motion);
        let frames = stored.at.iter().map(|&i| store.frames[i as usize]).collect();
        Ok(Placed { body: stored.body.clone(), frames })
    }

    /// The body of `handle` cut down to the frames `indices` (a ghost's),
    /// with those frames as placed now; nothing else of it copied.
    pub(crate) fn placed_subset(&self, handle: BodyHandle, indices: &[u32]) -> Result<Placed<D>, WorldError> {
        let stored = self.stored(handle)?;
        let store = self.broad.store(stored.body.motion);
        let b = &stored.body;
        let pick = |k: &u32| stored.at.get(*k as usize).map(|&i| (b.frames[*k as usize], store.frames[i as usize]));
        let (own, frames): (Vec<_>, Vec<_>) = indices
            .iter()
            .map(pick)
            .collect::<Option<Vec<_>>>()
            .ok_or(WorldError::BadSnapshot("a ghost's frames"))?
            .into_iter()
            .unzip();
        let body = Body {
            frames: own,
            motion: b.motion,
            pose: b.pose,
            velocity: b.velocity,
            groups: b.groups,
            mask: b.mask,
            user_data: b.user_data,
            angular_velocity: b.angular_velocity,
        };
        Ok(Placed { body, frames })
    }

    /// The body of `handle` and its frames as placed now, by reference.
    pub(crate) fn placed_ref(
        &self,
        handle: BodyHandle,
    ) -> Result<(&Body<D>, impl Iterator<Item = &Frame<D>>), WorldError> {
        let stored = self.stored(handle)?;
        let store = self.broad.store(stored.body.motion);
        Ok((&stored.body, stored.at.iter().map(|&i| &store.frames[i as usize])))
    }

    /// Gives a ghost the motion its owner's body has now: velocity and
    /// turn, and with `pose` the pose the owner's body was placed at by
    /// [`World::set_pose`] (its frames placed anew, as the owner's were);
    /// without, the frames, moved step by step alike, stay.
    pub(crate) fn sync_motion(
        &mut self,
        handle: BodyHandle,
        velocity: [f64; D],
        turn: [f64; 3],
        pose: Option<super::Pose<D>>,
    ) -> Result<(), WorldError> {
        if let Some(pose) = pose {
            self.set_pose(handle, pose)?;
        }
        if self.stored(handle)?.body.motion == super::Motion::Moving {
            self.set_velocity(handle, velocity)?;
            self.set_turn(handle, turn)?;
        }
        Ok(())
    }

    /// Inserts a body whose frames are already placed (another world's, or
    /// a subset of them: a ghost): checked as [`World::insert`] checks a
    /// body, then its frames replaced by the placed ones, bit for bit.
    pub(crate) fn insert_placed(&mut self, placed: Placed<D>) -> Result<BodyHandle, WorldError> {
        if placed.frames.len() != placed.body.frames.len() {
            return Err(WorldError::BadSnapshot("a body's placed frames"));
        }
        let motion = placed.body.motion;
        let handle = self.insert(placed.body)?;
        let stored = self.stored_mut(handle)?;
        // Another world's frames: not compared with this pose.
        stored.placed = false;
        let at = stored.at.clone();
        let store = self.broad.store_mut(motion);
        for (&i, f) in at.iter().zip(placed.frames) {
            store.frames[i as usize] = f;
        }
        // `insert` marked the store changed: the next step lists the
        // frames anew.
        Ok(handle)
    }
}
