//! Poses: invertible affine maps placing a body's frames in the world, and
//! [`World::set_poses`], which re-poses many bodies at once, all or nothing.

use super::{BodyHandle, Motion, Slot, World, placed_frame};
use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE, MIN_HADAMARD_RATIO};
use crate::math::{add, invert_columns, norm};

/// How far a rotation may stray from one and still be taken as one
/// ([`Pose::from_rotation`], [`World::set_rigid_poses_with`]): every entry
/// of `LᵀL − I` within it, with `det L > 0`. A rotation built in `f32` (a
/// single-precision quaternion made a matrix) is within about 1e-7; a
/// scaling, shear or mirror of a few parts in a million is not (pass those
/// as affine maps: [`Pose::new`]).
pub const ROTATION_TOLERANCE: f64 = 1e-6;

/// An invertible affine map `x ↦ L·x + t`: a rotation and translation, with
/// scale and shear allowed (frames stay frames under any such map).
///
/// `linear[i]` is the image of the `i`-th unit vector (the `i`-th column of
/// `L`), the same convention as [`Frame::components`].
///
/// ```
/// use fmbgrid::Pose3;
/// let p = Pose3::from_translation([0.0, 5.0, 0.0])?;
/// assert_eq!(p.transform_point(&[1.0, 0.0, 0.0]), [1.0, 5.0, 0.0]);
/// # Ok::<(), fmbgrid::WorldError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "crate::serde_impls::PoseData<D>", into = "crate::serde_impls::PoseData<D>")
)]
pub struct Pose<const D: usize> {
    linear: [[f64; D]; D],
    translation: [f64; D],
}

/// A 2D pose.
pub type Pose2 = Pose<2>;
/// A 3D pose.
pub type Pose3 = Pose<3>;

const fn identity<const D: usize>() -> [[f64; D]; D] {
    let mut m = [[0.0; D]; D];
    let mut i = 0;
    while i < D {
        m[i][i] = 1.0;
        i += 1;
    }
    m
}

fn check<const D: usize>(what: &'static str, v: &[f64; D]) -> Result<(), WorldError> {
    match v.iter().find(|x| !x.is_finite() || x.abs() > MAX_COORDINATE) {
        Some(&value) => Err(WorldError::BadNumber { what, value }),
        None => Ok(()),
    }
}

impl<const D: usize> Pose<D> {
    /// The identity pose.
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// assert_eq!(Pose2::IDENTITY.transform_point(&[1.0, 2.0]), [1.0, 2.0]);
    /// ```
    pub const IDENTITY: Self = Pose { linear: identity(), translation: [0.0; D] };

    /// The affine map `x ↦ L·x + translation` with `linear[i] = L·eᵢ`.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite or too large entry, and
    /// [`WorldError::DegeneratePose`] when `L` is (nearly) singular, by the
    /// same measure as frames ([`MIN_HADAMARD_RATIO`]).
    ///
    /// ```
    /// use fmbgrid::{Pose2, WorldError};
    /// let shear = Pose2::new([[1.0, 0.0], [0.5, 1.0]], [0.0, 0.0])?;
    /// assert_eq!(shear.transform_point(&[0.0, 2.0]), [1.0, 2.0]);
    /// assert!(matches!(Pose2::new([[1.0, 0.0], [2.0, 0.0]], [0.0; 2]), Err(WorldError::DegeneratePose { .. })));
    /// # Ok::<(), WorldError>(())
    /// ```
    pub fn new(linear: [[f64; D]; D], translation: [f64; D]) -> Result<Self, WorldError> {
        check("pose translation", &translation)?;
        for c in &linear {
            check("pose matrix", c)?;
        }
        let lengths: [f64; D] = std::array::from_fn(|i| norm(&linear[i]));
        let unit: [[f64; D]; D] = std::array::from_fn(|i| linear[i].map(|x| x / lengths[i]));
        let ratio =
            if lengths.iter().all(|&l| l > 0.0) { invert_columns(&unit).map_or(0.0, |(_, d)| d.abs()) } else { 0.0 };
        if ratio < MIN_HADAMARD_RATIO {
            return Err(WorldError::DegeneratePose { ratio });
        }
        Ok(Pose { linear, translation })
    }

    /// A rigid pose: the rotation `rotation` (its columns, `rotation[i] =
    /// R·eᵢ`, as [`Pose::new`]'s) then the translation.
    ///
    /// # Errors
    /// [`Pose::new`]'s, and [`WorldError::NotARotation`] when `rotation` is
    /// farther than [`ROTATION_TOLERANCE`] from a rotation (a scaling, a
    /// shear, a mirror).
    ///
    /// ```
    /// use fmbgrid::{Pose2, WorldError};
    /// let (c, s) = (0.6, 0.8);
    /// let turned = Pose2::from_rotation([[c, s], [-s, c]], [1.0, 0.0])?;
    /// assert_eq!(turned.transform_point(&[1.0, 0.0]), [1.6, 0.8]);
    /// // Scaled by 1.01: an affine map, not a rotation.
    /// let scaled = Pose2::from_rotation([[1.01, 0.0], [0.0, 1.0]], [0.0; 2]);
    /// assert!(matches!(scaled, Err(WorldError::NotARotation { .. })));
    /// # Ok::<(), WorldError>(())
    /// ```
    pub fn from_rotation(rotation: [[f64; D]; D], translation: [f64; D]) -> Result<Self, WorldError> {
        let pose = Pose::new(rotation, translation)?;
        let error = pose.rotation_error();
        if error > ROTATION_TOLERANCE {
            return Err(WorldError::NotARotation { error });
        }
        Ok(pose)
    }

