//! The exact bounding box of an intersection, from its vertices.
//!
//! FM elimination gives the exact range of its *last* variable only; the
//! world box of `A ∩ B` needs the extreme points of the intersection along
//! every axis, which are among its vertices. Those are found exactly by
//! clipping:
//!
//! * **Static.** Every vertex of `A ∩ B` lies on at least `D` facets, two of
//!   them from the same frame, hence on an edge of `A` or of `B`, and it is an
//!   endpoint of that edge clipped by the other frame (an interior point of a
//!   segment inside `A ∩ B` is not a vertex). So the box of the clipped edges
//!   of both frames is the box of `A ∩ B`.
//! * **Moving.** The contact set is the polytope
//!   `P = {(x, t) : x ∈ A(t) ∩ B(t), t ∈ [0, 1]}` in `D + 1` dimensions, the
//!   intersection of the two space-time prisms `A(t)` and `B(t)`. A vertex of
//!   `P` lies in a `j`-face of one prism and a `k`-face of the other with
//!   `j + k ≤ D + 1` (their affine hulls meet in that point only). Either
//!   `j ≤ 1` or `k ≤ 1`: an endpoint of a clipped prism edge (frame edges at
//!   `t = 0` and `t = 1`, vertex paths). Or, in 3D only, `j = k = 2` away from
//!   `t ∈ {0, 1}`: an edge of `A(t)` crossing an edge of `B(t)` at one
//!   instant, solved directly. The swept box is the box of the `x` of all of
//!   them, and their `t` range is the contact interval.
//!
//! Every candidate is computed in both frames' terms, so the result does not
//! depend on argument order.

use arrayvec::ArrayVec;

use super::relative::Relative;
use crate::aabb::Aabb;
use crate::frame::{Frame, FrameKind};
use crate::math::{add, add_scaled, box_vertices, cross, dot, fmax, fmin, mul_rows, sub};

/// Most edges of a frame: 12 (3D cuboid).
const MAX_EDGES: usize = 12;

/// A segment `p + λ·e` of world points at times `t0 + λ·dt`, `λ ∈ [0, 1]`.
#[derive(Clone, Copy)]
struct Segment<const D: usize> {
    p: [f64; D],
    t0: f64,
    e: [f64; D],
    dt: f64,
}

/// The box of the candidate vertices and the range of their times.
pub(crate) struct Extent<const D: usize> {
    pub aabb: Aabb<D>,
    pub time: [f64; 2],
}

impl<const D: usize> Extent<D> {
    fn new() -> Self {
        Extent { aabb: Aabb::EMPTY, time: [f64::INFINITY, f64::NEG_INFINITY] }
    }

    fn include(&mut self, x: &[f64; D], t: f64) {
        self.aabb.include(x);
        self.time = [self.time[0].min(t), self.time[1].max(t)];
    }
}

/// Edges of `f` at rest, as `(start, direction)`.
fn edges<const D: usize>(f: &Frame<D>) -> ArrayVec<([f64; D], [f64; D]), MAX_EDGES> {
    let mut out = ArrayVec::new();
    let c = f.components();
    match f.kind() {
        FrameKind::Cuboid => {
            for (i, ci) in c.iter().enumerate() {
                for mask in (0..1usize << D).filter(|m| m & (1 << i) == 0) {
                    out.push((f.vertex(mask), *ci));
                }
            }
        }
        FrameKind::Tetrahedron => {
            let o = f.origin();
            for i in 0..D {
                out.push((o, c[i]));
                for j in i + 1..D {
                    out.push((add(&o, &c[i]), sub(&c[j], &c[i])));
                }
            }
        }
    }
    out
}

/// Clips `seg` by the closed frame `f` (moving with its velocity) and adds
/// the endpoints of what is left to `ext`.
fn clip<const D: usize>(seg: &Segment<D>, f: &Frame<D>, ext: &mut Extent<D>) {
    let vf = f.velocity();
    let rel = sub(&add_scaled(&seg.p, -seg.t0, &vf), &f.origin());
    let alpha = mul_rows(f.inv(), &rel);
    let beta = mul_rows(f.inv(), &add_scaled(&seg.e, -seg.dt, &vf));
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    // Keeps λ with g + λh ≥ 0.
    let mut keep = |g: f64, h: f64| {
        if h > 0.0 {
            lo = lo.max(-g / h);
        } else if h < 0.0 {
            hi = hi.min(-g / h);
        } else if g < 0.0 {
            hi = f64::NEG_INFINITY;
        }
    };
    for j in 0..D {
        keep(alpha[j], beta[j]);
    }
    match f.kind() {
        FrameKind::Cuboid => {
            for j in 0..D {
                keep(1.0 - alpha[j], -beta[j]);
            }
        }
        FrameKind::Tetrahedron => keep(1.0 - alpha.iter().sum::<f64>(), -beta.iter().sum::<f64>()),
    }
    if lo <= hi {
        for l in [lo, hi] {
            ext.include(&add_scaled(&seg.p, l, &seg.e), seg.t0 + l * seg.dt);
        }
    }
}

