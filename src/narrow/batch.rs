//! Fourier–Motzkin elimination on [`LANES`] pairs at once: the batched
//! narrow phase's first kernel, for 3D moving pairs of parallelepipeds (the
//! most common contact of a step).
//!
//! Each lane runs the very operations of the scalar solver
//! (`elimination.rs`) in the same order, so its answer is the scalar
//! answer bit for bit (no fused multiply-add anywhere, as in the scalar
//! path). As in the scalar solver, each lane keeps its own compacted list
//! of rows (`count[l]` of them, in the scalar order); the lanes walk the
//! positions in lockstep, a lane taking part where the position exists
//! for it, so the work is that of the lane with the most rows, not of every
//! row any lane could have. A lane the scalar solver would have left early
//! (infeasible) is marked `done` and takes no further part.
//!
//! Capacities: 3 initial slab rows (a parallelepiped `A`; a parallelepiped
//! `B` adds no row) → eliminating `X₀` gives at most 3 + 3 = 6 rows →
//! eliminating `X₁` at most 6 + 15 = 21 → eliminating `X₂` leaves bounds on
//! `t` only. Measured on moving oriented boxes whose boxes overlap: 3.0,
//! 5.0 and 5.6 rows on average at those stages.
//!
//! The last stage (every row a bound on `t`, the same variable in every
//! lane) is written lane-wise over `[f64; LANES]` with selects instead of
//! branches, so that the compiler can keep the lanes in SIMD registers
//! (two lanes per SSE2 instruction on any x86-64).

use super::elimination::{Bounds, CAP_INITIAL, EPS, Infeasible, MAX_VARS, NOISE, Row};
use super::relative::Relative;
use super::system;
use crate::frame::{Frame, FrameKind};
use crate::math::{fmax, fmin};
use arrayvec::ArrayVec;
use wide::{CmpEq, CmpGe, CmpGt, CmpLe, CmpLt, f64x4};

/// Pairs solved together.
pub(crate) const LANES: usize = 4;

type L = [f64; LANES];
type M = [bool; LANES];

/// Number of variables of a 3D moving system: `X₀, X₁, X₂, t`.
const V: usize = 4;

/// Up to `N` rows for each of [`LANES`] pairs, structure of arrays: lane
/// `l`'s rows are positions `0..count[l]`.
#[derive(Clone, Copy)]
struct Rows<const N: usize> {
    a: [[L; MAX_VARS]; N],
    lo: [L; N],
    hi: [L; N],
    s: [L; N],
    count: [usize; LANES],
}

impl<const N: usize> Rows<N> {
    const EMPTY: Self = Rows {
        a: [[[0.0; LANES]; MAX_VARS]; N],
        lo: [[0.0; LANES]; N],
        hi: [[0.0; LANES]; N],
        s: [[0.0; LANES]; N],
        count: [0; LANES],
    };

    fn get(&self, i: usize, l: usize) -> Row {
        Row { a: std::array::from_fn(|j| self.a[i][j][l]), lo: self.lo[i][l], hi: self.hi[i][l], s: self.s[i][l] }
    }

    /// Appends `row` to lane `l` (room by the counting argument above).
    fn push(&mut self, l: usize, row: &Row) {
        let i = self.count[l];
        for j in 0..MAX_VARS {
            self.a[i][j][l] = row.a[j];
        }
        self.lo[i][l] = row.lo;
        self.hi[i][l] = row.hi;
        self.s[i][l] = row.s;
        self.count[l] = i + 1;
    }

    /// The most rows of any lane.
    fn most(&self) -> usize {
        self.count.iter().copied().max().unwrap_or(0)
    }
}

/// The bounds of every lane, and which lanes are finished (infeasible).
struct Lanes {
    bounds: [Bounds; LANES],
    done: M,
}

/// Scratch rows of a batch, kept between batches (only the counts are
/// reset).
pub(crate) struct Batch {
    initial: Rows<CAP_INITIAL>,
    first: Rows<6>,
    second: Rows<21>,
}

impl Batch {
    pub(crate) fn new() -> Box<Batch> {
        Box::new(Batch { initial: Rows::EMPTY, first: Rows::EMPTY, second: Rows::EMPTY })
    }
}