    /// How far the linear part is from a rotation: the largest entry of
    /// `LᵀL − I` in magnitude, or infinity for a mirror (`det L < 0`).
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// assert_eq!(Pose2::from_angle(0.3, [0.0; 2])?.rotation_error() < 1e-15, true);
    /// assert_eq!(Pose2::new([[-1.0, 0.0], [0.0, 1.0]], [0.0; 2])?.rotation_error(), f64::INFINITY);
    /// assert!((Pose2::new([[1.5, 0.0], [0.0, 1.0]], [0.0; 2])?.rotation_error() - 1.25).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn rotation_error(&self) -> f64 {
        rotation_error(&self.linear)
    }

    /// A pure translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite or too large coordinate.
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// assert!(Pose2::from_translation([f64::NAN, 0.0]).is_err());
    /// ```
    pub fn from_translation(translation: [f64; D]) -> Result<Self, WorldError> {
        check("pose translation", &translation)?;
        Ok(Pose { linear: identity(), translation })
    }

    /// The translation `t`.
    ///
    /// ```
    /// # use fmbgrid::Pose3;
    /// assert_eq!(Pose3::from_translation([1.0, 2.0, 3.0])?.translation(), [1.0, 2.0, 3.0]);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn translation(&self) -> [f64; D] {
        self.translation
    }

    /// Mutable translation, for the world's own advancing (validated there).
    pub(crate) fn translation_mut(&mut self) -> &mut [f64; D] {
        &mut self.translation
    }

    /// The linear part, by columns (`linear()[i] = L·eᵢ`).
    ///
    /// ```
    /// # use fmbgrid::Pose2;
    /// assert_eq!(Pose2::IDENTITY.linear(), [[1.0, 0.0], [0.0, 1.0]]);
    /// ```
    pub fn linear(&self) -> [[f64; D]; D] {
        self.linear
    }

    /// `L·v`: a direction or displacement in world coordinates.
    ///
    /// ```
    /// # use fmbgrid::Pose2;
    /// let p = Pose2::from_angle(std::f64::consts::FRAC_PI_2, [5.0, 5.0])?;
    /// let v = p.transform_vector(&[1.0, 0.0]);
    /// assert!(v[0].abs() < 1e-15 && (v[1] - 1.0).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn transform_vector(&self, v: &[f64; D]) -> [f64; D] {
        let mut out = [0.0; D];
        for (i, c) in self.linear.iter().enumerate() {
            for k in 0..D {
                out[k] += c[k] * v[i];
            }
        }
        out
    }

    /// `L·p + t`.
    ///
    /// ```
    /// # use fmbgrid::Pose2;
    /// assert_eq!(Pose2::from_translation([1.0, 1.0])?.transform_point(&[2.0, 0.0]), [3.0, 1.0]);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn transform_point(&self, p: &[f64; D]) -> [f64; D] {
        add(&self.transform_vector(p), &self.translation)
    }

    /// The frame `f` (body coordinates) placed in the world, at rest.
    ///
    /// # Errors
    /// [`WorldError::Frame`] when the placed frame is out of range or
    /// degenerate (a shearing pose can flatten a frame).
    ///
    /// ```
    /// use fmbgrid::{Frame2, Pose2};
    /// let f = Frame2::from_aabb([0.0, 0.0], [1.0, 1.0])?;
    /// let placed = Pose2::from_translation([10.0, 0.0])?.transform_frame(&f)?;
    /// assert_eq!(placed.aabb().min, [10.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn transform_frame(&self, f: &Frame<D>) -> Result<Frame<D>, WorldError> {
        let c = f.components();
        Ok(Frame::new(
            f.kind(),
            self.transform_point(&f.origin()),
            std::array::from_fn(|i| self.transform_vector(&c[i])),
        )?)
    }
}

impl Pose<2> {
    /// A rotation by `angle` radians (counter-clockwise) then a translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for a non-finite angle or translation.
    ///
    /// ```
    /// use fmbgrid::Pose2;
    /// let p = Pose2::from_angle(std::f64::consts::PI, [0.0, 0.0])?;
    /// let q = p.transform_point(&[1.0, 0.0]);
    /// assert!((q[0] + 1.0).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn from_angle(angle: f64, translation: [f64; 2]) -> Result<Self, WorldError> {
        check("pose angle", &[angle])?;
        let (s, c) = angle.sin_cos();
        Self::new([[c, s], [-s, c]], translation)
    }
}

