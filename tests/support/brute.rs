//! A brute-force oracle for the intersection of two frames, independent of
//! `fmbgrid::narrow`.
//!
//! The oracle reads only each frame's public description (kind, origin,
//! components, velocity) and shares no code with the crate. It:
//!
//! 1. builds each frame's facets as world half-spaces `n·x ≤ d`. The normals
//!    come from its own 2D perpendiculars and 3D cross products of facet
//!    edges, are oriented away from the frame's vertex centroid, and are
//!    normalised;
//! 2. poses the intersection as a polytope: in `ℝ^D` for frames at rest, or
//!    in space-time `(x, τ)` when either frame moves. `τ = scale·t`, so every
//!    row is measured in lengths. The frame constraints become
//!    `x − t·V_F ∈ F`, plus `0 ≤ t ≤ 1`;
//! 3. enumerates the polytope's vertices. It solves every `n`-subset of the
//!    constraints (`n = D` or `D + 1`) by Gaussian elimination with partial
//!    pivoting, skips singular subsets, and keeps the solutions that satisfy
//!    every constraint up to 1e-11 × scale. Their `x` give the box and their
//!    `t` the contact interval;
//! 4. measures the *depth*: the largest `s` such that some point has slack
//!    at least `s` in every unit-normalised constraint. This is the radius of
//!    the largest inscribed ball, or minus how far every facet must be pushed
//!    outwards for the frames to meet. It is found by enumerating every
//!    `(n + 1)`-subset of the constraints of that linear program. The
//!    intersection has a non-empty interior iff `depth > 0`; `|depth|` tiny
//!    means touching;
//! 5. on request ([`bracket`]), gives the boxes of the intersection with all
//!    facets pushed in and out by a tiny distance. Any backward-stable
//!    result must lie between them, even where the box is ill-conditioned
//!    (nearly coincident facets).
//!
//! Slow (hundreds of small solves per pair) and obviously correct is the
//! point.

use fmbgrid::{Frame, FrameKind};

use super::math::{add, dot, sub};

/// Relative accuracy expected from the engine: the "touching" band of
/// [`Brute::interior`] and the comparison tolerance [`Brute::tol`] are
/// `REL_TOL · scale`.
pub const REL_TOL: f64 = 1e-9;

/// Most unknowns of any solve: `D + 1` space-time coordinates plus the depth.
const MAX_VARS: usize = 5;

/// Pivots below this (rows are unit vectors) mean a singular subset.
const PIVOT_MIN: f64 = 1e-10;

/// Feasibility tolerance of a vertex, relative to the scale: well above the
/// round-off of a vertex (about 1e-16 × its condition number), and small
/// enough that a point this far outside a facet that is nearly parallel to
/// the polytope's edge stays close.
const VERTEX_TOL: f64 = 1e-11;

/// Feasibility tolerance of the depth LP, relative to the scale. It is much
/// tighter than [`REL_TOL`], so `depth` is accurate well inside the touching
/// band.
const DEPTH_TOL: f64 = 1e-12;

/// A constraint `a · y ≤ b` on the first `n` unknowns, with `|a| = 1`.
#[derive(Clone, Copy, Debug)]
struct Row {
    a: [f64; MAX_VARS],
    b: f64,
}

impl Row {
    fn new(a: &[f64], b: f64) -> Self {
        let len = a.iter().map(|x| x * x).sum::<f64>().sqrt();
        assert!(len > 0.0, "zero constraint");
        let mut r = Row { a: [0.0; MAX_VARS], b: b / len };
        for (dst, src) in r.a.iter_mut().zip(a) {
            *dst = src / len;
        }
        r
    }

    fn slack(&self, y: &[f64; MAX_VARS], n: usize) -> f64 {
        self.b - (0..n).map(|i| self.a[i] * y[i]).sum::<f64>()
    }
}

/// What the oracle knows about `A ∩ B`.
#[derive(Clone, Debug)]
pub struct Brute<const D: usize> {
    /// True when either frame moves: the polytope lives in space-time.
    pub moving: bool,
    /// Length scale of the pair: the largest coordinate of any vertex (at
    /// `t = 0` and `t = 1`), component length or velocity length.
    pub scale: f64,
    /// Vertices of the intersection polytope.
    pub vertices: Vec<Vertex<D>>,
    /// Box of the vertices' `x` (`+∞`/`−∞` when there is none).
    pub min: [f64; D],
    /// See [`Brute::min`].
    pub max: [f64; D],
    /// Range of the vertices' `t`; `[0, 1]` for frames at rest.
    pub time: [f64; 2],
    /// Largest common slack of all constraints, in world units: `> 0` iff
    /// the intersection has an interior.
    pub depth: f64,
}

