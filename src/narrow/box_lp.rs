//! The exact box of an intersection, side by side, by a tiny dual simplex.
//!
//! Each side of the box is a linear program: maximise `±x_k` over the
//! contact polytope `P = {(x, t) : x ∈ A(t) ∩ B(t), t ∈ [0, 1]}` of a pair
//! moving relative to each other (static pairs keep the vertex enumeration,
//! faster there). It is written in the local coordinates `z` of one frame
//! `F` and `t`, all in `[0, 1]`, with one row per face slab of the other
//! frame `G` (its local coordinates, also in `[0, 1]`) and, for a simplex,
//! the sum rows: at most 4 variables and 5 rows, every bound `0` or `1`.
//!
//! Dropping the rows, the optimum is `F`'s extreme vertex (at the end of the
//! step where it is extreme), which makes a dual-feasible start: the dual
//! simplex then only repairs the rows that vertex violates, usually in one
//! or two pivots. `F` is the frame whose own box defines the side of the
//! frames' common box, so a vertex already inside `G` (the most common
//! optimum) costs no pivot at all.
//!
//! The pivots work on a 5 × 4 dictionary; the rows' values are computed
//! once and moved along with each pivot's entering variable (one
//! multiply-add a row, not a row's dot product); the optimum is evaluated
//! at the primal point of the final basis and clamped to the common box. When a
//! pivot is too small to trust, or a side takes more than [`MAX_PIVOTS`]
//! (degenerate cycling), the caller falls back to the vertex enumeration.

use super::relative::Relative;
use crate::aabb::Aabb;
use crate::frame::{Frame, FrameKind};
use crate::math::{fmax, fmin};

