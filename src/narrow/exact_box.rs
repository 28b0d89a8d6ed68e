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
//!   them.
//!
//! Clipping happens in the other frame's local coordinates (the unit cube or
//! simplex), reusing the change of basis of the narrow phase, with
//! Cohen–Sutherland outcodes: vertices inside are taken as they are, edges
//! with both ends beyond one face are skipped, and only crossing edges are
//! clipped. Every candidate is computed from both frames' sides, so the box
//! does not depend on argument order.

use super::relative::Relative;
use crate::aabb::Aabb;
use crate::frame::{Frame, FrameKind};
use crate::math::{add, add_scaled, box_vertices, cross, dot, fmax, fmin, norm, sub};

/// Slack, in local units, with which an edge parallel to a face plane is
/// kept when it lies on the plane: such edges carry vertices of the
/// intersection (boxes sharing a face plane), and round-off must not push
/// them out. It moves the box by far less than its 1e-9 accuracy.
const CLIP_SLACK: f64 = 1e-12;

/// A direction is parallel to a face when its local coordinate across the
/// face is below this fraction of the largest it could be (face normal's
/// length × direction's length): within round-off, it must not decide the
/// clipping. Per face, since a sliver's faces have normals of very
/// different lengths.
const PARALLEL: f64 = 1e-13;

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

/// Lengths of a frame's face normals in its local coordinates: the rows of
/// `C⁻¹`, and for a simplex their sum (its slanted face; `None` for a
/// cuboid, which has no such face).
#[derive(Clone, Copy)]
struct FaceScales<const D: usize> {
    rows: [f64; D],
    sum: Option<f64>,
}

impl<const D: usize> FaceScales<D> {
    fn of(f: &Frame<D>) -> Self {
        let inv = f.inv();
        let sum = (f.kind() == FrameKind::Tetrahedron).then(|| {
            let total: [f64; D] = std::array::from_fn(|k| (0..D).map(|j| inv[j][k]).sum());
            norm(&total)
        });
        FaceScales { rows: inv.map(|r| norm(&r)), sum }
    }
}

/// One edge direction of a frame, with the reciprocals of its coordinates in
/// the other frame's local basis, computed once for all parallel edges.
struct Direction<const D: usize> {
    world: [f64; D],
    recip: [f64; D],
    recip_sum: f64,
}

impl<const D: usize> Direction<D> {
    /// `beta`: the direction `world` in the other frame's local
    /// coordinates, whose face normals have lengths `faces`.
    #[inline(always)]
    fn new(beta: [f64; D], world: [f64; D], faces: &FaceScales<D>) -> Self {
        let len = norm(&world);
        Direction {
            world,
            recip: std::array::from_fn(|j| recip(beta[j], faces.rows[j] * len)),
            // Only a simplex clips by its slanted face (see `clip`).
            recip_sum: faces.sum.map_or(0.0, |sum| recip(beta.iter().sum::<f64>(), sum * len)),
        }
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
    code(y, kind, CLIP_SLACK)
}

/// Like [`outcode`] with the slack turned inward: a bit is set when the
/// point is beyond the face or within the slack of it. A segment can only
/// meet a face plane if some end has the inner bit and not both have the
/// outer bit.
#[inline(always)]
fn inner_code<const D: usize>(y: &[f64; D], kind: FrameKind) -> u32 {
    code(y, kind, -CLIP_SLACK)
}

/// The outcode bits with the faces moved out by `slack` (in by `-slack`).
#[inline(always)]
fn code<const D: usize>(y: &[f64; D], kind: FrameKind, slack: f64) -> u32 {
    let mut code = 0;
    for (j, &v) in y.iter().enumerate() {
        code |= u32::from(v < -slack) << j;
    }
    match kind {
        FrameKind::Cuboid => {
            for (j, &v) in y.iter().enumerate() {
                code |= u32::from(v > 1.0 + slack) << (D + j);
            }
        }
        FrameKind::Tetrahedron => code |= u32::from(y.iter().sum::<f64>() > 1.0 + slack) << D,
    }
    code
}

/// The vertices of one frame at one instant: in the other frame's local
/// coordinates, in world coordinates, and their outcodes, outer and inner
/// (entries past `n` are unused).
struct Vertices<const D: usize> {
    local: [[f64; D]; 8],
    world: [[f64; D]; 8],
    codes: [u32; 8],
    inner: [u32; 8],
    n: usize,
}

impl<const D: usize> Vertices<D> {
    /// `owner`'s vertices at time `t`, where `rel` is `owner` seen from the
    /// other frame, of kind `other`.
    #[inline(always)]
    fn new(owner: &Frame<D>, rel: &Relative<D>, other: FrameKind, t: f64) -> Self {
        let (lo, wo) = (add_scaled(&rel.o, t, &rel.v), add_scaled(&owner.origin(), t, &owner.velocity()));
        let c = owner.components();
        let (local, world, n) = match owner.kind() {
            FrameKind::Cuboid => (box_vertices(&lo, &rel.c), box_vertices(&wo, &c), 1 << D),
            FrameKind::Tetrahedron => {
                let (mut local, mut world) = ([lo; 8], [wo; 8]);
                for i in 0..D {
                    local[i + 1] = add(&lo, &rel.c[i]);
                    world[i + 1] = add(&wo, &c[i]);
                }
                (local, world, D + 1)
            }
        };
        Self::coded(local, world, n, other)
    }