/// Slack, in local units, with which an edge parallel to a face plane is
/// kept when it lies on the plane: such edges carry vertices of the
/// intersection (boxes sharing a face plane), and round-off must not push
/// them out. It moves the box by far less than its 1e-9 accuracy.
const CLIP_SLACK: f64 = 1e-12;

/// A direction coordinate below this fraction of the direction's largest
/// is parallel to the face: its round-off must not decide the clipping.
const PARALLEL: f64 = 1e-12;

/// Narrows `[lo, hi]` to the `λ` with `g + λh ≥ 0`, given `rh = 1/h`,
/// infinite for an edge parallel to the face (kept iff it is on the inner
/// side, within the slack). Branch-free: the signs are random, and
/// mispredictions used to dominate the clipping.
#[inline(always)]
fn keep(lo: &mut f64, hi: &mut f64, g: f64, rh: f64) {
    let g = g + if rh.is_infinite() { CLIP_SLACK } else { 0.0 };
    let bound = -g * rh;
    let up = rh > 0.0;
    let (l, h) = if up { (bound, f64::INFINITY) } else { (f64::NEG_INFINITY, bound) };
    // Written so that a NaN bound (0 · ∞, on a face plane exactly) is ignored.
    *lo = if l > *lo { l } else { *lo };
    *hi = if h < *hi { h } else { *hi };
}

/// `1/x`, or infinity when `x` is negligible next to `scale`.
#[inline(always)]
fn recip(x: f64, scale: f64) -> f64 {
    let r = 1.0 / x;
    if x.abs() <= PARALLEL * scale { f64::INFINITY } else { r }
}

/// One edge direction of a frame, with the reciprocals of its coordinates in
/// the other frame's local basis, computed once for all parallel edges.
struct Direction<const D: usize> {
    world: [f64; D],
    recip: [f64; D],
    recip_sum: f64,
}

impl<const D: usize> Direction<D> {
    /// `beta`: the direction in the other frame's local coordinates.
    #[inline(always)]
    fn new(beta: [f64; D], world: [f64; D]) -> Self {
        let scale = beta.iter().fold(0.0, |m, x| fmax(m, x.abs()));
        Direction { world, recip: beta.map(|x| recip(x, scale)), recip_sum: recip(beta.iter().sum::<f64>(), scale) }
    }

    /// Clips the edge starting at local `y` / world `w` by the unit domain of
    /// `kind` and adds the endpoints of what is left to `out`.
    #[inline(always)]
    fn clip(&self, y: &[f64; D], w: &[f64; D], kind: FrameKind, out: &mut Aabb<D>) {
        let (mut lo, mut hi) = (0.0f64, 1.0f64);
        for j in 0..D {
            keep(&mut lo, &mut hi, y[j], self.recip[j]);
        }
        match kind {
            FrameKind::Cuboid => {
                for j in 0..D {
                    keep(&mut lo, &mut hi, 1.0 - y[j], -self.recip[j]);
                }
            }
            FrameKind::Tetrahedron => {
                keep(&mut lo, &mut hi, 1.0 - y.iter().sum::<f64>(), -self.recip_sum);
            }
        }
        // Branch-free: about half the edges miss, unpredictably.
        let hit = lo <= hi;
        for k in 0..D {
            let (p, q) = (w[k] + lo * self.world[k], w[k] + hi * self.world[k]);
            let (min, max) = if hit { (fmin(p, q), fmax(p, q)) } else { (f64::INFINITY, f64::NEG_INFINITY) };
            out.min[k] = fmin(out.min[k], min);
            out.max[k] = fmax(out.max[k], max);
        }
    }
}

/// Cohen–Sutherland outcode of local coordinates `y` against the unit domain
/// of `kind` (with the clipping slack): bit `j` for `yⱼ < 0`, bit `D + j` for
/// `yⱼ > 1` (cuboid) or bit `D` for `Σ yⱼ > 1` (tetrahedron); 0 inside.
#[inline(always)]
fn outcode<const D: usize>(y: &[f64; D], kind: FrameKind) -> u32 {
    let mut code = 0;
    for (j, &v) in y.iter().enumerate() {
        code |= u32::from(v < -CLIP_SLACK) << j;
    }
    match kind {
        FrameKind::Cuboid => {
            for (j, &v) in y.iter().enumerate() {
                code |= u32::from(v > 1.0 + CLIP_SLACK) << (D + j);
            }
        }
        FrameKind::Tetrahedron => code |= u32::from(y.iter().sum::<f64>() > 1.0 + CLIP_SLACK) << D,
    }
    code
}