impl Pose<3> {
    /// A rotation by `angle` radians about `axis` (right-handed; normalised
    /// here) then a translation.
    ///
    /// # Errors
    /// [`WorldError::BadNumber`] for non-finite input, [`WorldError::ZeroAxis`]
    /// for a zero axis.
    ///
    /// ```
    /// use fmbgrid::Pose3;
    /// let p = Pose3::from_axis_angle([0.0, 0.0, 2.0], std::f64::consts::FRAC_PI_2, [0.0; 3])?;
    /// let q = p.transform_point(&[1.0, 0.0, 0.0]);
    /// assert!(q[0].abs() < 1e-15 && (q[1] - 1.0).abs() < 1e-15);
    /// # Ok::<(), fmbgrid::WorldError>(())
    /// ```
    pub fn from_axis_angle(axis: [f64; 3], angle: f64, translation: [f64; 3]) -> Result<Self, WorldError> {
        check("rotation axis", &axis)?;
        check("pose angle", &[angle])?;
        let n = norm(&axis);
        if n == 0.0 {
            return Err(WorldError::ZeroAxis);
        }
        let [x, y, z] = axis.map(|v| v / n);
        let (s, c) = angle.sin_cos();
        let t = 1.0 - c;
        // Rodrigues' formula, by columns.
        let linear = [
            [t * x * x + c, t * x * y + s * z, t * x * z - s * y],
            [t * x * y - s * z, t * y * y + c, t * y * z + s * x],
            [t * x * z + s * y, t * y * z - s * x, t * z * z + c],
        ];
        Self::new(linear, translation)
    }
}