    /// The same vertices displaced by `local` in the other frame's
    /// coordinates and `world` in the world's (the frame at another time).
    #[inline(always)]
    fn shifted(&self, local: &[f64; D], world: &[f64; D], other: FrameKind) -> Self {
        let l = self.local.map(|p| add(&p, local));
        let w = self.world.map(|p| add(&p, world));
        Self::coded(l, w, self.n, other)
    }

    #[inline(always)]
    fn coded(local: [[f64; D]; 8], world: [[f64; D]; 8], n: usize, other: FrameKind) -> Self {
        let mut codes = [0u32; 8];
        for m in 0..n {
            codes[m] = outcode(&local[m], other);
        }
        Vertices { local, world, codes, inner: [0; 8], n }
    }

    /// Adds the inner codes (only the edge crossings of moving pairs need
    /// them).
    fn with_inner(mut self, other: FrameKind) -> Self {
        for m in 0..self.n {
            self.inner[m] = inner_code(&self.local[m], other);
        }
        self
    }

    /// Adds the vertices inside the other frame to `out`.
    #[inline(always)]
    fn include_inside(&self, out: &mut Aabb<D>) {
        for m in 0..self.n {
            if self.codes[m] == 0 {
                out.include(&self.world[m]);
            }
        }
    }
}

/// True when the segment between points of outcodes `p` and `q` may cross
/// the boundary: one end is outside and no face has both ends beyond it.
#[inline(always)]
fn crossing(p: u32, q: u32) -> bool {
    p | q != 0 && p & q == 0
}

/// An edge between vertices `m < k`; `key` numbers its direction (cuboid
/// edges along one component share it); `planes` are the outcode bits of
/// the face planes it lies on.
#[derive(Clone, Copy)]
struct Edge {
    m: u8,
    k: u8,
    key: u8,
    planes: u32,
}

/// The edges of a frame of `kind` in dimension `d`, from tables built once.
fn edges(kind: FrameKind, d: usize) -> &'static [Edge] {
    static TABLES: std::sync::OnceLock<[Vec<Edge>; 4]> = std::sync::OnceLock::new();
    let t = TABLES.get_or_init(|| {
        [
            edge_table(FrameKind::Cuboid, 2),
            edge_table(FrameKind::Tetrahedron, 2),
            edge_table(FrameKind::Cuboid, 3),
            edge_table(FrameKind::Tetrahedron, 3),
        ]
    });
    &t[2 * (d - 2) + usize::from(kind == FrameKind::Tetrahedron)]
}