/// Adds to `out` the vertices of `owner` inside the other frame (of kind
/// `other`) and the points where its edges cross the other's boundary;
/// `rel` is `owner` in the other frame's local coordinates.
fn clip_edges<const D: usize>(owner: &Frame<D>, rel: &Relative<D>, other: FrameKind, out: &mut Aabb<D>) {
    let c = owner.components();
    let (local, world, n) = match owner.kind() {
        FrameKind::Cuboid => (box_vertices(&rel.o, &rel.c), box_vertices(&owner.origin(), &c), 1 << D),
        FrameKind::Tetrahedron => {
            let mut local = [rel.o; 8];
            let mut world = [owner.origin(); 8];
            for i in 0..D {
                local[i + 1] = add(&rel.o, &rel.c[i]);
                world[i + 1] = add(&owner.origin(), &c[i]);
            }
            (local, world, D + 1)
        }
    };
    let mut codes = [0u32; 8];
    for m in 0..n {
        codes[m] = outcode(&local[m], other);
        if codes[m] == 0 {
            out.include(&world[m]);
        }
    }
    // Only edges with an end outside and no face with both ends beyond it
    // can cross the boundary.
    let crossing = |m: usize, k: usize| codes[m] | codes[k] != 0 && codes[m] & codes[k] == 0;
    match owner.kind() {
        FrameKind::Cuboid => {
            for i in 0..D {
                let mut dir = None;
                for m in (0..1usize << D).filter(|m| m & (1 << i) == 0) {
                    if crossing(m, m | 1 << i) {
                        let dir = dir.get_or_insert_with(|| Direction::new(rel.c[i], c[i]));
                        dir.clip(&local[m], &world[m], other, out);
                    }
                }
            }
        }
        FrameKind::Tetrahedron => {
            for k in 1..=D {
                for m in 0..k {
                    if crossing(m, k) {
                        let dir = Direction::new(sub(&local[k], &local[m]), sub(&world[k], &world[m]));
                        dir.clip(&local[m], &world[m], other, out);
                    }
                }
            }
        }
    }
}

/// Box of `A ∩ B` at `t = 0`, given each frame in the other's coordinates
/// (`ab`: `B` seen from `A`; `ba`: `A` seen from `B`), or `None` when empty.
pub(crate) fn static_box<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    ab: &Relative<D>,
    ba: &Relative<D>,
) -> Option<Aabb<D>> {
    let mut out = Aabb::EMPTY;
    clip_edges(b, ab, a.kind(), &mut out);
    clip_edges(a, ba, b.kind(), &mut out);
    (!out.is_empty()).then_some(out)
}

/// Clips every edge of `a`'s space-time prism by `b`'s.
fn clip_prism_edges<const D: usize>(a: &Frame<D>, b: &Frame<D>, ext: &mut Extent<D>) {
    let va = a.velocity();
    for (p, e) in edges(a) {
        clip(&Segment { p, t0: 0.0, e, dt: 0.0 }, b, ext);
        clip(&Segment { p: add(&p, &va), t0: 1.0, e, dt: 0.0 }, b, ext);
    }
    for m in 0..a.vertex_count() {
        clip(&Segment { p: a.vertex(m), t0: 0.0, e: va, dt: 1.0 }, b, ext);
    }
}

/// 3D only: instants where an edge of `A(t)` crosses an edge of `B(t)`.
fn edge_crossings<const D: usize>(a: &Frame<D>, b: &Frame<D>, ext: &mut Extent<D>) {
    if D != 3 {
        return;
    }
    let v3 = |x: &[f64; D]| -> [f64; 3] { std::array::from_fn(|i| x[i]) };
    let (va, vb) = (a.velocity(), b.velocity());
    let w = v3(&sub(&va, &vb));
    let (ea, eb) = (edges(a), edges(b));
    for (pa, da) in &ea {
        let (p, ad) = (v3(pa), v3(da));
        for (pb, db) in &eb {
            let (q, bd) = (v3(pb), v3(db));
            // s·a - u·b + t·w = q - p, by Cramer's rule.
            let bw = cross(&bd, &w);
            let det = -dot(&ad, &bw);
            let scale = dot(&ad, &ad).sqrt() * dot(&bd, &bd).sqrt() * dot(&w, &w).sqrt();
            if det.abs() <= 1e-12 * scale {
                continue;
            }
            let r = sub(&q, &p);
            let s = -dot(&r, &bw) / det;
            let u = dot(&ad, &cross(&r, &w)) / det;
            let t = -dot(&ad, &cross(&bd, &r)) / det;
            if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&u) && (0.0..=1.0).contains(&t) {
                let x: [f64; D] = std::array::from_fn(|i| pa[i] + t * va[i] + s * da[i]);
                ext.include(&x, t);
            }
        }
    }
}

/// Box of the set swept by `A(t) ∩ B(t)` over the step and the range of
/// contact times, or `None` when they never meet.
pub(crate) fn swept_extent<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Option<Extent<D>> {
    let mut ext = Extent::new();
    clip_prism_edges(a, b, &mut ext);
    clip_prism_edges(b, a, &mut ext);
    edge_crossings(a, b, &mut ext);
    (!ext.aabb.is_empty()).then_some(ext)
}