/// The scalar `admit` of one row in lane `l` (see `elimination.rs`):
/// `Some(row)` when the row is kept.
#[inline(always)]
fn admit(mut row: Row, first: usize, bounds: &mut Bounds) -> Result<Option<Row>, Infeasible> {
    let tiny = EPS * row.s;
    let noise = NOISE * row.s;
    let (mut min, mut max) = (0.0, 0.0);
    let (mut count, mut var) = (0, first);
    for j in first..V {
        let a = row.a[j];
        let (p, q) = (a * bounds.lo[j], a * bounds.hi[j]);
        if a.abs() <= noise {
            let slack = fmax(p.abs(), q.abs());
            row.lo -= slack;
            row.hi += slack;
            row.a[j] = 0.0;
        } else {
            min += fmin(p, q);
            max += fmax(p, q);
            count += 1;
            var = j;
        }
    }
    if max - row.lo <= tiny || row.hi - min <= tiny {
        return Err(Infeasible);
    }
    if row.lo <= min {
        row.lo = f64::NEG_INFINITY;
    }
    if row.hi >= max {
        row.hi = f64::INFINITY;
    }
    if row.lo == f64::NEG_INFINITY && row.hi == f64::INFINITY {
        return Ok(None);
    }
    if count >= 2 {
        return Ok(Some(row));
    }
    let a = row.a[var];
    let c = 1.0 / a;
    let (lo, hi) = if c > 0.0 { (c * row.lo, c * row.hi) } else { (c * row.hi, c * row.lo) };
    bounds.tighten(var, lo, hi, row.s / a.abs())?;
    Ok(None)
}

/// Admits `row` into lane `l` of `out`, or finishes the lane.
#[inline(always)]
fn admit_into<const N: usize>(row: Row, first: usize, lanes: &mut Lanes, l: usize, out: &mut Rows<N>) {
    match admit(row, first, &mut lanes.bounds[l]) {
        Ok(Some(row)) => out.push(l, &row),
        Ok(None) => {}
        Err(Infeasible) => lanes.done[l] = true,
    }
}

/// Eliminates variable `k` from `rows` into `out`, in the scalar order:
/// first each row with `x_k`'s range substituted, then each pair `(j, i)`,
/// `j < i`.
#[inline(always)]
fn eliminate<const N: usize, const O: usize>(k: usize, rows: &Rows<N>, lanes: &mut Lanes, out: &mut Rows<O>) {
    let next = k + 1;
    let n = rows.most();
    for i in 0..n {
        for l in 0..LANES {
            if i >= rows.count[l] || lanes.done[l] {
                continue;
            }
            let r = rows.get(i, l);
            let alpha = r.a[k];
            if alpha == 0.0 {
                out.push(l, &r);
                continue;
            }
            let (zlo, zhi) = (lanes.bounds[l].lo[k], lanes.bounds[l].hi[k]);
            let (p, q) = (alpha * zlo, alpha * zhi);
            let mut row = r;
            row.a[k] = 0.0;
            row.lo -= fmax(p, q);
            row.hi -= fmin(p, q);
            admit_into(row, next, lanes, l, out);
        }
    }
    for j in 0..n {
        for i in j + 1..n {
            for l in 0..LANES {
                if i < rows.count[l] && !lanes.done[l] {
                    combine(k, rows, j, i, l, lanes, out);
                }
            }
        }
    }
}

/// Rows `j` and `i` of lane `l` combined to cancel `x_k`.
#[inline(always)]
fn combine<const N: usize, const O: usize>(
    k: usize,
    rows: &Rows<N>,
    j: usize,
    i: usize,
    l: usize,
    lanes: &mut Lanes,
    out: &mut Rows<O>,
) {
    let next = k + 1;
    let (beta, alpha) = (rows.a[j][k][l], rows.a[i][k][l]);
    if beta == 0.0 || alpha == 0.0 {
        return;
    }
    let (rj_lo, rj_hi, rk_lo, rk_hi) = (rows.lo[j][l], rows.hi[j][l], rows.lo[i][l], rows.hi[i][l]);
    let (jl, jh) = if alpha > 0.0 { (alpha * rj_lo, alpha * rj_hi) } else { (alpha * rj_hi, alpha * rj_lo) };
    let (kl, kh) = if beta > 0.0 { (beta * rk_lo, beta * rk_hi) } else { (beta * rk_hi, beta * rk_lo) };
    let (lo, hi) = (kl - jh, kh - jl);
    if lo == f64::NEG_INFINITY && hi == f64::INFINITY {
        return;
    }
    let s = alpha.abs() * rows.s[j][l] + beta.abs() * rows.s[i][l];
    let mut row = Row { a: [0.0; MAX_VARS], lo, hi, s };
    for v in next..V {
        row.a[v] = beta * rows.a[i][v][l] - alpha * rows.a[j][v][l];
    }
    admit_into(row, next, lanes, l, out);
}