impl<const D: usize> World<D> {
    /// Moves many bodies to new poses at once, all or nothing: every handle
    /// is checked and every frame placed at its new pose before anything
    /// changes, so on an error the world is exactly as it was. Then the
    /// bodies are re-posed in order (a body listed twice ends at its last
    /// pose), as [`World::set_pose`] would one by one, effective at the start
    /// of the next step.
    ///
    /// The frames are placed into a buffer the world keeps between calls:
    /// once it has grown to the frames of the largest call, a loop driving
    /// every body by its pose allocates nothing.
    ///
    /// A moving body that does not turn, whose pose and placed frames come
    /// out the same as they are, bit for bit, is left alone: re-posing it
    /// would change nothing but drop the step's memory of the pairs it was
    /// found apart from (a cache: no answer depends on it), which makes
    /// the next step slower for a loop that sets every pose each step, most
    /// of them unchanged. Fixed bodies are always re-posed (which rebuilds
    /// the static part of the broad phase at the next step).
    ///
    /// # Errors
    /// The first in `poses`' order of: [`WorldError::StaleHandle`],
    /// [`WorldError::Frame`] (a frame of that body becomes invalid at that
    /// pose). Nothing changes then.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, FrameId, Pose2, World2, WorldConfig, WorldError};
    /// let mut world = World2::new(WorldConfig::default());
    /// let square = || Body::moving(vec![Frame2::from_aabb([1.0; 2], [2.0; 2]).unwrap()]);
    /// let (a, b) = (world.insert(square())?, world.insert(square())?);
    /// world.set_poses(&[(a, Pose2::from_translation([5.0, 0.0])?), (b, Pose2::from_angle(0.5, [0.0, 5.0])?)])?;
    /// assert_eq!(world.frame(FrameId { body: a, index: 0 })?.origin(), [6.0, 1.0]);
    ///
    /// // One bad entry (b's square carried past 1e15), and nothing moves.
    /// let far = Pose2::from_translation([1e15, 0.0])?;
    /// let err = world.set_poses(&[(a, Pose2::IDENTITY), (b, far)]).unwrap_err();
    /// assert!(matches!(err, WorldError::Frame { index: 0, .. }));
    /// assert_eq!(world.body(a)?.pose().translation(), [5.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_poses(&mut self, poses: &[(BodyHandle, Pose<D>)]) -> Result<(), WorldError> {
        self.set_rows(poses)
    }

    /// [`World::set_poses`] with the poses as rows read from the caller's
    /// own arrays: body `handles[k]` takes the pose `row(k) = (linear,
    /// translation)`, the linear map's columns and the translation of
    /// [`Pose::new`]. A row equal bit for bit to its body's pose is that
    /// pose, and only the other rows are checked as `Pose::new` checks
    /// them: a loop setting every body's pose from its own state each step
    /// (a physics engine's, a Python array's) builds no `Pose`, and pays
    /// a comparison for each body that did not move.
    ///
    /// # Errors
    /// The first in the entries' order of: [`WorldError::StaleHandle`],
    /// `Pose::new`'s ([`WorldError::BadNumber`],
    /// [`WorldError::DegeneratePose`]), [`WorldError::Frame`]. Nothing
    /// changes then.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, FrameId, World2, WorldConfig, WorldError};
    /// let mut world = World2::new(WorldConfig::default());
    /// let square = || Body::moving(vec![Frame2::from_aabb([1.0; 2], [2.0; 2]).unwrap()]);
    /// let handles = [world.insert(square())?, world.insert(square())?];
    /// // The caller's state: one translation per body, no rotation.
    /// let at = [[5.0, 0.0], [0.0, 5.0]];
    /// let identity = [[1.0, 0.0], [0.0, 1.0]];
    /// world.set_poses_with(&handles, |k| (identity, at[k]))?;
    /// assert_eq!(world.frame(FrameId { body: handles[1], index: 0 })?.origin(), [1.0, 6.0]);
    ///
    /// // A row that is no pose, and nothing moves.
    /// let flat = [[1.0, 0.0], [2.0, 0.0]];
    /// let err = world.set_poses_with(&handles, |k| (if k == 1 { flat } else { identity }, [0.0; 2]));
    /// assert!(matches!(err, Err(WorldError::DegeneratePose { .. })));
    /// assert_eq!(world.body(handles[0])?.pose().translation(), [5.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_poses_with<F>(&mut self, handles: &[BodyHandle], row: F) -> Result<(), WorldError>
    where
        F: Fn(usize) -> ([[f64; D]; D], [f64; D]),
    {
        self.set_rows(&Rows { handles, row, rigid: false })
    }

    /// [`World::set_poses_with`] for rigid motions: every row that changes
    /// its body's pose must have a rotation for its linear part (within
    /// [`ROTATION_TOLERANCE`], as [`Pose::from_rotation`] checks), so that a
    /// sheared or scaled matrix from the caller's data (a quaternion not
    /// normalised, a mirror) is refused instead of deforming the body's
    /// frames. A row equal bit for bit to its body's pose is that pose, as
    /// there.
    ///
    /// # Errors
    /// As [`World::set_poses_with`], and [`WorldError::NotARotation`].
    /// Nothing changes then.
    ///
    /// ```
    /// use fmbgrid::{Body, Frame2, World2, WorldConfig, WorldError};
    /// let mut world = World2::new(WorldConfig::default());
    /// let square = Body::moving(vec![Frame2::from_aabb([1.0; 2], [2.0; 2])?]);
    /// let handles = [world.insert(square)?];
    /// let (c, s) = (0.6, 0.8);
    /// world.set_rigid_poses_with(&handles, |_| ([[c, s], [-s, c]], [5.0, 0.0]))?;
    /// // A quaternion's matrix not normalised: scaled by 1.001.
    /// let scaled = [[1.001 * c, 1.001 * s], [-1.001 * s, 1.001 * c]];
    /// let err = world.set_rigid_poses_with(&handles, |_| (scaled, [0.0; 2])).unwrap_err();
    /// assert!(matches!(err, WorldError::NotARotation { .. }));
    /// assert_eq!(world.body(handles[0])?.pose().translation(), [5.0, 0.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_rigid_poses_with<F>(&mut self, handles: &[BodyHandle], row: F) -> Result<(), WorldError>
    where
        F: Fn(usize) -> ([[f64; D]; D], [f64; D]),
    {
        self.set_rows(&Rows { handles, row, rigid: true })
    }

    /// [`World::repose_all`] with the world's buffers of placed frames.
    fn set_rows(&mut self, entries: &(impl PoseEntries<D> + ?Sized)) -> Result<(), WorldError> {
        let mut placed = std::mem::take(&mut self.placed);
        let result = self.repose_all(entries, &mut placed);
        self.placed = placed;
        result
    }

    /// [`World::set_poses`] with the buffers of the placed frames.
    fn repose_all(
        &mut self,
        entries: &(impl PoseEntries<D> + ?Sized),
        placed: &mut Placing<D>,
    ) -> Result<(), WorldError> {
        // 1. Check: every handle live, every frame valid at its pose. An
        // entry that leaves its body as it is (see `unchanged_placement`)
        // places nothing.
        placed.frames.clear();
        placed.first.clear();
        placed.poses.clear();
        placed.confirmed.clear();
        let (mut changed, mut unchanged) = (0, 0);
        let n = entries.count();
        for start in (0..n).step_by(WARM) {
            let chunk = start..n.min(start + WARM);
            self.warm(entries, chunk.clone());
            for k in chunk {
                let handle = entries.handle(k);
                let stored = self.stored(handle)?;
                let store = self.broad.store(stored.body.motion);
                let new = entries.pose(k, &stored.body.pose)?;
                let pose = new.unwrap_or(stored.body.pose);
                // Frames marked placed at this very pose are what placing
                // them gives: nothing to compare.
                let same = stored.body.motion == Motion::Moving
                    && stored.body.angular_velocity == [0.0; 3]
                    && new.is_none()
                    && (stored.placed
                        || stored.body.frames.iter().zip(&stored.at).all(|(f, &i)| {
                            store.frames.get(i as usize).is_some_and(|now| unchanged_placement(&pose, f, now))
                        }));
                if same {
                    if !stored.placed {
                        placed.confirmed.push(handle.index);
                    }
                    placed.first.push(None);
                    unchanged += 1;
                } else {
                    placed.first.push(Some((placed.frames.len(), placed.poses.len())));
                    placed.poses.push(pose);
                    for (index, f) in stored.body.frames.iter().enumerate() {
                        placed.frames.push(placed_frame(&pose, f, index)?);
                    }
                    changed += 1;
                }
            }
        }
        if changed > 0 && unchanged > 0 {
            self.place_unchanged_of_changed(entries, placed);
        }
        // 2. Apply: nothing can fail from here on (the slots do not change).
        // An entry that placed nothing is skipped: its body is as it was,
        // and no entry of the call changes it.
        let Self { slots, broad, .. } = self;
        for (k, &first) in placed.first.iter().enumerate() {
            let Some((first, at)) = first else { continue };
            let (handle, pose) = (entries.handle(k), placed.poses[at]);
            let Some(Slot { stored: Some(stored), .. }) = slots.get_mut(handle.index as usize) else {
                unreachable!("body {handle} was found live above");
            };
            let frames = &placed.frames[first..first + stored.at.len()];
            let motion = stored.body.motion;
            let store = broad.store_mut(motion);
            // Compared with the store as it is now (an earlier entry may
            // have moved the same body).
            let unchanged = motion == Motion::Moving
                && stored.body.angular_velocity == [0.0; 3]
                && same_pose(&stored.body.pose, &pose)
                && stored.at.iter().zip(frames).all(|(&i, f)| same_frame(&store.frames[i as usize], f));
            if !unchanged {
                stored.body.pose = pose;
                for (&i, f) in stored.at.iter().zip(frames) {
                    store.frames[i as usize] = *f;
                }
            }
            stored.placed = true;
            if unchanged {
                continue;
            }
            broad.reposed(motion, stored.at.first().copied());
        }
        // Bodies found unchanged by comparing their frames: as placed, so
        // the next call need not compare them again. (Those another entry
        // changed were placed above: as placed too.)
        for &slot in &placed.confirmed {
            if let Some(Slot { stored: Some(stored), .. }) = slots.get_mut(slot as usize) {
                stored.placed = true;
            }
        }
        self.debug_validate();
        Ok(())
    }

    /// Step 1 of [`World::set_poses`] for a call that changes some bodies
    /// and leaves others: an entry that leaves its body as it is, of a body
    /// that another entry changes, has its frames placed after all (copies
    /// of the body's frames as they are, which placing them gives), so that
    /// step 2 puts them back should an earlier entry move the body away.
    fn place_unchanged_of_changed(&self, entries: &(impl PoseEntries<D> + ?Sized), placed: &mut Placing<D>) {
        let Placing { frames, first, poses, changed, .. } = placed;
        changed.clear();
        changed.resize(self.slots.len().div_ceil(64), 0);
        let bit = |h: BodyHandle| (h.index as usize / 64, 1u64 << (h.index % 64));
        for (k, _) in first.iter().enumerate().filter(|(_, f)| f.is_some()) {
            let (word, mask) = bit(entries.handle(k));
            changed[word] |= mask;
        }
        for (k, first) in first.iter_mut().enumerate() {
            let h = entries.handle(k);
            let (word, mask) = bit(h);
            if first.is_some() || changed[word] & mask == 0 {
                continue;
            }
            if let Ok(stored) = self.stored(h) {
                // Unchanged: the entry's pose is the body's, bit for bit.
                let store = self.broad.store(stored.body.motion);
                *first = Some((frames.len(), poses.len()));
                poses.push(stored.body.pose);
                frames.extend(stored.at.iter().filter_map(|&i| store.frames.get(i as usize)));
            }
        }
    }

    /// Reads `chunk`'s bodies' frames and their placed frames, which step 1
    /// reads next: loads that do not wait on one another, which the
    /// processor overlaps, where step 1's reads of a body wait on those of
    /// the one before (bodies far apart in memory, each missing the caches,
    /// in a world of many bodies).
    fn warm(&self, entries: &(impl PoseEntries<D> + ?Sized), chunk: std::ops::Range<usize>) {
        for k in chunk {
            let Ok(stored) = self.stored(entries.handle(k)) else { return };
            if stored.placed {
                continue; // nothing of its frames is read
            }
            let store = self.broad.store(stored.body.motion);
            for (f, &i) in stored.body.frames.iter().zip(&stored.at) {
                std::hint::black_box((f.origin(), f.components()));
                if let Some(now) = store.frames.get(i as usize) {
                    std::hint::black_box(*now);
                }
            }
        }
    }
}

