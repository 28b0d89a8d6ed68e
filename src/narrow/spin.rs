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
//! **Enclosure.** On a sub-interval `[t₀, t₁]` of the step, with `h =
//! |ω|·(t₁ − t₀)/2`, the frame turned to the middle angle `R(t_m·ω)`,
//! whose reference point moves in a straight line from where it is at
//! `t₀` to where it is at `t₁`, is within `ε` of the true frame at every
//! instant. Two reference points, whichever gives the smaller `ε`:
//! * the pivot, which moves in a straight line anyway: `ε = ρ·h` (`ρ` the
//!   largest distance from the pivot to a vertex; a point turned by an
//!   angle `α` moves by `2ρ·sin(α/2) ≤ ρ·α`);
//! * the frame's own centre, along the chord of its arc: `ε = r·h +
//!   d·(h²/2 + h³/6)` (`r` the largest distance from the centre to a
//!   vertex, `d` the centre's distance from the axis; the arc strays from
//!   its chord at the same instant by at most `d·(1 − cos h)` across and
//!   `d·(h − sin h)` along it): far better for a frame far from its
//!   body's reference point, a tetrahedron of a mesh.
//!
//! Moving each face of that frame out by `ε` gives a frame again (a
//! parallelepiped with longer components, or a larger simplex of the same
//! shape) that contains the true frame at every instant of `[t₀, t₁]`,
//! and translates: FMB decides it exactly. It is within `(1 + κ)·ε` of
//! the true frame (`κ·ε`: the farthest a vertex moves when the faces move
//! out by `ε`).
//!
//! **Refinement.** Where the two enclosures never meet, no contact is
//! possible; where they do, the sub-interval shrinks to FMB's interval of
//! the enclosures (FMB's interval alone, without the exact box) and is
//! halved until the enclosures are within the tolerance `τ` of the true
//! frames: earliest half first, to the first piece refined to `τ` (the
//! start of the contact); then latest half first from the end, to the
//! last one; the middle between them, where the frames are in contact
//! anyway, is covered by 4 pieces for the box. When the true frames
//! already overlap at an end of the step (FMB on the exact poses there),
//! that end is an end of the contact: its piece is the first power-of-two
//! fraction of the step refined to `τ`, found with one test instead of a
//! search. Pairs without spin take [`intersect`]'s exact answer, bit for
//! bit.
//!
//! **Guarantees** ([`intersect_spinning`]):
//! * no missed contact: every instant at which the true frames' interiors
//!   meet is inside the reported interval, and every point of their
//!   intersection at that instant is inside the reported box;
//! * no false contact beyond `τ`: with `time_within_tolerance`, the true
//!   frames are within `τ` of each other at some instant of the first and
//!   of the last refined piece, each containing an end of the interval;
//!   with `box_within_tolerance`, every piece of the box is the exact box
//!   of two enclosures that are each within `τ` of their true frame (the
//!   box of the true intersection can be smaller still where faces meet
//!   at a grazing angle);
//! * bounded work: at most [`MAX_TESTS`] FMB tests search for the ends;
//!   once they are spent, each piece still pending is tested once (at
//!   most 33), plus the tests at the step's end (2) and the middle (4); a
//!   pair whose search is cut short (a rotation of thousands of turns a
//!   step, a tolerance far below the frames' size) is still reported
//!   conservatively, with the flags false.

use super::{intersect, overlap_interval, overlaps};
use crate::aabb::Aabb;
use crate::error::FrameError;
use crate::frame::{Frame, FrameKind};
use crate::math::{dot, norm, sub};

