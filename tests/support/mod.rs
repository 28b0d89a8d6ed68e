//! The one support module of the integration tests. The suite
//! (`tests/suite.rs`) declares it with `mod support;` and its area folders'
//! files import it with `use crate::support;` (`tests/world_allocations.rs`,
//! a crate of its own, likewise). Each crate uses only part of it, hence
//! the blanket `dead_code` allowance.
//!
//! * [`math`]: the seeded generator ([`rng`]) and the small vector helpers,
//!   for every crate (re-exported here).
//! * Seeded pair generators (rand 0.9 + ChaCha8, fixed seeds): [`Set`] and
//!   [`gen_pair`] — the paper's uniform ±100 frames, random oriented boxes,
//!   slivers, far offsets (±1e6) and near-touching pairs (gap ±1e-6·scale,
//!   vertex–face, face–face and, in 3D, edge–edge), static or moving.
//! * The parry oracle ([`Oracle`], implemented by [`Parry2`] and [`Parry3`]):
//!   GJK on the raw vertex sets (a support map, exact for convex hulls),
//!   `intersection_test` for static pairs and `cast_shapes` for the first
//!   contact time of moving pairs, and the GJK/EPA contact (normal and
//!   depth) the penetration query is compared with.
//! * The "don't care" band: [`margin`], a signed distance (positive: gap,
//!   negative: penetration depth) of `A` against the set swept by `B` relative
//!   to `A`, and [`band`] = 1e-9 · [`pair_scale`].
//! * An independent exact reference ([`reference`]): vertex enumeration of
//!   the halfspace system of `A ∩ B` (in `(x, t)` space for moving pairs), which
//!   gives the exact box and contact interval without FMB or GJK.
//! * [`brute`]: a brute-force oracle for the intersection of two frames
//!   (vertex enumeration), independent of `fmbgrid::narrow`.
//! * [`world`]: scene generators and the brute-force reference of
//!   `World::step`, for the world suites.
//!
//! Everything here only uses the public API of `fmbgrid` (origin, components,
//! velocity, kind), never its inverse matrices, so the reference and the margin
//! are independent of the code under test.
#![allow(dead_code)]

pub mod brute;
pub mod exact_sat;
pub mod math;
pub mod world;

pub use math::*;

use fmbgrid::{Frame, FrameKind};
use rand::Rng;

/// Relative width of the "don't care" band around touching.
pub const BAND: f64 = 1e-9;

/// Feasibility tolerances of the exact reference ([`exact`]), relative to
/// the pair's extent: `REF_TIGHT` accepts only vertices that satisfy every
/// facet up to round-off (it may drop a badly conditioned true vertex), and
/// `REF_LOOSE` keeps every true vertex (it may admit a spurious vertex of
/// nearly parallel facets just outside). The exact answer lies between the
/// two.
pub const REF_TIGHT: f64 = 1e-13;
pub const REF_LOOSE: f64 = 1e-10;

/// A uniform random vector in `[-r, r]^D`.
pub fn uniform_vec<const D: usize>(rng: &mut TestRng, r: f64) -> [f64; D] {
    std::array::from_fn(|_| rng.random_range(-r..=r))
}

/// A uniformly distributed random unit vector.
pub fn random_dir<const D: usize>(rng: &mut TestRng) -> [f64; D] {
    loop {
        let v: [f64; D] = uniform_vec(rng, 1.0);
        let n = norm(v);
        if n > 0.1 && n <= 1.0 {
            return mul(v, 1.0 / n);
        }
    }
}

/// A uniformly distributed random rotation, as its columns (the images of
/// the local axes).
pub fn random_rotation<const D: usize>(rng: &mut TestRng) -> [[f64; D]; D] {
    match D {
        2 => {
            let a = rng.random_range(0.0..std::f64::consts::TAU);
            let (s, c) = a.sin_cos();
            let cols = [[c, s], [-s, c]];
            std::array::from_fn(|i| std::array::from_fn(|k| cols[i][k]))
        }
        3 => {
            // Shoemake's uniform unit quaternion.
            let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
            let tau = std::f64::consts::TAU;
            let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
            let (x, y, z, w) = (a * (tau * u2).sin(), a * (tau * u2).cos(), b * (tau * u3).sin(), b * (tau * u3).cos());
            let m = [
                [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + z * w), 2.0 * (x * z - y * w)],
                [2.0 * (x * y - z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + x * w)],
                [2.0 * (x * z + y * w), 2.0 * (y * z - x * w), 1.0 - 2.0 * (x * x + y * y)],
            ];
            std::array::from_fn(|i| std::array::from_fn(|k| m[i][k]))
        }
        _ => unreachable!("2D or 3D only"),
    }
}

// ---------------------------------------------------------------------------
// Frame geometry from the public API only.
// ---------------------------------------------------------------------------

/// Rebuilds `f` with new numbers, keeping its kind.
pub fn rebuild<const D: usize>(
    f: &Frame<D>,
    origin: [f64; D],
    comps: [[f64; D]; D],
    velocity: [f64; D],
) -> Result<Frame<D>, fmbgrid::FrameError> {
    Frame::new(f.kind(), origin, comps)?.with_velocity(velocity)
}

/// `f` translated by `off` (velocity unchanged).
pub fn translated<const D: usize>(f: &Frame<D>, off: [f64; D]) -> Option<Frame<D>> {
    rebuild(f, add(f.origin(), off), f.components(), f.velocity()).ok()
}

