//! How far apart two frames are, at least, at the end of the step: the
//! certificate temporal coherence (`world/apart.rs`) keeps for a pair FMB
//! found apart.
//!
//! The bound is the widest gap between the two frames' projections on one
//! of their face normals (the rows of `C⁻¹`, plus the slanted face of a
//! simplex) or, when none of those separates them by enough, in 3D, on the
//! cross product of an edge of each (boxes apart edge to edge). It is a
//! separating-axis test run for its margin rather than its verdict: FMB
//! has decided the pair already, so the bound only needs to be true, not
//! tight.
//! Both frames are projected through their own vertices (`o + Σ sᵢ cᵢ`),
//! never through `C⁻¹ C = I`, so the round-off of the inverse costs
//! nothing but a little width.

use crate::frame::{Frame, FrameKind};
use crate::math::{dot, sub};
use crate::query::{each_edge_axis, each_face_normal, range};

/// Round-off allowance, relative to the frames' coordinates: far above the
/// error of a few dot products in `f64`, far below FMB's touching tolerance
/// (1e-12 of the scale) plus any gap worth remembering.
const MARGIN: f64 = 1e-9;

/// A lower bound on the distance between frames `a` and `b` at the end of
/// the step (moving frames carry their displacement over the step as
/// velocity), less a round-off margin, when it exceeds `need`: the widest
/// gap along a face normal of either frame or, for two parallelepipeds in
/// 3D when that is not enough, along an edge pair's cross product.
/// Translating the frames from there by vectors whose lengths add up to
/// less than the bound keeps their interiors apart. `None` otherwise,
/// skipping the projections when a cheap bound shows they cannot exceed
/// `need`: the gap is at most the distance between the frames, and that at
/// most the distance between any point of one and any point of the other.
/// Fast movers outrun most gaps at once (`need` is their travel over one
/// step): for them the bound saves the projections of most pairs FMB
/// rejects.
pub(crate) fn gap_exceeding<const D: usize>(a: &Frame<D>, b: &Frame<D>, need: f64) -> Option<f64> {
    // `B`'s centre pulled into `A`, then that point pulled into `B`: a
    // point of each, near each other (not the closest pair, a bound).
    let p = pull_into(a, &center_at_end(b));
    let q = pull_into(b, &p);
    // `None` is always safe: the caller then tests the pair.
    if dot(&sub(&p, &q), &sub(&p, &q)) <= need * need {
        return None;
    }
    let margin = margin(a, b);
    let mut best = widest(a, b, false);
    // No face normal separates them by enough: in 3D, a pair of edges may
    // (boxes apart edge to edge, whose projections on every face normal
    // overlap). Without it the pair would be tested, and its gap sought,
    // again at every step. Two parallelepipeds only: their 9 edge pairs
    // pay (a simplex has 6 edges, and the 18 or 36 pairs cost more than
    // they save: the tetrahedra scene +5% with them).
    let boxes = a.kind() == FrameKind::Cuboid && b.kind() == FrameKind::Cuboid;
    if best - margin <= need && boxes {
        best = best.max(widest(a, b, true));
    }
    Some(best - margin).filter(|gap| *gap > need)
}

/// The widest gap between the frames' projections on their face normals
/// or, with `edges`, on their edge pairs' cross products (negative when
/// every projection overlaps).
#[inline(always)]
fn widest<const D: usize>(a: &Frame<D>, b: &Frame<D>, edges: bool) -> f64 {
    let mut best = f64::NEG_INFINITY;
    // A closure each, passed by value: through `&mut` it was not inlined
    // (the tetrahedra scene +1.4% instructions).
    if edges {
        each_edge_axis(a, b, |n| {
            best = best.max(gap_along(a, b, n));
            true
        });
    } else {
        each_face_normal(a, b, |n| {
            best = best.max(gap_along(a, b, n));
            true
        });
    }
    best
}

/// The round-off allowance of the gaps for the pair.
#[inline(always)]
fn margin<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    MARGIN * (1.0 + scale(a).max(scale(b)))
}

/// The frame's centre (a simplex's centroid) where it ends the step.
#[inline(always)]
fn center_at_end<const D: usize>(f: &Frame<D>) -> [f64; D] {
    let (o, c, v) = (f.origin(), f.components(), f.velocity());
    let w = match f.kind() {
        FrameKind::Cuboid => 0.5,
        FrameKind::Tetrahedron => 1.0 / (D as f64 + 1.0),
    };
    std::array::from_fn(|k| o[k] + v[k] + w * (0..D).map(|i| c[i][k]).sum::<f64>())
}

