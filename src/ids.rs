//! The names the world gives its bodies and frames: handles, shared by the
//! world that hands them out and the contacts and events that report them
//! (a module of their own, so that `contact.rs` and `world/` do not import
//! each other).

/// A body's handle: small, `Copy`, and generational, so a handle to a
/// removed body is refused instead of reaching whatever reuses its slot.
///
/// ```
/// use fmbgrid::{Body, Frame2, World2, WorldConfig, WorldError};
/// let mut world = World2::new(WorldConfig::default());
/// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
/// world.remove(h)?;
/// assert!(matches!(world.remove(h), Err(WorldError::StaleHandle(_))));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BodyHandle {
    pub(crate) index: u32,
    pub(crate) generation: u32,
}

impl BodyHandle {
    /// The slot index (stable while the body lives; reused after removal).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
    /// assert_eq!(h.index(), 0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The generation: the slot's count of removals (wrapping) when the
    /// body came in, which tells its handle from those of the slot's
    /// earlier and later bodies. With [`BodyHandle::index`], the whole
    /// handle (the Python bindings pack the two into one integer).
    ///
    /// ```
    /// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
    /// let mut world = World2::new(WorldConfig::default());
    /// let body = || Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2]).unwrap()]);
    /// let h = world.insert(body())?;
    /// world.remove(h)?;
    /// let again = world.insert(body())?;
    /// assert_eq!((again.index(), again.generation()), (h.index(), h.generation() + 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn generation(&self) -> u32 {
        self.generation
    }
}

/// `#index.generation`, as error messages print a handle.
///
/// ```
/// # use fmbgrid::{Body, Frame2, World2, WorldConfig};
/// let mut world = World2::new(WorldConfig::default());
/// let h = world.insert(Body::fixed(vec![Frame2::from_aabb([0.0; 2], [1.0; 2])?]))?;
/// assert_eq!(h.to_string(), "#0.0");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
impl std::fmt::Display for BodyHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}.{}", self.index, self.generation)
    }
}

/// One frame of one body.
///
/// ```
/// use fmbgrid::{BodyHandle, FrameId};
/// fn first(body: BodyHandle) -> FrameId { FrameId { body, index: 0 } }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FrameId {
    /// The body.
    pub body: BodyHandle,
    /// Index of the frame in the body's frame list.
    pub index: u32,
}
