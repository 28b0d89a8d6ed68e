//! Contact geometry on demand: for a contact of the last step, when, where
//! and along which normal its frames first touched (`query/first_contact.rs`),
//! computed only for the contacts a user asks about, as exact boxes are in
//! `exact_boxes.rs`.

use super::World;
use crate::contact::Contact;
use crate::error::WorldError;
use crate::query::{FirstContact, first_contact};

impl<const D: usize> World<D> {
    /// The first contact of a contact's two frames during the last step:
    /// instant, unit normal from `contact.a`'s frame towards `contact.b`'s,
    /// a contact point and, for frames that overlapped from the step's
    /// start, the penetration depth ([`first_contact`]). `None` for a pair
    /// within round-off of touching (the frames are moved back by their
    /// displacement, as [`World::exact_boxes`] does).
    ///
    /// Cost: one FMB interval, one GJK and one pass over the candidate axes
    /// (BENCHMARKS.md, "Queries on two frames").
    ///
    /// # Errors
    /// [`WorldError::ContactsOutdated`] when bodies were inserted, removed
    /// or re-posed since the step, or the contact names frames the world
    /// does not hold; [`WorldError::Spinning`] for a pair of which a body
    /// turned within the step (its rotation is enclosed, not solved).
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// world.insert(Body::fixed(vec![Frame2::from_aabb([0.0, 0.0], [10.0, 1.0])?]))?;
    /// world.insert(Body::moving(vec![Frame2::from_aabb([2.0, 2.0], [3.0, 3.0])?]).with_velocity([0.0, -4.0]))?;
    /// let contact = world.step(0.5)?[0]; // falls 2 units: meets the floor at t = 0.5
    /// let first = world.contact_geometry(&contact)?.unwrap();
    /// assert!((first.time - 0.5).abs() < 1e-12);
    /// assert_eq!(first.normal, [0.0, 1.0]); // from the floor up to the box
    /// assert!((first.point[1] - 1.0).abs() < 1e-12);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn contact_geometry(&self, contact: &Contact<D>) -> Result<Option<FirstContact<D>>, WorldError> {
        if !self.narrow.is_current(&self.broad) {
            return Err(WorldError::ContactsOutdated);
        }
        if self.step_spin(contact.a).is_some() || self.step_spin(contact.b).is_some() {
            return Err(WorldError::Spinning);
        }
        match (self.step_frame(contact.a), self.step_frame(contact.b)) {
            (Some(f), Some(g)) => Ok(first_contact(&f, &g)),
            _ => Err(WorldError::ContactsOutdated),
        }
    }
}