/// The entries of a [`World::set_poses`] call: poses built by the caller,
/// or rows of its arrays ([`World::set_poses_with`]).
trait PoseEntries<const D: usize> {
    fn count(&self) -> usize;
    fn handle(&self, k: usize) -> BodyHandle;
    /// Entry `k`'s pose, for a body whose pose is `now`: none when it is
    /// `now`, bit for bit.
    fn pose(&self, k: usize, now: &Pose<D>) -> Result<Option<Pose<D>>, WorldError>;
}

impl<const D: usize> PoseEntries<D> for [(BodyHandle, Pose<D>)] {
    fn count(&self) -> usize {
        self.len()
    }

    #[inline(always)]
    fn handle(&self, k: usize) -> BodyHandle {
        self[k].0
    }

    #[inline(always)]
    fn pose(&self, k: usize, now: &Pose<D>) -> Result<Option<Pose<D>>, WorldError> {
        let pose = &self[k].1;
        Ok((!same_pose(now, pose)).then_some(*pose))
    }
}

/// Entries as handles and rows `row(k) = (linear, translation)`.
struct Rows<'a, F> {
    handles: &'a [BodyHandle],
    row: F,
    /// Every changed row's linear part must be a rotation.
    rigid: bool,
}

impl<const D: usize, F: Fn(usize) -> ([[f64; D]; D], [f64; D])> PoseEntries<D> for Rows<'_, F> {
    fn count(&self) -> usize {
        self.handles.len()
    }

    #[inline(always)]
    fn handle(&self, k: usize) -> BodyHandle {
        self.handles[k]
    }

    /// None when the row is the body's pose, bit for bit (a pose is valid
    /// by its numbers alone); else the row checked by `Pose::new`.
    #[inline(always)]
    fn pose(&self, k: usize, now: &Pose<D>) -> Result<Option<Pose<D>>, WorldError> {
        let (linear, translation) = (self.row)(k);
        if same_pose(now, &Pose { linear, translation }) {
            Ok(None)
        } else if self.rigid {
            Pose::from_rotation(linear, translation).map(Some)
        } else {
            Pose::new(linear, translation).map(Some)
        }
    }
}