fn edge_table(kind: FrameKind, d: usize) -> Vec<Edge> {
    let mut out = Vec::new();
    match kind {
        FrameKind::Cuboid => {
            for i in 0..d {
                for m in (0..1usize << d).filter(|m| m & (1 << i) == 0) {
                    // On plane X_j = 0 (bit j) or X_j = 1 (bit d + j) for j ≠ i.
                    let planes = (0..d).filter(|&j| j != i).fold(0, |p, j| p | 1 << (j + d * ((m >> j) & 1)));
                    out.push(Edge { m: m as u8, k: (m | 1 << i) as u8, key: i as u8, planes });
                }
            }
        }
        FrameKind::Tetrahedron => {
            for k in 1..=d {
                for m in 0..k {
                    // Vertex 0 is the origin, vertex i + 1 the tip of eᵢ: the
                    // edge lies on X_j = 0 for the other axes, and on ΣX = 1
                    // (bit d) unless it starts at the origin.
                    let zero = (0..d).filter(|&j| j + 1 != m && j + 1 != k).fold(0, |p, j| p | 1 << j);
                    let planes = if m == 0 { zero } else { zero | 1 << d };
                    out.push(Edge { m: m as u8, k: k as u8, key: out.len() as u8, planes });
                }
            }
        }
    }
    out
}

/// Calls `f(m, k, key, planes)` for each edge of a frame of `kind` (see
/// [`Edge`]).
#[inline(always)]
fn for_each_edge<const D: usize>(kind: FrameKind, mut f: impl FnMut(usize, usize, usize, u32)) {
    for e in edges(kind, D) {
        f(usize::from(e.m), usize::from(e.k), usize::from(e.key), e.planes);
    }
}

/// Clipping directions of a frame's edges, computed on first use and shared
/// by the edges at both ends of the step, and the face scales of the frame
/// that clips them.
struct Directions<'f, const D: usize> {
    dirs: [Option<Direction<D>>; 12],
    clipper: &'f Frame<D>,
    /// Computed on first use: most pairs clip few edges, or none.
    faces: Option<FaceScales<D>>,
}

impl<'f, const D: usize> Directions<'f, D> {
    /// Directions to be clipped by `clipper`.
    fn new(clipper: &'f Frame<D>) -> Self {
        Directions { dirs: [const { None }; 12], clipper, faces: None }
    }

    /// The clipper's face scales.
    fn faces(&mut self) -> FaceScales<D> {
        *self.faces.get_or_insert_with(|| FaceScales::of(self.clipper))
    }
}

/// Adds to `out` the points where the edges of `owner` (its vertices `vs`,
/// seen from the other frame, of kind `other`) cross the other frame's
/// boundary.
fn clip_edges<const D: usize>(
    owner: &Frame<D>,
    vs: &Vertices<D>,
    dirs: &mut Directions<'_, D>,
    other: FrameKind,
    out: &mut Aabb<D>,
) {
    let c = owner.components();
    for_each_edge::<D>(owner.kind(), |m, k, key, _| {
        if !crossing(vs.codes[m], vs.codes[k]) {
            return;
        }
        let (local, world) = (&vs.local[m], &vs.world[m]);
        if dirs.dirs[key].is_none() {
            let faces = dirs.faces();
            dirs.dirs[key] = Some(match owner.kind() {
                FrameKind::Cuboid => Direction::new(sub(&vs.local[k], local), c[key], &faces),
                FrameKind::Tetrahedron => Direction::new(sub(&vs.local[k], local), sub(&vs.world[k], world), &faces),
            });
        }
        let Some(dir) = &dirs.dirs[key] else { return };
        dir.clip(local, world, other, out);
    });
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
    let (vb, va) = (Vertices::new(b, ab, a.kind(), 0.0), Vertices::new(a, ba, b.kind(), 0.0));
    vb.include_inside(&mut out);
    va.include_inside(&mut out);
    clip_edges(b, &vb, &mut Directions::new(a), a.kind(), &mut out);
    clip_edges(a, &va, &mut Directions::new(b), b.kind(), &mut out);
    (!out.is_empty()).then_some(out)
}

/// One frame's share of the swept box: its prism's edges (edges at `t = 0`
/// and `t = 1`, vertex paths) clipped by the other prism. Returns the
/// vertices at both ends of the step for the edge crossings.
fn clip_prism<const D: usize>(
    owner: &Frame<D>,
    rel: &Relative<D>,
    other: &Frame<D>,
    out: &mut Aabb<D>,
) -> [Vertices<D>; 2] {
    let start = Vertices::new(owner, rel, other.kind(), 0.0).with_inner(other.kind());
    let end = start.shifted(&rel.v, &owner.velocity(), other.kind()).with_inner(other.kind());
    let ends = [start, end];
    let mut dirs = Directions::new(other);
    for vs in &ends {
        vs.include_inside(out);
        clip_edges(owner, vs, &mut dirs, other.kind(), out);
    }
    let path = Direction::new(rel.v, owner.velocity(), &dirs.faces());
    for m in 0..ends[0].n {
        if crossing(ends[0].codes[m], ends[1].codes[m]) {
            path.clip(&ends[0].local[m], &ends[0].world[m], other.kind(), out);
        }
    }
    ends
}

