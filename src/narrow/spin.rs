//! Frames that rotate within the step: a conservative narrow phase built
//! on FMB (after Jørgensen's and Redon's interval enclosures of rotating
//! motion, with frames instead of intervals).
//!
//! **Motion.** A frame with a [`Spin`] turns at a constant rate about a
//! pivot (its body's reference point) while the pivot moves by the
//! frame's velocity: at instant `t ∈ [0, 1]` of the step, a point `y` of
//! the frame as given (at `t = 0`) is at
//! `pivot + t·v + R(t·ω)·(y − pivot)`, with `R(θ)` the rotation by the
//! angle `|θ|` about `θ`'s direction (2D: by the angle `θ`).
//!
//! **Enclosure.** On a sub-interval `[t₀, t₁]` of the step, the frame
//! turned to the middle angle `R(t_m·ω)` and translated with the pivot is
//! within `ε = ρ·|ω|·(t₁ − t₀)/2` of the true frame at every instant
//! (`ρ`: the largest distance from the pivot to a vertex; a point turned
//! by an angle `α` moves by `2ρ·sin(α/2) ≤ ρ·α`). Moving each face of that
//! frame out by `ε` gives a frame again (a parallelepiped with longer
//! components, or a larger simplex of the same shape) that contains the
//! true frame at every instant of `[t₀, t₁]`, and translates: FMB decides
//! it exactly.
//!
//! **Refinement.** Where the two enclosures never meet, no contact is
//! possible; where they do, the sub-interval shrinks to FMB's interval of
//! the enclosures and is halved until the enclosures are within the
//! tolerance `τ` of the true frames (`(1 + κ)ε` for each frame, `κ`
//! bounding how far a vertex moves when the faces move out by one unit):
//! earliest half first, to the first piece refined to `τ` (the start of
//! the contact); then latest half first from the end, to the last one;
//! the middle between them, where the frames are in contact anyway, is
//! covered by 4 pieces for the box. Pairs without spin take
//! [`intersect`]'s exact answer, bit for bit.
//!
//! **Guarantees** ([`intersect_spinning`]):
//! * no missed contact: every instant at which the true frames' interiors
//!   meet is inside the reported interval, and every point of their
//!   intersection at that instant is inside the reported box;
//! * no false contact beyond `τ`: with `time_within_tolerance`, the true
//!   frames are within `τ` of each other at some instant of the first and
//!   of the last refined piece, each containing an end of the interval;
//!   with `box_within_tolerance`, every piece of the box is within `τ` of
//!   the true frames;
//! * bounded work: at most [`MAX_TESTS`] FMB tests for the ends, plus 4
//!   for the middle; a pair whose refinement is cut short (a rotation of
//!   thousands of turns a step, a tolerance far below the frames' size)
//!   is still reported conservatively, with the flags false.

use super::intersect;
use crate::aabb::Aabb;
use crate::error::FrameError;
use crate::frame::{Frame, FrameKind};
use crate::math::{dot, sub};

/// Most FMB tests [`intersect_spinning`] spends on the ends of a pair's
/// contact (plus 4 for its middle).
pub const MAX_TESTS: usize = 512;

/// Deepest halving of the step (sub-intervals of `2⁻³⁰` of it).
const MAX_DEPTH: u32 = 30;

/// A rotation at a constant rate over the step about a pivot that moves
/// with the frame: at instant `t ∈ [0, 1]` of the step, a point `y` of
/// the frame as given (at `t = 0`) is at `pivot + t·v + R(t·ω)·(y −
/// pivot)`, `v` the frame's velocity, `R(θ)` the rotation by the angle
/// `|θ|` about `θ`'s direction (2D: by the angle `θ`). Build one
/// with [`Spin::<2>::new`](Spin#impl-Spin<2>) (an angle per step) or
/// [`Spin::<3>::new`](Spin#impl-Spin<3>) (a rotation vector per step:
/// axis times angle).
///
/// ```
/// use fmbgrid::{Frame2, Spin};
/// // A unit square turning a quarter turn about its centre over the step.
/// let square = Frame2::from_aabb([-0.5, -0.5], [0.5, 0.5])?;
/// let spin = Spin::<2>::new([0.0, 0.0], std::f64::consts::FRAC_PI_2)?;
/// let half_way = spin.frame_at(&square, 0.5)?; // turned by 45°
/// assert!((half_way.aabb().max[0] - 0.5f64.sqrt()).abs() < 1e-12);
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spin<const D: usize> {
    pivot: [f64; D],
    /// The rotation over the whole step as a rotation vector (2D: only the
    /// last coordinate, about the axis out of the plane).
    rate: [f64; 3],
}

