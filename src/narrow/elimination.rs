//! Fourier–Motzkin elimination over a box, the solver at the heart of FMB.
//!
//! The system is a set of *interval rows* `lo < a · z < hi` (either side may
//! be infinite) over variables `z` that also lie in an open box
//! `zlo < z < zhi`, initially `(0, 1)` for every variable. Strict inequalities
//! encode the touching policy: the system is feasible exactly when the
//! intersection has a non-empty interior.
//!
//! Compared with the paper's C code, four changes make it exact and fast:
//! * **Two-sided rows.** A cuboid's pair of parallel faces is one row, not
//!   two; eliminating `x` from rows `j` and `k` gives one row
//!   `β·rⱼ - α·rₖ` whose interval follows by interval arithmetic, so a pair of
//!   slabs costs one combination instead of four.
//! * **Bounds are not rows.** A row left with one variable tightens that
//!   variable's bound instead of being stored, and eliminating `x`
//!   substitutes `x`'s bounds into each row (interval arithmetic again).
//! * **Rows are judged against the box when they are made**: a side that no
//!   point of the box violates is dropped (exactly), and a side that no point
//!   satisfies ends the test at once (the paper's condition (41), generalised
//!   to the current bounds).
//! * **Tolerances are relative.** Each row carries `s`, the magnitude of the
//!   terms it was computed from; a side is violated everywhere when it fails
//!   by less than `EPS·s`, so verdicts do not change when every coordinate is
//!   scaled or translated.
//!
//! Buffer sizes are proven, not observed: eliminating a variable from `n`
//! rows yields at most `n + n(n-1)/2` rows (each row with its substitution,
//! each pair once). The initial system has at most 5 rows (a tetrahedron `A`:
//! `D + 1` one-sided rows, a tetrahedron `B`: 1; a cuboid `A` has `D` slabs),
//! so at most 15 rows remain after the first elimination and 120 after the
//! second, which only the 3D moving case needs; the last elimination leaves
//! bounds only.

use arrayvec::ArrayVec;

use crate::math::{fmax, fmin};

/// Most variables of any system: `X₀, X₁, X₂, t`.
pub(crate) const MAX_VARS: usize = 4;

/// Most initial rows (see the module docs).
pub(crate) const CAP_INITIAL: usize = 5;
/// `n + n(n-1)/2` for `n = 5`: rows after the first elimination.
pub(crate) const CAP_FIRST: usize = CAP_INITIAL + CAP_INITIAL * (CAP_INITIAL - 1) / 2;
/// `n + n(n-1)/2` for `n = 15`: rows after the second elimination.
pub(crate) const CAP_SECOND: usize = CAP_FIRST + CAP_FIRST * (CAP_FIRST - 1) / 2;

/// Relative tolerance of the touching policy: configurations within about
/// `EPS` (relative to the magnitudes involved) of touching count as touching,
/// i.e. not colliding. Far above `f64` round-off, far below the 1e-9 band in
/// which an answer is allowed to go either way.
pub(crate) const EPS: f64 = 1e-12;

/// Coefficients below `NOISE` times their row's magnitude are round-off of
/// a cancellation (a few ulps of the terms), treated as zero.
const NOISE: f64 = 8.0 * f64::EPSILON;

/// One interval row `lo < a · z < hi`; `s` is the magnitude of the terms it
/// was computed from, the scale of its round-off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row {
    pub a: [f64; MAX_VARS],
    pub lo: f64,
    pub hi: f64,
    pub s: f64,
}

/// The open box `lo < z < hi`; `*_s` are the round-off scales of each bound.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub lo: [f64; MAX_VARS],
    pub hi: [f64; MAX_VARS],
    lo_s: [f64; MAX_VARS],
    hi_s: [f64; MAX_VARS],
}

impl Bounds {
    /// The unit box `(0, 1)` on every variable.
    pub const UNIT: Bounds =
        Bounds { lo: [0.0; MAX_VARS], hi: [1.0; MAX_VARS], lo_s: [1.0; MAX_VARS], hi_s: [1.0; MAX_VARS] };