/// `f` with every coordinate, component and velocity multiplied by `s`.
pub fn scaled<const D: usize>(f: &Frame<D>, s: f64) -> Option<Frame<D>> {
    rebuild(f, mul(f.origin(), s), f.components().map(|c| mul(c, s)), mul(f.velocity(), s)).ok()
}

/// Vertices of `f` at time `t`, relative to the point `c`:
/// `(O - c) + t·V + Σ (selected) cᵢ`. With `c` the origin of one frame of a
/// pair the subtraction is exact or nearly so (Sterbenz), so far-offset pairs
/// reach parry and the reference without losing their relative geometry.
pub fn vertices_rel<const D: usize>(f: &Frame<D>, c: [f64; D], t: f64) -> Vec<[f64; D]> {
    let base = add(sub(f.origin(), c), mul(f.velocity(), t));
    let comps = f.components();
    match f.kind() {
        FrameKind::Cuboid => (0..1usize << D)
            .map(|m| {
                let mut p = base;
                for (i, ci) in comps.iter().enumerate() {
                    if m & (1 << i) != 0 {
                        p = add(p, *ci);
                    }
                }
                p
            })
            .collect(),
        FrameKind::Tetrahedron => std::iter::once(base).chain(comps.iter().map(|ci| add(base, *ci))).collect(),
    }
}

/// The set swept by `b` relative to `a` over the step, relative to `c`: the
/// vertices of `B(0) - t·Vₐ` for `t ∈ {0, 1}` (a convex hull).
pub fn swept_rel<const D: usize>(a: &Frame<D>, b: &Frame<D>, c: [f64; D]) -> Vec<[f64; D]> {
    let w = sub(b.velocity(), a.velocity());
    let mut p = vertices_rel(b, c, 0.0);
    if w.iter().any(|&x| x != 0.0) {
        let moved: Vec<_> = p.iter().map(|v| add(*v, w)).collect();
        p.extend(moved);
    }
    p
}

/// Edge directions of `f` (its components, plus their differences for a
/// simplex).
pub fn edge_dirs<const D: usize>(f: &Frame<D>) -> Vec<[f64; D]> {
    let c = f.components();
    let mut e = c.to_vec();
    if f.kind() == FrameKind::Tetrahedron {
        for i in 0..D {
            for j in i + 1..D {
                e.push(sub(c[j], c[i]));
            }
        }
    }
    e
}

/// A facet `n·x - t·(n·v) <= off` (`n` a unit outward normal), in
/// coordinates relative to some point `c`.
#[derive(Clone, Copy, Debug)]
pub struct Half<const D: usize> {
    pub n: [f64; D],
    pub off: f64,
    /// `n · velocity`.
    pub nv: f64,
}

/// The facets of `f`, relative to `c`, computed from the origin and the
/// components (not from `fmbgrid`'s inverse).
pub fn halfspaces<const D: usize>(f: &Frame<D>, c: [f64; D]) -> Vec<Half<D>> {
    let o = sub(f.origin(), c);
    let comps = f.components();
    let v = f.velocity();
    let mut out = Vec::with_capacity(2 * D);
    let mut push = |n: [f64; D], through: [f64; D]| {
        let n = normalize(n);
        out.push(Half { n, off: dot(n, through), nv: dot(n, v) });
    };
    for i in 0..D {
        let others: Vec<[f64; D]> = (0..D).filter(|&j| j != i).map(|j| comps[j]).collect();
        let mut n = orthogonal(&others);
        if dot(n, comps[i]) < 0.0 {
            n = mul(n, -1.0);
        }
        // X_i >= 0: the facet through the origin, normal -n.
        push(mul(n, -1.0), o);
        if f.kind() == FrameKind::Cuboid {
            // X_i <= 1.
            push(n, add(o, comps[i]));
        }
    }
    if f.kind() == FrameKind::Tetrahedron {
        // Σ X_i <= 1: the facet through the vertices O + c_i.
        let diffs: Vec<[f64; D]> = (1..D).map(|j| sub(comps[j], comps[0])).collect();
        let mut n = orthogonal(&diffs);
        if dot(n, comps[0]) < 0.0 {
            n = mul(n, -1.0);
        }
        push(n, add(o, comps[0]));
    }
    out
}

/// Largest coordinate magnitude or extent of the two frames' (swept) boxes:
/// the scale of the pair, positions included (inputs carry round-off
/// relative to their magnitude).
pub fn pair_scale<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    exact_sat::pair_scale(a, b)
}

/// Largest extent of the two frames' (swept) boxes, positions excluded.
pub fn pair_extent<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    let mut s: f64 = 0.0;
    for f in [a, b] {
        let bx = f.aabb();
        for i in 0..D {
            s = s.max(bx.max[i] - bx.min[i]);
        }
    }
    s
}

/// The half width of the "don't care" band of a pair: `1e-9 · pair_scale`.
pub fn band<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    BAND * pair_scale(a, b)
}