impl Spin<2> {
    /// A turn by `angle` radians over the step (counter-clockwise when
    /// positive) about `pivot` (where the pivot is at `t = 0`).
    ///
    /// # Errors
    /// [`FrameError::NonFinite`] or [`FrameError::TooLarge`] for a pivot or
    /// an angle that is not a finite number within ±1e15.
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert!(Spin::<2>::new([0.0; 2], f64::NAN).is_err());
    /// ```
    pub fn new(pivot: [f64; 2], angle: f64) -> Result<Self, FrameError> {
        check("spin pivot", &pivot)?;
        check("spin angle", &[angle])?;
        Ok(Spin { pivot, rate: [0.0, 0.0, angle] })
    }
}

impl Spin<3> {
    /// A turn by `|rotation|` radians over the step about the axis along
    /// `rotation` (right-handed) through `pivot` (where the pivot is at
    /// `t = 0`).
    ///
    /// # Errors
    /// [`FrameError::NonFinite`] or [`FrameError::TooLarge`] for a pivot or
    /// a rotation that is not finite within ±1e15.
    ///
    /// ```
    /// use fmbgrid::{Frame3, Spin};
    /// let spin = Spin::<3>::new([0.0; 3], [0.0, 0.0, std::f64::consts::PI])?; // half a turn about z
    /// let f = spin.frame_at(&Frame3::from_aabb([1.0, 0.0, 0.0], [2.0, 1.0, 1.0])?, 1.0)?;
    /// assert!((f.aabb().min[0] + 2.0).abs() < 1e-12);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn new(pivot: [f64; 3], rotation: [f64; 3]) -> Result<Self, FrameError> {
        check("spin pivot", &pivot)?;
        check("spin rotation", &rotation)?;
        Ok(Spin { pivot, rate: rotation })
    }
}

impl<const D: usize> Spin<D> {
    /// A spin from its parts, already checked (the world's: a body's
    /// reference point and its angular velocity times the time step).
    pub(crate) fn from_parts(pivot: [f64; D], rate: [f64; 3]) -> Self {
        Spin { pivot, rate }
    }

    /// The pivot, where it is at the start of the step.
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert_eq!(Spin::<2>::new([1.0, 2.0], 0.5)?.pivot(), [1.0, 2.0]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn pivot(&self) -> [f64; D] {
        self.pivot
    }

    /// The turn over the whole step as a rotation vector (axis times
    /// angle; 2D: `[0, 0, angle]`).
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert_eq!(Spin::<2>::new([0.0; 2], 0.5)?.rotation(), [0.0, 0.0, 0.5]);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn rotation(&self) -> [f64; 3] {
        self.rate
    }

    /// The turn's angle over the whole step, radians.
    ///
    /// ```
    /// use fmbgrid::Spin;
    /// assert_eq!(Spin::<3>::new([0.0; 3], [0.0, 3.0, 4.0])?.angle(), 5.0);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn angle(&self) -> f64 {
        dot(&self.rate, &self.rate).sqrt()
    }

    /// `f` (moving by its velocity) where it is at instant `t` of the step
    /// under this spin, at rest: the exact pose of the motion model.
    ///
    /// # Errors
    /// The frame's errors, for a pose the frame cannot take (beyond the
    /// range rule).
    ///
    /// ```
    /// use fmbgrid::{Frame2, Spin};
    /// let f = Frame2::from_aabb([1.0, -0.5], [2.0, 0.5])?.with_velocity([0.0, 3.0])?;
    /// let spin = Spin::<2>::new([0.0, 0.0], std::f64::consts::PI)?;
    /// let end = spin.frame_at(&f, 1.0)?; // turned half a turn about the pivot, which moved by 3 along y
    /// assert!((end.aabb().min[0] + 2.0).abs() < 1e-12 && (end.aabb().max[1] - 3.5).abs() < 1e-12);
    /// # Ok::<(), fmbgrid::FrameError>(())
    /// ```
    pub fn frame_at(&self, f: &Frame<D>, t: f64) -> Result<Frame<D>, FrameError> {
        self.turned(f, t, t, 0.0)
    }

