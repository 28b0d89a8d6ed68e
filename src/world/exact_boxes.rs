//! Exact boxes after the step, for the contacts the user asks about: a
//! step in [`ContactDetail::Interval`] skips the box (most of a step's
//! cost), and [`World::exact_boxes`] computes it for the few that need it.

#[cfg(feature = "parallel")]
use rayon::prelude::*;

use super::spin::spinning_contact;
use super::{Motion, World};
use crate::contact::{Contact, ContactDetail};
use crate::error::WorldError;
use crate::frame::Frame;
use crate::narrow::intersect;
use crate::world::FrameId;

impl<const D: usize> World<D> {
    /// Replaces the box of every contact of the last step for which
    /// `select` is true with the exact box of the swept intersection (as
    /// [`ContactDetail::ExactBox`] would have reported it), in parallel with
    /// the `parallel` feature, and returns the contacts. A no-op when the
    /// step already carried exact boxes.
    ///
    /// The frames are taken where the step found them: moving frames are
    /// moved back by their step's displacement, which can differ from the
    /// step's own numbers by round-off (about 1e-16 relative). A pair
    /// within that of touching may then test apart: it keeps its
    /// conservative box.
    ///
    /// # Errors
    /// [`WorldError::ContactsOutdated`] when bodies were inserted, removed
    /// or re-posed since the step.
    ///
    /// ```
    /// use fmbgrid::{Body, ContactDetail, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default().with_contact_detail(ContactDetail::Interval));
    /// world.insert(Body::fixed(vec![Frame2::triangle([0.0, 0.0], [2.0, 0.0], [0.0, 2.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([0.5; 2], [2.5; 2])?]))?;
    /// let rough = world.step(0.5)?[0].aabb; // the boxes' overlap
    /// assert_eq!(rough.max, [2.0, 2.0]);
    /// let exact = world.exact_boxes(|_| true)?[0].aabb; // the corner cut off
    /// assert_eq!((exact.min, exact.max), ([0.5, 0.5], [1.5, 1.5]));
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([9.0; 2], [10.0; 2])?]))?;
    /// assert!(world.exact_boxes(|_| true).is_err()); // the world changed
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn exact_boxes(&mut self, select: impl Fn(&Contact<D>) -> bool + Sync) -> Result<&[Contact<D>], WorldError> {
        if !self.narrow.is_current(&self.broad) {
            return Err(WorldError::ContactsOutdated);
        }
        if self.config.detail == ContactDetail::ExactBox {
            return Ok(&self.narrow.contacts);
        }
        // Refined in place while the rest of the world is read.
        self.narrow.contacts_touched();
        let mut contacts = std::mem::take(&mut self.narrow.contacts);
        let this = &*self;
        let refine = |c: &mut Contact<D>| {
            if !select(c) {
                return;
            }
            // Contacts name live frames while they are current.
            let Some((f, g)) = this.step_frame(c.a).zip(this.step_frame(c.b)) else { return };
            let (sf, sg) = (this.step_spin(c.a), this.step_spin(c.b));
            if sf.is_some() || sg.is_some() {
                // A spinning pair: the step's own conservative answer.
                let tolerance = this.config.spin_tolerance;
                if let Some((aabb, _)) = spinning_contact(ContactDetail::ExactBox, &f, sf, &g, sg, tolerance) {
                    c.aabb = aabb;
                }
            } else if let Some(hit) = intersect(&f, &g) {
                c.aabb = hit.aabb;
            }
        };
        #[cfg(feature = "parallel")]
        contacts.par_iter_mut().for_each(refine);
        #[cfg(not(feature = "parallel"))]
        contacts.iter_mut().for_each(refine);
        self.narrow.contacts = contacts;
        Ok(&self.narrow.contacts)
    }

    /// The turn of frame `id`'s body in the last step, if it turned.
    pub(super) fn step_spin(&self, id: FrameId) -> Option<crate::narrow::Spin<D>> {
        self.turned_frame(id).map(|(_, spin)| spin)
    }

    /// A frame as the last step tested it: fixed frames as they are, moving
    /// ones back at their start, translating by their step's displacement.
    pub(super) fn step_frame(&self, id: FrameId) -> Option<Frame<D>> {
        let stored = self.stored(id.body).ok()?;
        let at = *stored.at.get(id.index as usize)? as usize;
        let (fixed, moving) = (&self.broad.fixed, &self.broad.moving);
        match stored.body.motion {
            Motion::Fixed => fixed.frames.get(at).copied(),
            Motion::Moving => {
                let d = *self.motion.shifts.get(moving.meta.get(at)?.rank as usize)?;
                if let Some((f, _)) = self.turned_frame(id) {
                    return Some(f.moved(d));
                }
                let mut f = *moving.frames.get(at)?;
                f.translate(&d.map(|x| -x));
                Some(f.moved(d))
            }
        }
    }
}