    /// Tightens variable `j` to `(lo, hi)` (either may be infinite) and
    /// reports whether it is still open.
    #[inline(always)]
    fn tighten(&mut self, j: usize, lo: f64, hi: f64, s: f64) -> Result<(), Infeasible> {
        if lo > self.lo[j] {
            self.lo[j] = lo;
            self.lo_s[j] = s;
        }
        if hi < self.hi[j] {
            self.hi[j] = hi;
            self.hi_s[j] = s;
        }
        if self.hi[j] - self.lo[j] <= EPS * (self.hi_s[j] + self.lo_s[j]) {
            return Err(Infeasible);
        }
        Ok(())
    }
}

/// The system has no solution: the frames do not collide.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Infeasible;

/// `c · (lo, hi)` as an interval, for `c ≠ 0`.
#[inline(always)]
fn scale_interval(c: f64, lo: f64, hi: f64) -> (f64, f64) {
    if c > 0.0 { (c * lo, c * hi) } else { (c * hi, c * lo) }
}

/// Judges `row` against the box over the variables `first..V` (the others are
/// eliminated and their coefficients ignored): fails when a side is violated
/// everywhere, drops sides satisfied everywhere, folds single-variable rows
/// into the bounds, and returns the row if it still constrains two or more
/// variables.
#[inline(always)]
fn admit<const V: usize>(mut row: Row, first: usize, bounds: &mut Bounds) -> Result<Option<Row>, Infeasible> {
    let tiny = EPS * row.s;
    let noise = NOISE * row.s;
    let (mut min, mut max) = (0.0, 0.0);
    let (mut count, mut var) = (0, first);
    for j in first..V {
        let a = row.a[j];
        let (p, q) = (a * bounds.lo[j], a * bounds.hi[j]);
        if a.abs() <= noise {
            // Round-off of a cancelled coefficient: drop it, widening the
            // row so no solution is lost. Only noise may go: a coefficient
            // small but real (an ill-conditioned frame) divides the last
            // bounds, and dropping it would move them.
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
    // One variable left: the row bounds it.
    let a = row.a[var];
    let (lo, hi) = scale_interval(1.0 / a, row.lo, row.hi);
    bounds.tighten(var, lo, hi, row.s / a.abs())?;
    Ok(None)
}

/// Admits `row` into `out`, which has room by the counting argument of the
/// module docs.
#[inline(always)]
fn admit_into<const V: usize, const N: usize>(
    row: Row,
    first: usize,
    bounds: &mut Bounds,
    out: &mut ArrayVec<Row, N>,
) -> Result<(), Infeasible> {
    if let Some(row) = admit::<V>(row, first, bounds)? {
        // Cannot overflow: N is the proven bound for this stage (module docs).
        out.push(row);
    }
    Ok(())
}

/// Admits a freshly built row of the initial system.
#[inline(always)]
pub(crate) fn admit_initial<const V: usize>(
    row: Row,
    bounds: &mut Bounds,
    out: &mut ArrayVec<Row, CAP_INITIAL>,
) -> Result<(), Infeasible> {
    admit_into::<V, CAP_INITIAL>(row, 0, bounds, out)
}

/// Eliminates variable `k` from `rows`, writing the projected system on
/// variables `k+1..V` to `out`.
#[inline(always)]
fn eliminate<const V: usize, const N: usize>(
    k: usize,
    rows: &[Row],
    bounds: &mut Bounds,
    out: &mut ArrayVec<Row, N>,
) -> Result<(), Infeasible> {
    let next = k + 1;
    let (zlo, zhi) = (bounds.lo[k], bounds.hi[k]);
    // Each row with `x_k` replaced by its range (rows free of `x_k` pass).
    for r in rows {
        let alpha = r.a[k];
        if alpha == 0.0 {
            // Cannot overflow: as in `admit_into`.
            out.push(*r);
            continue;
        }
        let (p, q) = (alpha * zlo, alpha * zhi);
        let mut row = *r;
        row.a[k] = 0.0;
        row.lo -= fmax(p, q);
        row.hi -= fmin(p, q);
        admit_into::<V, N>(row, next, bounds, out)?;
    }
    // Each pair of rows combined to cancel `x_k`: β·rⱼ - α·rₖ.
    for (j, rj) in rows.iter().enumerate() {
        let beta = rj.a[k];
        if beta == 0.0 {
            continue;
        }
        for rk in &rows[j + 1..] {
            let alpha = rk.a[k];
            if alpha == 0.0 {
                continue;
            }
            let (jl, jh) = scale_interval(alpha, rj.lo, rj.hi);
            let (kl, kh) = scale_interval(beta, rk.lo, rk.hi);
            let (lo, hi) = (kl - jh, kh - jl);
            if lo == f64::NEG_INFINITY && hi == f64::INFINITY {
                continue;
            }
            let mut row = Row { a: [0.0; MAX_VARS], lo, hi, s: alpha.abs() * rj.s + beta.abs() * rk.s };
            for i in next..V {
                row.a[i] = beta * rk.a[i] - alpha * rj.a[i];
            }
            admit_into::<V, N>(row, next, bounds, out)?;
        }
    }
    Ok(())
}

/// Decides the system `initial` (already admitted against `bounds`) by
/// eliminating `z₀ .. z_{V-2}`; on success `bounds` holds the exact range of
/// the last variable.
pub(crate) fn solve<const V: usize>(initial: &[Row], bounds: &mut Bounds) -> Result<(), Infeasible> {
    let mut first = ArrayVec::<Row, CAP_FIRST>::new();
    eliminate::<V, CAP_FIRST>(0, initial, bounds, &mut first)?;
    if V == 2 {
        debug_assert!(first.is_empty());
        return Ok(());
    }
    let mut second = ArrayVec::<Row, CAP_SECOND>::new();
    eliminate::<V, CAP_SECOND>(1, &first, bounds, &mut second)?;
    if V == 3 {
        debug_assert!(second.is_empty());
        return Ok(());
    }
    // The last elimination leaves one variable: every row becomes a bound.
    let mut last = ArrayVec::<Row, 0>::new();
    eliminate::<V, 0>(2, &second, bounds, &mut last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(a: [f64; 2], lo: f64, hi: f64) -> Row {
        Row { a: [a[0], a[1], 0.0, 0.0], lo, hi, s: a[0].abs() + a[1].abs() + lo.abs().min(hi.abs()) }
    }

    fn run(rows: &[Row]) -> Result<Bounds, Infeasible> {
        let mut bounds = Bounds::UNIT;
        let mut init = ArrayVec::new();
        for r in rows {
            admit_initial::<2>(*r, &mut bounds, &mut init)?;
        }
        solve::<2>(&init, &mut bounds)?;
        Ok(bounds)
    }

    #[test]
    fn projects_a_triangle_onto_its_last_variable() {
        // x + y < 1 and x > 0.5  =>  y < 0.5
        let b = run(&[row([1.0, 1.0], f64::NEG_INFINITY, 1.0), row([1.0, 0.0], 0.5, f64::INFINITY)]).unwrap();
        assert!((b.hi[1] - 0.5).abs() < 1e-15 && b.lo[1] == 0.0);
    }

    #[test]
    fn slabs_project_by_interval_arithmetic() {
        // 0.2 < x - y < 0.3 and 0.9 < x + y < 1.1  =>  0.3 < y < 0.45
        let b = run(&[row([1.0, -1.0], 0.2, 0.3), row([1.0, 1.0], 0.9, 1.1)]).unwrap();
        assert!((b.lo[1] - 0.3).abs() < 1e-15 && (b.hi[1] - 0.45).abs() < 1e-15, "{b:?}");
    }

    #[test]
    fn touching_is_infeasible_and_overlap_is_not() {
        // x + y < 1 and x + y > 1: a shared edge only.
        let touching = [row([1.0, 1.0], f64::NEG_INFINITY, 1.0), row([1.0, 1.0], 1.0, f64::INFINITY)];
        assert_eq!(run(&touching).err(), Some(Infeasible));
        let overlapping = [row([1.0, 1.0], f64::NEG_INFINITY, 1.0), row([1.0, 1.0], 0.999, f64::INFINITY)];
        assert!(run(&overlapping).is_ok());
    }

    #[test]
    fn capacities_follow_the_counting_bound() {
        assert_eq!(CAP_FIRST, 15);
        assert_eq!(CAP_SECOND, 120);
    }
}