/// A point of the frame (where it ends the step) near `x`: `x`'s local
/// coordinates clamped into the frame's (`[0, 1]` each, or for a simplex
/// non-negative and scaled down to a sum of at most 1), mapped back. Not
/// the closest point for a skewed frame, but always a point of it.
#[inline(always)]
fn pull_into<const D: usize>(f: &Frame<D>, x: &[f64; D]) -> [f64; D] {
    let (o, c, v) = (f.origin(), f.components(), f.velocity());
    let rel: [f64; D] = std::array::from_fn(|k| x[k] - o[k] - v[k]);
    let mut z = f.inv().map(|row| dot(&row, &rel).clamp(0.0, 1.0));
    if f.kind() == FrameKind::Tetrahedron {
        let sum: f64 = z.iter().sum();
        if sum > 1.0 {
            z = z.map(|zi| zi / sum);
        }
    }
    std::array::from_fn(|k| o[k] + v[k] + (0..D).map(|i| z[i] * c[i][k]).sum::<f64>())
}

/// The gap between the projections of `a` and `b` (at the end of the step)
/// on the line of `n`, in world units; negative when they overlap.
#[inline(always)]
fn gap_along<const D: usize>(a: &Frame<D>, b: &Frame<D>, n: &[f64; D]) -> f64 {
    let ([a_lo, a_hi], [b_lo, b_hi]) = (project(a, n), project(b, n));
    (b_lo - a_hi).max(a_lo - b_hi) / dot(n, n).sqrt()
}

/// `[min, max]` of `n · p` over the points `p` of frame `f` at the end of
/// the step.
#[inline(always)]
fn project<const D: usize>(f: &Frame<D>, n: &[f64; D]) -> [f64; 2] {
    let (o, v) = (f.origin(), f.velocity());
    let base: f64 = (0..D).map(|k| n[k] * (o[k] + v[k])).sum();
    range(f.kind(), &f.components(), n, base)
}