/// The largest entry of `LᵀL − I` in magnitude for the linear map of
/// columns `l`, or infinity when `det L < 0` (a mirror) or is not positive.
fn rotation_error<const D: usize>(l: &[[f64; D]; D]) -> f64 {
    let det = invert_columns(l).map_or(0.0, |(_, d)| d);
    if det.is_nan() || det <= 0.0 {
        return f64::INFINITY;
    }
    let dot = |a: &[f64; D], b: &[f64; D]| (0..D).map(|k| a[k] * b[k]).sum::<f64>();
    (0..D)
        .flat_map(|i| (i..D).map(move |j| (i, j)))
        .map(|(i, j)| (dot(&l[i], &l[j]) - f64::from(u8::from(i == j))).abs())
        .fold(0.0, f64::max)
}

/// Entries of [`World::set_poses`] whose memory is warmed together.
const WARM: usize = 32;

/// The buffers of [`World::set_poses`], kept by the world between calls.
#[derive(Clone, Debug, Default)]
pub(super) struct Placing<const D: usize> {
    /// The entries' frames placed at their poses.
    frames: Vec<Frame<D>>,
    /// Per entry: where its frames start in `frames`, and its pose in
    /// `poses`; none for an entry that leaves its body as it is (and places
    /// nothing).
    first: Vec<Option<(usize, usize)>>,
    /// The poses of the entries that place frames.
    poses: Vec<Pose<D>>,
    /// Slots of the bodies found as placed by comparing their frames.
    confirmed: Vec<u32>,
    /// Bit per slot: a body changed by an entry of the call.
    changed: Vec<u64>,
}

/// True when `now`, a moving body's frame as the store has it, is exactly
/// the frame `f` placed at `pose`, the body's own pose ([`placed_frame`]
/// would give `now`, bit for bit, and succeed), found without placing it.
///
/// A store keeps its frames as placing gave them (`Frame::new`), moved by
/// the steps (origin and box translated, the rest as it was): `now` has
/// the kind and components of `f` placed at the body's pose, and so the
/// fields that `Frame::new` derives from them, and passed its checks of
/// them. What remains is the origin, the velocity (zero when placed), the
/// box as `Frame::new` computes it and its checks of the origin and box.
fn unchanged_placement<const D: usize>(pose: &Pose<D>, f: &Frame<D>, now: &Frame<D>) -> bool {
    // The same arithmetic as `Pose::transform_frame`.
    let c = f.components();
    let comps: [[f64; D]; D] = std::array::from_fn(|i| pose.transform_vector(&c[i]));
    let origin = pose.transform_point(&f.origin());
    if now.kind() != f.kind()
        || bits(&now.origin()) != bits(&origin)
        || bits(&now.velocity()) != bits(&[0.0; D])
        || !now.components().iter().zip(&comps).all(|(x, y)| bits(x) == bits(y))
    {
        return false;
    }
    let (aabb, own) = (now.aabb(), now.with_own_aabb().aabb());
    bits(&aabb.min) == bits(&own.min)
        && bits(&aabb.max) == bits(&own.max)
        && crate::frame::check_coords("origin", &origin).is_ok()
        && crate::range::beyond(&aabb, &[0.0; D], now.reach_bound()).is_none()
}

fn bits<const D: usize>(v: &[f64; D]) -> [u64; D] {
    v.map(f64::to_bits)
}

/// The same pose, bit for bit (one pass, no early exit: most poses a loop
/// sets are unchanged).
#[inline]
fn same_pose<const D: usize>(a: &Pose<D>, b: &Pose<D>) -> bool {
    let differ = |x: &[f64; D], y: &[f64; D]| x.iter().zip(y).fold(0, |d, (x, y)| d | (x.to_bits() ^ y.to_bits()));
    let linear = a.linear.iter().zip(&b.linear).fold(0, |d, (x, y)| d | differ(x, y));
    linear | differ(&a.translation, &b.translation) == 0
}

/// The same frame, bit for bit (its other fields derive from these).
pub(super) fn same_frame<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    let (ab, bb) = (a.aabb(), b.aabb());
    a.kind() == b.kind()
        && bits(&a.origin()) == bits(&b.origin())
        && bits(&a.velocity()) == bits(&b.velocity())
        && a.components().iter().zip(&b.components()).all(|(x, y)| bits(x) == bits(y))
        && bits(&ab.min) == bits(&bb.min)
        && bits(&ab.max) == bits(&bb.max)
}

#[cfg(test)]
mod tests {
    use super::{placed_frame, same_frame, same_pose, unchanged_placement};
    use crate::{Body, BodyHandle, Frame3, FrameId, Motion, Pose3, World3, WorldConfig, WorldError};

    /// Twelve bodies in a row, overlapping their neighbours: one or two
    /// boxes each, every fourth fixed, the others moving.
    fn world() -> (World3, Vec<BodyHandle>) {
        let mut w = World3::new(WorldConfig::default());
        let mut handles = Vec::new();
        for k in 0..12 {
            let x = k as f64 * 0.7;
            let mut frames = vec![Frame3::from_aabb([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]).unwrap()];
            if k % 3 == 0 {
                frames.push(Frame3::from_aabb([x, 1.0, 0.0], [x + 0.5, 2.0, 0.5]).unwrap());
            }
            let body = if k % 4 == 0 {
                Body::fixed(frames)
            } else {
                Body::moving(frames).with_velocity([0.1 * k as f64, -0.2, 0.05])
            };
            handles.push(w.insert(body).unwrap());
        }
        (w, handles)
    }

