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

use super::intersect;
use crate::aabb::Aabb;
use crate::error::FrameError;
use crate::frame::Frame;

mod boxes;
mod enclosure;
mod interval;
mod motion;

pub use boxes::MAX_BOX_TESTS;
use enclosure::Mover;
pub(crate) use enclosure::swept_aabb;
pub use interval::MAX_TESTS;
use interval::Pair;
pub use motion::Spin;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameKind;
    use crate::math::norm;
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
