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
//! out by `ε`). Each face moves out by less where it can: a turn by `δ`
//! about the axis `u` moves the points `w` (from the reference point) of
//! a face with unit normal `n` along `n` by `sin δ·w·(n × u)` at first
//! order, so the face needs only `h·S + ρ·h²/2` (plus the reference
//! point's stray), `S` the frame's reach along `n × u` (fixed by the
//! frame and the axis): a face across the axis moves at second order
//! only, and every face by less than `ρ·h` unless `n × u` points along
//! the frame's longest reach.
//!
//! **Refinement of the interval.** Where the two enclosures never meet,
//! no contact is possible; so too where the true frames at a piece's
//! middle instant are farther apart, along the axis through their closest
//! points, than their points can move within the piece (`ρ·h` each, plus
//! the relative velocity's share): this proof has no `κ·ε` corners, so it
//! rules out near misses at pieces `1 + κ` times longer. Where they may
//! meet, the sub-interval shrinks to FMB's interval of the enclosures
//! (FMB's interval alone, without the exact box) and is halved until the
//! enclosures are within the tolerance `τ` of the true frames: earliest
//! half first, to the first piece refined to `τ` (the start of the
//! contact), within half of [`MAX_TESTS`]; then latest half first from
//! the end, to the last one, within the rest (the start's search cannot
//! use up the end's). When the true frames already overlap at an end of
//! the step (FMB on the exact poses there), that end is an end of the
//! contact: its piece is the first power-of-two fraction of the step
//! refined to `τ`, found with one test instead of a search. Pairs without
//! spin take [`intersect`]'s exact answer, bit for bit.
//!
//! **The box.** The union, over pieces that cover the contact, of the
//! exact boxes of the two enclosures' intersection, each clipped to the
//! overlap of the two frames' exact swept boxes over the piece (the boxes
//! of their vertices' arcs: second order in the piece's length, so a face
//! set by a vertex is tight long before the enclosures are). The pieces
//! are the first and last of the interval and 4 between them, refined by
//! branch and bound against a box the true intersection is known to
//! reach: the exact boxes of the true frames' intersection at sampled
//! instants (FMB on the exact poses). The piece whose box reaches
//! farthest beyond that known box plus `τ` is halved, and its middle
//! instant sampled, until no piece does, within [`MAX_BOX_TESTS`] FMB
//! tests. Each half is also clipped to a *lid*, second order in its
//! length on every face: at the sampled instant, for each face of the box
//! reaching too far, the basis of `D` faces of the two frames whose
//! vertex is the intersection's extreme there (linear programming: the
//! least vertex whose faces' normals combine positively into the axis);
//! by weak duality that vertex bounds the intersection as long as the
//! combination stays positive, which turning at known rates bounds over
//! the half; and the vertex itself (a frame's vertex on its arc, or an
//! edge of one frame crossing a face of the other) moves with a rate
//! known at the instant and a bounded second derivative. The enclosures
//! alone refine at first order where a face of the box is set by an edge
//! crossing a face (the enclosures' faces do not tilt with the frames),
//! which needed pieces of about `τ` over the turn's speed all along the
//! instants where that face is near its extreme. The box is finally
//! clipped to the overlap of the two frames' swept boxes over the
//! interval: at every instant the intersection lies in both frames. A
//! turn that sweeps a frame's corner past a face many times still reports
//! a box no larger than the region the corner reaches.
//!
//! **Guarantees** ([`intersect_spinning`]):
//! * no missed contact: every instant at which the true frames' interiors
//!   meet is inside the reported interval, and every point of their
//!   intersection at that instant is inside the reported box;
//! * no false contact beyond `τ`: with `time_within_tolerance`, the true
//!   frames are within `τ` of each other at some instant of the first and
//!   of the last refined piece, each containing an end of the interval;
//! * a tight box: with `box_within_tolerance`, every face of the box is
//!   within `τ` of a point of the true intersection at a sampled instant,
//!   so within `τ` of the true intersection's box over the contact (which
//!   the box contains): a proof, not an estimate;
//! * bounded work: at most [`MAX_TESTS`] FMB tests search for the ends;
//!   once they are spent, each piece still pending is tested once (at
//!   most 33 a search), plus the tests at the step's ends (2); at most
//!   [`MAX_BOX_TESTS`] refine the box, plus 10. A pair whose search is cut
//!   short (a rotation of thousands of turns a step, a tolerance far below
//!   the frames' size) is still reported conservatively, with the flags
//!   false; a box cut short (where no lid holds until the pieces are very
//!   short: a face set by a feature of a very thin frame, whose basis is
//!   ill-conditioned, or where the extreme switches between features
//!   within a piece) is the union of the pieces reached, with
//!   `box_within_tolerance` false. Measured (300 random pairs a rate, τ =
//!   1e-3 of frames about 1 across, against the true box at 2,001
//!   instants): every box within `τ` (plus how far the frames move between
//!   two samples), and `box_within_tolerance` true, from 0.01 to 3 rad a
//!   step in 2D and in 3D (`tests/narrow/spin.rs`).

use arrayvec::ArrayVec;

use super::{intersect, overlap_interval, overlaps};
use crate::aabb::Aabb;
use crate::error::FrameError;
use crate::frame::{Frame, FrameKind};
use crate::math::{dot, invert_columns, norm, sub};

/// Most FMB tests [`intersect_spinning`] spends searching for the ends of
/// a pair's contact, half of them at most for its start (then at most 68
/// more: the pieces still pending and the step's ends; the box has its
/// own bound, [`MAX_BOX_TESTS`]).
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

/// Point `q` (relative to the pivot) turned by `θ` about the spin's axis,
/// per coordinate as `a + A·cos θ + B·sin θ`: `a` the part along the axis,
/// `A` the part across it, `B` the axis crossed with `A` (2D: the axis out
/// of the plane). No turn: the point itself.
fn arc<const D: usize>(spin: &Spin<D>, q: &[f64; D]) -> [[f64; 3]; D] {
    let n = spin.angle();
    if n == 0.0 {
        return std::array::from_fn(|k| [q[k], 0.0, 0.0]);
    }
    if D == 2 {
        let across = [-q[1], q[0]];
        return std::array::from_fn(|k| [0.0, q[k], across[k]]);
    }
    let u: [f64; D] = std::array::from_fn(|k| spin.rate[k] / n);
    let along = dot(q, &u);
    let w: [f64; D] = std::array::from_fn(|k| q[k] - along * u[k]);
    std::array::from_fn(|k| {
        let (i, j) = ((k + 1) % 3, (k + 2) % 3);
        [along * u[k], w[k], u[i] * w[j] - u[j] * w[i]]
    })
}

/// `m · v` for a matrix of rows.
fn apply<const D: usize>(m: &[[f64; D]; D], v: &[f64; D]) -> [f64; D] {
    std::array::from_fn(|k| dot(&m[k], v))
}