/// A vertex of the intersection polytope.
#[derive(Clone, Copy, Debug)]
pub struct Vertex<const D: usize> {
    /// World point.
    pub x: [f64; D],
    /// Time (0 for frames at rest).
    pub t: f64,
    /// `1 / |det|` of the unit constraint rows that define it (≥ 1): roughly
    /// how much an error in the data is amplified in its position.
    pub cond: f64,
}

impl<const D: usize> Brute<D> {
    /// `Some(true)` when the interior is clearly non-empty, `Some(false)`
    /// when the frames are clearly apart, and `None` within `REL_TOL·scale`
    /// of touching.
    pub fn interior(&self) -> Option<bool> {
        let band = REL_TOL * self.scale;
        if self.depth > band {
            Some(true)
        } else if self.depth < -band {
            Some(false)
        } else {
            None
        }
    }

    /// Absolute tolerance for comparing lengths with this pair's results.
    pub fn tol(&self) -> f64 {
        REL_TOL * self.scale
    }

    /// Largest condition number among the vertices whose coordinate `k` is
    /// within `window` of the box face (`max` or `min` side): how
    /// ill-conditioned that face of the box is.
    pub fn face_cond(&self, k: usize, max: bool, window: f64) -> f64 {
        let face = if max { self.max[k] } else { self.min[k] };
        self.vertices.iter().filter(|v| (v.x[k] - face).abs() <= window).map(|v| v.cond).fold(1.0, f64::max)
    }
}

/// The frame's vertices at `t = 0`.
pub fn vertices<const D: usize>(f: &Frame<D>) -> Vec<[f64; D]> {
    let (o, c) = (f.origin(), f.components());
    match f.kind() {
        FrameKind::Cuboid => {
            (0..1usize << D).map(|mask| (0..D).filter(|i| mask & (1 << i) != 0).fold(o, |p, i| add(p, c[i]))).collect()
        }
        FrameKind::Tetrahedron => std::iter::once(o).chain(c.iter().map(|ci| add(o, *ci))).collect(),
    }
}

/// The points of each facet: `D` affinely independent points spanning it.
fn facets<const D: usize>(f: &Frame<D>) -> Vec<Vec<[f64; D]>> {
    let (o, c) = (f.origin(), f.components());
    let mut out = Vec::new();
    for i in 0..D {
        // The facet X_i = 0: the origin and the other components' tips.
        let low: Vec<[f64; D]> = std::iter::once(o).chain((0..D).filter(|&j| j != i).map(|j| add(o, c[j]))).collect();
        if f.kind() == FrameKind::Cuboid {
            // The opposite facet X_i = 1.
            out.push(low.iter().map(|p| add(*p, c[i])).collect());
        }
        out.push(low);
    }
    if f.kind() == FrameKind::Tetrahedron {
        // The facet ΣX = 1 through every component's tip.
        out.push(c.iter().map(|ci| add(o, *ci)).collect());
    }
    out
}

/// A normal of the hyperplane through `D` points.
fn normal_through<const D: usize>(pts: &[[f64; D]]) -> [f64; D] {
    let e: Vec<[f64; D]> = pts[1..].iter().map(|p| sub(*p, pts[0])).collect();
    let mut n = [0.0; D];
    match D {
        2 => {
            n[0] = -e[0][1];
            n[1] = e[0][0];
        }
        3 => {
            n[0] = e[0][1] * e[1][2] - e[0][2] * e[1][1];
            n[1] = e[0][2] * e[1][0] - e[0][0] * e[1][2];
            n[2] = e[0][0] * e[1][1] - e[0][1] * e[1][0];
        }
        _ => unreachable!("frames are 2D or 3D"),
    }
    n
}

/// The frame at rest as unit outward half-spaces `(n, d)`: `n · x ≤ d`.
pub fn halfspaces<const D: usize>(f: &Frame<D>) -> Vec<([f64; D], f64)> {
    let verts = vertices(f);
    let centroid: [f64; D] = std::array::from_fn(|k| verts.iter().map(|v| v[k]).sum::<f64>() / verts.len() as f64);
    facets(f)
        .into_iter()
        .map(|pts| {
            let mut n = normal_through(&pts);
            if dot(n, sub(centroid, pts[0])) > 0.0 {
                n = n.map(|x| -x);
            }
            let len = dot(n, n).sqrt();
            let n = n.map(|x| x / len);
            (n, dot(n, pts[0]))
        })
        .collect()
}