/// Most FMB tests [`intersect_spinning`] spends searching for the ends of
/// a pair's contact (then at most 39 more: the pieces still pending, the
/// step's end and the contact's middle).
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
        let origin = if self.is_still() {
            // Not through the pivot: `pivot + (o − pivot)` is not `o`.
            std::array::from_fn(|k| f.origin()[k] + t * f.velocity()[k])
        } else {
            self.carry(&f.origin(), &f.velocity(), t)
        };
        let turn = self.matrix(t);
        Frame::new(f.kind(), origin, f.components().map(|c| apply(&turn, &c)))
    }

    /// True when the spin turns by no angle.
    pub(crate) fn is_still(&self) -> bool {
        self.rate == [0.0; 3]
    }

    /// `v` turned by `R(t·ω)` (as [`Spin::frame_at`] turns a frame's
    /// components, bit for bit).
    pub(crate) fn rotate(&self, v: &[f64; D], t: f64) -> [f64; D] {
        apply(&self.matrix(t), v)
    }

    /// The rotation `R(t·ω)` as a matrix of rows, for turning many vectors
    /// by the same angle (one `sin_cos` for all of them).
    fn matrix(&self, t: f64) -> [[f64; D]; D] {
        if D == 2 {
            let (s, c) = (t * self.rate[2]).sin_cos();
            return std::array::from_fn(|k| std::array::from_fn(|j| [[c, -s], [s, c]][k][j]));
        }
        let n = self.angle();
        if n == 0.0 {
            return std::array::from_fn(|k| std::array::from_fn(|j| if j == k { 1.0 } else { 0.0 }));
        }
        // Rodrigues: R = cos·I + sin·[u]× + (1 − cos)·u uᵀ.
        let (s, c) = (t * n).sin_cos();
        let u: [f64; 3] = self.rate.map(|x| x / n);
        let cross = [[0.0, -u[2], u[1]], [u[2], 0.0, -u[0]], [-u[1], u[0], 0.0]];
        std::array::from_fn(|k| {
            std::array::from_fn(|j| (if j == k { c } else { 0.0 }) + s * cross[k][j] + (1.0 - c) * u[k] * u[j])
        })
    }

    /// Where `point` (of the frame as given, at `t = 0`) is at instant `t`.
    fn carry(&self, point: &[f64; D], velocity: &[f64; D], t: f64) -> [f64; D] {
        let arm = apply(&self.matrix(t), &sub(point, &self.pivot));
        std::array::from_fn(|k| self.pivot[k] + t * velocity[k] + arm[k])
    }
}

/// `m · v` for a matrix of rows.
fn apply<const D: usize>(m: &[[f64; D]; D], v: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|k| dot(&m[k], v))
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
    /// `|ω|`: the angle turned over the whole step.
    angle: f64,
    /// The frame's centre (the mean of its vertices) at `t = 0`.
    centre: [f64; D],
    /// The largest distance from the pivot to a vertex.
    pivot_radius: f64,
    /// The largest distance from the centre to a vertex.
    centre_radius: f64,
    /// The centre's distance from the axis of the turn through the pivot.
    arm: f64,
    /// `|nᵢ|`, the rows of `C⁻¹`, and for a simplex `|Σ nᵢ|`: turning the
    /// frame keeps them.
    row_norms: [f64; D],
    row_sum_norm: f64,
    /// `κ`: how far a vertex moves when every face moves out by one.
    kappa: f64,
    /// The round-off of a turned frame's coordinates: a few ulps of the
    /// largest number that goes into them.
    slack: f64,
}