    /// True when the spin turns by no angle.
    pub(crate) fn is_still(&self) -> bool {
        self.rate == [0.0; 3]
    }

    /// `v` turned by `R(t·ω)`.
    pub(crate) fn rotate(&self, v: &[f64; D], t: f64) -> [f64; D] {
        let (s, c) = if D == 2 { (t * self.rate[2]).sin_cos() } else { (t * self.angle()).sin_cos() };
        if D == 2 {
            return std::array::from_fn(|k| if k == 0 { c * v[0] - s * v[1] } else { s * v[0] + c * v[1] });
        }
        let n = self.angle();
        if n == 0.0 {
            return *v;
        }
        // Rodrigues: v cos + (u × v) sin + u (u·v)(1 − cos).
        let u: [f64; 3] = self.rate.map(|x| x / n);
        let w: [f64; 3] = std::array::from_fn(|k| v[k]);
        let x = crate::math::cross(&u, &w);
        let ud = dot(&u, &w) * (1.0 - c);
        std::array::from_fn(|k| w[k] * c + x[k] * s + u[k] * ud)
    }

    /// The frame turned to the angle of instant `turn`, its pivot where it
    /// is at instant `start`, translating with the velocity over `span` of
    /// the step (at rest for `span = 0`).
    fn turned(&self, f: &Frame<D>, turn: f64, start: f64, span: f64) -> Result<Frame<D>, FrameError> {
        let v = f.velocity();
        let (origin, comps) = if self.is_still() {
            // Not through the pivot: `pivot + (o − pivot)` is not `o`.
            (std::array::from_fn(|k| f.origin()[k] + start * v[k]), f.components())
        } else {
            let arm = self.rotate(&sub(&f.origin(), &self.pivot), turn);
            let origin = std::array::from_fn(|k| self.pivot[k] + start * v[k] + arm[k]);
            (origin, f.components().map(|c| self.rotate(&c, turn)))
        };
        let g = Frame::new(f.kind(), origin, comps)?;
        if span == 0.0 { Ok(g) } else { g.with_velocity(v.map(|x| x * span)) }
    }

    /// The largest distance from the pivot to a vertex of `f` (as given,
    /// at `t = 0`; the pivot moves with the frame, so it stays).
    fn radius(&self, f: &Frame<D>) -> f64 {
        f.vertices().map(|p| dot(&sub(&p, &self.pivot), &sub(&p, &self.pivot))).fold(0.0, f64::max).sqrt()
    }
}

/// A box containing frame `f` (moving by its velocity) at every instant
/// of the step under `spin`: the smaller, axis by axis, of the ball of
/// its reach about the moving pivot and the union of its enclosures on
/// up to 8 pieces of the step (one per half radian of turn).
pub(crate) fn swept_aabb<const D: usize>(f: &Frame<D>, spin: &Spin<D>) -> Aabb<D> {
    if spin.is_still() {
        return f.aabb();
    }
    let m = Mover::new(f, spin);
    let ball = swept_box(&m, 0.0, 1.0);
    let pieces = (spin.angle() / 0.5).ceil().clamp(1.0, 8.0) as usize;
    let mut union = Aabb::EMPTY;
    for k in 0..pieces {
        let (t0, t1) = (k as f64 / pieces as f64, (k + 1) as f64 / pieces as f64);
        match m.enclosure(t0, t1) {
            Some(e) => union = union.union(&e.aabb()),
            None => return ball,
        }
    }
    Aabb {
        min: std::array::from_fn(|k| ball.min[k].max(union.min[k])),
        max: std::array::from_fn(|k| ball.max[k].min(union.max[k])),
    }
}

fn check<const N: usize>(what: &'static str, v: &[f64; N]) -> Result<(), FrameError> {
    for &value in v {
        if !value.is_finite() {
            return Err(FrameError::NonFinite { what, value });
        }
        if value.abs() > crate::frame::MAX_COORDINATE {
            return Err(FrameError::TooLarge { what, value, limit: crate::frame::MAX_COORDINATE });
        }
    }
    Ok(())
}