    /// Every body's pose and placed frames, as text that tells every bit
    /// apart (`{:?}` of an `f64` reads back to the same bits).
    fn state(w: &World3) -> String {
        let mut out = String::new();
        for (h, b) in w.bodies() {
            out += &format!("{h} {:?} {:?}\n", b.pose(), b.velocity());
            for index in 0..b.frames().len() as u32 {
                out += &format!("  {:?}\n", w.frame(FrameId { body: h, index }).unwrap());
            }
        }
        out
    }

    /// Three steps' contacts, events and body pairs, as text.
    fn steps(w: &mut World3) -> String {
        (0..3)
            .map(|_| {
                let contacts = format!("{:?}", w.step(0.5).unwrap());
                format!("{contacts} {:?} {:?}\n", w.events(), w.body_pairs())
            })
            .collect()
    }

    fn turned(k: usize) -> Pose3 {
        Pose3::from_axis_angle([1.0, 2.0, k as f64], 0.1 * k as f64, [0.3 * k as f64, 1.0, -0.5]).unwrap()
    }

    #[test]
    fn set_poses_equals_set_pose_body_by_body() {
        let (mut a, h) = world();
        a.step(0.5).unwrap();
        let mut b = a.clone();
        // Fixed and moving bodies, one listed twice (its last pose wins),
        // one set to the pose it has.
        let poses = vec![
            (h[0], turned(0)),
            (h[5], turned(5)),
            (h[2], turned(2)),
            (h[5], turned(7)),
            (h[8], turned(8)),
            (h[3], a.body(h[3]).unwrap().pose()),
        ];
        a.set_poses(&poses).unwrap();
        for &(x, p) in &poses {
            b.set_pose(x, p).unwrap();
        }
        assert_eq!(state(&a), state(&b));
        assert_eq!(a.body(h[5]).unwrap().pose(), turned(7));
        let contacts = steps(&mut a);
        assert_eq!(contacts, steps(&mut b));
        assert!(contacts.contains("Contact"), "the steps must collide: {contacts}");
    }

    #[test]
    fn a_body_set_back_to_its_pose_within_one_call_ends_there() {
        let (mut w, h) = world();
        let now = w.body(h[1]).unwrap().pose();
        let placed = w.frame(FrameId { body: h[1], index: 0 }).unwrap();
        // The second entry equals the body as it was before the call, not
        // as the first entry left it: it must be applied.
        w.set_poses(&[(h[1], turned(4)), (h[1], now)]).unwrap();
        assert_eq!(w.body(h[1]).unwrap().pose(), now);
        assert_eq!(w.frame(FrameId { body: h[1], index: 0 }).unwrap(), placed);
    }

    #[test]
    fn unchanged_poses_change_no_answer() {
        let (mut a, h) = world();
        a.step(0.5).unwrap();
        let mut b = a.clone();
        let same: Vec<_> = h.iter().map(|&x| (x, a.body(x).unwrap().pose())).collect();
        a.set_poses(&same).unwrap();
        assert_eq!(state(&a), state(&b));
        assert_eq!(steps(&mut a), steps(&mut b));
    }

    /// The verdict of placing every frame and comparing it with the store
    /// (the check `set_poses` skips for an entry found unchanged).
    fn placed_and_compared(w: &World3, h: BodyHandle, pose: &Pose3) -> bool {
        let body = w.body(h).unwrap();
        let at = &w.slots[h.index as usize].stored.as_ref().unwrap().at;
        let store = w.broad.store(body.motion());
        body.motion() == Motion::Moving
            && body.angular_velocity() == [0.0; 3]
            && same_pose(&body.pose(), pose)
            && body.frames().iter().zip(at).enumerate().all(|(index, (f, &i))| {
                let p = placed_frame(pose, f, index).unwrap();
                same_frame(&store.frames[i as usize], &p)
            })
    }

    #[test]
    fn the_quick_check_agrees_with_placing_and_comparing() {
        let (mut w, h) = world();
        // One more body, turning; then steps that move the moving bodies
        // (their placed frames translated step by step), and a step at rest.
        let spinner = Body::moving(vec![Frame3::from_aabb([0.0, 3.0, 0.0], [1.0, 4.0, 1.0]).unwrap()])
            .with_angular_velocity([0.0, 0.0, 1.0]);
        let mut h = h;
        h.push(w.insert(spinner).unwrap());
        for k in [1, 5, 6, 9] {
            w.set_velocity(h[k], [0.0; 3]).unwrap(); // never moved
        }
        for _ in 0..3 {
            w.step(0.5).unwrap();
        }
        for &x in &h {
            if w.body(x).unwrap().motion() == Motion::Moving {
                w.set_velocity(x, [0.0; 3]).unwrap();
            }
        }
        w.step(0.5).unwrap();
        // Own poses, and some changed ones.
        let mut poses: Vec<_> = h.iter().map(|&x| (x, w.body(x).unwrap().pose())).collect();
        poses[2].1 = turned(2);
        let want: Vec<bool> = poses.iter().map(|(x, p)| placed_and_compared(&w, *x, p)).collect();
        let mut quick = w.clone();
        quick.set_poses(&poses).unwrap();
        assert_eq!(quick.placed.first.iter().map(Option::is_none).collect::<Vec<_>>(), want);
        assert!(want.iter().filter(|&&s| s).count() >= 4, "some bodies must be found unchanged: {want:?}");
        assert!(want.iter().any(|&s| !s));
        // Bodies set to their own poses and bodies set away and back in
        // one call (every one placed anew) answer the same.
        let mut away = w.clone();
        let far: Vec<_> = h.iter().map(|&x| (x, Pose3::from_translation([50.0, 0.0, 0.0]).unwrap())).collect();
        away.set_poses(&[far, poses.clone()].concat()).unwrap();
        // Every body moved away, then back: each entry placed its frames.
        assert!(away.placed.first.iter().all(Option::is_some));
        assert_eq!(state(&quick), state(&away));
        assert_eq!(steps(&mut quick), steps(&mut away));
    }