impl<'a, const D: usize> Mover<'a, D> {
    fn new(frame: &'a Frame<D>, spin: &'a Spin<D>) -> Self {
        let vertices = frame.vertex_count() as f64;
        let centre = frame.vertices().fold([0.0; D], |c, v| std::array::from_fn(|k| c[k] + v[k] / vertices));
        let farthest = |q: &[f64; D]| frame.vertices().map(|v| norm(&sub(&v, q))).fold(0.0, f64::max);
        let (pivot_radius, centre_radius) = (farthest(&spin.pivot), farthest(&centre));
        let arm = sub(&centre, &spin.pivot);
        let arm = if D == 2 {
            norm(&arm)
        } else {
            // The part of the arm across the axis (none along it turns).
            let n = spin.angle();
            let along = if n == 0.0 { 0.0 } else { (0..D).map(|k| arm[k] * spin.rate[k] / n).sum::<f64>() };
            (dot(&arm, &arm) - along * along).max(0.0).sqrt()
        };
        let inv = frame.inv();
        let row_norms = inv.map(|row| norm(&row));
        let row_sum_norm = norm::<D>(&std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum::<f64>()));
        let big = |v: [f64; D]| v.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        let size = frame.aabb().extent().iter().fold(0.0_f64, |m, x| m.max(*x));
        let scale = big(spin.pivot) + big(frame.origin()) + big(frame.velocity()) + pivot_radius * (1.0 + spin.angle());
        let slack = 1e-12 * size + 16.0 * f64::EPSILON * scale;
        let kappa = corner_factor(frame, &row_norms, row_sum_norm);
        Mover {
            frame,
            spin,
            angle: spin.angle(),
            centre,
            pivot_radius,
            centre_radius,
            arm,
            row_norms,
            row_sum_norm,
            kappa,
            slack,
        }
    }

    /// How far the enclosure on a sub-interval of length `span` strays from
    /// the true frame: `(1 + κ)·ε`.
    fn error(&self, span: f64) -> f64 {
        (1.0 + self.kappa) * self.reference(span).1
    }

    /// Which point the enclosure on a sub-interval of length `span` follows
    /// (true: the frame's centre, along the chord of its arc; false: the
    /// pivot, along its straight path), and its `ε` there, with a relative
    /// margin and the round-off of the turned frame: the smaller of
    /// * about the pivot, `ρ_pivot·h` (`h = |ω|·span/2`, a point turned by
    ///   at most `h` from the middle angle moves by at most `ρ·h`);
    /// * about the centre, `ρ_centre·h` plus how far the centre's arc
    ///   strays from its chord at the same instant: `arm·((1 − cos h) + (h
    ///   − sin h)) ≤ arm·(h²/2 + h³/6)` (across the chord, then along it).
    fn reference(&self, span: f64) -> (bool, f64) {
        if self.angle == 0.0 {
            return (false, 0.0);
        }
        let h = 0.5 * self.angle * span;
        let about_pivot = self.pivot_radius * h;
        let about_centre = self.centre_radius * h + self.arm * h * h * (0.5 + h / 6.0);
        let (centred, eps) = if about_centre < about_pivot { (true, about_centre) } else { (false, about_pivot) };
        (centred, eps * (1.0 + 1e-12) + self.slack)
    }

    /// The frame enclosing this one on `[t0, t1]`, as a frame translating
    /// over `[0, 1]`: turned to the middle angle, its reference point (see
    /// [`Mover::reference`]) moving in a straight line from where it is at
    /// `t0` to where it is at `t1`, every face moved out by `ε`; `None`
    /// when it is not a valid frame (beyond the range rule).
    fn enclosure(&self, t0: f64, t1: f64) -> Option<Frame<D>> {
        let (f, v) = (self.frame, self.frame.velocity());
        let span = t1 - t0;
        if self.angle == 0.0 {
            let origin = std::array::from_fn(|k| f.origin()[k] + t0 * v[k]);
            return Frame::from_inverse(
                f.kind(),
                origin,
                f.components(),
                *f.inv(),
                v.map(|x| x * span),
                f.reach_bound(),
            )
            .ok();
        }
        let (centred, eps) = self.reference(span);
        let (q0, velocity) = if centred {
            let q0 = self.spin.carry(&self.centre, &v, t0);
            (q0, sub(&self.spin.carry(&self.centre, &v, t1), &q0))
        } else {
            (std::array::from_fn(|k| self.spin.pivot[k] + t0 * v[k]), v.map(|x| x * span))
        };
        let q = if centred { self.centre } else { self.spin.pivot };
        let turn = self.spin.matrix(0.5 * (t0 + t1));
        let arm = apply(&turn, &sub(&f.origin(), &q));
        let origin = std::array::from_fn(|k| q0[k] + arm[k]);
        let comps = f.components().map(|c| apply(&turn, &c));
        // (R C)⁻¹ = C⁻¹ Rᵀ: each row of the inverse turns with the frame.
        let inv = f.inv().map(|row| apply(&turn, &row));
        self.grown(origin, comps, inv, eps, velocity)
    }

    /// The frame `(origin, comps, inv)` of this one's kind with every face
    /// moved out by `e`: a parallelepiped's components lengthened, a
    /// simplex enlarged about the point its faces move away from evenly.
    fn grown(
        &self,
        origin: [f64; D],
        mut comps: [[f64; D]; D],
        mut inv: [[f64; D]; D],
        e: f64,
        velocity: [f64; D],
    ) -> Option<Frame<D>> {
        // Face `i` moves out by `e` in the local coordinate `Xᵢ` when `Xᵢ`
        // changes by `e·|nᵢ|`.
        let a: [f64; D] = self.row_norms.map(|n| e * n);
        let origin = std::array::from_fn(|k| origin[k] - (0..D).map(|i| a[i] * comps[i][k]).sum::<f64>());
        let kind = self.frame.kind();
        for i in 0..D {
            let scale = match kind {
                FrameKind::Cuboid => 1.0 + 2.0 * a[i],
                FrameKind::Tetrahedron => 1.0 + e * self.row_sum_norm + a.iter().sum::<f64>(),
            };
            comps[i] = comps[i].map(|x| x * scale);
            inv[i] = inv[i].map(|x| x / scale);
        }
        Frame::from_inverse(kind, origin, comps, inv, velocity, self.frame.reach_bound()).ok()
    }

    /// The frame at rest where it is at instant `t` (exactly, up to
    /// round-off), or `None` beyond the range rule.
    fn pose_at(&self, t: f64) -> Option<Frame<D>> {
        let f = self.frame;
        if t == 0.0 || self.angle == 0.0 {
            return Some(f.at(t));
        }
        let turn = self.spin.matrix(t);
        let origin = self.spin.carry(&f.origin(), &f.velocity(), t);
        let comps = f.components().map(|c| apply(&turn, &c));
        let inv = f.inv().map(|row| apply(&turn, &row));
        Frame::from_inverse(f.kind(), origin, comps, inv, [0.0; D], f.reach_bound()).ok()
    }
}