/// Research counter: pivots made (with the `box-stats` feature).
#[cfg(feature = "box-stats")]
pub(crate) static PIVOTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A row is violated when it leaves `[0, 1]` by more than this (local units,
/// as the enumeration's clipping slack).
const FEASIBLE: f64 = 1e-12;

/// Pivots smaller than this fraction of their row are round-off.
const TINY_PIVOT: f64 = 1e-11;

/// Most pivots per side before giving up.
const MAX_PIVOTS: usize = 12;

/// The rows of `F`'s program: row `r` is `b[r] + t[r] · z`, in `[0, 1]`,
/// over `N` variables (`D`, plus `t` when moving) and `M` rows (`D`, plus one
/// per simplex in the pair).
#[derive(Clone, Copy)]
struct Program<const N: usize, const M: usize> {
    b: [f64; M],
    t: [[f64; N]; M],
    /// `F` is a simplex: its sum row is the last.
    f_simplex: bool,
    /// `D`.
    dims: usize,
}

impl<const N: usize, const M: usize> Program<N, M> {
    /// The program of `F` (of kind `f_kind`) against `G` (of kind `g_kind`),
    /// `rel` being `F` seen from `G`; `N > D` adds `t` as variable `D`.
    #[inline(always)]
    fn new<const D: usize>(f_kind: FrameKind, rel: &Relative<D>, g_kind: FrameKind) -> Self {
        let f_simplex = f_kind == FrameKind::Tetrahedron;
        let mut p = Program { b: [0.0; M], t: [[0.0; N]; M], f_simplex, dims: D };
        for j in 0..D {
            p.b[j] = rel.o[j];
            for i in 0..D {
                p.t[j][i] = rel.c[i][j];
            }
            if N > D {
                p.t[j][D] = rel.v[j];
            }
        }
        let mut m = D;
        if g_kind == FrameKind::Tetrahedron {
            for j in 0..D {
                p.b[m] += p.b[j];
                for i in 0..N {
                    p.t[m][i] += p.t[j][i];
                }
            }
            m += 1;
        }
        if f_kind == FrameKind::Tetrahedron {
            p.t[m][..D].fill(1.0);
        }
        p
    }

    /// Exchanges basic row `r` and nonbasic variable `j` in the dictionary
    /// `b + t · x_N` and the reduced costs `d`; `ip` is `1 / t[r][j]`.
    #[inline(always)]
    fn pivot(b: &mut [f64; M], t: &mut [[f64; N]; M], d: &mut [f64; N], r: usize, j: usize, ip: f64) {
        // One copy per column (`j < N <= 4`), so that every index into a
        // row is a constant: a store at a computed index (clearing column `j`)
        // followed by the rows' vector loads stalled the simplex (about one
        // instruction a cycle; `box_bench intersect 3m-cc`).
        match j {
            0 => Self::pivot_on::<0>(b, t, d, r, ip),
            1 => Self::pivot_on::<1>(b, t, d, r, ip),
            2 => Self::pivot_on::<2>(b, t, d, r, ip),
            _ => Self::pivot_on::<3>(b, t, d, r, ip),
        }
    }

    /// [`Program::pivot`] on column `J` (below `N`). Column `J` of each row
    /// starts from `0.0` (as if cleared); row `r` is updated as the others
    /// (no branch on it), then replaced.
    #[inline(always)]
    fn pivot_on<const J: usize>(b: &mut [f64; M], t: &mut [[f64; N]; M], d: &mut [f64; N], r: usize, ip: f64) {
        debug_assert!(J < N);
        let mut row = [0.0; N];
        for l in 0..N {
            row[l] = if l == J { ip } else { -t[r][l] * ip };
        }
        let br = -b[r] * ip;
        for i in 0..M {
            let f = t[i][J];
            for l in 0..N {
                t[i][l] = (if l == J { 0.0 } else { t[i][l] }) + f * row[l];
            }
            b[i] += f * br;
        }
        let f = d[J];
        for l in 0..N {
            d[l] = (if l == J { 0.0 } else { d[l] }) + f * row[l];
        }
        t[r] = row;
        b[r] = br;
    }

    /// For a simplex `F`, the coordinate of its extreme vertex for the
    /// objective `d` when that vertex is not the origin.
    #[inline(always)]
    fn simplex_top(&self, d: &[f64; N]) -> Option<usize> {
        if !self.f_simplex {
            return None;
        }
        let (mut best, mut top) = (0.0, None);
        for i in 0..self.dims {
            if d[i] > best {
                best = d[i];
                top = Some(i);
            }
        }
        top
    }

    /// Maximum of `d · z` over the program, as the optimal `z`; `None` when
    /// the simplex cannot be trusted (tiny pivot, cycling, round-off
    /// infeasibility).
    #[inline(always)]
    fn maximise(&self, mut d: [f64; N]) -> Option<[f64; N]> {
        let (mut b, mut t) = (self.b, self.t);
        // Variable ids: `z_i` is `i`, row `r` is `N + r`.
        let mut nonbasic: [usize; N] = std::array::from_fn(|j| j);
        let mut basic: [usize; M] = std::array::from_fn(|r| N + r);
        let mut val: [f64; N] = std::array::from_fn(|j| if d[j] > 0.0 { 1.0 } else { 0.0 });
        if let Some(top) = self.simplex_top(&d) {
            // `F` is a simplex: start from its extreme vertex `e_top`, the
            // sum row at its upper bound and `X_top` basic in its place
            // (dual feasible: every other `d_i <= d_top`).
            let r = M - 1;
            let ip = 1.0 / t[r][top];
            Self::pivot(&mut b, &mut t, &mut d, r, top, ip);
            std::mem::swap(&mut basic[r], &mut nonbasic[top]);
            for i in 0..N {
                if i < self.dims && i != top {
                    val[i] = 0.0;
                }
            }
            val[top] = 1.0;
        }
        // The basic variables' values (each row's), computed once, then
        // moved by each pivot's step.
        let mut beta = [0.0; M];
        for r in 0..M {
            let mut s = b[r];
            for j in 0..N {
                s += t[r][j] * val[j];
            }
            beta[r] = s;
        }
        for _ in 0..=MAX_PIVOTS {
            // The most violated row leaves.
            // Selects, not branches, here and in the ratio test: which
            // row or variable wins is unpredictable.
            let (mut worst, mut leave) = (FEASIBLE, usize::MAX);
            for r in 0..M {
                let v = fmax(-beta[r], beta[r] - 1.0);
                let worse = v > worst;
                worst = if worse { v } else { worst };
                leave = if worse { r } else { leave };
            }
            if leave == usize::MAX {
                let mut z = [0.0; N];
                for j in 0..N {
                    if nonbasic[j] < N {
                        z[nonbasic[j]] = val[j];
                    }
                }
                for r in 0..M {
                    if basic[r] < N {
                        z[basic[r]] = beta[r];
                    }
                }
                return Some(z);
            }
            #[cfg(feature = "box-stats")]
            PIVOTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let r = leave;
            let up = beta[r] < 0.0;
            // Dual ratio test: the entering variable keeps every reduced
            // cost of the right sign.
            let scale = t[r].iter().fold(0.0f64, |s, x| fmax(s, x.abs()));
            let tiny = TINY_PIVOT * scale;
            let (mut best, mut enter) = (f64::INFINITY, usize::MAX);
            for j in 0..N {
                let a = t[r][j];
                let at_lower = val[j] == 0.0;
                let ok = ((up == at_lower) & (a > tiny)) | ((up != at_lower) & (a < -tiny));
                // Computed for every variable (a NaN or infinite ratio of a
                // variable not `ok` is never taken).
                let ratio = d[j].abs() / a.abs();
                let take = ok & (ratio < best);
                best = if take { ratio } else { best };
                enter = if take { j } else { enter };
            }
            if enter == usize::MAX {
                return None;
            }
            let j = enter;
            // Row `r` leaves at the bound it violated; `x_j` moves by
            // `step` to put it there, and every other row with it.
            let bound = if up { 0.0 } else { 1.0 };
            let ip = 1.0 / t[r][j];
            let step = (bound - beta[r]) * ip;
            for i in 0..M {
                beta[i] += t[i][j] * step;
            }
            beta[r] = val[j] + step;
            Self::pivot(&mut b, &mut t, &mut d, r, j, ip);
            std::mem::swap(&mut basic[r], &mut nonbasic[j]);
            val[j] = bound;
        }
        None
    }
}

/// World coordinate `k` of `F`'s point of local coordinates `z` (and time
/// `z[D]` when moving).
#[inline(always)]
fn world<const D: usize, const N: usize>(f: &Frame<D>, z: &[f64; N], k: usize) -> f64 {
    let (o, c, v) = (f.origin(), f.components(), f.velocity());
    let mut x = o[k];
    for i in 0..D {
        x += c[i][k] * z[i];
    }
    if N > D { x + v[k] * z[D] } else { x }
}

/// The frame's box over the step, `(-min, max)` per axis, from its data
/// (not its cached box, whose rounding depends on how the frame was made).
#[inline(always)]
fn reach<const D: usize>(f: &Frame<D>) -> ([f64; D], [f64; D]) {
    let (o, c, v) = (f.origin(), f.components(), f.velocity());
    let mut lo: [f64; D] = std::array::from_fn(|k| fmax(-v[k], 0.0) - o[k]);
    let mut hi: [f64; D] = std::array::from_fn(|k| fmax(v[k], 0.0) + o[k]);
    match f.kind() {
        FrameKind::Cuboid => {
            for i in 0..D {
                for k in 0..D {
                    lo[k] += fmax(-c[i][k], 0.0);
                    hi[k] += fmax(c[i][k], 0.0);
                }
            }
        }
        FrameKind::Tetrahedron => {
            let (mut down, mut up) = ([0.0; D], [0.0; D]);
            for i in 0..D {
                for k in 0..D {
                    down[k] = fmax(down[k], -c[i][k]);
                    up[k] = fmax(up[k], c[i][k]);
                }
            }
            for k in 0..D {
                lo[k] += down[k];
                hi[k] += up[k];
            }
        }
    }
    (lo, hi)
}

/// Box of the set swept by `A(t) ∩ B(t)` over the step (a pair moving
/// relative to each other), side by side; `None` when some side needs the
/// enumeration. (Static pairs keep the enumeration: faster there.)
#[inline(always)]
pub(crate) fn lp_box<const D: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    ab: &Relative<D>,
    ba: &Relative<D>,
) -> Option<Aabb<D>> {
    let rows = D + usize::from(a.kind() == FrameKind::Tetrahedron) + usize::from(b.kind() == FrameKind::Tetrahedron);
    match (D, rows) {
        (2, 2) => sized::<D, 3, 2>(a, b, ab, ba),
        (2, 3) => sized::<D, 3, 3>(a, b, ab, ba),
        (2, _) => sized::<D, 3, 4>(a, b, ab, ba),
        (_, 3) => sized::<D, 4, 3>(a, b, ab, ba),
        (_, 4) => sized::<D, 4, 4>(a, b, ab, ba),
        _ => sized::<D, 4, 5>(a, b, ab, ba),
    }
}