/// Separating-axis signed margin of two point sets' hulls: the largest gap
/// between their projections over all axes orthogonal to `D - 1` of the
/// `dirs` (every facet normal of the Minkowski difference when `dirs` holds
/// all edge directions of both hulls). Positive: a lower bound of the
/// distance; negative: minus the exact penetration depth.
pub fn sat_margin<const D: usize>(p: &[[f64; D]], q: &[[f64; D]], dirs: &[[f64; D]]) -> f64 {
    let mut best = f64::NEG_INFINITY;
    let mut axis = |u: [f64; D]| {
        let l = norm(u);
        if l.is_nan() || l <= 0.0 {
            return;
        }
        let u = mul(u, 1.0 / l);
        let (mut p0, mut p1, mut q0, mut q1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
        for x in p {
            let d = dot(*x, u);
            p0 = p0.min(d);
            p1 = p1.max(d);
        }
        for x in q {
            let d = dot(*x, u);
            q0 = q0.min(d);
            q1 = q1.max(d);
        }
        best = best.max((q0 - p1).max(p0 - q1));
    };
    match D {
        2 => dirs.iter().for_each(|d| axis(orthogonal(&[*d]))),
        _ => {
            for i in 0..dirs.len() {
                for j in i + 1..dirs.len() {
                    axis(orthogonal(&[dirs[i], dirs[j]]));
                }
            }
        }
    }
    best
}

/// Signed margin of a pair (moving: of `A(0)` against the set swept by `B`
/// relative to `A`, which meets `A`'s interior iff the frames' interiors meet
/// at some instant): positive = distance, negative = penetration depth.
///
/// Penetration depths come from the separating-axis formula over every facet
/// normal of the Minkowski difference (exact); distances are the larger of
/// that lower bound and parry's GJK distance, so the measure never
/// understates how far from touching a pair is by more than GJK's error.
pub fn margin<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    let c = a.origin();
    let pa = vertices_rel(a, c, 0.0);
    let pb = swept_rel(a, b, c);
    let mut dirs = edge_dirs(a);
    dirs.extend(edge_dirs(b));
    let w = sub(b.velocity(), a.velocity());
    if w.iter().any(|&x| x != 0.0) {
        dirs.push(w);
    }
    let s = sat_margin(&pa, &pb, &dirs);
    if s > 0.0 { s.max(O::distance(&pa, &pb)) } else { s }
}

/// Signed margin of the two frames frozen at time `t`.
pub fn margin_at<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>, t: f64) -> f64 {
    let c = a.origin();
    let pa = vertices_rel(a, c, t);
    let pb = vertices_rel(b, c, t);
    let mut dirs = edge_dirs(a);
    dirs.extend(edge_dirs(b));
    let s = sat_margin(&pa, &pb, &dirs);
    if s > 0.0 { s.max(O::distance(&pa, &pb)) } else { s }
}

// ---------------------------------------------------------------------------
// Independent exact reference: vertex enumeration.
// ---------------------------------------------------------------------------

/// What the reference finds for a pair.
#[derive(Clone, Copy, Debug)]
pub struct Reference<const D: usize> {
    /// World box of the vertices of `A ∩ B` (moving: of the set swept by
    /// `A(t) ∩ B(t)`).
    pub min: [f64; D],
    pub max: [f64; D],
    /// First and last instants of (closed) contact; `[0, 1]` when static.
    pub time: [f64; 2],
    /// Number of vertices found.
    pub vertices: usize,
}

/// Solves the `n × n` system `m z = r` by Gaussian elimination with partial
/// pivoting; `None` when (nearly) singular.
fn solve(m: &mut [[f64; 5]; 4], n: usize) -> Option<[f64; 4]> {
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        let scale = m[piv][..n].iter().fold(0.0, |s: f64, x| s.max(x.abs()));
        let p = m[piv][col].abs();
        if p.is_nan() || p <= 1e-12 * scale {
            return None;
        }
        m.swap(col, piv);
        let pivot_row = m[col];
        for row in m.iter_mut().take(n).skip(col + 1) {
            let f = row[col] / pivot_row[col];
            for (x, y) in row[col..=n].iter_mut().zip(&pivot_row[col..=n]) {
                *x -= f * y;
            }
        }
    }
    let mut z = [0.0; 4];
    for i in (0..n).rev() {
        let mut s = m[i][n];
        for k in i + 1..n {
            s -= m[i][k] * z[k];
        }
        z[i] = s / m[i][i];
    }
    z.iter().all(|x| x.is_finite()).then_some(z)
}