/// 3D only: points where an edge of `A(t)` crosses an edge of `B(t)`.
///
/// In `B`'s coordinates an edge of `A` sweeps a parallelogram over the
/// step, and an edge of `B` lies on two face planes of `B`'s domain: they
/// can only cross if the parallelogram straddles both planes, which the
/// outcodes of its four corners tell (inner bits on some corner, outer bits
/// not on all). Only those pairs are solved.
fn edge_crossings<const D: usize>(
    a: &Frame<D>,
    va: &[Vertices<D>; 2],
    b: &Frame<D>,
    vb: &Vertices<D>,
    out: &mut Aabb<D>,
) {
    if D != 3 {
        return;
    }
    let v3 = |x: &[f64; D]| -> [f64; 3] { std::array::from_fn(|i| x[i]) };
    let vel_a = a.velocity();
    let w = v3(&sub(&vel_a, &b.velocity()));
    let w_len = norm(&w);
    // B's edges: start, direction, direction × w, length.
    // B's world vertices at t = 0, already computed for its prism.
    let vb = &vb.world;
    let mut b_edges = [([0.0; 3], [0.0; 3], [0.0; 3], 0.0, 0u32); 12];
    let mut nb = 0;
    for_each_edge::<D>(b.kind(), |m, k, _, planes| {
        let (q, dir) = (v3(&vb[m]), v3(&sub(&vb[k], &vb[m])));
        b_edges[nb] = (q, dir, cross(&dir, &w), norm(&dir), planes);
        nb += 1;
    });
    for_each_edge::<D>(a.kind(), |ma, ka, _, _| {
        let corners = [va[0].codes[ma], va[0].codes[ka], va[1].codes[ma], va[1].codes[ka]];
        let inner = [va[0].inner[ma], va[0].inner[ka], va[1].inner[ma], va[1].inner[ka]];
        let beyond = corners.iter().fold(u32::MAX, |x, c| x & c);
        let straddles = inner.iter().fold(0, |x, c| x | c) & !beyond;
        if beyond != 0 || straddles == 0 {
            return;
        }
        let (pa, da) = (va[0].world[ma], sub(&va[0].world[ka], &va[0].world[ma]));
        let (p, ad) = (v3(&pa), v3(&da));
        let aw = cross(&ad, &w);
        let scale = norm(&ad) * w_len;
        for &(q, bd, bw, b_len, planes) in &b_edges[..nb] {
            if straddles & planes != planes {
                continue;
            }
            // s·a - u·b + t·w = q - p. With den = a·(b×w): t = r·(a×b)/den,
            // s = r·(b×w)/den, u = r·(a×w)/den (Cramer's rule).
            let den = dot(&ad, &bw);
            if den.abs() <= 1e-12 * scale * b_len {
                continue;
            }
            let inv = 1.0 / den;
            let r = sub(&q, &p);
            let t = dot(&r, &cross(&ad, &bd)) * inv;
            if !(0.0..=1.0).contains(&t) {
                continue;
            }
            let (s, u) = (dot(&r, &bw) * inv, dot(&r, &aw) * inv);
            if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&u) {
                out.include(&std::array::from_fn(|i| pa[i] + t * vel_a[i] + s * da[i]));
            }
        }
    });
}

/// Box of the set swept by `A(t) ∩ B(t)` over the step, or `None` when they
/// never meet (`ab`, `ba` as for [`static_box`]).
pub(crate) fn swept_box<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    ab: &Relative<D>,
    ba: &Relative<D>,
) -> Option<Aabb<D>> {
    let mut out = Aabb::EMPTY;
    let vb = clip_prism(b, ab, a, &mut out);
    let va = clip_prism(a, ba, b, &mut out);
    edge_crossings(a, &va, b, &vb[0], &mut out);
    (!out.is_empty()).then_some(out)
}