/// `t`'s bounds and round-off scales of every lane, as lane vectors.
struct TimeBounds {
    lo: f64x4,
    hi: f64x4,
    lo_s: f64x4,
    hi_s: f64x4,
}

/// A lane mask from a predicate per lane (all bits set where true, as
/// the vector comparisons give).
#[inline(always)]
fn mask(f: impl FnMut(usize) -> bool) -> f64x4 {
    let mut f = f;
    f64x4::from(std::array::from_fn::<f64, LANES, _>(|l| if f(l) { f64::from_bits(!0) } else { 0.0 }))
}

/// Lane-wise `f(l)`.
#[inline(always)]
fn lanes_of(f: impl FnMut(usize) -> f64) -> f64x4 {
    f64x4::from(std::array::from_fn::<f64, LANES, _>(f))
}

/// [`fmin`] lane-wise: `a` where `a < b`, else `b` (the scalar's choice,
/// also for signed zeros).
#[inline(always)]
fn vmin(a: f64x4, b: f64x4) -> f64x4 {
    a.cmp_lt(b).blend(a, b)
}

/// [`fmax`] lane-wise.
#[inline(always)]
fn vmax(a: f64x4, b: f64x4) -> f64x4 {
    a.cmp_gt(b).blend(a, b)
}

/// The scalar `admit` of a row on `t` alone (`first = 3`) and the bound's
/// `tighten`, on every lane of `active` at once: each blend takes the
/// value the scalar branch would have produced in that lane.
#[inline(always)]
fn admit_time(a3: f64x4, lo: f64x4, hi: f64x4, s: f64x4, active: f64x4, t: &mut TimeBounds, done: &mut f64x4) {
    let zero = f64x4::ZERO;
    let (neg_inf, inf) = (f64x4::splat(f64::NEG_INFINITY), f64x4::splat(f64::INFINITY));
    let tiny = f64x4::splat(EPS) * s;
    let noise = f64x4::splat(NOISE) * s;
    let (p, q) = (a3 * t.lo, a3 * t.hi);
    let is_noise = a3.abs().cmp_le(noise);
    let slack = vmax(p.abs(), q.abs());
    let row_lo = is_noise.blend(lo - slack, lo);
    let row_hi = is_noise.blend(hi + slack, hi);
    let min = is_noise.blend(zero, zero + vmin(p, q));
    let max = is_noise.blend(zero, zero + vmax(p, q));
    let infeasible = (max - row_lo).cmp_le(tiny) | (row_hi - min).cmp_le(tiny);
    let row_lo = row_lo.cmp_le(min).blend(neg_inf, row_lo);
    let row_hi = row_hi.cmp_ge(max).blend(inf, row_hi);
    let none = row_lo.cmp_eq(neg_inf) & row_hi.cmp_eq(inf);
    let live = active & !*done;
    let bound = live & !is_noise & !none & !infeasible;
    let c = f64x4::ONE / a3;
    let up = c.cmp_gt(zero);
    let (tl, th) = (up.blend(c * row_lo, c * row_hi), up.blend(c * row_hi, c * row_lo));
    let ts = s / a3.abs();
    let raise = bound & tl.cmp_gt(t.lo);
    let lower = bound & th.cmp_lt(t.hi);
    t.lo = raise.blend(tl, t.lo);
    t.lo_s = raise.blend(ts, t.lo_s);
    t.hi = lower.blend(th, t.hi);
    t.hi_s = lower.blend(ts, t.hi_s);
    let empty = (t.hi - t.lo).cmp_le(f64x4::splat(EPS) * (t.hi_s + t.lo_s));
    *done |= live & (infeasible | (bound & empty));
}

