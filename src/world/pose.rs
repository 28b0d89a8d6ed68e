//! Poses: invertible affine maps placing a body's frames in the world, and
//! [`World::set_poses`], which re-poses many bodies at once, all or nothing.

use super::{BodyHandle, Motion, Slot, World, placed_frame};
use crate::error::WorldError;
use crate::frame::{Frame, MAX_COORDINATE, MIN_HADAMARD_RATIO};
use crate::math::{add, invert_columns, norm};

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
        let mut placed = std::mem::take(&mut self.placed);
        let result = self.repose_all(poses, &mut placed);
        self.placed = placed;
        result
    }

    /// [`World::set_poses`] with the buffer of the placed frames.
    fn repose_all(&mut self, poses: &[(BodyHandle, Pose<D>)], placed: &mut Vec<Frame<D>>) -> Result<(), WorldError> {
        // 1. Check: every handle live, every frame valid at its pose.
        placed.clear();
        for (handle, pose) in poses {
            for (index, f) in self.stored(*handle)?.body.frames.iter().enumerate() {
                placed.push(placed_frame(pose, f, index)?);
            }
        }
        // 2. Apply: nothing can fail from here on (the slots do not change).
        let Self { slots, broad, .. } = self;
        let mut next = 0;
        for &(handle, pose) in poses {
            let Some(Slot { stored: Some(stored), .. }) = slots.get_mut(handle.index as usize) else {
                unreachable!("body {handle} was found live above");
            };
            let frames = &placed[next..next + stored.at.len()];
            next += stored.at.len();
            let motion = stored.body.motion;
            let store = broad.store_mut(motion);
            // Compared with the store as it is now (an earlier entry may
            // have moved the same body).
            let unchanged = motion == Motion::Moving
                && stored.body.angular_velocity == [0.0; 3]
                && same_pose(&stored.body.pose, &pose)
                && stored.at.iter().zip(frames).all(|(&i, f)| same_frame(&store.frames[i as usize], f));
            if unchanged {
                continue;
            }
            stored.body.pose = pose;
            for (&i, f) in stored.at.iter().zip(frames) {
                store.frames[i as usize] = *f;
            }
            broad.reposed(motion, stored.at.first().copied());
        }
        self.debug_validate();
        Ok(())
    }
}

fn bits<const D: usize>(v: &[f64; D]) -> [u64; D] {
    v.map(f64::to_bits)
}

/// The same pose, bit for bit.
fn same_pose<const D: usize>(a: &Pose<D>, b: &Pose<D>) -> bool {
    bits(&a.translation) == bits(&b.translation) && a.linear.iter().zip(&b.linear).all(|(x, y)| bits(x) == bits(y))
}

/// The same frame, bit for bit (its other fields derive from these).
fn same_frame<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
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
    use crate::{Body, BodyHandle, Frame3, FrameId, Pose3, World3, WorldConfig, WorldError};

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