/// [`lp_box`] with `N = D + 1` variables (time last) and `M` rows.
#[inline(always)]
fn sized<const D: usize, const N: usize, const M: usize>(
    a: &Frame<D>,
    b: &Frame<D>,
    ab: &Relative<D>,
    ba: &Relative<D>,
) -> Option<Aabb<D>> {
    let prog_a = Program::<N, M>::new(a.kind(), ba, b.kind());
    let prog_b = Program::<N, M>::new(b.kind(), ab, a.kind());
    let mut out = Aabb::EMPTY;
    let (ra, rb) = (reach(a), reach(b));
    for k in 0..D {
        for upper in [false, true] {
            let sign = if upper { 1.0 } else { -1.0 };
            // The frames' reach along `sign · e_k` over the step.
            let (reach_a, reach_b) = if upper { (ra.1[k], rb.1[k]) } else { (ra.0[k], rb.0[k]) };
            let (f, prog) = if reach_a <= reach_b { (a, &prog_a) } else { (b, &prog_b) };
            let (c, v) = (f.components(), f.velocity());
            let mut d = [0.0; N];
            for i in 0..D {
                d[i] = sign * c[i][k];
            }
            d[D] = sign * v[k];
            let z = prog.maximise(d)?;
            let x = world(f, &z, k);
            // Round-off cannot take the side beyond both frames' reach.
            let x = fmin(sign * x, fmin(reach_a, reach_b));
            if upper {
                out.max[k] = x;
            } else {
                out.min[k] = -x;
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The pivot written plainly: column `j` cleared by a store, row `r`
    /// skipped, then replaced.
    fn plain_pivot<const N: usize, const M: usize>(
        b: &mut [f64; M],
        t: &mut [[f64; N]; M],
        d: &mut [f64; N],
        r: usize,
        j: usize,
        ip: f64,
    ) {
        let mut row = [0.0; N];
        for l in 0..N {
            row[l] = -t[r][l] * ip;
        }
        row[j] = ip;
        let br = -b[r] * ip;
        for i in (0..M).filter(|&i| i != r) {
            let f = t[i][j];
            t[i][j] = 0.0;
            for l in 0..N {
                t[i][l] += f * row[l];
            }
            b[i] += f * br;
        }
        let f = d[j];
        d[j] = 0.0;
        for l in 0..N {
            d[l] += f * row[l];
        }
        t[r] = row;
        b[r] = br;
    }

    /// A coefficient: mostly random, sometimes `±0.0` (whose sign the
    /// clearing must treat as the store of `0.0` does).
    fn value(rng: &mut ChaCha8Rng) -> f64 {
        match rng.random_range(0..8) {
            0 => 0.0,
            1 => -0.0,
            _ => rng.random_range(-3.0..3.0),
        }
    }

    fn pivots_as_plain<const N: usize, const M: usize>(rng: &mut ChaCha8Rng) {
        let bits = |b: &[f64; M], t: &[[f64; N]; M], d: &[f64; N]| -> Vec<u64> {
            b.iter().chain(t.as_flattened()).chain(d).map(|x| x.to_bits()).collect()
        };
        for _ in 0..300 {
            let b: [f64; M] = std::array::from_fn(|_| value(rng));
            let t: [[f64; N]; M] = std::array::from_fn(|_| std::array::from_fn(|_| value(rng)));
            let d: [f64; N] = std::array::from_fn(|_| value(rng));
            for r in 0..M {
                for j in (0..N).filter(|&j| t[r][j] != 0.0) {
                    let ip = 1.0 / t[r][j];
                    let (mut b1, mut t1, mut d1) = (b, t, d);
                    Program::<N, M>::pivot(&mut b1, &mut t1, &mut d1, r, j, ip);
                    let (mut b2, mut t2, mut d2) = (b, t, d);
                    plain_pivot(&mut b2, &mut t2, &mut d2, r, j, ip);
                    assert_eq!(bits(&b1, &t1, &d1), bits(&b2, &t2, &d2), "N {N}, M {M}, row {r}, column {j}");
                }
            }
        }
    }

    /// The pivot's copies per column give the plain pivot's dictionary,
    /// bit for bit, for every size of program, row and column.
    #[test]
    fn every_column_pivots_as_the_plain_pivot() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        pivots_as_plain::<3, 2>(&mut rng);
        pivots_as_plain::<3, 3>(&mut rng);
        pivots_as_plain::<3, 4>(&mut rng);
        pivots_as_plain::<4, 3>(&mut rng);
        pivots_as_plain::<4, 4>(&mut rng);
        pivots_as_plain::<4, 5>(&mut rng);
    }
}