/// Exact box (and contact interval) of `A ∩ B` by enumerating the vertices of
/// its halfspace system: every choice of `n` facets (`n = D`, or `D + 1` with
/// `t` when the frames move relative to each other, the time bounds
/// `0 <= t <= 1` included) whose common point satisfies all other facets
/// within `tol` (a distance). `None` when no vertex is found.
pub fn reference<const D: usize>(a: &Frame<D>, b: &Frame<D>, tol: f64) -> Option<Reference<D>> {
    let c = a.origin();
    let w = sub(b.velocity(), a.velocity());
    let moving = w.iter().any(|&x| x != 0.0);
    let n = if moving { D + 1 } else { D };
    // Rows [coefficients..., rhs], each `row · (x, t) <= rhs`, in A's frame
    // of reference (A at rest, B moving by w) so that t has few terms.
    let mut rows: Vec<([f64; 4], f64, bool)> = Vec::new();
    let at_rest_a = Frame::new(a.kind(), a.origin(), a.components()).expect("valid frame");
    for h in halfspaces(&at_rest_a, c) {
        let mut r = [0.0; 4];
        r[..D].copy_from_slice(&h.n);
        rows.push((r, h.off, false));
    }
    let b_rel = Frame::new(b.kind(), b.origin(), b.components()).expect("valid frame");
    for h in halfspaces(&b_rel, c) {
        let mut r = [0.0; 4];
        r[..D].copy_from_slice(&h.n);
        if moving {
            r[D] = -dot(h.n, w);
        }
        rows.push((r, h.off, false));
    }
    if moving {
        let mut lo = [0.0; 4];
        lo[D] = -1.0;
        rows.push((lo, 0.0, true));
        let mut hi = [0.0; 4];
        hi[D] = 1.0;
        rows.push((hi, 1.0, true));
    }
    let m = rows.len();
    let mut found = 0;
    let (mut min, mut max) = ([f64::INFINITY; D], [f64::NEG_INFINITY; D]);
    let mut time = [f64::INFINITY, f64::NEG_INFINITY];
    let mut idx: Vec<usize> = (0..n).collect();
    loop {
        let mut sys = [[0.0; 5]; 4];
        for (r, &i) in idx.iter().enumerate() {
            sys[r][..n].copy_from_slice(&rows[i].0[..n]);
            sys[r][n] = rows[i].1;
        }
        if let Some(z) = solve(&mut sys, n) {
            let ok = rows.iter().all(|(r, rhs, is_time)| {
                let lhs: f64 = (0..n).map(|k| r[k] * z[k]).sum();
                lhs - rhs <= if *is_time { 1e-12 } else { tol }
            });
            if ok {
                found += 1;
                let t = if moving { z[D] } else { 0.0 };
                // Back to the world: A moves by t·V_A, and the points were
                // relative to c.
                for k in 0..D {
                    let x = z[k] + t * a.velocity()[k] + c[k];
                    min[k] = min[k].min(x);
                    max[k] = max[k].max(x);
                }
                time = [time[0].min(t), time[1].max(t)];
            }
        }
        // Next combination.
        let mut i = n;
        loop {
            if i == 0 {
                if found == 0 {
                    return None;
                }
                if !moving {
                    // Static (relative) pair: the intersection translates with
                    // the common velocity over the whole step.
                    let v = a.velocity();
                    for k in 0..D {
                        min[k] += v[k].min(0.0);
                        max[k] += v[k].max(0.0);
                    }
                    time = [0.0, 1.0];
                }
                return Some(Reference { min, max, time, vertices: found });
            }
            i -= 1;
            if idx[i] < m - n + i {
                idx[i] += 1;
                for j in i + 1..n {
                    idx[j] = idx[j - 1] + 1;
                }
                break;
            }
        }
    }
}

/// The exact reference bracketed between two feasibility tolerances (see
/// [`REF_TIGHT`], [`REF_LOOSE`]), both relative to the frames' sizes, not
/// their positions, since the reference works on exact differences of the
/// inputs.
#[derive(Clone, Copy, Debug)]
pub struct Exact<const D: usize> {
    /// Vertices feasible up to round-off: an inner approximation.
    pub inner: Option<Reference<D>>,
    /// Vertices feasible up to `REF_LOOSE`: an outer approximation.
    pub outer: Option<Reference<D>>,
}

/// [`reference`] at both tolerances.
pub fn exact<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Exact<D> {
    let ext = pair_extent(a, b);
    Exact { inner: reference(a, b, REF_TIGHT * ext), outer: reference(a, b, REF_LOOSE * ext) }
}

impl<const D: usize> Exact<D> {
    /// True when the closed intersection is not empty (up to `REF_LOOSE`).
    pub fn exists(&self) -> bool {
        self.outer.is_some()
    }

    /// Checks a box against the bracket: each bound must lie between the
    /// inner and the outer approximations' (widened by `tol`). Returns the
    /// largest distance to the inner approximation's box.
    pub fn check_box(&self, aabb: &fmbgrid::Aabb<D>, tol: f64) -> Result<f64, String> {
        let outer = self.outer.ok_or("the reference finds no vertex")?;
        let inner = self.inner.unwrap_or(outer);
        let mut err: f64 = 0.0;
        for k in 0..D {
            let lo_ok = outer.min[k] - tol <= aabb.min[k] && aabb.min[k] <= inner.min[k] + tol;
            let hi_ok = inner.max[k] - tol <= aabb.max[k] && aabb.max[k] <= outer.max[k] + tol;
            if !(lo_ok && hi_ok) {
                return Err(format!(
                    "box {aabb:?} not between the exact reference's inner [{:?}, {:?}] and outer [{:?}, {:?}] \
                     (tolerance {tol:e})",
                    inner.min, inner.max, outer.min, outer.max
                ));
            }
            err = err.max((aabb.min[k] - inner.min[k]).abs()).max((aabb.max[k] - inner.max[k]).abs());
        }
        Ok(err)
    }

    /// Checks a contact interval against the bracket, as [`Exact::check_box`].
    /// Returns the largest distance to the inner approximation's interval.
    pub fn check_time(&self, time: [f64; 2], tol: f64) -> Result<f64, String> {
        let outer = self.outer.ok_or("the reference finds no vertex")?;
        let inner = self.inner.unwrap_or(outer);
        let enter_ok = outer.time[0] - tol <= time[0] && time[0] <= inner.time[0] + tol;
        let exit_ok = inner.time[1] - tol <= time[1] && time[1] <= outer.time[1] + tol;
        if !(enter_ok && exit_ok) {
            return Err(format!(
                "contact interval {time:?} not between the exact reference's inner {:?} and outer {:?} (tolerance {tol:e})",
                inner.time, outer.time
            ));
        }
        Ok((time[0] - inner.time[0]).abs().max((time[1] - inner.time[1]).abs()))
    }
}

/// True when the world point `p` is inside `f` at time `t` with a clearance
/// of at least `clear` (a distance) from every facet.
pub fn strictly_inside<const D: usize>(f: &Frame<D>, p: [f64; D], t: f64, clear: f64) -> bool {
    let c = f.origin();
    let x = sub(p, c);
    halfspaces(f, c).iter().all(|h| dot(h.n, x) - t * h.nv <= h.off - clear)
}