/// True when `p` is in the closed frame at time `t`, up to `tol` (a length).
pub fn contains<const D: usize>(f: &Frame<D>, p: &[f64; D], t: f64, tol: f64) -> bool {
    let v = f.velocity();
    let at_rest: [f64; D] = std::array::from_fn(|k| p[k] - t * v[k]);
    halfspaces(f).iter().all(|(n, d)| dot(*n, at_rest) <= d + tol)
}

/// Length scale of a pair (see [`Brute::scale`]).
pub fn scale<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> f64 {
    let mut s: f64 = 0.0;
    for f in [a, b] {
        let v = f.velocity();
        for p in vertices(f) {
            for q in [p, add(p, v)] {
                s = q.iter().fold(s, |m, x| m.max(x.abs()));
            }
        }
        for c in f.components().iter().chain([&v]) {
            s = s.max(dot(*c, *c).sqrt());
        }
    }
    s
}

/// Solves the square system in `m` (`n` rows of `n` coefficients followed by
/// the right-hand side) by Gaussian elimination with partial pivoting.
/// Returns the solution and `|det|`.
fn solve(n: usize, m: &mut [[f64; MAX_VARS + 1]; MAX_VARS]) -> Option<([f64; MAX_VARS], f64)> {
    let mut det = 1.0;
    for col in 0..n {
        let piv = (col..n).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        let pivot = m[piv][col].abs();
        if pivot.is_nan() || pivot < PIVOT_MIN {
            return None;
        }
        m.swap(col, piv);
        det *= pivot;
        let (top, below) = m.split_at_mut(col + 1);
        let pivot_row = &top[col];
        for row in &mut below[..n - col - 1] {
            let f = row[col] / pivot_row[col];
            if f != 0.0 {
                for (x, p) in row[col..=n].iter_mut().zip(&pivot_row[col..=n]) {
                    *x -= f * p;
                }
            }
        }
    }
    let mut y = [0.0; MAX_VARS];
    for r in (0..n).rev() {
        let s = (r + 1..n).fold(m[r][n], |s, c| s - m[r][c] * y[c]);
        y[r] = s / m[r][r];
    }
    Some((y, det))
}

/// Calls `f` with every `k`-subset of `0..m`, as sorted indices.
fn for_each_subset(m: usize, k: usize, mut f: impl FnMut(&[usize])) {
    if k == 0 || k > m {
        return;
    }
    let mut idx: Vec<usize> = (0..k).collect();
    loop {
        f(&idx);
        let mut i = k;
        while i > 0 && idx[i - 1] == m - k + i - 1 {
            i -= 1;
        }
        if i == 0 {
            return;
        }
        idx[i - 1] += 1;
        for j in i..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// The constraints of `A ∩ B` on `n` unknowns: `x` (at rest), or `(x, τ)`
/// with `τ = scale · t`.
fn constraints<const D: usize>(a: &Frame<D>, b: &Frame<D>, moving: bool, scale: f64) -> (usize, Vec<Row>) {
    let n = if moving { D + 1 } else { D };
    let mut rows = Vec::new();
    for f in [a, b] {
        let v = f.velocity();
        for (normal, d) in halfspaces(f) {
            let mut coef = [0.0; MAX_VARS];
            coef[..D].copy_from_slice(&normal);
            if moving {
                // n · (x − t V) ≤ d, with t = τ / scale.
                coef[D] = -dot(normal, v) / scale;
            }
            rows.push(Row::new(&coef[..n], d));
        }
    }
    if moving {
        let mut e = [0.0; MAX_VARS];
        e[D] = -1.0;
        rows.push(Row::new(&e[..n], 0.0)); // τ ≥ 0
        e[D] = 1.0;
        rows.push(Row::new(&e[..n], scale)); // τ ≤ scale
    }
    (n, rows)
}

/// The vertices of `{y : a·y ≤ b + shift}` (the frames' rows shifted by
/// `shift`, the time rows kept), accepted when no slack is below `-feas`.
fn enumerate_vertices<const D: usize>(
    n: usize,
    rows: &[Row],
    moving: bool,
    scale: f64,
    shift: f64,
    feas: f64,
) -> Vec<Vertex<D>> {
    let frame_rows = if moving { rows.len() - 2 } else { rows.len() };
    let rows: Vec<Row> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| if i < frame_rows { Row { a: r.a, b: r.b + shift } } else { *r })
        .collect();
    let mut vertices = Vec::new();
    for_each_subset(rows.len(), n, |idx| {
        let mut m = [[0.0; MAX_VARS + 1]; MAX_VARS];
        for (r, &i) in idx.iter().enumerate() {
            m[r][..n].copy_from_slice(&rows[i].a[..n]);
            m[r][n] = rows[i].b;
        }
        if let Some((y, det)) = solve(n, &mut m)
            && rows.iter().all(|r| r.slack(&y, n) >= -feas)
        {
            let x: [f64; D] = std::array::from_fn(|k| y[k]);
            let t = if moving { y[D] / scale } else { 0.0 };
            vertices.push(Vertex { x, t, cond: 1.0 / det });
        }
    });
    vertices
}

/// A box and a time interval: `min > max` when empty.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds<const D: usize> {
    /// Smallest coordinates.
    pub min: [f64; D],
    /// Largest coordinates.
    pub max: [f64; D],
    /// `[t_min, t_max]`; `[0, 1]` for frames at rest.
    pub time: [f64; 2],
}