/// The last elimination (`X₂`): every row becomes a bound on `t`, in the
/// scalar order (the substituted rows, then the pairs), all lanes at once.
fn last_stage(rows: &Rows<21>, lanes: &mut Lanes) {
    let mut t = TimeBounds {
        lo: lanes_of(|l| lanes.bounds[l].lo[3]),
        hi: lanes_of(|l| lanes.bounds[l].hi[3]),
        lo_s: lanes_of(|l| lanes.bounds[l].lo_s[3]),
        hi_s: lanes_of(|l| lanes.bounds[l].hi_s[3]),
    };
    let (zlo, zhi) = (lanes_of(|l| lanes.bounds[l].lo[2]), lanes_of(|l| lanes.bounds[l].hi[2]));
    let mut done = mask(|l| lanes.done[l]);
    let v = |x: &L| f64x4::from(*x);
    let n = rows.most();
    for i in 0..n {
        let active = mask(|l| i < rows.count[l]);
        let alpha = v(&rows.a[i][2]);
        let (p, q) = (alpha * zlo, alpha * zhi);
        let lo = v(&rows.lo[i]) - vmax(p, q);
        let hi = v(&rows.hi[i]) - vmin(p, q);
        admit_time(v(&rows.a[i][3]), lo, hi, v(&rows.s[i]), active, &mut t, &mut done);
    }
    let zero = f64x4::ZERO;
    for j in 0..n {
        let (beta, rj_lo, rj_hi, rj_s, rj_t) =
            (v(&rows.a[j][2]), v(&rows.lo[j]), v(&rows.hi[j]), v(&rows.s[j]), v(&rows.a[j][3]));
        let beta_up = beta.cmp_gt(zero);
        for i in j + 1..n {
            let (alpha, ri_lo, ri_hi) = (v(&rows.a[i][2]), v(&rows.lo[i]), v(&rows.hi[i]));
            let alpha_up = alpha.cmp_gt(zero);
            let (jl, jh) = (alpha_up.blend(alpha * rj_lo, alpha * rj_hi), alpha_up.blend(alpha * rj_hi, alpha * rj_lo));
            let (kl, kh) = (beta_up.blend(beta * ri_lo, beta * ri_hi), beta_up.blend(beta * ri_hi, beta * ri_lo));
            let (lo, hi) = (kl - jh, kh - jl);
            let unbounded = lo.cmp_eq(f64x4::splat(f64::NEG_INFINITY)) & hi.cmp_eq(f64x4::splat(f64::INFINITY));
            let active = mask(|l| i < rows.count[l]) & !beta.cmp_eq(zero) & !alpha.cmp_eq(zero) & !unbounded;
            let s = alpha.abs() * rj_s + beta.abs() * v(&rows.s[i]);
            let a3 = beta * v(&rows.a[i][3]) - alpha * rj_t;
            admit_time(a3, lo, hi, s, active, &mut t, &mut done);
        }
    }
    let (tlo, thi, tlo_s, thi_s) = (t.lo.to_array(), t.hi.to_array(), t.lo_s.to_array(), t.hi_s.to_array());
    let done = done.to_array();
    for (l, b) in lanes.bounds.iter_mut().enumerate() {
        (b.lo[3], b.hi[3], b.lo_s[3], b.hi_s[3]) = (tlo[l], thi[l], tlo_s[l], thi_s[l]);
        lanes.done[l] = done[l].to_bits() != 0;
    }
}

/// The contact intervals of up to [`LANES`] 3D pairs of parallelepipeds
/// moving relative to each other, each given in canonical order by its
/// relative frame `B` in `A`'s coordinates: `out[l]` is
/// `moving_interval`'s answer for pair `l`, bit for bit.
pub(crate) fn moving_intervals(batch: &mut Batch, rels: &[Relative<3>], out: &mut [Option<[f64; 2]>]) {
    debug_assert!(rels.len() <= LANES && out.len() >= rels.len());
    let mut lanes = Lanes { bounds: [Bounds::UNIT; LANES], done: [true; LANES] };
    batch.initial.count = [0; LANES];
    for (l, rel) in rels.iter().enumerate() {
        let mut rows = ArrayVec::<Row, CAP_INITIAL>::new();
        lanes.done[l] = system::build::<3, V>(FrameKind::Cuboid, rel, &mut lanes.bounds[l], &mut rows).is_err();
        for row in &rows {
            batch.initial.push(l, row);
        }
    }
    batch.first.count = [0; LANES];
    eliminate(0, &batch.initial, &mut lanes, &mut batch.first);
    batch.second.count = [0; LANES];
    eliminate(1, &batch.first, &mut lanes, &mut batch.second);
    last_stage(&batch.second, &mut lanes);
    for (l, o) in out.iter_mut().enumerate().take(rels.len()) {
        let b = &lanes.bounds[l];
        *o = (!lanes.done[l]).then(|| [b.lo[3], b.hi[3]]);
    }
}

/// True when the pair (in canonical order) takes the batched kernel: 3D,
/// both parallelepipeds, moving relative to each other, neither thin.
pub(crate) fn batchable<const D: usize>(a: &Frame<D>, b: &Frame<D>) -> bool {
    D == 3
        && a.kind() == FrameKind::Cuboid
        && b.kind() == FrameKind::Cuboid
        && a.velocity() != b.velocity()
        && !(a.is_thin() || b.is_thin())
}