/// A random point of `f` at time `t` (uniform local coordinates).
pub fn random_point<const D: usize>(f: &Frame<D>, t: f64, rng: &mut TestRng) -> [f64; D] {
    let mut x: [f64; D] = std::array::from_fn(|_| rng.random::<f64>());
    if f.kind() == FrameKind::Tetrahedron {
        // Uniform in the simplex: sorted spacings.
        let mut u: Vec<f64> = (0..D).map(|_| rng.random::<f64>()).collect();
        u.sort_by(f64::total_cmp);
        let mut prev = 0.0;
        for i in 0..D {
            x[i] = u[i] - prev;
            prev = u[i];
        }
    }
    let mut p = add(f.origin(), mul(f.velocity(), t));
    for (i, ci) in f.components().iter().enumerate() {
        p = add(p, mul(*ci, x[i]));
    }
    p
}

// ---------------------------------------------------------------------------
// The parry oracle.
// ---------------------------------------------------------------------------

/// Queries answered by parry on vertex sets (world or relative
/// coordinates; the hull of each set is the shape).
pub trait Oracle<const D: usize> {
    /// Closed intersection test (touching counts) by GJK.
    fn intersects(a: &[[f64; D]], b: &[[f64; D]]) -> bool;
    /// GJK distance (0 when intersecting).
    fn distance(a: &[[f64; D]], b: &[[f64; D]]) -> f64;
    /// First contact time in `[0, 1]` of `b` translating by `w` relative to
    /// `a` (`cast_shapes`, `stop_at_penetration`); `Some(0)` when they
    /// already touch.
    fn toi(a: &[[f64; D]], b: &[[f64; D]], w: [f64; D]) -> Option<f64>;
    /// Contact by GJK/EPA (`contact_support_map_support_map`): `a`'s
    /// outward normal towards `b` and the signed distance (negative:
    /// penetration depth), or `None` when they are apart.
    fn contact(a: &[[f64; D]], b: &[[f64; D]]) -> Option<([f64; D], f64)>;
    /// `cast_shapes` of `b` translating by `w` against `a`: the time of
    /// impact in `[0, 1]` and `a`'s normal there.
    fn cast_normal(a: &[[f64; D]], b: &[[f64; D]], w: [f64; D]) -> Option<(f64, [f64; D])>;
}

/// The 2D parry oracle (`parry2d-f64`).
pub struct Parry2;
/// The 3D parry oracle (`parry3d-f64`).
pub struct Parry3;

macro_rules! parry_oracle {
    ($oracle:ident, $parry:ident, $hull:ident, $d:literal) => {
        impl Oracle<$d> for $oracle {
            fn intersects(a: &[[f64; $d]], b: &[[f64; $d]]) -> bool {
                use $parry::math::Pose;
                $parry::query::details::intersection_test_support_map_support_map(
                    &Pose::IDENTITY,
                    &$hull::Hull::new(a),
                    &$hull::Hull::new(b),
                )
            }
            fn distance(a: &[[f64; $d]], b: &[[f64; $d]]) -> f64 {
                use $parry::math::Pose;
                $parry::query::details::distance_support_map_support_map(
                    &Pose::IDENTITY,
                    &$hull::Hull::new(a),
                    &$hull::Hull::new(b),
                )
            }
            fn toi(a: &[[f64; $d]], b: &[[f64; $d]], w: [f64; $d]) -> Option<f64> {
                Self::cast_normal(a, b, w).map(|(time, _)| time)
            }
            fn contact(a: &[[f64; $d]], b: &[[f64; $d]]) -> Option<([f64; $d], f64)> {
                use $parry::math::Pose;
                $parry::query::details::contact_support_map_support_map(
                    &Pose::IDENTITY,
                    &$hull::Hull::new(a),
                    &$hull::Hull::new(b),
                    0.0,
                )
                .map(|c| (c.normal1.to_array(), c.dist))
            }
            fn cast_normal(a: &[[f64; $d]], b: &[[f64; $d]], w: [f64; $d]) -> Option<(f64, [f64; $d])> {
                use $parry::math::{Pose, Vector};
                use $parry::query::details::{ShapeCastOptions, cast_shapes_support_map_support_map};
                let options = ShapeCastOptions {
                    max_time_of_impact: 1.0,
                    target_distance: 0.0,
                    stop_at_penetration: true,
                    compute_impact_geometry_on_penetration: false,
                };
                cast_shapes_support_map_support_map(
                    &Pose::IDENTITY,
                    Vector::from_array(w),
                    &$hull::Hull::new(a),
                    &$hull::Hull::new(b),
                    options,
                )
                .map(|hit| (hit.time_of_impact, hit.normal1.to_array()))
            }
        }

        mod $hull {
            use $parry::math::Vector;
            use $parry::shape::SupportMap;

            /// A convex hull given by its points (at most 16): the support map
            /// is the arg-max over them, exact for polytopes and needing no
            /// hull build.
            pub struct Hull {
                pts: [Vector; 16],
                n: usize,
            }

            impl Hull {
                pub fn new(p: &[[f64; $d]]) -> Self {
                    assert!(p.len() <= 16, "Hull::new: {} points, at most 16 are supported", p.len());
                    let mut pts = [Vector::ZERO; 16];
                    for (dst, src) in pts.iter_mut().zip(p) {
                        *dst = Vector::from_array(*src);
                    }
                    Hull { pts, n: p.len() }
                }
            }

            impl SupportMap for Hull {
                fn local_support_point(&self, dir: Vector) -> Vector {
                    let mut best = self.pts[0];
                    let mut best_d = best.dot(dir);
                    for p in &self.pts[1..self.n] {
                        let d = p.dot(dir);
                        if d > best_d {
                            best = *p;
                            best_d = d;
                        }
                    }
                    best
                }
            }
        }
    };
}

