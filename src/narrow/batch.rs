//! Fourier–Motzkin elimination on [`LANES`] pairs at once: the batched
//! narrow phase's first kernel, for 3D moving pairs of parallelepipeds (the
//! most common contact of a step).
//!
//! Each lane runs the very operations of the scalar solver
//! (`elimination.rs`) in the same order, so its answer is the scalar
//! answer bit for bit (no fused multiply-add anywhere, as in the scalar
//! path). The scalar solver compacts the rows it keeps; here every row
//! keeps its slot and a per-lane `alive` mask says whether the scalar
//! solver would have kept it. The surviving rows of a lane stay in their
//! scalar order, so pairs of rows are combined, and bounds tightened, in
//! the scalar order too. A lane that the scalar solver would have left
//! early (infeasible) is marked `done` and takes no further part.
//!
//! Slots: 3 initial slab rows (a parallelepiped `A`; a parallelepiped `B`
//! adds no row) → eliminating `X₀` gives 3 substituted rows and 3 pairs
//! (6 slots) → eliminating `X₁` gives 6 + 15 = 21 slots → eliminating `X₂`
//! leaves bounds on `t` only.
//!
//! The arithmetic is written lane-wise over `[f64; LANES]` with selects
//! rather than branches where the lanes may differ, so that the compiler
//! can use SIMD registers (two lanes per SSE2 instruction on any x86-64).

use super::elimination::{Bounds, CAP_INITIAL, EPS, Infeasible, MAX_VARS, NOISE, Row};
use super::relative::Relative;
use super::system;
use crate::frame::{Frame, FrameKind};
use crate::math::{fmax, fmin};
use arrayvec::ArrayVec;

/// Pairs solved together.
pub(crate) const LANES: usize = 4;

type L = [f64; LANES];
type M = [bool; LANES];

/// Number of variables of a 3D moving system: `X₀, X₁, X₂, t`.
const V: usize = 4;

/// `N` rows of [`LANES`] pairs, structure of arrays.
#[derive(Clone, Copy)]
struct Rows<const N: usize> {
    a: [[L; MAX_VARS]; N],
    lo: [L; N],
    hi: [L; N],
    s: [L; N],
    alive: [M; N],
}

impl<const N: usize> Rows<N> {
    const EMPTY: Self = Rows {
        a: [[[0.0; LANES]; MAX_VARS]; N],
        lo: [[0.0; LANES]; N],
        hi: [[0.0; LANES]; N],
        s: [[0.0; LANES]; N],
        alive: [[false; LANES]; N],
    };

    fn get(&self, i: usize, l: usize) -> Row {
        Row { a: std::array::from_fn(|j| self.a[i][j][l]), lo: self.lo[i][l], hi: self.hi[i][l], s: self.s[i][l] }
    }

    fn set(&mut self, i: usize, l: usize, row: &Row) {
        for j in 0..MAX_VARS {
            self.a[i][j][l] = row.a[j];
        }
        self.lo[i][l] = row.lo;
        self.hi[i][l] = row.hi;
        self.s[i][l] = row.s;
        self.alive[i][l] = true;
    }
}