/// A box containing frame `f` (moving by its velocity) at every instant
/// of the step under `spin` (see [`Mover::swept`]).
pub(crate) fn swept_aabb<const D: usize>(f: &Frame<D>, spin: &Spin<D>) -> Aabb<D> {
    if spin.is_still() {
        return f.aabb();
    }
    Mover::new(f, spin).swept(0.0, 1.0)
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
    /// Contains every point of the frames' intersection at every instant
    /// of the contact: the union of the exact boxes of the enclosures'
    /// intersection on pieces covering the contact, each clipped to the
    /// frames' exact swept boxes over its piece and to second-order bounds
    /// on the intersection's extreme vertices, refined where it reaches
    /// beyond the true intersection's known box plus the tolerance, and
    /// never beyond the overlap of the two frames' swept boxes over
    /// `time` (see [`intersect_spinning`]).
    pub aabb: Aabb<D>,
    /// True when both ends of `time` were refined to the tolerance: the
    /// frames come within it of each other in the first and in the last
    /// refined piece (always for pairs without spin, whose answer is
    /// FMB's, exact).
    pub time_within_tolerance: bool,
    /// True when every face of `aabb` is proven within the tolerance of
    /// the true intersection's box over the contact: within it of a point
    /// of the true intersection at a sampled instant (always for pairs
    /// without spin, whose box is FMB's, exact). False when the work bound
    /// [`MAX_BOX_TESTS`] stopped the refinement first, or when no sampled
    /// instant found the frames overlapping (a contact only within the
    /// tolerance, or too brief).
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
    /// Per face (`0..D`: the faces across row `i` of `C⁻¹`, both sides
    /// for a parallelepiped; `D`: a simplex's slanted face), how far the
    /// frame reaches along `n × u` (`n` the face's unit normal, `u` the
    /// axis; 2D: along the face) from the pivot (`[0]`) and from the
    /// centre (`[1]`): the first-order rate at which a turn moves the face
    /// out (see [`Mover::growth`]). Turning about `u` keeps them.
    face_widths: [[f64; 4]; 2],
    /// `κ`: how far a vertex moves when every face moves out by one.
    kappa: f64,
    /// The round-off of a turned frame's coordinates: a few ulps of the
    /// largest number that goes into them.
    slack: f64,
    /// Each vertex relative to the pivot as `a + A·cos θ + B·sin θ` per
    /// coordinate (`[a, A, B]`), `θ` the angle turned: its arc.
    arcs: ArrayVec<[[f64; 3]; D], 8>,
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
        let face_widths = [&spin.pivot, &centre].map(|q| face_widths(frame, spin, q));
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
            face_widths,
            kappa,
            slack,
            arcs: frame.vertices().map(|v| arc(spin, &sub(&v, &spin.pivot))).collect(),
        }
    }

    /// Where the pivot is at instant `t`.
    fn track(&self, t: f64) -> [f64; D] {
        let v = self.frame.velocity();
        std::array::from_fn(|k| self.spin.pivot[k] + t * v[k])
    }

    /// The rate at which a vector turning with the frame changes: `ω × n`
    /// (2D: `ω` times `n` turned a quarter turn).
    fn rate_of(&self, n: &[f64; D]) -> [f64; D] {
        let w = &self.spin.rate;
        if D == 2 {
            return std::array::from_fn(|k| if k == 0 { -w[2] * n[1] } else { w[2] * n[0] });
        }
        std::array::from_fn(|k| {
            let (i, j) = ((k + 1) % 3, (k + 2) % 3);
            w[i] * n[j] - w[j] * n[i]
        })
    }

    /// The signed angle turned at instant `t` (2D: counter-clockwise;
    /// 3D: about the spin's axis).
    fn turned(&self, t: f64) -> f64 {
        if D == 2 { t * self.spin.rate[2] } else { t * self.angle }
    }

    /// The frame's exact swept box over `[t0, t1]` (up to round-off), from
    /// its vertices' arcs: each coordinate of a vertex is `a + A·cos θ +
    /// B·sin θ` plus the pivot's straight path, largest at an end of the
    /// arc or where its derivative `B·cos θ − A·sin θ` turns from positive
    /// to negative (an arc under half a turn has at most one such point).
    /// Second order in the piece's length where the first-order
    /// enclosures are not: a face of the box set by a vertex is tight.
    fn arc_box(&self, t0: f64, t1: f64) -> Aabb<D> {
        let (th0, th1) = (self.turned(t0), self.turned(t1));
        let (th0, th1) = (th0.min(th1), th0.max(th1));
        let whole = th1 - th0 >= std::f64::consts::PI;
        let ((s0, c0), (s1, c1)) = (th0.sin_cos(), th1.sin_cos());
        let mut b = Aabb::<D>::EMPTY;
        for arc in &self.arcs {
            for (k, &[a, big_a, big_b]) in arc.iter().enumerate() {
                let (v0, v1) = (big_a * c0 + big_b * s0, big_a * c1 + big_b * s1);
                let (d0, d1) = (big_b * c0 - big_a * s0, big_b * c1 - big_a * s1);
                let m = big_a.hypot(big_b);
                let hi = if whole || (d0 > 0.0 && d1 < 0.0) { m } else { v0.max(v1) };
                let lo = if whole || (d0 < 0.0 && d1 > 0.0) { -m } else { v0.min(v1) };
                b.min[k] = b.min[k].min(a + lo);
                b.max[k] = b.max[k].max(a + hi);
            }
        }
        let v = self.frame.velocity();
        let r = self.slack + 1e-12 * self.pivot_radius;
        Aabb {
            min: std::array::from_fn(|k| self.spin.pivot[k] + b.min[k] + (t0 * v[k]).min(t1 * v[k]) - r),
            max: std::array::from_fn(|k| self.spin.pivot[k] + b.max[k] + (t0 * v[k]).max(t1 * v[k]) + r),
        }
    }

    /// A box containing the frame at every instant of `[t0, t1]`: the
    /// smaller, axis by axis, of the ball of its reach about the moving
    /// pivot and the union of its enclosures on up to 8 pieces (one per
    /// half radian of turn).
    fn swept(&self, t0: f64, t1: f64) -> Aabb<D> {
        let ball = swept_box(self, t0, t1);
        let pieces = (self.angle * (t1 - t0) / 0.5).ceil().clamp(1.0, 8.0) as usize;
        let mut union = Aabb::EMPTY;
        for k in 0..pieces {
            let at = |k: usize| t0 + (t1 - t0) * k as f64 / pieces as f64;
            match self.enclosure(at(k), at(k + 1)) {
                Some(e) => union = union.union(&e.aabb()),
                None => return ball,
            }
        }
        Aabb {
            min: std::array::from_fn(|k| ball.min[k].max(union.min[k])),
            max: std::array::from_fn(|k| ball.max[k].min(union.max[k])),
        }
    }

    /// How far a point of the frame can move along unit direction `n`
    /// from where it is at the middle of a sub-interval of length `span`
    /// by turning (the translation is counted apart): `ρ_pivot·h·|n × u|`,
    /// `u` the axis (the rate of `n · R(θ)q` is `R(θ)q · (n × u)`; in 2D
    /// the axis is across every `n`). A turn about `n` itself moves no
    /// point along it.
    fn reach(&self, span: f64, n: &[f64; D]) -> f64 {
        let across = if D == 3 && self.angle > 0.0 {
            let u: [f64; D] = std::array::from_fn(|k| self.spin.rate[k] / self.angle);
            let along = dot(n, &u);
            // |n × u|² = 1 − (n · u)², with a margin for round-off.
            ((1.0 - along * along).max(0.0).sqrt() + 1e-9).min(1.0)
        } else {
            1.0
        };
        self.pivot_radius * 0.5 * self.angle * span * across
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

    /// How far each face of the enclosure on a sub-interval of length
    /// `span` moves out (per face as in [`Mover::face_widths`]): the
    /// smaller of the whole frame's `ε` ([`Mover::reference`]) and the
    /// face's own bound. A point `w` (from the reference point) of the
    /// frame at the middle angle, turned by `δ` (`|δ| ≤ h`) about `u`,
    /// moves along the face's normal `n` by `sin δ·w·(n × u) + (1 − cos
    /// δ)·n·(u × (u × w))`: at most `h·S + ρ·h²/2` (`S` the frame's reach
    /// along `n × u`, `ρ` its reach from the reference point), plus the
    /// reference point's own stray from its chord. A face across the
    /// axis (`n` along `u`) moves at second order only.
    fn growth(&self, span: f64) -> (bool, [f64; 4]) {
        let (centred, eps) = self.reference(span);
        if self.angle == 0.0 {
            return (centred, [eps; 4]);
        }
        let h = 0.5 * self.angle * span;
        let (rho, chord) =
            if centred { (self.centre_radius, self.arm * h * h * (0.5 + h / 6.0)) } else { (self.pivot_radius, 0.0) };
        let widths = &self.face_widths[usize::from(centred)];
        let grow = widths.map(|s| ((s * h + 0.5 * rho * h * h + chord) * (1.0 + 1e-12) + self.slack).min(eps));
        (centred, grow)
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
        let (centred, grow) = self.growth(span);
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
        self.grown(origin, comps, inv, grow, velocity)
    }

    /// The frame `(origin, comps, inv)` of this one's kind with each face
    /// moved out by its `e` (per face as in [`Mover::face_widths`]): a
    /// parallelepiped's components lengthened, a simplex enlarged (moving
    /// a simplex's faces out by any amounts gives a simplex of the same
    /// shape).
    fn grown(
        &self,
        origin: [f64; D],
        mut comps: [[f64; D]; D],
        mut inv: [[f64; D]; D],
        e: [f64; 4],
        velocity: [f64; D],
    ) -> Option<Frame<D>> {
        // Face `i` moves out by `eᵢ` in the local coordinate `Xᵢ` when `Xᵢ`
        // changes by `eᵢ·|nᵢ|`.
        let a: [f64; D] = std::array::from_fn(|i| e[i] * self.row_norms[i]);
        let origin = std::array::from_fn(|k| origin[k] - (0..D).map(|i| a[i] * comps[i][k]).sum::<f64>());
        let kind = self.frame.kind();
        for i in 0..D {
            let scale = match kind {
                FrameKind::Cuboid => 1.0 + 2.0 * a[i],
                FrameKind::Tetrahedron => 1.0 + e[D] * self.row_sum_norm + a.iter().sum::<f64>(),
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

/// Per face of `f` (rows `0..D` of `C⁻¹`; `D`: their sum, a simplex's
/// slanted face), the largest `|(v − q)·(n × u)|` over its vertices `v`,
/// `n` the face's unit normal, `u` the spin's axis (2D: out of the
/// plane): the face's first-order growth per radian of turn about `q`.
fn face_widths<const D: usize>(f: &Frame<D>, spin: &Spin<D>, q: &[f64; D]) -> [f64; 4] {
    let angle = spin.angle();
    if angle == 0.0 {
        return [0.0; 4];
    }
    let u: [f64; 3] = if D == 2 { [0.0, 0.0, 1.0] } else { spin.rate.map(|x| x / angle) };
    let inv = f.inv();
    let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum::<f64>());
    let mut widths = [0.0; 4];
    for (i, w) in widths.iter_mut().enumerate().take(D + 1) {
        let row = if i < D { &inv[i] } else { &sum };
        let len = norm(row);
        let n: [f64; 3] = std::array::from_fn(|k| if k < D { row[k] / len } else { 0.0 });
        let along = [n[1] * u[2] - n[2] * u[1], n[2] * u[0] - n[0] * u[2], n[0] * u[1] - n[1] * u[0]];
        // Unit within round-off: a relative margin keeps the bound.
        *w = f.vertices().map(|v| (0..D).map(|k| (v[k] - q[k]) * along[k]).sum::<f64>().abs()).fold(0.0, f64::max)
            * (1.0 + 1e-12);
    }
    widths
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
/// end to the last; the box is the union of the enclosures' exact boxes
/// on pieces covering the contact, each clipped to the frames' exact
/// swept boxes over its piece (their vertices' arcs) and to second-order
/// bounds from the intersection's extreme vertices at sampled instants
/// (linear programming duality over the frames' faces), refined until it
/// is within `tolerance` of boxes of the true intersection at sampled
/// instants, and clipped to the overlap of the frames' swept boxes over
/// the contact. Measured on random pairs, every box reaches `tolerance`
/// (and `box_within_tolerance` holds) from 0.01 to 3 rad a step, in 2D
/// and in 3D (see the module doc).
///
/// Guarantees:
/// * no missed contact: every instant at which the true frames' interiors
///   meet is inside `time`, and every point of their intersection then is
///   inside `aabb`;
/// * with `time_within_tolerance`, the true frames come within
///   `tolerance` of each other near each end of `time` (in its first and
///   last refined pieces); with `box_within_tolerance`, every face of
///   `aabb` is within `tolerance` of the true intersection's box over the
///   contact; `aabb` never reaches beyond the overlap of the two frames'
///   swept boxes over `time`;
/// * bounded work: at most [`MAX_TESTS`] FMB tests for the ends plus 68,
///   [`MAX_BOX_TESTS`] for the box plus 10; a pair cut short (thousands
///   of turns a step, a tolerance far below the frames' size; for the
///   box, a face set by a feature of a very thin frame) is still reported
///   conservatively, with the flag concerned false.
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
    Ok(Pair::new(Mover::new(a, spin_a), Mover::new(b, spin_b), tolerance).contact())
}

/// Pieces of the step in which the interiors may meet: where, the exact
/// box of the enclosures' intersection there (empty when only the
/// interval was asked for), and whether the enclosures are within the
/// tolerance of the true frames.
#[derive(Clone, Copy)]
struct Piece<const D: usize> {
    time: [f64; 2],
    aabb: Aabb<D>,
    fine: bool,
}

/// Two moving frames, the half-spaces that bound them ([`Plane`]), the
/// tolerance and the work spent.
struct Pair<'a, const D: usize> {
    a: Mover<'a, D>,
    b: Mover<'a, D>,
    planes: ArrayVec<Plane<D>, 12>,
    /// True when `b` comes first in the frames' own order
    /// ([`Pair::new`]).
    b_first: bool,
    tolerance: f64,
    tests: usize,
}

impl<'a, const D: usize> Pair<'a, D> {
    /// The pair, its half-spaces not listed yet ([`Pair::list_planes`]:
    /// only a box's refinement needs them, and most pairs are decided
    /// before).
    fn new(a: Mover<'a, D>, b: Mover<'a, D>, tolerance: f64) -> Self {
        Pair { a, b, planes: ArrayVec::new(), b_first: false, tolerance, tests: 0 }
    }

    /// Lists the half-spaces (once), frame by frame in an order of the
    /// frames themselves (their numbers compared in turn), not of the
    /// arguments: the lids ([`Pair::lid`]) then round the same way
    /// whichever frame is `a`, and so do the boxes (a world and a brute
    /// force calling the pair in either order agree bit for bit).
    fn list_planes(&mut self) {
        if !self.planes.is_empty() {
            return;
        }
        let numbers = |m: &Mover<'_, D>| {
            let f = m.frame;
            let c = f.components();
            let kind = f64::from(u8::from(f.kind() == FrameKind::Cuboid));
            std::iter::once(kind)
                .chain(f.origin())
                .chain(c.into_iter().flatten())
                .chain(f.velocity())
                .chain(m.spin.pivot)
                .chain(m.spin.rate)
        };
        let order = numbers(&self.b).zip(numbers(&self.a)).map(|(x, y)| x.total_cmp(&y)).find(|o| o.is_ne());
        self.b_first = order.is_some_and(|o| o.is_lt());
        let (a, b) = (&self.a, &self.b);
        self.planes = if self.b_first {
            Plane::of(b, true).chain(Plane::of(a, false)).collect()
        } else {
            Plane::of(a, false).chain(Plane::of(b, true)).collect()
        };
    }
}

/// One half-space of a frame in motion: at instant `t`, its points `x`
/// satisfy `n(t)·x ≤ c(t)`, with `n(t) = R(t·ω)·n0` (the face's normal
/// turns with the frame) and `c(t) = β + n(t)·(pivot + t·v) + n0·(o −
/// pivot)` (`o` the frame's origin at `t = 0`): a row of `C⁻¹` (`X ≤ 1`),
/// its negation (`X ≥ 0`), or a simplex's row sum (`ΣX ≤ 1`), each
/// scaled to a unit normal.
#[derive(Clone, Copy)]
struct Plane<const D: usize> {
    n0: [f64; D],
    /// `β + n0·(o − pivot)`: the part of `c` that the motion keeps.
    fixed: f64,
    of_b: bool,
}

impl<const D: usize> Plane<D> {
    /// The half-spaces whose intersection is frame `m` (both sides of each
    /// row for a parallelepiped, `D + 1` faces for a simplex).
    fn of<'m>(m: &'m Mover<'_, D>, of_b: bool) -> impl Iterator<Item = Plane<D>> + 'm {
        let inv = m.frame.inv();
        let arm = sub(&m.frame.origin(), &m.spin.pivot);
        let sum: [f64; D] = std::array::from_fn(|k| inv.iter().map(|row| row[k]).sum::<f64>());
        let cuboid = m.frame.kind() == FrameKind::Cuboid;
        (0..2 * D + 1).filter_map(move |i| {
            let (n0, beta) = match (i < D, cuboid) {
                (true, _) => (inv[i].map(|x| -x), 0.0),
                (false, true) if i < 2 * D => (inv[i - D], 1.0),
                (false, false) if i == 2 * D => (sum, 1.0),
                _ => return None,
            };
            // Unit normals: the bounds of [`Pair::face_bound`] grow with
            // the basis's conditioning, which rows of very different
            // lengths (a thin frame's) would spoil for nothing.
            let len = norm(&n0);
            let n0 = n0.map(|x| x / len);
            Some(Plane { n0, fixed: beta / len + dot(&n0, &arm), of_b })
        })
    }
}

/// The faces of a box, `2k + 1` its maximum along axis `k`, `2k` its
/// minimum: for each, a basis (`D` of the pair's [`Plane`]s) whose vertex
/// bounds the intersection there at a sampled instant.
type Bases<const D: usize> = [Option<[u8; D]>; 6];

impl<const D: usize> Pair<'_, D> {
    /// The contact's interval from its first and last refined pieces, its
    /// box from the pieces that cover it ([`Pair::contact_box`]), clipped
    /// to the two frames' swept boxes over the interval: at every instant
    /// the intersection lies in both frames, so in both boxes.
    fn contact(mut self) -> Option<SpinContact<D>> {
        let first = self.start()?;
        let last = self.end(&first);
        let time = [first.time[0].max(0.0), last.time[1].min(1.0)];
        let (aabb, box_fine) = self.contact_box(&first, &last);
        let (swept_a, swept_b) = (self.a.swept(time[0], time[1]), self.b.swept(time[0], time[1]));
        // Empty only when the frames' boxes never meet: no contact at all.
        let aabb = aabb.intersection(&swept_a.intersection(&swept_b)?)?.intersection(&self.arcs(time[0], time[1])?)?;
        let time_within_tolerance = first.fine && last.fine;
        Some(SpinContact { time, aabb, time_within_tolerance, box_within_tolerance: box_fine })
    }

    /// The contact's first piece: the step's start when the true frames
    /// already overlap there (exactly an end of the contact: no search),
    /// else the earliest piece found within half the search's work bound
    /// (the other half is the last piece's, however long this search is).
    fn start(&mut self) -> Option<Piece<D>> {
        let at_start = if self.overlap_at(0.0) { self.end_piece(false) } else { None };
        at_start.or_else(|| self.first_piece(0.0, 1.0, false, MAX_TESTS / 2))
    }

    /// The contact's last piece, after `first` (`first` itself when the
    /// enclosures never meet after it).
    fn end(&mut self, first: &Piece<D>) -> Piece<D> {
        let at_end = if self.overlap_at(1.0) { self.end_piece(true) } else { None };
        at_end.or_else(|| self.first_piece(first.time[1], 1.0, true, MAX_TESTS)).unwrap_or(*first)
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
        if !fine && self.apart(t0, t1) {
            return None;
        }
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

    /// True when the true frames cannot meet on `[t0, t1]`, proven without
    /// the enclosures' corners: along the axis from `a` to `b` through
    /// their closest points at the middle instant (GJK's; any axis is
    /// sound, the projections are computed here), the gap between the two
    /// frames' projections exceeds how far their points can move from
    /// there within the piece (`ρ·h` for the turn about the pivot, less
    /// for an axis near `n`; the relative velocity's projection for the
    /// translation). Each
    /// enclosure's corners stick out `κ·ε` beyond that reach: this is the
    /// cheaper proof for a near miss, the enclosures' FMB test the sharper
    /// one elsewhere.
    fn apart(&mut self, t0: f64, t1: f64) -> bool {
        let tm = 0.5 * (t0 + t1);
        let (Some(pa), Some(pb)) = (self.a.pose_at(tm), self.b.pose_at(tm)) else { return false };
        let d = crate::query::distance(&pa, &pb);
        let axis = sub(&d.on_b, &d.on_a);
        let len = norm(&axis);
        if !(d.distance > 0.0 && len > 0.0) {
            return false;
        }
        let n = axis.map(|x| x / len);
        let gap = projection(&pb, &n)[0] - projection(&pa, &n)[1];
        let dv = sub(&self.a.frame.velocity(), &self.b.frame.velocity());
        let reach = self.a.reach(t1 - t0, &n) + self.b.reach(t1 - t0, &n) + 0.5 * (t1 - t0) * dot(&dv, &n).abs();
        // Round-off of the poses and of the projections.
        gap > reach * (1.0 + 1e-12) + 4.0 * (self.a.slack + self.b.slack)
    }

    /// `(1 + κ)ε` of both frames on a sub-interval of length `span`.
    fn error(&self, span: f64) -> f64 {
        self.a.error(span) + self.b.error(span)
    }

    /// The earliest (or, `backward`, the latest) piece of `[t0, t1]` where
    /// the enclosures meet, refined to the tolerance (halving only where
    /// the enclosures meet, earliest or latest half first), unless the
    /// depth or the work bound (`budget` tests in all) stops it first;
    /// `None` when they never meet.
    fn first_piece(&mut self, t0: f64, t1: f64, backward: bool, budget: usize) -> Option<Piece<D>> {
        let mut stack = [(t0, t1, 0_u32); MAX_DEPTH as usize + 2];
        let mut len = 1;
        while len > 0 {
            len -= 1;
            let (t0, t1, depth) = stack[len];
            if self.error(t1 - t0) <= self.tolerance || depth >= MAX_DEPTH || self.tests >= budget {
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

    /// The contact's box: the union of the exact boxes of the enclosures
    /// on pieces that cover the contact (its first and last pieces and
    /// [`MIDDLE_PIECES`] between them), refined by branch and bound
    /// against a box the true intersection is known to reach (the exact
    /// boxes of the true frames' intersection at sampled instants): the
    /// piece reaching farthest beyond it plus the tolerance is halved (and
    /// its middle instant sampled) until none does, within
    /// [`MAX_BOX_TESTS`] FMB tests. With it, whether the box is within the
    /// tolerance of that known part of the true box on every face.
    fn contact_box(&mut self, first: &Piece<D>, last: &Piece<D>) -> (Aabb<D>, bool) {
        // Round-off of the sampled poses: the flag stays a proof.
        let margin = self.tolerance - 4.0 * (self.a.slack + self.b.slack);
        let mut boxes = Boxes { inner: Aabb::EMPTY, kept: Aabb::EMPTY, pieces: ArrayVec::new(), margin };
        for t in [first.time, [first.time[0], last.time[1]], last.time].map(|[t0, t1]| 0.5 * (t0 + t1)) {
            self.sample(t, &mut boxes);
        }
        for p in [Some(*first), (last.time != first.time).then_some(*last)].into_iter().flatten() {
            // An end piece with no box left has no contact: nothing to add.
            if let Some(p) = self.clipped(p, &everything()) {
                boxes.add(p);
            }
        }
        let (from, to) = (first.time[1], last.time[0]);
        if from < to {
            let at = |k: usize| from + (to - from) * k as f64 / MIDDLE_PIECES as f64;
            for k in 0..MIDDLE_PIECES {
                self.box_piece(at(k), at(k + 1), &everything(), &mut boxes);
            }
        }
        let budget = self.tests + MAX_BOX_TESTS;
        while self.tests < budget {
            let Some(i) = boxes.widest() else { break };
            let p = boxes.pieces.swap_remove(i);
            let [t0, t1] = p.time;
            let mid = 0.5 * (t0 + t1);
            if !(t0 < mid && mid < t1) || t1 - t0 < 0.5_f64.powi(MAX_DEPTH as i32) {
                // As fine as the step is cut: it joins the box as it is.
                boxes.kept = boxes.kept.union(&p.aabb);
                continue;
            }
            self.sample(mid, &mut boxes);
            // Only the faces where the piece reaches beyond the bound need
            // a lid (bit `2k + 1`: the maximum along axis `k`).
            let bound = boxes.bound();
            let beyond = (0..D).fold(0_u8, |m, k| {
                m | u8::from(p.aabb.max[k] > bound.max[k]) << (2 * k + 1)
                    | u8::from(p.aabb.min[k] < bound.min[k]) << (2 * k)
            });
            let (early, late) = if beyond != 0 && self.lids_may_hold(0.5 * (t1 - t0)) {
                self.list_planes();
                let at = self.planes_at(mid);
                let bases = self.bases(&at, beyond);
                (self.lid(&at, [t0, mid], mid, &bases, 1.0), self.lid(&at, [mid, t1], mid, &bases, 1.0))
            } else {
                (everything(), everything())
            };
            // The piece's own box holds the intersection over both halves
            // too (their enclosures' boxes may reach beyond it, and so
            // would undo the clipping the piece already had).
            for (span, lid) in [([t0, mid], early), ([mid, t1], late)] {
                if let Some(lid) = lid.intersection(&p.aabb) {
                    self.box_piece(span[0], span[1], &lid, &mut boxes);
                }
            }
        }
        boxes.finish()
    }

    /// The exact box of the true frames' intersection at instant `t`, if
    /// they overlap then, joins the part of the true box known.
    fn sample(&mut self, t: f64, boxes: &mut Boxes<D>) {
        let (Some(a), Some(b)) = (self.a.pose_at(t), self.b.pose_at(t)) else { return };
        self.tests += 1;
        if let Some(i) = intersect(&a, &b) {
            boxes.inner = boxes.inner.union(&i.aabb);
        }
    }

    /// The piece `[t0, t1]` of the box, if its enclosures meet: when the
    /// overlap of the enclosures' own boxes is already within the
    /// tolerance of the known part of the true box, that overlap joins the
    /// box and FMB is not asked; else the piece with its exact box. Both
    /// clipped to `lid`, a box the true intersection stays in over the
    /// piece ([`Pair::lid`]).
    fn box_piece(&mut self, t0: f64, t1: f64, lid: &Aabb<D>, boxes: &mut Boxes<D>) {
        let Some(arcs) = self.arcs(t0, t1).and_then(|a| a.intersection(lid)) else { return };
        let (Some(ea), Some(eb)) = (self.a.enclosure(t0, t1), self.b.enclosure(t0, t1)) else {
            // Beyond the range rule: the piece as `piece` bounds it.
            if let Some(p) = self.piece(t0, t1, true).and_then(|p| self.clipped(p, lid)) {
                boxes.add(p);
            }
            return;
        };
        let Some(reach) = ea.aabb().intersection(&eb.aabb()).and_then(|r| r.intersection(&arcs)) else { return };
        if within(&reach, &boxes.bound()) {
            boxes.kept = boxes.kept.union(&reach);
            return;
        }
        self.tests += 1;
        let Some(i) = intersect(&ea, &eb) else { return };
        let at = |s: f64| t0 + s * (t1 - t0);
        let fine = self.error(t1 - t0) <= self.tolerance;
        if let Some(p) = self.clipped(Piece { time: [at(i.time[0]), at(i.time[1])], aabb: i.aabb, fine }, lid) {
            boxes.add(p);
        }
    }

    /// The overlap of the two frames' exact swept boxes over `[t0, t1]`
    /// ([`Mover::arc_box`]): the intersection lies in it at every instant
    /// of the piece; `None` when they do not meet (no contact there).
    fn arcs(&self, t0: f64, t1: f64) -> Option<Aabb<D>> {
        self.a.arc_box(t0, t1).intersection(&self.b.arc_box(t0, t1))
    }

    /// Piece `p` with its box clipped to [`Pair::arcs`] over its interval
    /// (the enclosures' first-order excess removed where a vertex sets a
    /// face of the box) and to `lid` (a box the intersection stays in over
    /// the piece `p` comes from).
    fn clipped(&self, mut p: Piece<D>, lid: &Aabb<D>) -> Option<Piece<D>> {
        p.aabb = p.aabb.intersection(&self.arcs(p.time[0], p.time[1])?)?.intersection(lid)?;
        Some(p)
    }

    /// The pair's half-spaces ([`Plane`]) at instant `t`: their normals
    /// `n(t)`, the normals' rates `n'(t)` and the offsets `c(t)`.
    fn planes_at(&self, t: f64) -> Planes<D> {
        let turns = [self.a.spin.matrix(t), self.b.spin.matrix(t)];
        let movers = [&self.a, &self.b];
        let mut at = Planes { n: [[0.0; D]; 12], rate: [[0.0; D]; 12], c: [0.0; 12] };
        for (i, p) in self.planes.iter().enumerate() {
            let side = usize::from(p.of_b);
            at.n[i] = apply(&turns[side], &p.n0);
            at.rate[i] = movers[side].rate_of(&at.n[i]);
            at.c[i] = p.fixed + dot(&at.n[i], &movers[side].track(t));
        }
        at
    }

    /// False when no lid ([`Pair::face_bound`]) can hold over pieces of
    /// length `span`: both frames turn by a radian or more (the weights
    /// move by at least the turn of the frame holding most of the basis,
    /// times `‖M⁻¹‖ ≥ 1`), or the frames turn by half a radian or more
    /// relative to each other. Spares the search for bases.
    fn lids_may_hold(&self, span: f64) -> bool {
        let relative = norm(&sub(&self.a.spin.rate, &self.b.spin.rate));
        self.a.angle.min(self.b.angle) * span < 1.0 && relative * span < 0.5
    }

    /// For each face of the box in `faces` (bit `2k + 1`: the maximum
    /// along axis `k`, bit `2k`: the minimum), the basis (`D` half-spaces whose normals
    /// the face's outward axis is a positive combination of) whose vertex
    /// lies least far out at the instant of `at`: by linear programming duality
    /// every such vertex bounds the intersection on that face, and the
    /// least of them is the intersection's own extreme (its optimal basis)
    /// when the frames overlap then. Every `D` of the pair's half-spaces
    /// are tried (220 in 3D at most: a few µs, once a halving).
    fn bases(&self, at: &Planes<D>, faces: u8) -> Bases<D> {
        let m = self.planes.len();
        let mut best: [(f64, Option<[u8; D]>); 6] = [(f64::INFINITY, None); 6];
        let mut idx: [usize; D] = std::array::from_fn(|i| i);
        loop {
            let rows: [[f64; D]; D] = std::array::from_fn(|j| at.n[idx[j]]);
            // The adjugate: `adj[j]·n[i] = det·δᵢⱼ` (rows of `det·N⁻ᵀ`),
            // whose signs decide the weights before any division.
            let adj: [[f64; D]; D] = std::array::from_fn(|j| {
                let (a, b) = (&rows[(j + 1) % D], &rows[(j + 2) % D]);
                std::array::from_fn(|x| {
                    if D == 2 {
                        [rows[1 - j][1], -rows[1 - j][0]][x] * if j == 0 { 1.0 } else { -1.0 }
                    } else {
                        a[(x + 1) % D] * b[(x + 2) % D] - a[(x + 2) % D] * b[(x + 1) % D]
                    }
                })
            });
            let det = dot(&adj[0], &rows[0]);
            // A nearly singular basis bounds nothing useful (unit normals).
            if det.abs() > 1e-9 {
                for (f, b) in best.iter_mut().enumerate().take(2 * D).filter(|(f, _)| faces >> f & 1 == 1) {
                    let (k, s) = (f / 2, if f % 2 == 1 { det } else { -det });
                    if (0..D).all(|j| s * adj[j][k] > 0.0) {
                        let value = (0..D).map(|j| at.c[idx[j]] * adj[j][k]).sum::<f64>() * s / (det * det);
                        if value < b.0 {
                            *b = (value, Some(idx.map(|i| i as u8)));
                        }
                    }
                }
            }
            // The next `D` of the `m` half-spaces, in lexicographic order.
            let Some(i) = (0..D).rev().find(|&i| idx[i] < m - D + i) else { break };
            idx[i] += 1;
            for j in i + 1..D {
                idx[j] = idx[j - 1] + 1;
            }
        }
        best.map(|b| b.1)
    }

    /// A box the true intersection stays in at every instant of `span`,
    /// from the bases found at `tc` (in `span`; the half-spaces then in
    /// `at`; see
    /// [`Pair::face_bound`]): unbounded on the faces with no basis or
    /// whose bound does not hold over the piece. Second order in the
    /// piece's length where a basis is optimal (`second` scales the
    /// second-order term: 1 but in the tests that show it is needed).
    fn lid(&self, at: &Planes<D>, span: [f64; 2], tc: f64, bases: &Bases<D>, second: f64) -> Aabb<D> {
        let mut lid = everything();
        for (f, basis) in bases.iter().enumerate().take(2 * D) {
            let Some(basis) = basis else { continue };
            let up = f % 2 == 1;
            if let Some(x) = self.face_bound(at, span, tc, basis, f / 2, up, second) {
                if up {
                    lid.max[f / 2] = x;
                } else {
                    lid.min[f / 2] = -x;
                }
            }
        }
        lid
    }

    /// A bound on `s·x_k` (`s = 1` when `up`, else −1) over the true
    /// intersection at every instant `t` of `span`, from the basis `basis`
    /// (its half-spaces at `tc` in `at`), or `None` when it cannot be
    /// proven over the whole span.
    ///
    /// Weak duality: while the basis's normals combine into `s·e_k` with
    /// weights `y(t) ≥ 0`, every point of the intersection has `s·x_k ≤
    /// s·p_k(t)`, `p(t)` the basis's vertex. In the coordinates of the
    /// frame `F` with most of the basis (turning and moving with it), its
    /// planes stand still and only the other frame's (at most one) turns,
    /// at the relative rate `Δω`, while `e_k` turns at `ω_F`; so `|y(t) −
    /// y(tc)| ≤ K·(|ω_F| + |Δω|·y_O)·|t − tc|` (`K` bounds `‖M(t)⁻¹‖`, `M`
    /// the basis's normals, from `‖M(tc)⁻¹‖` and `|Δω|`), and the weights
    /// stay positive while that is below their least value.
    ///
    /// The vertex: a vertex of `F` (no plane of the other frame) follows
    /// its arc, `|p''| ≤ ω_F²·|q|` (`q` from `F`'s pivot); else it is where
    /// a line of `F` (an edge; 2D: a side) crosses the other frame's plane,
    /// at the parameter `σ = num/den` along the line (`den = n·d`, the
    /// cosine between the plane's normal and the line), whose first and
    /// second derivatives follow from those of `num` and `den`, bounded by
    /// the rates of the two frames. So `s·p_k(t) ≤ s·p_k(tc) +
    /// s·p_k'(tc)·(t − tc) + P₂·(t − tc)²/2`: second order where the face
    /// is at its extreme, where first-order enclosures are not.
    #[allow(clippy::too_many_arguments)]
    fn face_bound(
        &self,
        at: &Planes<D>,
        span: [f64; 2],
        tc: f64,
        basis: &[u8; D],
        k: usize,
        up: bool,
        second: f64,
    ) -> Option<f64> {
        let s = if up { 1.0 } else { -1.0 };
        let e: [f64; D] = std::array::from_fn(|x| if x == k { s } else { 0.0 });
        let l = (tc - span[0]).max(span[1] - tc);
        let j_of = |j: usize| basis[j] as usize;
        let rows: [[f64; D]; D] = std::array::from_fn(|j| at.n[j_of(j)]);
        // `g[j]·n[i] = δᵢⱼ`: the columns of `M⁻¹` as rows.
        let (g, _) = invert_columns(&rows)?;
        let p: [f64; D] = std::array::from_fn(|x| (0..D).map(|j| at.c[j_of(j)] * g[j][x]).sum());
        let of_b = |j: usize| self.planes[j_of(j)].of_b;
        // 2D, one side of each: the frame that comes first, as the
        // planes do (the same rounding in either order of the arguments).
        let count_b = (0..D).filter(|&j| of_b(j)).count();
        let f_is_b = if 2 * count_b == D { self.b_first } else { 2 * count_b > D };
        let (fm, om) = if f_is_b { (&self.b, &self.a) } else { (&self.a, &self.b) };
        let others = || (0..D).filter(move |&j| of_b(j) != f_is_b);
        if others().count() > 1 {
            return None;
        }
        let other = others().next();
        let (wf, wo) = (fm.spin.rate, om.spin.rate);
        let (af, ao) = (fm.angle, om.angle);
        let dw = norm(&sub(&wo, &wf));
        let kc = g.iter().map(|r| dot(r, r)).sum::<f64>().sqrt();
        let shrink = 1.0 - kc * dw * l;
        // NaN fails every comparison: no bound then.
        let invertible = shrink > 0.5;
        if !invertible {
            return None;
        }
        let big_k = kc / shrink * (1.0 + 1e-12);
        let y: [f64; D] = std::array::from_fn(|j| s * g[j][k]);
        let least = y.iter().fold(f64::INFINITY, |m, x| m.min(*x));
        let y_other = other.map_or(0.0, |j| y[j]);
        let positive = least > big_k * (af + dw * y_other) * l * (1.0 + 1e-9) + 1e-12 * kc;
        if !positive {
            return None;
        }
        let (vf, vo) = (fm.frame.velocity(), om.frame.velocity());
        let q = sub(&p, &fm.track(tc));
        let (qn, af2) = (norm(&q), af * af);
        // Where `p` moves at `tc` as a point of `F`.
        let moving = std::array::from_fn(|x| vf[x] + fm.rate_of(&q)[x]);
        let (value, rate, curve, ill) = match other {
            None => (dot(&e, &p), dot(&e, &moving), af2 * qn, 0.0),
            Some(jo) => {
                let (n, c) = (rows[jo], at.c[j_of(jo)]);
                // The line: through `p`, along the planes of `F` in the basis.
                let d: [f64; D] = if D == 2 {
                    let m = rows[(jo + 1) % 2];
                    std::array::from_fn(|x| if x == 0 { -m[1] } else { m[0] })
                } else {
                    let (m1, m2) = {
                        let mut f = (0..D).filter(|&j| j != jo).map(|j| rows[j]);
                        (f.next()?, f.next()?)
                    };
                    std::array::from_fn(|x| m1[(x + 1) % D] * m2[(x + 2) % D] - m1[(x + 2) % D] * m2[(x + 1) % D])
                };
                let len = norm(&d);
                let crossing = len > 0.0;
                if !crossing {
                    return None;
                }
                let d = d.map(|x| x / len);
                let den = dot(&n, &d);
                let den_min = den.abs() - dw * l;
                let across = den_min > 0.5 * den.abs();
                if !across {
                    return None;
                }
                let num = c - dot(&n, &p);
                let sigma = num / den;
                let (to, dv) = (om.track(tc), sub(&vo, &vf));
                let n_rate = om.rate_of(&n);
                let num_rate = dot(&n_rate, &sub(&to, &p)) + dot(&n, &sub(&vo, &moving));
                let den_rate = dot(&n_rate, &d) + dot(&n, &fm.rate_of(&d));
                let sigma_rate = (num_rate - sigma * den_rate) / den;
                let value = dot(&e, &p) + sigma * dot(&e, &d);
                let rate = dot(&e, &moving) + sigma_rate * dot(&e, &d) + sigma * dot(&e, &fm.rate_of(&d));
                // Bounds over the span (in `F`'s coordinates).
                let gap = norm(&sub(&to, &fm.track(tc))) + norm(&dv) * l;
                let g1 = ao * gap + norm(&dv);
                let g2 = ao * ao * gap + 2.0 * ao * norm(&dv);
                let (d1, d2) = (dw, af * dw + dw * dw);
                let (n1, n2) = (g1 + d1 * qn, g2 + d2 * qn);
                let s0 = (num.abs() + n1 * l) / den_min;
                let s1 = (n1 + s0 * d1) / den_min;
                let s2 = (n2 + 2.0 * s1 * d1 + s0 * d2) / den_min;
                (value, rate, af2 * (qn + s0) + 2.0 * af * s1 + s2, 1.0 / den.abs())
            }
        };
        let first = (rate * (span[1] - tc)).max(rate * (span[0] - tc)).max(0.0);
        // Round-off, amplified by the basis's conditioning.
        let margin = 4.0 * (self.a.slack + self.b.slack) * (1.0 + kc * (D as f64).sqrt() + ill) + 1e-12 * first;
        let bound = value + first + second * 0.5 * curve * l * l + margin;
        bound.is_finite().then_some(bound)
    }
}

/// The pair's half-spaces at one instant (see [`Pair::planes_at`]).
struct Planes<const D: usize> {
    n: [[f64; D]; 12],
    rate: [[f64; D]; 12],
    c: [f64; 12],
}

/// The box of all space: no bound yet.
fn everything<const D: usize>() -> Aabb<D> {
    Aabb { min: [f64::NEG_INFINITY; D], max: [f64::INFINITY; D] }
}

/// Pieces the middle of a contact (between its first and last refined
/// pieces) is first covered by, for its box.
const MIDDLE_PIECES: usize = 4;

/// Most pieces the box's refinement holds at once (beyond, a piece joins
/// the box as it is).
const BOX_PIECES: usize = 512;

/// Most FMB tests [`intersect_spinning`] spends refining a contact's box
/// (after the search for its ends; each halving is three: the two halves
/// and the true frames at the middle instant).
pub const MAX_BOX_TESTS: usize = 2048;

/// A contact's box while it is refined: `inner`, the part of the true box
/// known (exact boxes of the true intersection at sampled instants);
/// `kept`, the box of the pieces settled; `pieces`, those that may still
/// reach beyond `inner` plus the tolerance (`margin`: the tolerance less
/// the round-off of the sampled poses).
struct Boxes<const D: usize> {
    inner: Aabb<D>,
    kept: Aabb<D>,
    pieces: ArrayVec<Piece<D>, BOX_PIECES>,
    margin: f64,
}

impl<const D: usize> Boxes<D> {
    /// `inner` grown by the tolerance: a box within it is within the
    /// tolerance of the true box.
    fn bound(&self) -> Aabb<D> {
        Aabb { min: self.inner.min.map(|x| x - self.margin), max: self.inner.max.map(|x| x + self.margin) }
    }

    /// A piece of the contact: settled when it is within the bound, else
    /// held for refinement (settled as it is when the array is full even
    /// after settling those now within the bound).
    fn add(&mut self, p: Piece<D>) {
        let bound = self.bound();
        if self.pieces.is_full() {
            let kept = &mut self.kept;
            self.pieces.retain(|q| {
                let settled = within(&q.aabb, &bound);
                if settled {
                    *kept = kept.union(&q.aabb);
                }
                !settled
            });
        }
        if within(&p.aabb, &bound) || self.pieces.try_push(p).is_err() {
            self.kept = self.kept.union(&p.aabb);
        }
    }

    /// The piece that reaches farthest beyond the bound on some face, if
    /// any does. Pieces now within the bound are settled on the way (the
    /// bound only grows, so they stay within it): the scan stays as short
    /// as the pieces still to refine.
    fn widest(&mut self) -> Option<usize> {
        let bound = self.bound();
        let beyond = |p: &Piece<D>| {
            (0..D)
                .map(|k| (p.aabb.max[k] - bound.max[k]).max(bound.min[k] - p.aabb.min[k]))
                .fold(f64::NEG_INFINITY, f64::max)
        };
        let kept = &mut self.kept;
        self.pieces.retain(|p| {
            let settled = beyond(p) <= 0.0;
            if settled {
                *kept = kept.union(&p.aabb);
            }
            !settled
        });
        let (i, by) = self
            .pieces
            .iter()
            .enumerate()
            .map(|(i, p)| (i, beyond(p)))
            .fold((0, 0.0), |m, x| if x.1 > m.1 { x } else { m });
        (by > 0.0).then_some(i)
    }

    /// The box, and whether it is within the tolerance of the known part
    /// of the true box on every face.
    fn finish(self) -> (Aabb<D>, bool) {
        let aabb = self.pieces.iter().fold(self.kept, |b, p| b.union(&p.aabb));
        let fine = !self.inner.is_empty() && within(&aabb, &self.bound());
        (aabb, fine)
    }
}

/// True when box `inner` lies within box `outer`.
fn within<const D: usize>(inner: &Aabb<D>, outer: &Aabb<D>) -> bool {
    (0..D).all(|k| outer.min[k] <= inner.min[k] && inner.max[k] <= outer.max[k])
}

/// `[min, max]` of `n · p` over the points `p` of frame `f` (at rest).
fn projection<const D: usize>(f: &Frame<D>, n: &[f64; D]) -> [f64; 2] {
    f.vertices().map(|v| dot(&v, n)).fold([f64::INFINITY, f64::NEG_INFINITY], |[lo, hi], x| [lo.min(x), hi.max(x)])
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// How many sampled vertices of the true frame lie outside the
    /// enclosure of their piece, each face moved out by its own growth
    /// ([`Mover::growth`]) with the per-face widths scaled by `scale`
    /// (1: as built). Random frames of both kinds and velocities, pivots
    /// near and far, turns of 0.01 to 3 rad a step about random axes,
    /// pieces from the whole step to a 1,024th, 33 instants a piece.
    fn outside<const D: usize>(seed: u64, scale: f64) -> usize {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let mut out = 0;
        for _ in 0..400 {
            let kind = if r.random_bool(0.5) { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
            let o: [f64; D] = std::array::from_fn(|_| r.random_range(-1.5..1.5));
            let c: [[f64; D]; D] = std::array::from_fn(|_| std::array::from_fn(|_| r.random_range(-1.0..1.0)));
            let Ok(f) = Frame::new(kind, o, c) else { continue };
            let f = f.with_velocity(std::array::from_fn(|_| r.random_range(-2.0..2.0))).expect("valid");
            let reach = if r.random_bool(0.3) { 4.0 } else { 0.5 };
            let pivot: [f64; D] = std::array::from_fn(|k| o[k] + r.random_range(-reach..reach));
            let angle = [0.01, 0.1, 0.5, 1.0, 3.0][r.random_range(0..5)] * if r.random_bool(0.5) { 1.0 } else { -1.0 };
            let axis: [f64; 3] = std::array::from_fn(|_| r.random_range(-1.0..1.0));
            let n = norm(&axis).max(1e-9);
            let rate = if D == 2 { [0.0, 0.0, angle] } else { axis.map(|x| x / n * angle) };
            let spin = Spin::from_parts(pivot, rate);
            let mut m = Mover::new(&f, &spin);
            m.face_widths = m.face_widths.map(|w| w.map(|x| x * scale));
            let span = 0.5_f64.powi(r.random_range(0..=10));
            let t0 = r.random_range(0.0..=1.0 - span);
            let e = m.enclosure(t0, t0 + span).expect("in range");
            for k in 0..=32 {
                let s = k as f64 / 32.0;
                for v in spin.frame_at(&f, t0 + s * span).expect("in range").vertices() {
                    if !e.contains_point(&v, s) {
                        out += 1;
                    }
                }
            }
        }
        out
    }

    /// How many faces of the true intersection's box, at sampled instants
    /// of a piece, lie beyond the piece's lid ([`Pair::lid`], its
    /// second-order term scaled by `second`; 1: as built), and how many
    /// faces were bounded at all. Random pairs of both kinds, both turning
    /// (0.01 to 3 rad a step about random axes, pivots near and far) and
    /// moving, pieces from a quarter of the step to a 4,096th, bases found
    /// at one end of the piece (as the refinement does) or inside it, 33
    /// instants a piece.
    fn beyond_lids<const D: usize>(seed: u64, second: f64) -> (usize, usize) {
        let mut r = ChaCha8Rng::seed_from_u64(seed);
        let (mut out, mut bounded) = (0, 0);
        let random_frame = |r: &mut ChaCha8Rng| loop {
            let kind = if r.random_bool(0.5) { FrameKind::Cuboid } else { FrameKind::Tetrahedron };
            let o: [f64; D] = std::array::from_fn(|_| r.random_range(-0.6..0.6));
            let c: [[f64; D]; D] = std::array::from_fn(|_| std::array::from_fn(|_| r.random_range(-1.0..1.0)));
            if let Ok(f) = Frame::new(kind, o, c) {
                break f.with_velocity(std::array::from_fn(|_| r.random_range(-1.0..1.0))).expect("valid");
            }
        };
        let spin = |f: &Frame<D>, r: &mut ChaCha8Rng| {
            let reach = if r.random_bool(0.3) { 3.0 } else { 0.5 };
            let pivot: [f64; D] = std::array::from_fn(|k| f.origin()[k] + r.random_range(-reach..reach));
            let angle =
                [0.0, 0.01, 0.1, 0.5, 1.0, 3.0][r.random_range(0..6)] * if r.random_bool(0.5) { 1.0 } else { -1.0 };
            let axis: [f64; 3] = std::array::from_fn(|_| r.random_range(-1.0..1.0));
            let n = norm(&axis).max(1e-9);
            Spin::from_parts(pivot, if D == 2 { [0.0, 0.0, angle] } else { axis.map(|x| x / n * angle) })
        };
        for _ in 0..600 {
            let (a, b) = (random_frame(&mut r), random_frame(&mut r));
            let (sa, sb) = (spin(&a, &mut r), spin(&b, &mut r));
            if sa.is_still() && sb.is_still() {
                continue;
            }
            let mut pair = Pair::new(Mover::new(&a, &sa), Mover::new(&b, &sb), 1e-3);
            pair.list_planes();
            let span = 0.5_f64.powi(r.random_range(2..=12));
            let t0 = r.random_range(0.0..=1.0 - span);
            let tc = [t0, t0 + span, t0 + r.random_range(0.0..=span)][r.random_range(0..3)];
            let at = pair.planes_at(tc);
            let lid = pair.lid(&at, [t0, t0 + span], tc, &pair.bases(&at, 0x3f), second);
            bounded += (0..D)
                .map(|k| usize::from(lid.max[k].is_finite()) + usize::from(lid.min[k].is_finite()))
                .sum::<usize>();
            for i in 0..=32 {
                let t = t0 + span * i as f64 / 32.0;
                let (Some(pa), Some(pb)) = (pair.a.pose_at(t), pair.b.pose_at(t)) else { continue };
                let Some(x) = intersect(&pa, &pb) else { continue };
                out += (0..D).filter(|&k| x.aabb.max[k] > lid.max[k]).count();
                out += (0..D).filter(|&k| x.aabb.min[k] < lid.min[k]).count();
            }
        }
        (out, bounded)
    }

    #[test]
    fn lids_hold_the_true_intersection() {
        let (two, three) = (beyond_lids::<2>(3, 1.0), beyond_lids::<3>(4, 1.0));
        let (two_first, three_first) = (beyond_lids::<2>(3, 0.0), beyond_lids::<3>(4, 0.0));
        println!("faces beyond their lid, of faces bounded: 2D {two:?}, 3D {three:?}");
        println!("with the first-order terms only: 2D {two_first:?}, 3D {three_first:?}");
        for (d, (out, bounded)) in [(2, two), (3, three)] {
            assert_eq!(out, 0, "{d}D");
            // The lids bound faces (the test is not vacuous).
            assert!(bounded > 500, "{d}D: {bounded} faces bounded");
        }
        // The second-order term is needed: without it, lids miss faces of
        // the true intersection (the test can fail).
        assert!(two_first.0 > 0 && three_first.0 > 0);
    }

    #[test]
    fn enclosures_grown_face_by_face_hold_the_true_frame() {
        assert_eq!(outside::<2>(1, 1.0), 0);
        assert_eq!(outside::<3>(2, 1.0), 0);
        // The widths are tight: scaled down, the enclosures miss vertices
        // (the test can fail).
        assert!(outside::<2>(1, 0.8) > 0);
        assert!(outside::<3>(2, 0.8) > 0);
    }
}