parry_oracle!(Parry2, parry2d_f64, hull2, 2);
parry_oracle!(Parry3, parry3d_f64, hull3, 3);

/// Parry's verdict on a pair: static closed intersection test when the frames
/// do not move relative to each other, otherwise "first contact within the
/// step" by `cast_shapes`.
pub fn parry_collides<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> bool {
    parry_toi::<D, O>(a, b).is_some()
}

/// Parry's first contact time of a pair (0 for a static pair that touches).
pub fn parry_toi<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> Option<f64> {
    let c = a.origin();
    let pa = vertices_rel(a, c, 0.0);
    let pb = vertices_rel(b, c, 0.0);
    let w = sub(b.velocity(), a.velocity());
    if w.iter().all(|&x| x == 0.0) { O::intersects(&pa, &pb).then_some(0.0) } else { O::toi(&pa, &pb, w) }
}

/// Parry's last contact time of a moving pair: `1 - toi` of the reversed
/// motion starting from `t = 1`.
pub fn parry_exit<const D: usize, O: Oracle<D>>(a: &Frame<D>, b: &Frame<D>) -> Option<f64> {
    let c = a.origin();
    let pa = vertices_rel(a, c, 1.0);
    let pb = vertices_rel(b, c, 1.0);
    let w = sub(b.velocity(), a.velocity());
    if w.iter().all(|&x| x == 0.0) {
        O::intersects(&pa, &pb).then_some(1.0)
    } else {
        O::toi(&pa, &pb, mul(w, -1.0)).map(|t| 1.0 - t)
    }
}

// ---------------------------------------------------------------------------
// Generators.
// ---------------------------------------------------------------------------

/// The families of generated pairs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Set {
    /// The paper's validation data: origin, components and velocity uniform in
    /// `[-100, 100]`, cuboid or tetrahedron with probability 1/2.
    Paper,
    /// Random oriented boxes: random rotations, half extents in `[0.5, 5]`.
    Obb,
    /// Slivers: one component 1e-3 of the others, or a nearly flat simplex
    /// (Hadamard ratio ~1e-4), against a regular frame or another sliver.
    Sliver,
    /// A pair of another family translated by about ±1e6 on every axis.
    Far,
    /// `B` placed with a vertex, edge or face at ±1e-6·scale of `A`'s (or
    /// exactly touching for one pair in ten).
    NearTouch,
}

impl Set {
    pub const ALL: [Set; 5] = [Set::Paper, Set::Obb, Set::Sliver, Set::Far, Set::NearTouch];

    /// The family of the `i`-th pair of a run: 30% paper, 20% boxes, 15%
    /// slivers, 15% far offsets, 20% near touching.
    pub fn for_index(i: u64) -> Set {
        match i % 20 {
            0..=5 => Set::Paper,
            6..=9 => Set::Obb,
            10..=12 => Set::Sliver,
            13..=15 => Set::Far,
            _ => Set::NearTouch,
        }
    }
}

fn random_kind(rng: &mut TestRng) -> FrameKind {
    if rng.random_bool(0.5) { FrameKind::Cuboid } else { FrameKind::Tetrahedron }
}

fn paper_frame<const D: usize>(rng: &mut TestRng, moving: bool) -> Option<Frame<D>> {
    let kind = random_kind(rng);
    let o = uniform_vec(rng, 100.0);
    let comps = std::array::from_fn(|_| uniform_vec(rng, 100.0));
    let f = Frame::new(kind, o, comps).ok()?;
    if moving { f.with_velocity(uniform_vec(rng, 100.0)).ok() } else { Some(f) }
}

fn obb_frame<const D: usize>(rng: &mut TestRng, moving: bool) -> Option<Frame<D>> {
    let center = uniform_vec(rng, 8.0);
    let he = std::array::from_fn(|_| rng.random_range(0.5..=5.0));
    let axes = random_rotation::<D>(rng);
    let f = Frame::oriented_box(center, he, axes).ok()?;
    if moving { f.with_velocity(uniform_vec(rng, 10.0)).ok() } else { Some(f) }
}

/// A regular random frame of size 1–10 near the origin.
fn plain_frame<const D: usize>(rng: &mut TestRng, moving: bool) -> Option<Frame<D>> {
    let comps = std::array::from_fn(|_| mul(random_dir(rng), rng.random_range(1.0..=10.0)));
    let f = Frame::new(random_kind(rng), uniform_vec(rng, 5.0), comps).ok()?;
    if moving { f.with_velocity(uniform_vec(rng, 10.0)).ok() } else { Some(f) }
}

fn sliver_frame<const D: usize>(rng: &mut TestRng, moving: bool) -> Option<Frame<D>> {
    let o = uniform_vec(rng, 5.0);
    let comps: [[f64; D]; D] = if rng.random_bool(0.5) {
        // One component 1e-3 of the others.
        let l = rng.random_range(1.0..=10.0);
        let thin = rng.random_range(0..D);
        std::array::from_fn(|i| {
            let len = if i == thin { 1e-3 * l } else { l * rng.random_range(0.5..=1.5) };
            mul(random_dir(rng), len)
        })
    } else {
        // Nearly flat: the last component is a combination of the others plus
        // a normal part giving a Hadamard ratio of about 1e-4.
        let mut c: [[f64; D]; D] = std::array::from_fn(|_| mul(random_dir(rng), rng.random_range(1.0..=10.0)));
        let ratio = 10f64.powf(rng.random_range(-4.5..=-3.5));
        let mut inplane = [0.0; D];
        for ci in c.iter().take(D - 1) {
            inplane = add(inplane, mul(*ci, rng.random_range(-1.0..=1.0)));
        }
        if norm(inplane) < 0.5 {
            return None;
        }
        let n = orthogonal(&c[..D - 1]);
        let prod: f64 = c[..D - 1].iter().map(|x| norm(*x)).product();
        // |det| = |n| h, product of lengths ≈ prod · |inplane|.
        let h = ratio * prod * norm(inplane) / norm(n);
        c[D - 1] = add(inplane, mul(normalize(n), h));
        c
    };
    let kind = if rng.random_bool(0.75) { FrameKind::Tetrahedron } else { FrameKind::Cuboid };
    let f = Frame::new(kind, o, comps).ok()?;
    if moving { f.with_velocity(uniform_vec(rng, 10.0)).ok() } else { Some(f) }
}