    #[test]
    fn the_quick_check_tells_every_difference() {
        // Five bodies at rest on integer coordinates (no round-off), their
        // placed frames then altered in one field each but the last.
        let mut w = World3::new(WorldConfig::default());
        let h: Vec<_> = (0..5)
            .map(|k| {
                let x = 2.0 * k as f64;
                let f = Frame3::from_aabb([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0]).unwrap();
                w.insert(Body::moving(vec![f])).unwrap()
            })
            .collect();
        w.step(0.5).unwrap();
        let at = |w: &World3, k: usize| w.slots[h[k].index as usize].stored.as_ref().unwrap().at[0] as usize;
        let mut alter = |k: usize, change: &dyn Fn(Frame3) -> Frame3| {
            let i = at(&w, k);
            let frames = &mut w.broad.store_mut(Motion::Moving).frames;
            frames[i] = change(frames[i]);
        };
        alter(0, &|mut f| {
            f.translate(&[1.0, 0.0, 0.0]); // the origin (and box, consistently)
            f
        });
        alter(1, &|f| f.moved([1.0, 0.0, 0.0])); // the velocity (and swept box)
        alter(2, &|f| Frame3::new(f.kind(), f.origin(), [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 1.0]]).unwrap());
        alter(3, &|f| f.with_aabb(crate::Aabb { min: f.aabb().min, max: [9.0; 3] })); // the box
        let verdicts: Vec<bool> = (0..5)
            .map(|k| {
                let b = w.body(h[k]).unwrap();
                unchanged_placement(&b.pose(), &b.frames()[0], &w.broad.store(Motion::Moving).frames[at(&w, k)])
            })
            .collect();
        assert_eq!(verdicts, [false, false, false, false, true]);
        let slow: Vec<bool> = (0..5).map(|k| placed_and_compared(&w, h[k], &w.body(h[k]).unwrap().pose())).collect();
        assert_eq!(slow, verdicts);
    }

    #[test]
    fn a_store_frame_moved_by_round_off_is_placed_anew() {
        let (mut w, h) = world();
        // Moving bodies carried by velocities that do not add up exactly,
        // but two.
        w.set_velocity(h[1], [0.0; 3]).unwrap();
        w.set_velocity(h[7], [0.0; 3]).unwrap();
        for _ in 0..5 {
            w.step(0.1).unwrap();
        }
        for &x in &h {
            if w.body(x).unwrap().motion() == Motion::Moving {
                w.set_velocity(x, [0.0; 3]).unwrap();
            }
        }
        let poses: Vec<_> = h.iter().map(|&x| (x, w.body(x).unwrap().pose())).collect();
        let want: Vec<bool> = poses.iter().map(|(x, p)| placed_and_compared(&w, *x, p)).collect();
        let mut a = w.clone();
        a.set_poses(&poses).unwrap();
        assert_eq!(a.placed.first.iter().map(Option::is_none).collect::<Vec<_>>(), want);
        assert!(want.iter().any(|&s| s) && want.iter().any(|&s| !s), "{want:?}");
        // Each placed frame is the body's frame placed at its pose.
        for &x in &h {
            let b = a.body(x).unwrap();
            for (index, f) in b.frames().iter().enumerate() {
                let id = FrameId { body: x, index: index as u32 };
                if b.motion() == Motion::Moving {
                    assert_eq!(a.frame(id).unwrap(), b.pose().transform_frame(f).unwrap());
                }
            }
        }
    }

    #[test]
    fn a_refused_call_changes_nothing() {
        let (mut w, h) = world();
        w.step(0.5).unwrap();
        let stale = h[11];
        w.remove(stale).unwrap();
        let untouched = w.clone();
        let before = state(&w);
        let good: Vec<_> = (0..11).map(|k| (h[k], turned(k))).collect();
        // A stale handle, last.
        let mut poses = good.clone();
        poses.push((stale, turned(1)));
        assert_eq!(w.set_poses(&poses), Err(WorldError::StaleHandle(stale)));
        assert_eq!(state(&w), before);
        // Body 9 carried out of range, last.
        let mut poses = good.clone();
        poses.push((h[9], Pose3::from_translation([1e15, 0.0, 0.0]).unwrap()));
        assert!(matches!(w.set_poses(&poses), Err(WorldError::Frame { index: 0, .. })));
        assert_eq!(state(&w), before);
        // The world steps as one never asked.
        let mut untouched = untouched;
        assert_eq!(steps(&mut w), steps(&mut untouched));
        // And the same poses, valid, are taken.
        w.set_poses(&good).unwrap();
        assert_eq!(w.body(h[10]).unwrap().pose(), turned(10));
    }
}