fn bounds_of<const D: usize>(vertices: &[Vertex<D>], moving: bool) -> Bounds<D> {
    let mut b =
        Bounds { min: [f64::INFINITY; D], max: [f64::NEG_INFINITY; D], time: [f64::INFINITY, f64::NEG_INFINITY] };
    for v in vertices {
        for k in 0..D {
            b.min[k] = b.min[k].min(v.x[k]);
            b.max[k] = b.max[k].max(v.x[k]);
        }
        b.time = [b.time[0].min(v.t), b.time[1].max(v.t)];
    }
    if !moving && !vertices.is_empty() {
        b.time = [0.0, 1.0];
    }
    b
}

/// Whether the pair is posed in space-time.
fn is_moving<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    a.velocity().iter().chain(&b.velocity()).any(|&v| v != 0.0)
}

/// The oracle's view of `A ∩ B` (of the space-time polytope when either
/// frame moves).
pub fn brute<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> Brute<D> {
    let moving = is_moving(a, b);
    let scale = scale(a, b);
    let (n, rows) = constraints(a, b, moving, scale);

    // Vertices: every n-subset of constraints taken as equalities.
    let vertices = enumerate_vertices(n, &rows, moving, scale, 0.0, VERTEX_TOL * scale);

    // Depth: max s subject to a·y + s ≤ b, optimal at a vertex of the
    // (n + 1)-dimensional feasible set.
    let mut depth = f64::NEG_INFINITY;
    let depth_tol = DEPTH_TOL * scale;
    for_each_subset(rows.len(), n + 1, |idx| {
        let mut m = [[0.0; MAX_VARS + 1]; MAX_VARS];
        for (r, &i) in idx.iter().enumerate() {
            m[r][..n].copy_from_slice(&rows[i].a[..n]);
            m[r][n] = 1.0;
            m[r][n + 1] = rows[i].b;
        }
        if let Some((y, _)) = solve(n + 1, &mut m) {
            let s = y[n];
            if s > depth && rows.iter().all(|r| r.slack(&y, n) - s >= -depth_tol) {
                depth = s;
            }
        }
    });

    let Bounds { min, max, time } = bounds_of(&vertices, moving);
    Brute { moving, scale, vertices, min, max, time, depth }
}

/// Bounds that any backward-stable computation of the box must respect.
/// Returns `(inner, outer)`:
/// * `inner` is the box of the intersection with every facet pushed inwards
///   by `delta = rel · scale`. Its vertices are accepted when no slack is
///   below `-delta / 2` (their own defining rows have slack zero up to
///   round-off). So, unless round-off reaches `delta / 2`, they are points of
///   `A ∩ B` and `inner ⊆` the true box;
/// * `outer` is the box with every facet pushed outwards by `delta`, and
///   vertices accepted up to another `delta`, so it contains the true box.
///
/// A result that is exact for data perturbed by less than `delta` lies
/// between them. For well-conditioned pairs the two are within about
/// `delta` of the true box. Where facets are nearly coincident they spread
/// apart, as far as the box itself is sensitive to round-off.
pub fn bracket<const D: usize>(a: &Frame<D>, b: &Frame<D>, rel: f64) -> (Bounds<D>, Bounds<D>) {
    let moving = is_moving(a, b);
    let scale = scale(a, b);
    let (n, rows) = constraints(a, b, moving, scale);
    let delta = rel * scale;
    let inner = enumerate_vertices(n, &rows, moving, scale, -delta, 0.5 * delta);
    let outer = enumerate_vertices(n, &rows, moving, scale, delta, delta);
    (bounds_of(&inner, moving), bounds_of(&outer, moving))
}