/// `κ`: the largest distance a vertex of `f` moves when every face moves
/// out by one (see [`Mover::grown`]; any other point of the grown frame
/// moves by a convex combination of its vertices' moves). A
/// parallelepiped's vertex moves by `Σ ±|nᵢ|·cᵢ`; a simplex's origin by
/// `−Σ |nᵢ|·cᵢ` and its vertex `j` by that plus `(|Σ nᵢ| + Σ |nᵢ|)·cⱼ`.
fn corner_factor<const D: usize>(f: &Frame<D>, row_norms: &[f64; D], row_sum_norm: f64) -> f64 {
    let c = f.components();
    let shift: [f64; D] = std::array::from_fn(|k| (0..D).map(|i| row_norms[i] * c[i][k]).sum());
    match f.kind() {
        FrameKind::Cuboid => (0..1usize << D)
            .map(|signs| {
                let v: [f64; D] = std::array::from_fn(|k| {
                    (0..D).map(|i| if signs >> i & 1 == 1 { 1.0 } else { -1.0 } * row_norms[i] * c[i][k]).sum()
                });
                norm(&v)
            })
            .fold(0.0, f64::max),
        FrameKind::Tetrahedron => {
            let grow = row_sum_norm + row_norms.iter().sum::<f64>();
            (0..D).map(|j| norm::<D>(&std::array::from_fn(|k| grow * c[j][k] - shift[k]))).fold(norm(&shift), f64::max)
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
/// angle, translating along the chord of its pivot's or its centre's
/// path, and grown by how far the turn can take it from there encloses
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
///   last refined pieces); with `box_within_tolerance`, every piece of
///   `aabb` is the exact box of enclosures within `tolerance` of the true
///   frames;
/// * bounded work: at most [`MAX_TESTS`] FMB tests, plus 39; a pair cut
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
    /// An end of the step at which the true frames already overlap is an
    /// end of the contact, exactly: its piece needs no search.
    fn contact(mut self) -> Option<SpinContact<D>> {
        let first = match self.overlap_at(0.0) {
            true => self.end_piece(false),
            false => None,
        };
        let first = match first {
            Some(p) => p,
            None => self.first_piece(0.0, 1.0, false)?,
        };
        let last = match self.overlap_at(1.0) {
            true => self.end_piece(true),
            false => None,
        };
        let last = last.or_else(|| self.first_piece(first.time[1], 1.0, true)).unwrap_or(first);
        let mut aabb = first.aabb.union(&last.aabb);
        let mut box_fine = first.fine && last.fine;
        let (from, to) = (first.time[1], last.time[0]);
        if from < to {
            for k in 0..MIDDLE_PIECES {
                let at = |k: usize| from + (to - from) * k as f64 / MIDDLE_PIECES as f64;
                if let Some(p) = self.piece(at(k), at(k + 1), true) {
                    aabb = aabb.union(&p.aabb);
                    box_fine &= p.fine;
                }
            }
        }
        let time = [first.time[0].max(0.0), last.time[1].min(1.0)];
        let time_fine = first.fine && last.fine;
        Some(SpinContact { time, aabb, time_within_tolerance: time_fine, box_within_tolerance: box_fine && time_fine })
    }

    /// True when the true frames' interiors meet at instant `t` (FMB on
    /// the two frames at rest where they are then).
    fn overlap_at(&mut self, t: f64) -> bool {
        let (Some(a), Some(b)) = (self.a.pose_at(t), self.b.pose_at(t)) else { return false };
        self.tests += 1;
        overlaps(&a, &b)
    }

    /// The piece at the start (or, `at_end`, the end) of the step that is
    /// the longest power-of-two fraction of it refined to the tolerance:
    /// the contact's piece there when the frames overlap at that end.
    fn end_piece(&mut self, at_end: bool) -> Option<Piece<D>> {
        let span = (0..=MAX_DEPTH).map(|k| 0.5_f64.powi(k as i32)).find(|&s| self.error(s) <= self.tolerance)?;
        if at_end { self.piece(1.0 - span, 1.0, true) } else { self.piece(0.0, span, true) }
    }

    /// The enclosures on `[t0, t1]` as one piece, if they meet; with
    /// `with_box`, its box too (the search for an end needs only the
    /// interval: FMB's exact interval without the exact box's cost).
    fn piece(&mut self, t0: f64, t1: f64, with_box: bool) -> Option<Piece<D>> {
        let fine = self.error(t1 - t0) <= self.tolerance;
        self.tests += 1;
        let (Some(ea), Some(eb)) = (self.a.enclosure(t0, t1), self.b.enclosure(t0, t1)) else {
            // Beyond the range rule: nothing exact to say on this piece.
            let aabb = swept_box(&self.a, t0, t1).intersection(&swept_box(&self.b, t0, t1))?;
            return Some(Piece { time: [t0, t1], aabb, fine: false });
        };
        let (time, aabb) = if with_box {
            let i = intersect(&ea, &eb)?;
            (i.time, i.aabb)
        } else {
            (overlap_interval(&ea, &eb)?, Aabb::EMPTY)
        };
        let at = |s: f64| t0 + s * (t1 - t0);
        Some(Piece { time: [at(time[0]), at(time[1])], aabb, fine })
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
                if let Some(p) = self.piece(t0, t1, true) {
                    return Some(p);
                }
                continue;
            }
            let Some(p) = self.piece(t0, t1, false) else { continue };
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
    let r = m.pivot_radius * (1.0 + 1e-12);
    let at = |t: f64| -> [f64; D] { std::array::from_fn(|k| m.spin.pivot[k] + t * v[k]) };
    let (p, q) = (at(t0), at(t1));
    Aabb { min: std::array::from_fn(|k| p[k].min(q[k]) - r), max: std::array::from_fn(|k| p[k].max(q[k]) + r) }
}