/// The bounds of every lane, and which lanes are finished (infeasible).
struct Lanes {
    bounds: [Bounds; LANES],
    done: M,
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

/// Admits `row` into slot `i` of `out` for lane `l`, or finishes the lane.
#[inline(always)]
fn admit_into<const N: usize>(row: Row, first: usize, lanes: &mut Lanes, l: usize, out: &mut Rows<N>, i: usize) {
    match admit(row, first, &mut lanes.bounds[l]) {
        Ok(Some(row)) => out.set(i, l, &row),
        Ok(None) => {}
        Err(Infeasible) => lanes.done[l] = true,
    }
}

/// Eliminates variable `k` from the `n` slots of `rows` into `out`: first
/// each row with `x_k`'s range substituted (slot `i` → slot `i`), then each
/// pair `(j, i)`, `j < i`, in order (slots `n ..`).
#[inline(always)]
fn eliminate<const N: usize, const O: usize>(k: usize, rows: &Rows<N>, n: usize, lanes: &mut Lanes, out: &mut Rows<O>) {
    let next = k + 1;
    for i in 0..n {
        for l in 0..LANES {
            if !rows.alive[i][l] || lanes.done[l] {
                continue;
            }
            let r = rows.get(i, l);
            let alpha = r.a[k];
            if alpha == 0.0 {
                out.set(i, l, &r);
                continue;
            }
            let (zlo, zhi) = (lanes.bounds[l].lo[k], lanes.bounds[l].hi[k]);
            let (p, q) = (alpha * zlo, alpha * zhi);
            let mut row = r;
            row.a[k] = 0.0;
            row.lo -= fmax(p, q);
            row.hi -= fmin(p, q);
            admit_into(row, next, lanes, l, out, i);
        }
    }
    let mut slot = n;
    for j in 0..n {
        for i in j + 1..n {
            combine(k, rows, j, i, lanes, out, slot);
            slot += 1;
        }
    }
}

/// The pair `(j, i)` of `rows` combined to cancel `x_k`, into slot `slot`.
#[inline(always)]
fn combine<const N: usize, const O: usize>(
    k: usize,
    rows: &Rows<N>,
    j: usize,
    i: usize,
    lanes: &mut Lanes,
    out: &mut Rows<O>,
    slot: usize,
) {
    let next = k + 1;
    for l in 0..LANES {
        if !(rows.alive[j][l] && rows.alive[i][l]) || lanes.done[l] {
            continue;
        }
        let (beta, alpha) = (rows.a[j][k][l], rows.a[i][k][l]);
        if beta == 0.0 || alpha == 0.0 {
            continue;
        }
        let (rj_lo, rj_hi, rk_lo, rk_hi) = (rows.lo[j][l], rows.hi[j][l], rows.lo[i][l], rows.hi[i][l]);
        let (jl, jh) = if alpha > 0.0 { (alpha * rj_lo, alpha * rj_hi) } else { (alpha * rj_hi, alpha * rj_lo) };
        let (kl, kh) = if beta > 0.0 { (beta * rk_lo, beta * rk_hi) } else { (beta * rk_hi, beta * rk_lo) };
        let (lo, hi) = (kl - jh, kh - jl);
        if lo == f64::NEG_INFINITY && hi == f64::INFINITY {
            continue;
        }
        let s = alpha.abs() * rows.s[j][l] + beta.abs() * rows.s[i][l];
        let mut row = Row { a: [0.0; MAX_VARS], lo, hi, s };
        for v in next..V {
            row.a[v] = beta * rows.a[i][v][l] - alpha * rows.a[j][v][l];
        }
        admit_into(row, next, lanes, l, out, slot);
    }
}

/// The contact intervals of up to [`LANES`] 3D pairs of parallelepipeds
/// moving relative to each other, each given in canonical order with its
/// relative frame `B` in `A`'s coordinates: `out[l]` is
/// `moving_interval`'s answer for pair `l`, bit for bit.
pub(crate) fn moving_intervals(rels: &[Relative<3>], out: &mut [Option<[f64; 2]>]) {
    debug_assert!(rels.len() <= LANES && out.len() >= rels.len());
    let mut lanes = Lanes { bounds: [Bounds::UNIT; LANES], done: [true; LANES] };
    let mut initial = Rows::<CAP_INITIAL>::EMPTY;
    for (l, rel) in rels.iter().enumerate() {
        let mut rows = ArrayVec::<Row, CAP_INITIAL>::new();
        lanes.done[l] = system::build::<3, V>(FrameKind::Cuboid, rel, &mut lanes.bounds[l], &mut rows).is_err();
        for (i, row) in rows.iter().enumerate() {
            initial.set(i, l, row);
        }
    }
    // A parallelepiped `A` gives 3 slab rows; `B` adds none.
    let mut first = Rows::<6>::EMPTY;
    eliminate(0, &initial, 3, &mut lanes, &mut first);
    let mut second = Rows::<21>::EMPTY;
    eliminate(1, &first, 6, &mut lanes, &mut second);
    // The last elimination leaves `t` alone: every row becomes a bound, no
    // slot is written (as the scalar solver's capacity-0 output).
    let mut last = Rows::<0>::EMPTY;
    eliminate(2, &second, 21, &mut lanes, &mut last);
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