/// Facets of `f` with their vertex indices (in `vertices_rel` numbering),
/// relative to `f`'s origin.
fn facets<const D: usize>(f: &Frame<D>) -> Vec<(Half<D>, Vec<usize>)> {
    let c = f.origin();
    let v = vertices_rel(f, c, 0.0);
    let size = f.components().iter().map(|x| norm(*x)).fold(0.0, f64::max);
    halfspaces(f, c)
        .into_iter()
        .map(|h| {
            let on: Vec<usize> = (0..v.len()).filter(|&i| (dot(h.n, v[i]) - h.off).abs() <= 1e-9 * size).collect();
            (h, on)
        })
        .collect()
}

/// A random point strictly inside the convex hull of `pts` (away from its
/// boundary): half the centroid plus half a random convex combination.
fn inner_point<const D: usize>(pts: &[[f64; D]], rng: &mut TestRng) -> [f64; D] {
    let weights: Vec<f64> = pts.iter().map(|_| rng.random_range(0.05..1.0)).collect();
    let total: f64 = weights.iter().sum();
    let k = pts.len() as f64;
    let mut p = [0.0; D];
    for (x, wgt) in pts.iter().zip(&weights) {
        p = add(p, mul(*x, 0.5 * wgt / total + 0.5 / k));
    }
    p
}

/// A vector of length `len` making at least a given angle with the plane
/// orthogonal to `m`, on `m`'s side.
fn outward<const D: usize>(m: [f64; D], len: f64, rng: &mut TestRng) -> [f64; D] {
    let d: [f64; D] = random_dir(rng);
    let tang = sub(d, mul(m, dot(d, m)));
    let up = dot(d, m).abs().max(0.3);
    mul(normalize(add(tang, mul(m, up))), len)
}

/// A random unit vector orthogonal to `m`.
fn tangent<const D: usize>(m: [f64; D], rng: &mut TestRng) -> Option<[f64; D]> {
    let d: [f64; D] = random_dir(rng);
    let t = sub(d, mul(m, dot(d, m)));
    (norm(t) > 0.1).then(|| normalize(t))
}