/// What [`intersect_spinning`] reports: a conservative interval and box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpinContact<const D: usize> {
    /// Contains every instant at which the frames' interiors meet.
    pub time: [f64; 2],
    /// Contains every point of the frames' intersection over the step.
    pub aabb: Aabb<D>,
    /// True when both ends of `time` were refined to the tolerance: the
    /// frames come within it of touching at each end (always for pairs
    /// without spin, whose answer is FMB's, exact).
    pub time_within_tolerance: bool,
    /// True when the whole box was refined to the tolerance too (the
    /// middle of a long contact of a fast turn may take more than the work
    /// bound: its box is then that of coarser enclosures).
    pub box_within_tolerance: bool,
}

/// One frame's motion over the step, with the constants of its enclosure.
struct Mover<'a, const D: usize> {
    frame: &'a Frame<D>,
    spin: &'a Spin<D>,
    /// `ρ·|ω|`: how far the frame can stray from its mid-angle pose, per
    /// unit of time away from the middle (times two).
    sway: f64,
    /// `κ`: how far a vertex moves when every face moves out by one.
    kappa: f64,
    /// The round-off of a turned frame's coordinates: a few ulps of the
    /// largest number that goes into them.
    slack: f64,
}

impl<'a, const D: usize> Mover<'a, D> {
    fn new(frame: &'a Frame<D>, spin: &'a Spin<D>) -> Self {
        let radius = spin.radius(frame);
        let sway = if spin.is_still() { 0.0 } else { radius * spin.angle() };
        let big = |v: [f64; D]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let size = frame.aabb().extent().iter().fold(0.0_f64, |m, x| m.max(*x));
        let scale = big(spin.pivot) + big(frame.origin()) + big(frame.velocity()) + radius * (1.0 + spin.angle());
        let slack = 1e-12 * size + 16.0 * f64::EPSILON * scale;
        Mover { frame, spin, sway, kappa: corner_factor(frame), slack }
    }

    /// How far the enclosure on a sub-interval of length `span` strays from
    /// the true frame: `(1 + κ)·ε`.
    fn error(&self, span: f64) -> f64 {
        (1.0 + self.kappa) * self.offset(span)
    }

    /// `ε` on a sub-interval of length `span`, with a relative margin for
    /// the round-off of the turned frame.
    fn offset(&self, span: f64) -> f64 {
        if self.sway == 0.0 {
            return 0.0;
        }
        0.5 * self.sway * span * (1.0 + 1e-12) + self.slack
    }

    /// The frame enclosing this one on `[t0, t1]`, as a frame translating
    /// over `[0, 1]`; `None` when it is not a valid frame (beyond the range
    /// rule).
    fn enclosure(&self, t0: f64, t1: f64) -> Option<Frame<D>> {
        let turned = self.spin.turned(self.frame, 0.5 * (t0 + t1), t0, t1 - t0).ok()?;
        if self.sway == 0.0 {
            return Some(turned);
        }
        grown(&turned, self.offset(t1 - t0))
    }
}

/// `f` with every face moved out by `e`: a parallelepiped's components
/// lengthened, a simplex enlarged about the point its faces move away
/// from evenly.
fn grown<const D: usize>(f: &Frame<D>, e: f64) -> Option<Frame<D>> {
    let (inv, c, o) = (f.inv(), f.components(), f.origin());
    // Face `i` moves out by `e` in the local coordinate `Xᵢ` when `Xᵢ`
    // changes by `e·|nᵢ|` (`nᵢ` the row of `C⁻¹`).
    let a: [f64; D] = std::array::from_fn(|i| e * dot(&inv[i], &inv[i]).sqrt());
    let shift: [f64; D] = std::array::from_fn(|k| (0..D).map(|i| a[i] * c[i][k]).sum());
    let origin = std::array::from_fn(|k| o[k] - shift[k]);
    let comps = match f.kind() {
        FrameKind::Cuboid => std::array::from_fn(|i| c[i].map(|x| x * (1.0 + 2.0 * a[i]))),
        FrameKind::Tetrahedron => {
            let s: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum());
            let k = 1.0 + e * dot(&s, &s).sqrt() + a.iter().sum::<f64>();
            c.map(|ci| ci.map(|x| x * k))
        }
    };
    Frame::new(f.kind(), origin, comps).ok()?.with_velocity(f.velocity()).ok()
}