/// The largest coordinate magnitude of the frame's (swept) box.
#[inline(always)]
fn scale<const D: usize>(f: &Frame<D>) -> f64 {
    let b = f.aabb();
    (0..D).fold(0.0_f64, |m, k| m.max(b.min[k].abs()).max(b.max[k].abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The face normals' bound alone.
    fn gap_at_end(a: &Frame3, b: &Frame3) -> f64 {
        widest(a, b, false) - margin(a, b)
    }
    use crate::frame::Frame3;
    use crate::frame::FrameKind;
    use crate::overlaps;
    use rand::{Rng, SeedableRng};

    fn random_frame(rng: &mut impl Rng, kind: FrameKind) -> Frame3 {
        let o: [f64; 3] = std::array::from_fn(|_| rng.random_range(-3.0..3.0));
        let c: [[f64; 3]; 3] = std::array::from_fn(|_| std::array::from_fn(|_| rng.random_range(-1.5..1.5)));
        Frame::new(kind, o, c).unwrap_or_else(|_| Frame3::from_aabb(o, o.map(|x| x + 1.0)).expect("a unit box"))
    }

    /// `f` at rest where it ends the step.
    fn at_end(f: &Frame3) -> Frame3 {
        let o = f.origin();
        let v = f.velocity();
        Frame::new(f.kind(), std::array::from_fn(|k| o[k] + v[k]), f.components()).expect("a valid frame")
    }

    /// Random unit vector.
    fn direction(rng: &mut impl Rng) -> [f64; 3] {
        loop {
            let u: [f64; 3] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
            let n = dot(&u, &u).sqrt();
            if n > 0.1 && n <= 1.0 {
                return u.map(|x| x / n);
            }
        }
    }

    #[test]
    fn frames_moved_by_less_than_the_gap_stay_apart() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let kinds = [FrameKind::Cuboid, FrameKind::Tetrahedron];
        let (mut apart, mut edges) = (0, 0);
        for i in 0..20_000 {
            let a = random_frame(&mut rng, kinds[i % 2]);
            let mut b = random_frame(&mut rng, kinds[(i / 2) % 2]);
            if i % 3 == 0 {
                b = b.with_velocity(direction(&mut rng).map(|x| 2.0 * x)).expect("a finite velocity");
            }
            // The bound the world keeps: face normals, then edge pairs.
            let bound = |x: &Frame3, y: &Frame3| gap_exceeding(x, y, 0.0).unwrap_or(f64::NEG_INFINITY);
            let g = bound(&a, &b);
            assert_eq!(g > 0.0, bound(&b, &a) > 0.0, "pair {i}");
            if g <= 0.0 {
                continue;
            }
            edges += usize::from(gap_at_end(&a, &b) <= 0.0);
            apart += 1;
            let (a, b) = (at_end(&a), at_end(&b));
            assert!(!overlaps(&a, &b), "pair {i}: gap {g} but overlapping");
            // Moved towards each other by 99.9% of the gap, in any split
            // and any directions: still apart.
            for _ in 0..8 {
                let share = rng.random_range(0.0..1.0);
                let (u, w) = (direction(&mut rng), direction(&mut rng));
                let moved = |f: &Frame3, d: [f64; 3], s: f64| {
                    f.with_velocity(d.map(|x| x * s * 0.999 * g)).expect("a finite velocity")
                };
                let (a2, b2) = (moved(&a, u, share), moved(&b, w, 1.0 - share));
                assert!(!overlaps(&a2, &b2), "pair {i}: gap {g} crossed");
            }
        }
        // Some box pairs only an edge pair separates (76 of them), or the
        // test misses them.
        assert!(apart > 2_000 && edges > 50, "{apart} {edges}");
    }

    #[test]
    fn the_cheap_bound_never_hides_a_gap() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        let kinds = [FrameKind::Cuboid, FrameKind::Tetrahedron];
        let (mut skipped, mut kept) = (0, 0);
        for i in 0..20_000 {
            let a = random_frame(&mut rng, kinds[i % 2]);
            let b = random_frame(&mut rng, kinds[(i / 2) % 2]);
            let b = b.with_velocity(direction(&mut rng).map(|x| 2.0 * x)).expect("a finite velocity");
            // Points pulled into a frame are in it (where it ends).
            for f in [&a, &b] {
                let x: [f64; 3] = std::array::from_fn(|_| rng.random_range(-6.0..6.0));
                let p = pull_into(f, &x);
                let rel: [f64; 3] = std::array::from_fn(|k| p[k] - f.origin()[k] - f.velocity()[k]);
                let local = f.inv().map(|row| dot(&row, &rel));
                assert!(local.iter().all(|z| *z >= -1e-9), "pair {i}: {local:?}");
                let top = if f.kind() == FrameKind::Cuboid {
                    local.iter().fold(0.0f64, |m, z| m.max(*z))
                } else {
                    local.iter().sum()
                };
                assert!(top <= 1.0 + 1e-9, "pair {i}: {local:?}");
            }
            let need = rng.random_range(0.0..2.0);
            let g = gap_at_end(&a, &b);
            match gap_exceeding(&a, &b, need) {
                Some(x) => {
                    // The face normals' bound when it is enough, else a
                    // wider one from an edge pair.
                    assert!(x.to_bits() == g.to_bits() || (g <= need && x > g), "pair {i}: {x} {g}");
                    assert!(x > need, "pair {i}");
                    kept += 1;
                }
                None => {
                    assert!(g <= need, "pair {i}: gap {g} > {need} hidden");
                    skipped += usize::from(g.is_finite());
                }
            }
        }
        assert!(skipped > 1_000 && kept > 1_000, "{skipped} {kept}");
    }

    #[test]
    fn boxes_side_by_side_are_as_far_apart_as_their_faces() {
        let a = Frame3::from_aabb([0.0; 3], [1.0; 3]).expect("a box");
        let b = Frame3::from_aabb([1.5, 0.2, 0.2], [2.5, 0.8, 0.8]).expect("a box");
        assert!((gap_at_end(&a, &b) - 0.5).abs() < 1e-8);
        // Moving 0.4 closer over the step: 0.1 apart at its end.
        let b = b.with_velocity([-0.4, 0.0, 0.0]).expect("a finite velocity");
        assert!((gap_at_end(&a, &b) - 0.1).abs() < 1e-8);
        // Overlapping at the end: nothing proven.
        let b = b.with_velocity([-0.6, 0.0, 0.0]).expect("a finite velocity");
        assert!(gap_at_end(&a, &b) < 0.0);
    }
}