/// A near-touching pair: `B` has a vertex, an edge or a face at signed
/// distance `g = ±1e-6 · extent(A)` (or exactly 0) from `A`'s supporting
/// feature along the normal `m`. Moving pairs move so that this is the
/// configuration of closest approach: grazing (relative velocity orthogonal
/// to `m`), arriving at `t = 1` or leaving at `t = 0`.
fn near_touch_pair<const D: usize>(rng: &mut TestRng, moving: bool) -> Option<(Frame<D>, Frame<D>)> {
    let a = plain_frame::<D>(rng, false)?;
    let facets = facets(&a);
    let verts = vertices_rel(&a, a.origin(), 0.0);
    let ext = {
        let bx = a.aabb();
        (0..D).map(|i| bx.max[i] - bx.min[i]).fold(0.0, f64::max)
    };
    let g = if rng.random_bool(0.1) {
        0.0
    } else if rng.random_bool(0.5) {
        1e-6 * ext
    } else {
        -1e-6 * ext
    };
    let mode = rng.random_range(0..if D == 3 { 3 } else { 2 });
    let (m, b_comps, b_origin_rel): ([f64; D], [[f64; D]; D], [f64; D]) = match mode {
        // B's vertex against A's face.
        0 => {
            let (h, on) = &facets[rng.random_range(0..facets.len())];
            let pts: Vec<_> = on.iter().map(|&i| verts[i]).collect();
            let p = inner_point(&pts, rng);
            let comps = std::array::from_fn(|_| outward(h.n, rng.random_range(1.0..=10.0), rng));
            (h.n, comps, add(p, mul(h.n, g)))
        }
        // B's face on A's face.
        1 => {
            let (h, on) = &facets[rng.random_range(0..facets.len())];
            let pts: Vec<_> = on.iter().map(|&i| verts[i]).collect();
            let p = inner_point(&pts, rng);
            let mut comps = [[0.0; D]; D];
            let mut start = add(p, mul(h.n, g));
            for ci in comps.iter_mut().take(D - 1) {
                *ci = mul(tangent(h.n, rng)?, rng.random_range(1.0..=10.0));
                // p sits inside B's face: B's origin is behind it.
                start = sub(start, mul(*ci, rng.random_range(0.1..=0.4)));
            }
            comps[D - 1] = outward(h.n, rng.random_range(1.0..=10.0), rng);
            (h.n, comps, start)
        }
        // B's edge across A's edge (3D).
        _ => {
            let mut edges = Vec::new();
            for i in 0..verts.len() {
                for j in i + 1..verts.len() {
                    let common: Vec<&Half<D>> =
                        facets.iter().filter(|(_, on)| on.contains(&i) && on.contains(&j)).map(|(h, _)| h).collect();
                    if common.len() == 2 {
                        edges.push((i, j, common[0].n, common[1].n));
                    }
                }
            }
            let (i, j, n1, n2) = edges[rng.random_range(0..edges.len())];
            let m = normalize(add(mul(n1, rng.random_range(0.1..=1.0)), mul(n2, rng.random_range(0.1..=1.0))));
            let s = rng.random_range(0.2..=0.8);
            let p = add(mul(verts[i], 1.0 - s), mul(verts[j], s));
            let e = sub(verts[j], verts[i]);
            // B's edge direction: orthogonal to m, not parallel to A's edge.
            let d = normalize(orthogonal(&[m, e]));
            let d = normalize(add(d, mul(normalize(sub(e, mul(m, dot(e, m)))), rng.random_range(-2.0..=2.0))));
            let len = rng.random_range(1.0..=10.0);
            let mut comps = [[0.0; D]; D];
            comps[0] = mul(d, len);
            for ci in comps.iter_mut().skip(1) {
                *ci = outward(m, rng.random_range(1.0..=10.0), rng);
            }
            let start = sub(add(p, mul(m, g)), mul(comps[0], rng.random_range(0.2..=0.8)));
            (m, comps, start)
        }
    };
    let b_kind = random_kind(rng);
    // The relative offset of B's origin from A's origin at the instant of
    // closest approach, and the relative velocity.
    let (va, w, t_star) = if moving {
        let va: [f64; D] = uniform_vec(rng, 10.0);
        let speed = rng.random_range(1.0..=20.0);
        let (w, t_star) = match rng.random_range(0..4) {
            // Grazing.
            0 => (mul(tangent(m, rng)?, speed), rng.random_range(0.0..=1.0)),
            // Arriving at t = 1.
            1 => (mul(normalize(sub(mul(tangent(m, rng)?, rng.random_range(0.0..=2.0)), m)), speed), 1.0),
            // Leaving from t = 0.
            2 => (mul(normalize(add(mul(tangent(m, rng)?, rng.random_range(0.0..=2.0)), m)), speed), 0.0),
            // No relative motion.
            _ => ([0.0; D], 0.0),
        };
        (va, w, t_star)
    } else {
        ([0.0; D], [0.0; D], 0.0)
    };
    let b_origin = add(a.origin(), sub(b_origin_rel, mul(w, t_star)));
    let a = a.with_velocity(va).ok()?;
    let b = Frame::new(b_kind, b_origin, b_comps).ok()?.with_velocity(add(va, w)).ok()?;
    Some(if rng.random_bool(0.5) { (a, b) } else { (b, a) })
}

fn single<const D: usize>(set: Set, rng: &mut TestRng, moving: bool) -> Option<Frame<D>> {
    match set {
        Set::Paper => paper_frame(rng, moving),
        Set::Obb => obb_frame(rng, moving),
        _ => unreachable!(),
    }
}

/// One pair of the family `set` (retrying until the constructors accept the
/// frames). Moving pairs: 2% have equal velocities, 2% a frame at rest.
pub fn gen_pair<const D: usize>(set: Set, moving: bool, rng: &mut TestRng) -> (Frame<D>, Frame<D>) {
    loop {
        let pair = match set {
            Set::Paper | Set::Obb => single(set, rng, moving).zip(single(set, rng, moving)),
            Set::Sliver => {
                let a = sliver_frame(rng, moving);
                let b = if rng.random_bool(0.5) { sliver_frame(rng, moving) } else { plain_frame(rng, moving) };
                a.zip(b)
            }
            Set::Far => {
                let inner = [Set::Paper, Set::Obb, Set::Sliver][rng.random_range(0..3)];
                let (a, b) = gen_pair::<D>(inner, moving, rng);
                let off: [f64; D] = std::array::from_fn(|_| {
                    let sign = if rng.random_bool(0.5) { 1.0 } else { -1.0 };
                    sign * 1e6 + rng.random_range(-1e3..=1e3)
                });
                translated(&a, off).zip(translated(&b, off))
            }
            Set::NearTouch => near_touch_pair(rng, moving),
        };
        let Some((a, b)) = pair else { continue };
        if moving && set != Set::NearTouch {
            let r: f64 = rng.random();
            if r < 0.02
                && let Ok(b2) = b.with_velocity(a.velocity())
            {
                return (a, b2);
            }
            if (0.02..0.04).contains(&r)
                && let Ok(a2) = a.with_velocity([0.0; D])
            {
                return (a2, b);
            }
        }
        return (a, b);
    }
}

/// An intersection's numbers as bits: "bit for bit" comparisons tell
/// `-0.0` from `0.0`, which `f64`'s `==` does not.
pub fn hit_bits<const D: usize>(h: &Option<fmbgrid::Intersection<D>>) -> Option<(Vec<u64>, [u64; 2])> {
    h.as_ref().map(|h| (h.aabb.min.iter().chain(&h.aabb.max).map(|x| x.to_bits()).collect(), h.time.map(f64::to_bits)))
}

/// Contacts as ids and bits (see [`hit_bits`]).
pub fn contact_bits<const D: usize>(c: &[fmbgrid::Contact<D>]) -> Vec<(fmbgrid::FrameId, fmbgrid::FrameId, Vec<u64>)> {
    c.iter()
        .map(|c| {
            let numbers = c.aabb.min.iter().chain(&c.aabb.max).chain(&c.time).map(|x| x.to_bits()).collect();
            (c.a, c.b, numbers)
        })
        .collect()
}