/// `κ`: the largest distance a vertex moves when every face of `f` moves
/// out by one (see [`grown`]).
fn corner_factor<const D: usize>(f: &Frame<D>) -> f64 {
    let (inv, c) = (f.inv(), f.components());
    let len = |v: &[f64; D]| dot(v, v).sqrt();
    let spread: f64 = (0..D).map(|i| len(&inv[i]) * len(&c[i])).sum();
    match f.kind() {
        FrameKind::Cuboid => spread,
        FrameKind::Tetrahedron => {
            let s: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum());
            let longest = c.iter().map(len).fold(0.0, f64::max);
            spread + (len(&s) + (0..D).map(|i| len(&inv[i])).sum::<f64>()) * longest
        }
    }
}

/// The intersection of `a` and `b` when either turns within the step
/// (`spin_a`, `spin_b`; each frame also translates by its velocity): a
/// conservative interval and box, refined until the enclosures are within
/// `tolerance` (a length) of the true frames. With no spin on either
/// side, FMB's exact [`intersect`], bit for bit. Symmetric in its
/// arguments up to round-off of the enclosures (both orders are
/// conservative).
///
/// Method: on a sub-interval of the step, each frame turned to the middle
/// angle and grown by how far the turn can take it from there encloses
/// the true frame throughout and translates, so FMB decides it exactly;
/// sub-intervals where the enclosures meet are halved until they are
/// within `tolerance`, from the start to the first contact and from the
/// end to the last.
///
/// Guarantees:
/// * no missed contact: every instant at which the true frames' interiors
///   meet is inside `time`, and every point of their intersection then is
///   inside `aabb`;
/// * with `time_within_tolerance`, the true frames come within
///   `tolerance` of each other near each end of `time` (in its first and
///   last refined pieces); with `box_within_tolerance`, `aabb` is within
///   `tolerance` of the true swept intersection's box too;
/// * bounded work: at most [`MAX_TESTS`] FMB tests, plus 4; a pair cut
///   short (thousands of turns a step, a tolerance far below the frames'
///   size) is still reported conservatively, with the flags false.
///
/// # Errors
/// [`FrameError::BadTolerance`] for a tolerance that is not a positive
/// finite length.
///
/// ```
/// use fmbgrid::{Frame2, Spin, intersect_spinning};
/// // A blade 4 long, turning a quarter turn about its end, sweeps a plate
/// // standing at 45° that its ends never touch at the start or the end.
/// let blade = Frame2::from_aabb([0.0, -0.05], [4.0, 0.05])?;
/// let plate = Frame2::oriented_box([2.0, 2.0], [0.05, 0.3], [[0.7071, -0.7071], [0.7071, 0.7071]])?;
/// let spin = Spin::<2>::new([0.0, 0.0], std::f64::consts::FRAC_PI_2)?;
/// let still = Spin::<2>::new([0.0, 0.0], 0.0)?;
/// assert!(fmbgrid::intersect(&blade, &plate).is_none()); // not at rest
/// let hit = intersect_spinning(&blade, &spin, &plate, &still, 1e-3)?.unwrap();
/// assert!(hit.time[0] < 0.5 && hit.time[1] > 0.5); // at 45°, half-way
/// # Ok::<(), fmbgrid::FrameError>(())
/// ```
pub fn intersect_spinning<const D: usize>(
    a: &Frame<D>,
    spin_a: &Spin<D>,
    b: &Frame<D>,
    spin_b: &Spin<D>,
    tolerance: f64,
) -> Result<Option<SpinContact<D>>, FrameError> {
    if !(tolerance > 0.0 && tolerance.is_finite()) {
        return Err(FrameError::BadTolerance { value: tolerance });
    }
    if spin_a.is_still() && spin_b.is_still() {
        return Ok(intersect(a, b).map(|i| SpinContact {
            time: i.time,
            aabb: i.aabb,
            time_within_tolerance: true,
            box_within_tolerance: true,
        }));
    }
    let pair = Pair { a: Mover::new(a, spin_a), b: Mover::new(b, spin_b), tolerance, tests: 0 };
    Ok(pair.contact())
}

/// Pieces of the step in which the interiors may meet, found by
/// [`Pair::first_piece`]: where, the box there, and whether refined to the
/// tolerance.
#[derive(Clone, Copy)]
struct Piece<const D: usize> {
    time: [f64; 2],
    aabb: Aabb<D>,
    fine: bool,
}

/// Two moving frames, the tolerance and the work spent.
struct Pair<'a, const D: usize> {
    a: Mover<'a, D>,
    b: Mover<'a, D>,
    tolerance: f64,
    tests: usize,
}

