//! Axis-aligned bounding boxes: the common currency between the narrow phase
//! (exact boxes of intersections) and the broad phase (frame boxes).

/// An axis-aligned box `{x : min[i] <= x[i] <= max[i]}` in world coordinates.
///
/// ```
/// use fmbgrid::Aabb;
/// let a = Aabb { min: [0.0, 0.0], max: [2.0, 1.0] };
/// let b = Aabb { min: [1.0, 0.5], max: [3.0, 3.0] };
/// assert!(a.intersects(&b));
/// assert_eq!(a.intersection(&b), Some(Aabb { min: [1.0, 0.5], max: [2.0, 1.0] }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Aabb<const D: usize> {
    /// Smallest coordinate on each axis.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_impls::vector"))]
    pub min: [f64; D],
    /// Largest coordinate on each axis.
    #[cfg_attr(feature = "serde", serde(with = "crate::serde_impls::vector"))]
    pub max: [f64; D],
}

/// The empty box ([`Aabb::EMPTY`]): what a union starts from.
///
/// ```
/// # use fmbgrid::Aabb;
/// assert_eq!(Aabb::<2>::default(), Aabb::EMPTY);
/// ```
impl<const D: usize> Default for Aabb<D> {
    fn default() -> Self {
        Aabb::EMPTY
    }
}

impl<const D: usize> Aabb<D> {
    /// The empty box (`min = +∞`, `max = -∞`), neutral for [`Aabb::include`].
    ///
    /// ```
    /// use fmbgrid::Aabb;
    /// let mut b = Aabb::<3>::EMPTY;
    /// assert!(b.is_empty());
    /// b.include(&[1.0, 2.0, 3.0]);
    /// assert_eq!(b.min, b.max);
    /// ```
    pub const EMPTY: Self = Aabb { min: [f64::INFINITY; D], max: [f64::NEG_INFINITY; D] };

    /// True when `min > max` on some axis.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// assert!(!Aabb { min: [0.0], max: [0.0] }.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        (0..D).any(|i| self.min[i] > self.max[i])
    }

    /// Grows the box to contain `p`.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// let mut b = Aabb { min: [0.0, 0.0], max: [1.0, 1.0] };
    /// b.include(&[2.0, -1.0]);
    /// assert_eq!(b, Aabb { min: [0.0, -1.0], max: [2.0, 1.0] });
    /// ```
    #[inline]
    pub fn include(&mut self, p: &[f64; D]) {
        for i in 0..D {
            // Selects, not branches (they compile to `minsd`/`maxsd`); a NaN
            // in `p` is ignored.
            self.min[i] = if p[i] < self.min[i] { p[i] } else { self.min[i] };
            self.max[i] = if p[i] > self.max[i] { p[i] } else { self.max[i] };
        }
    }

    /// The smallest box containing both.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// let a = Aabb { min: [0.0], max: [1.0] };
    /// assert_eq!(a.union(&Aabb { min: [3.0], max: [4.0] }), Aabb { min: [0.0], max: [4.0] });
    /// ```
    pub fn union(&self, other: &Self) -> Self {
        Aabb {
            min: std::array::from_fn(|i| self.min[i].min(other.min[i])),
            max: std::array::from_fn(|i| self.max[i].max(other.max[i])),
        }
    }

    /// Closed overlap test: boxes that only touch do intersect.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// let a = Aabb { min: [0.0, 0.0], max: [1.0, 1.0] };
    /// assert!(a.intersects(&Aabb { min: [1.0, 0.0], max: [2.0, 1.0] }));
    /// ```
    #[inline]
    pub fn intersects(&self, other: &Self) -> bool {
        (0..D).all(|i| self.min[i] <= other.max[i] && other.min[i] <= self.max[i])
    }

    /// The common part of two boxes, or `None` if they are disjoint.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// let a = Aabb { min: [0.0], max: [1.0] };
    /// assert_eq!(a.intersection(&Aabb { min: [2.0], max: [3.0] }), None);
    /// ```
    pub fn intersection(&self, other: &Self) -> Option<Self> {
        let b = Aabb {
            min: std::array::from_fn(|i| self.min[i].max(other.min[i])),
            max: std::array::from_fn(|i| self.max[i].min(other.max[i])),
        };
        (!b.is_empty()).then_some(b)
    }

    /// Extent `max - min` on each axis.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// assert_eq!(Aabb { min: [1.0, 2.0], max: [4.0, 3.0] }.extent(), [3.0, 1.0]);
    /// ```
    pub fn extent(&self) -> [f64; D] {
        std::array::from_fn(|i| self.max[i] - self.min[i])
    }

    /// The box swept by this one translating by `d`.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// let b = Aabb { min: [0.0, 0.0], max: [1.0, 1.0] };
    /// assert_eq!(b.swept(&[2.0, -1.0]), Aabb { min: [0.0, -1.0], max: [3.0, 1.0] });
    /// ```
    #[inline]
    pub fn swept(mut self, d: &[f64; D]) -> Self {
        for i in 0..D {
            // Without branches (the sign is unpredictable): the side that
            // does not move adds `-0.0`, which leaves every value as it is,
            // zeros' signs included.
            let back = d[i] < 0.0;
            self.min[i] += if back { d[i] } else { -0.0 };
            self.max[i] += if back { -0.0 } else { d[i] };
        }
        self
    }

    /// The box grown by `by` on every side.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// let b = Aabb { min: [0.0, 0.0], max: [1.0, 2.0] };
    /// assert_eq!(b.grown(0.5), Aabb { min: [-0.5, -0.5], max: [1.5, 2.5] });
    /// ```
    #[inline]
    pub fn grown(&self, by: f64) -> Self {
        Aabb { min: self.min.map(|x| x - by), max: self.max.map(|x| x + by) }
    }

    /// True when `p` lies in the closed box.
    ///
    /// ```
    /// # use fmbgrid::Aabb;
    /// assert!(Aabb { min: [0.0], max: [1.0] }.contains(&[1.0]));
    /// ```
    pub fn contains(&self, p: &[f64; D]) -> bool {
        (0..D).all(|i| self.min[i] <= p[i] && p[i] <= self.max[i])
    }
}