impl<const D: usize> Pair<'_, D> {
    /// The first contact piece from the start, the last from the end,
    /// and the middle between them in at most [`MIDDLE_PIECES`] pieces.
    fn contact(mut self) -> Option<SpinContact<D>> {
        let first = self.first_piece(0.0, 1.0, false)?;
        let last = self.first_piece(first.time[1], 1.0, true).unwrap_or(first);
        let mut aabb = first.aabb.union(&last.aabb);
        let mut box_fine = first.fine && last.fine;
        let (from, to) = (first.time[1], last.time[0]);
        if from < to {
            for k in 0..MIDDLE_PIECES {
                let at = |k: usize| from + (to - from) * k as f64 / MIDDLE_PIECES as f64;
                if let Some(p) = self.piece(at(k), at(k + 1)) {
                    aabb = aabb.union(&p.aabb);
                    box_fine &= p.fine;
                }
            }
        }
        let time = [first.time[0].max(0.0), last.time[1].min(1.0)];
        let time_fine = first.fine && last.fine;
        Some(SpinContact { time, aabb, time_within_tolerance: time_fine, box_within_tolerance: box_fine && time_fine })
    }

    /// The enclosures on `[t0, t1]` as one piece, if they meet.
    fn piece(&mut self, t0: f64, t1: f64) -> Option<Piece<D>> {
        let fine = self.error(t1 - t0) <= self.tolerance;
        let (Some(ea), Some(eb)) = (self.a.enclosure(t0, t1), self.b.enclosure(t0, t1)) else {
            // Beyond the range rule: nothing exact to say on this piece.
            let aabb = swept_box(&self.a, t0, t1).intersection(&swept_box(&self.b, t0, t1))?;
            return Some(Piece { time: [t0, t1], aabb, fine: false });
        };
        self.tests += 1;
        let i = intersect(&ea, &eb)?;
        let at = |s: f64| t0 + s * (t1 - t0);
        Some(Piece { time: [at(i.time[0]), at(i.time[1])], aabb: i.aabb, fine })
    }

    /// `(1 + κ)ε` of both frames on a sub-interval of length `span`.
    fn error(&self, span: f64) -> f64 {
        self.a.error(span) + self.b.error(span)
    }

    /// The earliest (or, `backward`, the latest) piece of `[t0, t1]` where
    /// the enclosures meet, refined to the tolerance (halving only where
    /// the enclosures meet, earliest or latest half first), unless the
    /// work bound or the depth stops it first; `None` when they never
    /// meet.
    fn first_piece(&mut self, t0: f64, t1: f64, backward: bool) -> Option<Piece<D>> {
        let mut stack = [(t0, t1, 0_u32); MAX_DEPTH as usize + 2];
        let mut len = 1;
        while len > 0 {
            len -= 1;
            let (t0, t1, depth) = stack[len];
            if self.error(t1 - t0) <= self.tolerance || depth >= MAX_DEPTH || self.tests >= MAX_TESTS {
                if let Some(p) = self.piece(t0, t1) {
                    return Some(p);
                }
                continue;
            }
            let Some(p) = self.piece(t0, t1) else { continue };
            // Only where the enclosures meet, halved; the half to search
            // first on top.
            let [u0, u1] = p.time;
            let mid = 0.5 * (u0 + u1);
            let (early, late) = ((u0, mid, depth + 1), (mid, u1, depth + 1));
            (stack[len], stack[len + 1]) = if backward { (early, late) } else { (late, early) };
            len += 2;
        }
        None
    }
}

/// Pieces the middle of a contact (between its first and last refined
/// pieces) is covered by, for its box.
const MIDDLE_PIECES: usize = 4;

/// The box of the frame over `[t0, t1]` from its enclosure's vertices, or
/// (when not even that frame can be built) from the frame's reach around
/// its pivot: a fallback for poses beyond the range rule.
fn swept_box<const D: usize>(m: &Mover<'_, D>, t0: f64, t1: f64) -> Aabb<D> {
    let v = m.frame.velocity();
    // Rounding: the turned points are within a few ulps of the sphere.
    let r = m.spin.radius(m.frame) * (1.0 + 1e-12);
    let at = |t: f64| -> [f64; D] { std::array::from_fn(|k| m.spin.pivot[k] + t * v[k]) };
    let (p, q) = (at(t0), at(t1));
    Aabb { min: std::array::from_fn(|k| p[k].min(q[k]) - r), max: std::array::from_fn(|k| p[k].max(q[k]) + r) }
}
